/// How decoders name an offending byte in a message: printable ASCII quoted, anything else in hex.
enum ByteDescription {
    static func describe(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "'"): "\"'\""
        case 0x21...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
        default: (byte < 0x10 ? "0x0" : "0x") + String(byte, radix: 16, uppercase: true)
        }
    }
}
