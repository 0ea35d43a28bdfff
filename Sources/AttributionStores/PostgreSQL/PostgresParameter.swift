@_spi(Stores) import Attribution
/// A query parameter, sent in PostgreSQL's binary format: bytes travel as they are, so a key with any byte in it
/// (NUL included) reaches the server intact, and nothing is quoted or escaped.
enum PostgresParameter {
    case int64(Int64)
    case bytes([UInt8])
    case text(String)
    case bytesArray([[UInt8]])
    /// A `bytea[]` whose nil elements are NULL.
    case optionalBytesArray([[UInt8]?])
    case textArray([String])
    /// A `text[]` whose nil elements are NULL.
    case optionalTextArray([String?])
    case int64Array([Int64])

    // Type OIDs from PostgreSQL's pg_type.dat: stable across releases.
    static let int8OID: UInt32 = 20
    static let byteaOID: UInt32 = 17
    static let textOID: UInt32 = 25
    static let int8ArrayOID: UInt32 = 1016
    static let byteaArrayOID: UInt32 = 1001
    static let textArrayOID: UInt32 = 1009

    var typeOID: UInt32 {
        switch self {
        case .int64: Self.int8OID
        case .bytes: Self.byteaOID
        case .text: Self.textOID
        case .bytesArray, .optionalBytesArray: Self.byteaArrayOID
        case .textArray, .optionalTextArray: Self.textArrayOID
        case .int64Array: Self.int8ArrayOID
        }
    }

    /// The value in binary format (network byte order; arrays as `array_send` writes them).
    var encoded: [UInt8] {
        switch self {
        case .int64(let value):
            return Self.bigEndian(value)
        case .bytes(let bytes):
            return bytes
        case .text(let text):
            return Self.textBytes(text)
        case .bytesArray(let elements):
            return Self.array(of: Self.byteaOID, elements)
        case .optionalBytesArray(let elements):
            return Self.array(of: Self.byteaOID, elements)
        case .textArray(let elements):
            // A run's sightings mostly share one source: each run of equal strings (byte for byte) converted once.
            var previous: (text: String, bytes: [UInt8])?
            return Self.array(of: Self.textOID, elements.map { text -> [UInt8]? in
                if let previous, previous.text.utf8.elementsEqual(text.utf8) { return previous.bytes }
                let bytes = Self.textBytes(text)
                previous = (text, bytes)
                return bytes
            })
        case .optionalTextArray(let elements):
            return Self.array(of: Self.textOID, elements.map { $0.map(Self.textBytes) })
        case .int64Array(let elements):
            // Each element 8 bytes: written in place, without an array per element.
            var out = Self.arrayHeader(of: Self.int8OID, count: elements.count, hasNull: false,
                                       capacity: 20 + 12 * elements.count)
            for element in elements {
                Self.append(Int32(8), to: &out)
                Self.append(element, to: &out)
            }
            return out
        }
    }

    /// UTF-8, with U+0000 (which a PostgreSQL `text` cannot hold) written as U+FFFD.
    static func textBytes(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.contains(0) {
            bytes = Array(String(decoding: bytes, as: UTF8.self).replacingNUL().utf8)
        }
        return bytes
    }

    /// A one-dimensional array: dimensions, whether it holds a NULL, element type, length and lower bound (1),
    /// then each element's length (-1 for NULL) and bytes.
    private static func array(of elementOID: UInt32, _ elements: [[UInt8]?]) -> [UInt8] {
        var out = arrayHeader(of: elementOID, count: elements.count, hasNull: elements.contains { $0 == nil },
                              capacity: 20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        for element in elements {
            guard let element else {
                append(Int32(-1), to: &out)
                continue
            }
            append(Int32(element.count), to: &out)
            out += element
        }
        return out
    }

    /// A one-dimensional array's header, in a buffer with room for `capacity` bytes.
    private static func arrayHeader(of elementOID: UInt32, count: Int, hasNull: Bool, capacity: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        append(Int32(count == 0 ? 0 : 1), to: &out)
        append(Int32(hasNull ? 1 : 0), to: &out)
        append(Int32(bitPattern: elementOID), to: &out)
        if count > 0 {
            append(Int32(count), to: &out)
            append(Int32(1), to: &out)
        }
        return out
    }

    private static func bigEndian<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// Appends `value` in network byte order (no array of its own).
    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }
}

private extension String {
    func replacingNUL() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }
}
