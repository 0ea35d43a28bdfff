import Foundation
import Synchronization
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Valid items must be valid only as a whole: every proper prefix, every one-character change of the signature
/// and every one-byte extension is invalid (swift-asn1's "every prefix of a valid input must fail"). Hostile items
/// never crash the verifier and always get one invalid result whose first error follows spec section 2's order.
@Suite("Prefixes, bit flips and hostile items")
struct PrefixRejectionTests {
    /// A fixed clock, so I3 cannot change a verdict between runs.
    static let clock: @Sendable () -> UInt64 = { 1_800_000_000_000 }

    /// The fixture keys (and, when asked, Apple's development keys), as `Fixtures/README.md` runs `valid/`.
    static func verifier(allowingDevelopmentKeys: Bool = true) throws -> AttributionVerifier {
        var ring = KeyRing(allowingDevelopmentKeys: allowingDevelopmentKeys)
        for (keyID, file) in [("fixture.adattributionkit", "fixture.adattributionkit.pem"),
                              ("fixture-apple-identifier/0", "fixture-apple-identifier-0.pem")] {
            let url = TestPaths.fixtures.appendingPathComponent("keys").appendingPathComponent(file)
            try ring.add(ECPublicKey(pemRepresentation: String(decoding: TestPaths.bytes(url), as: UTF8.self)),
                         keyID: keyID)
        }
        return AttributionVerifier(keyRing: ring, policy: VerificationPolicy(clock: clock))
    }

    // MARK: - Prefixes

    @Test("A valid token is valid and every proper prefix of it is invalid", arguments: try ValidItem.tokens())
    func tokenPrefixes(_ item: ValidItem) throws {
        let verifier = try Self.verifier()
        let whole = verifier.verify(item.bytes)
        try #require(whole.verdict == .valid, "\(whole.errors)")
        let acceptedPrefixes = (0..<item.bytes.count).filter { verifier.verify(item.bytes[..<$0]).verdict == .valid }
        #expect(acceptedPrefixes.isEmpty, "prefix lengths accepted: \(acceptedPrefixes)")
    }

    @Test("A valid body is valid and every prefix that cuts into its JSON text is invalid",
          arguments: try ValidItem.bodies())
    func bodyPrefixes(_ item: ValidItem) throws {
        let verifier = try Self.verifier()
        let whole = verifier.verify(item.bytes)
        try #require(whole.verdict == .valid, "\(whole.errors)")
        // Dropping only trailing whitespace leaves the same JSON text, which must stay valid.
        let textEnd = try #require(item.bytes.lastIndex { !Self.isJSONWhitespace($0) }) + 1
        let acceptedPrefixes = (0..<textEnd).filter { verifier.verify(item.bytes[..<$0]).verdict == .valid }
        #expect(acceptedPrefixes.isEmpty, "prefix lengths accepted: \(acceptedPrefixes)")
        let refusedWhitespaceCuts = (textEnd..<item.bytes.count).filter {
            verifier.verify(item.bytes[..<$0]).verdict != .valid
        }
        #expect(refusedWhitespaceCuts.isEmpty, "prefix lengths refused: \(refusedWhitespaceCuts)")
    }

    @Test("Every proper prefix of the token inside a valid body, put back in the body, is invalid",
          arguments: try ValidItem.bodies())
    func bodyTokenPrefixes(_ item: ValidItem) throws {
        let verifier = try Self.verifier()
        try #require(verifier.verify(item.bytes).verdict == .valid)
        var failures: [Int: String] = [:]
        for length in 0..<item.token.count {
            let result = verifier.verify(item.replacingToken(with: item.tokenBytes.prefix(length)))
            if result.verdict == .valid || !["J1", "J5"].contains(result.firstError?.rule) {
                failures[length] = result.firstError.map(String.init) ?? "valid"
            }
        }
        // A cut token is broken base64url or segments (J1) or a short signature (J5); nothing else can decide.
        #expect(failures.isEmpty, "prefix lengths not rejected by J1 or J5: \(failures)")
    }

    // MARK: - One-character changes

    @Test("Changing one signature character to another base64url character makes a valid item invalid",
          arguments: try ValidItem.flipSubjects())
    func signatureFlips(_ item: ValidItem) throws {
        let verifier = try Self.verifier()
        try #require(verifier.verify(item.bytes).verdict == .valid)
        let signature = try #require(item.signatureRange)
        try #require(signature.count == 86, "a 64-byte signature is 86 base64url characters")
        var wrong: [String] = []
        for position in signature {
            for replacement in Self.base64URLAlphabet where replacement != item.bytes[position] {
                var changed = item.bytes
                changed[position] = replacement
                let result = verifier.verify(changed)
                // The last character carries 2 bits of s and 4 unused bits, which must be zero (canonical form).
                let value = try #require(Self.base64URLAlphabet.firstIndex(of: replacement))
                let isCanonical = position != signature.upperBound - 1 || value & 0x0F == 0
                let expected: (AttributionError.Code, SignatureStatus) =
                    isCanonical ? (.badSignature, .failed) : (.malformedInput, .notChecked)
                if result.verdict != .invalid || result.firstError?.code != expected.0
                    || result.signature != expected.1 {
                    wrong.append("\(position - signature.lowerBound)→\(UnicodeScalar(replacement)): "
                                 + "\(result.firstError.map(String.init) ?? "valid")")
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) changes not rejected as expected: \(wrong.prefix(10))")
    }

    @Test("Appending any one byte to the token of a valid item makes it invalid",
          arguments: try ValidItem.tokens() + ValidItem.bodies())
    func appendedByte(_ item: ValidItem) throws {
        let verifier = try Self.verifier()
        try #require(verifier.verify(item.bytes).verdict == .valid)
        var wrong: [String] = []
        for byte in UInt8.min...UInt8.max {
            let extended = item.replacingToken(with: item.tokenBytes + [byte])
            let result = verifier.verify(extended)
            // 87 characters decode to 65 bytes (J5) when the last one's 2 unused bits are zero; all else is J1,
            // and so is anything over the size cap, which is refused before it is read.
            let value = Self.base64URLAlphabet.firstIndex(of: byte)
            let isShortSignature = value.map { $0 & 0x03 == 0 } == true
                && extended.count <= AttributionVerifier.maximumItemBytes
            let expected: AttributionError.Code = isShortSignature ? .badSignature : .malformedInput
            if result.verdict != .invalid || result.firstError?.code != expected {
                wrong.append("0x\(String(byte, radix: 16)): \(result.firstError.map(String.init) ?? "valid")")
            }
        }
        #expect(wrong.isEmpty, "appended bytes not rejected as expected: \(wrong)")
    }

    // MARK: - Hostile items

    @Test("A hostile item never crashes and gets one invalid result with a stable first error",
          arguments: HostileItem.all)
    func hostileItem(_ item: HostileItem) throws {
        let verifier = try Self.verifier(allowingDevelopmentKeys: false)
        let result = verifier.verify(item.bytes)
        #expect(result.verdict == .invalid)
        let firstError = try #require(result.firstError)
        if let expected = item.expected {
            #expect(firstError.code == expected.code, "\(firstError)")
            #expect(firstError.rule == expected.rule, "\(firstError)")
        }
        if let kind = item.kind {
            #expect(result.kind == kind)
        }
        #expect(result.fields == nil, "nothing here is signed by a trusted key")
        // The same bytes give the same first error (message included), as raw bytes or as a read item.
        #expect(verifier.verify(item.bytes).firstError == firstError)
        let read = verifier.verify(InputItem(source: "hostile", line: 1, content: .bytes(ArraySlice(item.bytes))))
        #expect(read.firstError == firstError)
    }

    @Test("A batch of every hostile item gives one invalid result per item, in order")
    func hostileBatch() throws {
        let verifier = try Self.verifier(allowingDevelopmentKeys: false)
        let items = HostileItem.all.enumerated().map { index, item in
            InputItem(source: "hostile", line: index + 1, content: .bytes(ArraySlice(item.bytes)))
        }
        // Through the CLI's pipeline: prepare on the producer, signatures on four workers, complete in order.
        var results: [VerificationResult] = []
        let remaining = Mutex(items[...])
        OrderedPipeline<PreparedItem, PreparedItem>(capacity: 3).run(
            workers: 4,
            produce: { remaining.withLock { $0.popFirst() }.map(verifier.prepare) },
            transform: { prepared in
                var prepared = prepared
                verifier.checkSignature(&prepared)
                return prepared
            },
            consume: { prepared, _ in
                results.append(verifier.complete(prepared))
                return true
            })
        #expect(results.count == HostileItem.all.count)
        #expect(results.allSatisfy { $0.verdict == .invalid })
        #expect(results.map(\.firstError) == HostileItem.all.map { verifier.verify($0.bytes).firstError })
    }

    // MARK: - Helpers

    /// The base64url alphabet (RFC 4648 §5), each character at the index of its 6-bit value.
    static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

// MARK: - Valid items

extension PrefixRejectionTests {
    /// A valid item (a bare token, or a body holding one), with where its token stands in its bytes.
    struct ValidItem: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        /// The token's byte range in `bytes` (all of `bytes` for a bare token).
        let token: Range<Int>

        var testDescription: String { name }

        var tokenBytes: [UInt8] { Array(bytes[token]) }

        /// The signature segment: the bytes after the token's last dot.
        var signatureRange: Range<Int>? {
            bytes[token].lastIndex(of: UInt8(ascii: ".")).map { ($0 + 1)..<token.upperBound }
        }

        /// The item with its token replaced, everything around the token kept byte for byte.
        func replacingToken(with replacement: some Collection<UInt8>) -> [UInt8] {
            Array(bytes[..<token.lowerBound]) + replacement + bytes[token.upperBound...]
        }

        /// Every `.jws` fixture under `valid/postback-jws` and `valid/impression`: its one token line, with the
        /// line terminator and the file's comment and blank lines left out.
        static func tokens() throws -> [ValidItem] {
            try ["postback-jws", "impression"].flatMap { folder in
                try files(in: "valid/\(folder)", ending: ".jws").map { url in
                    let lines = try TestPaths.bytes(url).split(separator: UInt8(ascii: "\n")).map { line in
                        line.last == UInt8(ascii: "\r") ? line.dropLast() : line
                    }.filter { line in
                        line.first != UInt8(ascii: "#") && !line.allSatisfy(PrefixRejectionTests.isJSONWhitespace)
                    }
                    let line = try #require(lines.count == 1 ? lines.first : nil, "\(url.path) holds one token")
                    return ValidItem(name: "\(folder)/\(url.lastPathComponent)", bytes: Array(line),
                                     token: 0..<line.count)
                }
            }
        }

        /// Every `.json` body under `valid/postback`, and Apple's development example from `Vectors/reference`.
        static func bodies() throws -> [ValidItem] {
            let apple = TestPaths.vector("reference/apple/postback-development-valid.json")
            return try (files(in: "valid/postback", ending: ".json") + [apple]).map { url in
                let bytes = try TestPaths.bytes(url)
                let body = try #require(try StrictJSONParser.parse(bytes).objectValue)
                let token = try #require(body["jws-string"]?.stringValue)
                // Base64url and dots need no JSON escape, so the token stands in the body as it is.
                let ranges = bytes.ranges(of: Array(token.utf8))
                let range = try #require(ranges.count == 1 ? ranges.first : nil, "the token appears once")
                let folder = url.deletingLastPathComponent().lastPathComponent
                return ValidItem(name: "\(folder)/\(url.lastPathComponent)", bytes: bytes, token: range)
            }
        }

        /// A bare postback token, a bare impression token and Apple's body, each with every signature change.
        static func flipSubjects() throws -> [ValidItem] {
            let names: Set = [
                "postback-jws/high-s-signature.jws", "impression/uuid-lowercase.jws",
                "apple/postback-development-valid.json",
            ]
            let subjects = try (tokens() + bodies()).filter { names.contains($0.name) }
            try #require(subjects.count == names.count)
            return subjects
        }

        static func files(in folder: String, ending suffix: String) throws -> [URL] {
            let directory = TestPaths.fixtures.appendingPathComponent(folder)
            let urls = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.lastPathComponent.hasSuffix(suffix) }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
            try #require(!urls.isEmpty, "no \(suffix) fixtures in \(folder)")
            return urls
        }
    }
}

// MARK: - Hostile items

extension PrefixRejectionTests {
    /// One hostile item, with the first error spec section 2's order of checks gives it (nil: any error).
    struct HostileItem: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let expected: (code: AttributionError.Code, rule: RuleID)?
        let kind: ItemKind?

        var testDescription: String { "\(name) → \(expected.map { "\($0.rule) \($0.code)" } ?? "any error")" }

        init(_ name: String, _ bytes: [UInt8], _ code: AttributionError.Code?, _ rule: RuleID = "J1",
             kind: ItemKind? = nil) {
            self.name = name
            self.bytes = bytes
            self.expected = code.map { ($0, rule) }
            self.kind = kind
        }

        init(_ name: String, _ text: String, _ code: AttributionError.Code?, _ rule: RuleID = "J1",
             kind: ItemKind? = nil) {
            self.init(name, Array(text.utf8), code, rule, kind: kind)
        }

        /// A compact JWS from header and payload JSON texts and raw signature bytes.
        static func token(_ header: String, _ payload: String = "{}", signature: [UInt8] = zeros(64)) -> String {
            [Base64URL.encode(header.utf8), Base64URL.encode(payload.utf8), Base64URL.encode(signature)]
                .joined(separator: ".")
        }

        static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

        static func nested(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }

        static let fixtureKid = #"{"alg":"ES256","kid":"fixture-apple-identifier/0"}"#
        /// Well formed up to its kid, which names no key: J3. Bodies built on it show that J1 came first.
        static let unknownKidToken = token(#"{"alg":"ES256","kid":"nobody"}"#)

        static let all: [HostileItem] = [
            HostileItem("empty", "", .malformedInput),
            HostileItem("one NUL byte", "\u{0}", .malformedInput),
            HostileItem("20000 dots (over the size cap)", String(repeating: ".", count: 20_000), .malformedInput),
            HostileItem("16 KiB of a (at the size cap, no dots)", String(repeating: "a", count: 16_384),
                        .malformedInput),
            HostileItem("16 KiB + 1 of a (over the size cap)", String(repeating: "a", count: 16_385), .malformedInput),
            HostileItem("three dots", unknownKidToken + ".e30", .malformedInput),
            HostileItem("a space inside the token", unknownKidToken.replacingOccurrences(of: ".", with: " ."),
                        .malformedInput),
            HostileItem("a segment with base64 padding", unknownKidToken + "==", .malformedInput),
            HostileItem("an empty payload segment", "eyJhbGciOiJFUzI1NiJ9..AAAA", .malformedInput),
            HostileItem("a header that is not JSON", token("{"), .malformedInput),
            HostileItem("a header that is a JSON array", token("[]"), .malformedInput),
            HostileItem("a header with a duplicate kid",
                        token(#"{"alg":"ES256","kid":"nobody","kid":"fixture-apple-identifier/0"}"#),
                        .malformedInput),
            HostileItem("alg none, unknown kid (J2 before J3)", token(#"{"alg":"none","kid":"nobody"}"#),
                        .unsupportedAlgorithm, "J2"),
            HostileItem("alg HS256 with the fixture kid",
                        token(#"{"alg":"HS256","kid":"fixture-apple-identifier/0"}"#), .unsupportedAlgorithm, "J2"),
            HostileItem("crit in the header", token(#"{"alg":"ES256","kid":"nobody","crit":["exp"]}"#),
                        .unsupportedAlgorithm, "J2"),
            HostileItem("unknown kid, zero signature (J3 before J5)", unknownKidToken, .unknownKey, "J3"),
            HostileItem("empty kid", token(#"{"alg":"ES256","kid":""}"#), .unknownKey, "J3"),
            HostileItem("Apple development kid, development keys not allowed",
                        token(#"{"alg":"ES256","kid":"apple-development-identifier/1"}"#), .untrustedKey, "J4"),
            HostileItem("fixture kid, r = s = 0", token(fixtureKid), .badSignature, "J5"),
            HostileItem("fixture kid, 63-byte signature", token(fixtureKid, signature: zeros(63)),
                        .badSignature, "J5"),
            HostileItem("fixture kid, bad signature over a payload nested 17 deep (payload never parsed)",
                        token(fixtureKid, nested(17), signature: [1] + zeros(31) + [1] + zeros(31)),
                        .badSignature, "J5"),
            HostileItem("body: jws-string null", #"{"jws-string": null}"#, .malformedInput, kind: .postback),
            HostileItem("body: jws-string a number", #"{"jws-string": 1}"#, .malformedInput, kind: .postback),
            HostileItem("body: jws-string twice, same value a.b.c",
                        #"{"jws-string": "a.b.c", "jws-string": "a.b.c"}"#, .malformedInput),
            HostileItem("body: jws-string twice, same J3 token (duplicate decides, not the kid)",
                        #"{"jws-string": "\#(unknownKidToken)", "jws-string": "\#(unknownKidToken)"}"#,
                        .malformedInput),
            HostileItem("body: the J3 token once (the control for the bodies around it)",
                        #"{"jws-string": "\#(unknownKidToken)"}"#, .unknownKey, "J3", kind: .postback),
            HostileItem("body: nesting 16 beside the J3 token (allowed)",
                        #"{"jws-string": "\#(unknownKidToken)", "x": \#(nested(15))}"#, .unknownKey, "J3"),
            HostileItem("body: nesting 17 beside the J3 token",
                        #"{"jws-string": "\#(unknownKidToken)", "x": \#(nested(16))}"#, .malformedInput),
            HostileItem("body: a byte order mark before it", [0xEF, 0xBB, 0xBF]
                            + Array(#"{"jws-string": "\#(unknownKidToken)"}"#.utf8), .malformedInput),
            HostileItem("body: invalid UTF-8 in a string",
                        Array(#"{"jws-string": "\#(unknownKidToken)", "x": ""#.utf8) + [0xFF] + Array(#""}"#.utf8),
                        .malformedInput),
            HostileItem("body: a raw control character in a string",
                        #"{"jws-string": "\#(unknownKidToken)", "x": "\#u{1}"}"#, .malformedInput),
            HostileItem("body: trailing data after the object", #"{"jws-string": "\#(unknownKidToken)"} x"#,
                        .malformedInput),
            HostileItem("body: two objects", #"{"jws-string": "\#(unknownKidToken)"}{}"#, .malformedInput),
            HostileItem("body: a leading-zero number", #"{"jws-string": "\#(unknownKidToken)", "x": 01}"#,
                        .malformedInput),
            HostileItem("body: cut after the opening brace", "{", .malformedInput),
            HostileItem("body: an empty object", "{}", .malformedInput),
            HostileItem("an empty JSON array", "[]", .malformedInput),
            HostileItem("a JSON string", #""string""#, .malformedInput),
            HostileItem("SKAdNetwork path: attribution-signature 1", #"{"attribution-signature": 1}"#, nil,
                        kind: .skadnetwork),
        ]
    }
}
