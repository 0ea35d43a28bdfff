import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

@Suite("Base64URL and Base64")
struct Base64URLTests {
    /// RFC 4648 section 10, with the padding removed (RFC 7515 section 2), plus bytes that use `-` and `_`.
    static let urlVectors: [(bytes: [UInt8], text: String)] = [
        (Array("".utf8), ""),
        (Array("f".utf8), "Zg"),
        (Array("fo".utf8), "Zm8"),
        (Array("foo".utf8), "Zm9v"),
        (Array("foob".utf8), "Zm9vYg"),
        (Array("fooba".utf8), "Zm9vYmE"),
        (Array("foobar".utf8), "Zm9vYmFy"),
        ([0xFB, 0xFF], "-_8"),
        ([0xFB, 0xFF, 0xBF], "-_-_"),
        // RFC 7515 appendix A.1: the example JOSE header, CR LF included.
        (Array("{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}".utf8), "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"),
    ]

    @Test("RFC 4648 section 10 vectors decode and encode in the url alphabet", arguments: urlVectors)
    func urlVector(_ bytes: [UInt8], _ text: String) throws {
        #expect(try Base64URL.decode(Array(text.utf8)) == bytes)
        #expect(Base64URL.encode(bytes) == text)
    }

    static let urlRejected: [String] = [
        "Zg==", "Zg=", "Zm8=", "=", "====",
        "Zm9v+A", "Zm9v/A", "+_8", "-/8",
        "Zm9 v", "Zm9v\n", " Zm9v", "Zm9v ", "Zm\t9v", "Zm9v\r\n",
        "Z", "Zm9vY", "Zm9vYmFyZ",
        "QR", "Zh", "Zm9", "Zm9vYh", "Zm9vYmF",
        "Zm9v.", "Zm9v\u{0}", "Zm9v\u{E9}",
    ]

    @Test("Non-canonical or foreign base64url is rejected as malformed input (J1)", arguments: urlRejected)
    func urlRejects(_ text: String) {
        #expect(throws: AttributionError.malformed("any reason")) {
            try Base64URL.decode(Array(text.utf8))
        }
    }

    @Test("The canonical form of one byte is accepted: QQ is 'A'")
    func urlCanonicalOneByte() throws {
        #expect(try Base64URL.decode(Array("QQ".utf8)) == [0x41])
        let error = #expect(throws: AttributionError.self) {
            try Base64URL.decode(Array("QR".utf8))
        }
        #expect(error?.reason.contains("non-canonical") == true)
    }

    @Test("Every byte value round-trips, alone and together")
    func urlRoundTripsEveryByte() throws {
        for byte in UInt8.min...UInt8.max {
            #expect(try Base64URL.decode(Array(Base64URL.encode([byte]).utf8)) == [byte])
        }
        let all = Array(UInt8.min...UInt8.max)
        for length in 0...all.count {
            let bytes = Array(all[..<length])
            #expect(try Base64URL.decode(Array(Base64URL.encode(bytes).utf8)) == bytes)
        }
    }

    @Test("Of every two-character text, exactly the canonical ones decode, and they re-encode unchanged")
    func urlTwoCharactersAreCanonical() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var accepted = 0
        for first in alphabet {
            for second in alphabet {
                let text = [first, second]
                if let bytes = try? Base64URL.decode(text) {
                    accepted += 1
                    #expect(Array(Base64URL.encode(bytes).utf8) == text)
                }
            }
        }
        #expect(accepted == 256)
    }

    @Test("Decoding reads any collection of bytes, contiguous or not")
    func urlDecodesAnyCollection() throws {
        let expected = Array("foobar".utf8)
        #expect(try Base64URL.decode("Zm9vYmFy".utf8) == expected)
        #expect(try Base64URL.decode("..Zm9vYmFy".utf8.dropFirst(2)) == expected)
        #expect(try Base64URL.decode(Array("Zm9vYmFy.".utf8).dropLast()) == expected)
        #expect(try Base64URL.decode("Zm9vYmFy".utf8.lazy.map { $0 }) == expected)
        let fromBuffer = try Array("Zm9vYmFy".utf8).withUnsafeBufferPointer { buffer in
            try Base64URL.decode(buffer)
        }
        #expect(fromBuffer == expected)
    }

    /// The decode loop reads and writes unchecked, proven in bounds by the checks before it
    /// (`Base64Alphabet.decodeSignificant`): its writes by the output holding exactly the decoded count (which
    /// `decode(_:into:)` requires, refusing any other size before the loop runs), its reads by the text's own length.
    /// Every significant length up to 70 (all four remainders) decodes through both entry points to Foundation's
    /// bytes, and an output one byte short or long is refused, never written.
    @Test("The unchecked decode loop is proven in bounds by the checks before it", arguments: [false, true])
    func decodeLoopIsProvenInBounds(_ url: Bool) throws {
        let alphabet = url ? Base64Alphabet.url : Base64Alphabet.standard
        for length in 0...52 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 91 &+ 7) }
            let text = Array((url ? Base64URL.encode(bytes) : Base64.encode(bytes)).utf8)
            #expect(Data(base64Encoded: Base64.encode(bytes)).map(Array.init) == bytes)
            #expect(try alphabet.decode(text) == bytes)
            ByteCursor.over(text) { input in
                #expect(alphabet.decodedCount(of: input) == length)
                for size in [length - 1, length, length + 1] where size >= 0 {
                    let decoded = ByteCursor.makeArray(count: size) { out in
                        alphabet.decode(input, into: out) ?? 0
                    }
                    #expect(decoded == (size == length ? bytes : []), "length \(length), output \(size)")
                }
            }
        }
    }

    /// RFC 4648 section 10, padded.
    static let standardVectors: [(bytes: [UInt8], text: String)] = [
        (Array("".utf8), ""),
        (Array("f".utf8), "Zg=="),
        (Array("fo".utf8), "Zm8="),
        (Array("foo".utf8), "Zm9v"),
        (Array("foob".utf8), "Zm9vYg=="),
        (Array("fooba".utf8), "Zm9vYmE="),
        (Array("foobar".utf8), "Zm9vYmFy"),
        ([0xFB, 0xFF], "+/8="),
        ([0xFB, 0xFF, 0xBF], "+/+/"),
    ]

    @Test("RFC 4648 section 10 vectors decode and encode in the standard alphabet", arguments: standardVectors)
    func standardVector(_ bytes: [UInt8], _ text: String) throws {
        #expect(try Base64.decode(Array(text.utf8)) == bytes)
        #expect(Base64.encode(bytes) == text)
    }

    static let standardRejected: [String] = [
        "Zg", "Zm8", "Zm9vYg", "Zm9vYmE",
        "Zg=", "Zg===", "Z===", "====", "=", "Zm9v=", "Zm9v====",
        "Zg==Zg==", "Zm=v", "Z=8=",
        "Zh==", "Zm9=", "Zm9vYh==", "Zm9vYmF=",
        "-_8=", "Zm9v\n", "Zm9v Zm9v", " Zm9", "Zm9vYg==\n",
    ]

    @Test("Unpadded, non-canonical or foreign base64 is rejected as malformed input (J1)", arguments: standardRejected)
    func standardRejects(_ text: String) {
        #expect(throws: AttributionError.malformed("any reason")) {
            try Base64.decode(Array(text.utf8))
        }
    }

    @Test("Base64 agrees with Foundation on every length up to 100")
    func standardAgreesWithFoundation() throws {
        for length in 0...100 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
            let text = Base64.encode(bytes)
            #expect(text == Data(bytes).base64EncodedString())
            #expect(try Base64.decode(Array(text.utf8)) == bytes)
            #expect(Base64URL.encode(bytes) == text.replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
        }
    }
}
