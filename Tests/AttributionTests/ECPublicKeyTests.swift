import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Loading keys (DER, PEM, JWK) and both signature forms, against Apple's keys, RFC 7515 A.3, Wycheproof's JWS
/// keys and keys made with the `openssl` command line for the cases no published vector covers.
@Suite("EC public keys")
struct ECPublicKeyTests {
    static func vectorText(_ path: String) throws -> String {
        try String(contentsOf: TestPaths.vector(path), encoding: .utf8)
    }

    static let appleKeyFiles = [
        "apple-cas-identifier-0.pem", "apple-development-identifier-0.pem", "apple-development-identifier-1.pem",
    ]

    /// Apple's production key (``AppleKeys/productionDER``).
    static let appleProductionKeyDER = AppleKeys.productionDER

    // MARK: Loading

    @Test("Apple's published keys load as P-256", arguments: appleKeyFiles)
    func appleKey(_ file: String) throws {
        let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/apple/keys/\(file)"))
        #expect(key.curve == .p256)
        #expect(key.derRepresentation.count == 91)
    }

    @Test("A key read from PEM equals the same key read from DER")
    func pemEqualsDER() throws {
        let pem = try Self.vectorText("reference/apple/keys/apple-cas-identifier-0.pem")
        let fromPEM = try ECPublicKey(pemRepresentation: pem)
        let fromDER = try ECPublicKey(derRepresentation: Self.appleProductionKeyDER)
        #expect(fromPEM == fromDER)
        #expect(fromPEM.hashValue == fromDER.hashValue)
        #expect(fromDER.derRepresentation == Self.appleProductionKeyDER)
    }

    @Test("The SKAdNetwork 1.0/2.0 key loads as P-192 and is refused as P-256")
    func skAdNetworkP192Key() throws {
        let pem = try Self.vectorText("reference/apple/keys/skadnetwork-p192.pem")
        let key = try ECPublicKey(pemRepresentation: pem, curve: .p192)
        #expect(key.curve == .p192)
        #expect(throws: Self.invalidKey) { try ECPublicKey(pemRepresentation: pem) }
    }

    @Test("A key that is not an EC public key on the asked curve is refused when loaded", arguments: RejectedKey.all)
    func rejected(_ rejected: RejectedKey) {
        #expect(throws: Self.invalidKey) {
            switch rejected.input {
            case .pem(let text): _ = try ECPublicKey(pemRepresentation: text, curve: rejected.curve)
            case .der(let bytes): _ = try ECPublicKey(derRepresentation: bytes, curve: rejected.curve)
            }
        }
    }

    @Test("Every proper prefix of a valid key's DER is refused")
    func everyPrefixRefused() {
        for length in 0..<Self.appleProductionKeyDER.count {
            #expect(throws: Self.invalidKey) {
                try ECPublicKey(derRepresentation: Self.appleProductionKeyDER.prefix(length))
            }
        }
    }

    @Test("Apple's built-in keys, loaded without libcrypto's decoding, pass every check of a loaded key")
    func builtInKeysPassTheChecks() throws {
        for published in ApplePublishedKey.all {
            let builtIn = published.publicKey
            let checked = try ECPublicKey(derRepresentation: builtIn.derRepresentation)
            #expect(checked == builtIn, "\(published.keyID)")
            #expect(Self.libcryptoAccepts(builtIn.derRepresentation, curve: .p256), "\(published.keyID)")
        }
        let p192 = SKAdNetworkKeys.apple.p192.key
        #expect(try ECPublicKey(derRepresentation: p192.derRepresentation, curve: .p192) == p192)
        #expect(Self.libcryptoAccepts(p192.derRepresentation, curve: .p192))
    }

    @Test("The P-256 key check made without libcrypto agrees with libcrypto's", arguments: CheckedKey.all)
    func p256CheckAgreesWithLibcrypto(_ key: CheckedKey) {
        #expect(ECPublicKey.isValidP256SubjectPublicKeyInfo(key.der) == Self.libcryptoAccepts(key.der, curve: .p256))
        #expect(ECPublicKey.isValidP256SubjectPublicKeyInfo(key.der) == key.isValid)
    }

    @Test("A key decoded on first use verifies from many threads at once, every answer right")
    func deferredDecodingUnderThreads() async throws {
        let jws = try Self.vectorText("reference/rfc7515/a3.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let (signingInput, signature) = try Self.split(jws)
        for _ in 0..<20 {
            // A fresh value each round, so the first uses race each other.
            let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/rfc7515/a3-public-key.pem"))
            let wrong = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask { key.isValidES256Signature(signature, for: signingInput) ? 0 : 1 }
                }
                return await group.reduce(0, +)
            }
            #expect(wrong == 0)
        }
    }

    /// Whether libcrypto decodes `der` as an EC key on `curve` whose DER form is exactly the one accepted (the
    /// checks ``ECPublicKey/init(derRepresentation:curve:)`` makes of a key it has libcrypto decode).
    static func libcryptoAccepts(_ der: [UInt8], curve: ECPublicKey.Curve) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        guard let decoded = try? EVPPublicKey(subjectPublicKeyInfo: der), decoded.isEllipticCurve,
              decoded.curveName == curve.libcryptoName, let point = decoded.encodedPoint else { return false }
        return point.count == 1 + 2 * curve.coordinateByteCount && point.first == 0x04
            && der == curve.subjectPublicKeyInfoPrefix + point
    }

    @Test("A failed load leaves libcrypto's error queue empty")
    func errorQueueDrained() {
        #expect(throws: Self.invalidKey) { try ECPublicKey(derRepresentation: [0x30, 0x03, 0x01, 0x02, 0x03]) }
        #expect(OpenSSLErrorQueue.isEmpty)
    }

    // MARK: ES256 (JWS)

    @Test("RFC 7515 A.3 verifies, and a one-bit flip in signature or signing input does not")
    func rfc7515A3() throws {
        let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/rfc7515/a3-public-key.pem"))
        let jws = try Self.vectorText("reference/rfc7515/a3.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let (signingInput, signature) = try Self.split(jws)
        #expect(signature.count == 64)
        #expect(key.isValidES256Signature(signature, for: signingInput))
        for bit in [0, 7, 255, 263, 511] {
            var flipped = signature
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.isValidES256Signature(flipped, for: signingInput), "signature bit \(bit)")
        }
        var flippedInput = signingInput
        flippedInput[flippedInput.count - 1] ^= 1
        #expect(!key.isValidES256Signature(signature, for: flippedInput))
        // The signing input may be a slice of the token and a String's UTF-8 view: the bytes are what count.
        let token = Array(jws.utf8)
        #expect(key.isValidES256Signature(signature, for: token[..<signingInput.count]))
        #expect(key.isValidES256Signature(signature[...], for: String(jws.utf8.prefix(signingInput.count))!.utf8))
    }

    @Test("An ES256 signature of any length but 64 bytes is false", arguments: [0, 1, 32, 63, 65, 70, 72, 128])
    func wrongLength(_ count: Int) throws {
        let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/rfc7515/a3-public-key.pem"))
        let jws = try Self.vectorText("reference/rfc7515/a3.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let (signingInput, signature) = try Self.split(jws)
        let resized = Array((signature + signature + signature).prefix(count))
        #expect(!key.isValidES256Signature(resized, for: signingInput))
        #expect(OpenSSLErrorQueue.isEmpty)
    }

    @Test("ES256 accepts no DER signature and no P-192 key")
    func es256Only() throws {
        let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/rfc7515/a3-public-key.pem"))
        let jws = try Self.vectorText("reference/rfc7515/a3.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let (signingInput, signature) = try Self.split(jws)
        let der = signature.withUnsafeBytes { raw in P1363Signature.withDEREncoding(of: raw) { Array($0) } }
        #expect(key.isValidDERSignature(der, sha256Over: signingInput))
        #expect(!key.isValidES256Signature(der, for: signingInput))
        let p192 = try ECPublicKey(pemRepresentation: Self.p192TestKeyPEM, curve: .p192)
        #expect(!p192.isValidES256Signature(Self.p192TestSignatureDER.prefix(48), for: Self.p192TestMessage))
    }

    // MARK: DER signatures (SKAdNetwork)

    @Test("A P-192 DER signature made with openssl verifies; a flipped bit, BER and trailing bytes do not")
    func p192DERSignature() throws {
        let key = try ECPublicKey(pemRepresentation: Self.p192TestKeyPEM, curve: .p192)
        let signature = Self.p192TestSignatureDER
        #expect(key.isValidDERSignature(signature, sha256Over: Self.p192TestMessage))
        var flipped = signature
        flipped[20] ^= 0x10
        #expect(!key.isValidDERSignature(flipped, sha256Over: Self.p192TestMessage))
        #expect(!key.isValidDERSignature(signature, sha256Over: Self.p192TestMessage.dropLast()))
        // The same SEQUENCE with its length in the long form (81 35): valid BER, not DER.
        let longFormLength = [0x30, 0x81] + signature.dropFirst()
        #expect(!key.isValidDERSignature(longFormLength, sha256Over: Self.p192TestMessage))
        // r with a superfluous leading zero byte: valid BER, not DER.
        let paddedR = [0x30, signature[1] + 1, 0x02, signature[3] + 1, 0x00] + signature.dropFirst(4)
        #expect(!key.isValidDERSignature(paddedR, sha256Over: Self.p192TestMessage))
        #expect(!key.isValidDERSignature(signature + [0x00], sha256Over: Self.p192TestMessage))
        #expect(!key.isValidDERSignature([], sha256Over: Self.p192TestMessage))
        #expect(OpenSSLErrorQueue.isEmpty)
    }

    @Test("Apple's SKAdNetwork 2.1 example verifies as a DER signature under the production key")
    func skAdNetwork21() throws {
        let key = try ECPublicKey(derRepresentation: Self.appleProductionKeyDER)
        let fields = ["2.1", "com.example", "42", "525463029", "6aafb7a5-0170-41b5-bbe4-fe71dedf1e28", "true",
                      "1234567891"]
        let message = Array(fields.joined(separator: "\u{2063}").utf8)
        let signature = [UInt8](Data(base64Encoded:
            "MEUCID6rbq3qt4GvFaAaynh5/LAcvn1d8CQTRhrZhLIxLKntAiEAo7IrvoMw6u2qDg6Tr5vIsEHXjlLkPlCOL0ojJcEh3Qw="
        )!)
        #expect(key.isValidDERSignature(signature, sha256Over: message))
        #expect(!key.isValidDERSignature(signature, sha256Over: message.dropLast()))
    }

    @Test("One key verifies from many tasks at once and every answer is right")
    func concurrentVerification() async throws {
        let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/rfc7515/a3-public-key.pem"))
        let jws = try Self.vectorText("reference/rfc7515/a3.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let (signingInput, signature) = try Self.split(jws)
        var flipped = signature
        flipped[40] ^= 0x04
        let forged = flipped
        let wrongAnswers = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<50).reduce(0) { wrong, index in
                        let expected = index.isMultiple(of: 2)
                        let verdict = key.isValidES256Signature(expected ? signature : forged, for: signingInput)
                        return wrong + (verdict == expected ? 0 : 1)
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrongAnswers == 0)
    }

    @Test("An empty message or signature is a plain false")
    func emptyInputs() throws {
        let key = try ECPublicKey(pemRepresentation: Self.vectorText("reference/rfc7515/a3-public-key.pem"))
        let jws = try Self.vectorText("reference/rfc7515/a3.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let (_, signature) = try Self.split(jws)
        #expect(!key.isValidES256Signature(signature, for: []))
        #expect(!key.isValidES256Signature([], for: []))
        #expect(!key.isValidDERSignature([], sha256Over: []))
        #expect(!key.isValidDERSignature(Self.p192TestSignatureDER, sha256Over: []))
        #expect(OpenSSLErrorQueue.isEmpty)
    }

    // MARK: JWK

    @Test("Wycheproof's es256 JWK loads and verifies its valid JWS (tcId 18)")
    func wycheproofES256JWK() throws {
        let file = try Self.wycheproofJWSFile()
        let group = try #require(file.testGroups.first { $0.comment == "es256" })
        let key = try ECPublicKey(jwk: #require(group.public).jsonObject)
        let test = try #require(group.tests.first { $0.tcId == 18 })
        #expect(test.result == "valid")
        let (signingInput, signature) = try Self.split(test.jws)
        #expect(key.isValidES256Signature(signature, for: signingInput))
        #expect(throws: Self.invalidKey) { try ECPublicKey(jwk: #require(group.private).jsonObject) }
    }

    @Test("Wycheproof's JWK marked for encryption (use enc) is refused")
    func wycheproofEncryptionJWK() throws {
        let file = try Self.wycheproofJWSFile()
        let groups = file.testGroups.filter { $0.comment == "ec_key_for_encryption" }
        let jwk = try #require(groups.compactMap(\.public).first { $0.members["use"] == .string("enc") })
        #expect(throws: Self.invalidKey) { try ECPublicKey(jwk: jwk.jsonObject) }
    }

    @Test("A JWK that is not a P-256 signing public key is refused", arguments: RejectedJWK.all)
    func rejectedJWK(_ rejected: RejectedJWK) {
        #expect(throws: Self.invalidKey) { try ECPublicKey(jwk: rejected.jwk) }
    }

    @Test("A JWK gives the same key as the DER of its point")
    func jwkEqualsDER() throws {
        let key = try ECPublicKey(jwk: RejectedJWK.validJWK)
        let der = try ECPublicKey(derRepresentation: Self.appleProductionKeyDER)
        #expect(key == der)
    }
}

// MARK: - Fixtures

extension ECPublicKeyTests {
    /// Any `invalid-key` error (no rule): `AttributionError` is equal on code and rule, not on the reason.
    static let invalidKey = AttributionError(.invalidKey, "")

    /// A fresh P-192 key (`openssl ecparam -name prime192v1 -genkey`), its public half, and a SHA-256 signature
    /// of `p192TestMessage` (`openssl dgst -sha256 -sign`), checked with `openssl dgst -verify`.
    static let p192TestKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MEkwEwYHKoZIzj0CAQYIKoZIzj0DAQEDMgAE8Ov+Zy7dtnQX2Ou5bNdV8VdqSfAm
        ZFSyNEEEnTED5Up+USrJ0vjN0cie8njkwLT4
        -----END PUBLIC KEY-----
        """
    static let p192TestMessage = Array("SKAdNetwork 2.0 test message".utf8)
    static let p192TestSignatureDER = WycheproofECDSATests.hexBytes(
        "3035021900cd924745e7d7900c1538cd773189efa6e4f3be6a6851b3d3"
            + "021826c3dbfba8103363fd2c585c5ef7d9d9474116371b102086"
    )

    /// Splits a compact JWS at its dots: the signing input (up to the second dot) and the decoded signature.
    static func split(_ jws: String) throws -> (signingInput: [UInt8], signature: [UInt8]) {
        let bytes = Array(jws.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        try #require(dots.count == 2)
        return (Array(bytes[..<dots[1]]), try Base64URL.decode(bytes[(dots[1] + 1)...]))
    }

    static func wycheproofJWSFile() throws -> JWSVectorFile {
        let url = TestPaths.vector("wycheproof/testvectors_v1/json_web_signature_test.json")
        return try JSONDecoder().decode(JWSVectorFile.self, from: Data(contentsOf: url))
    }
}

// MARK: - Hostile keys

extension ECPublicKeyTests {
    /// One key that must be refused at load, named in the test report.
    /// DER forms of P-256 keys, valid and not, for the check made without libcrypto.
    struct CheckedKey: Sendable, CustomTestStringConvertible {
        let name: String
        let der: [UInt8]
        let isValid: Bool

        var testDescription: String { name }

        static let all: [CheckedKey] = {
            let prefix = ECPublicKey.Curve.p256.subjectPublicKeyInfoPrefix
            let apple = ApplePublishedKey.all.map { published in
                CheckedKey(name: published.keyID, der: published.publicKey.derRepresentation, isValid: true)
            }
            let production = appleProductionKeyDER
            let x = Array(production[(prefix.count + 1)..<(prefix.count + 33)])
            let y = Array(production[(prefix.count + 33)...])
            // p, big-endian: a coordinate that is not below it is refused even where it would fit the equation.
            let p: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 12)
                + [UInt8](repeating: 0xFF, count: 12)
            var flips: [CheckedKey] = []
            for index in stride(from: prefix.count + 1, to: production.count, by: 7) {
                var flipped = production
                flipped[index] ^= 0x10
                flips.append(CheckedKey(name: "bit flipped in byte \(index)", der: flipped, isValid: false))
            }
            var otherPrefix = production
            otherPrefix[3] ^= 0x01
            return apple + flips + [
                CheckedKey(name: "x = p", der: prefix + [0x04] + p + y, isValid: false),
                CheckedKey(name: "y = p", der: prefix + [0x04] + x + p, isValid: false),
                CheckedKey(name: "y replaced by p − y (the point's negative)", der: prefix + [0x04] + x
                    + subtract(p, y), isValid: true),
                CheckedKey(name: "x and y zero", der: prefix + [0x04] + [UInt8](repeating: 0, count: 64),
                           isValid: false),
                CheckedKey(name: "compressed-point marker", der: prefix + [0x02] + x + y, isValid: false),
                CheckedKey(name: "a prefix byte changed", der: otherPrefix, isValid: false),
                CheckedKey(name: "a trailing byte", der: production + [0], isValid: false),
                CheckedKey(name: "one byte short", der: Array(production.dropLast()), isValid: false),
            ]
        }()

        /// a − b for big-endian numbers of equal length, a ≥ b.
        static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: a.count)
            var borrow = 0
            for index in a.indices.reversed() {
                let difference = Int(a[index]) - Int(b[index]) - borrow
                result[index] = UInt8((difference + 256) % 256)
                borrow = difference < 0 ? 1 : 0
            }
            return result
        }
    }

    struct RejectedKey: Sendable, CustomTestStringConvertible {
        enum Input: Sendable {
            case pem(String)
            case der([UInt8])
        }

        let name: String
        let input: Input
        var curve: ECPublicKey.Curve = .p256

        var testDescription: String { name }

        static let all: [RejectedKey] = {
            let apple = appleProductionKeyDER
            var offCurve = apple
            offCurve[offCurve.count - 1] ^= 0x01
            let longFormLength = [0x30, 0x81] + apple.dropFirst()
            return [
                RejectedKey(name: "an RSA public key", input: .pem(rsaPEM)),
                RejectedKey(name: "a P-384 public key", input: .pem(p384PEM)),
                RejectedKey(name: "an Ed25519 public key", input: .pem(ed25519PEM)),
                RejectedKey(name: "a PKCS #8 P-256 private key", input: .pem(pkcs8PrivateKeyPEM)),
                RejectedKey(name: "a SEC1 P-256 private key", input: .pem(sec1PrivateKeyPEM)),
                RejectedKey(name: "a P-256 key with a compressed point", input: .pem(compressedP256PEM)),
                RejectedKey(name: "a P-256 key with explicit curve parameters", input: .pem(explicitP256PEM)),
                RejectedKey(name: "a P-256 key asked for as P-192", input: .der(apple), curve: .p192),
                RejectedKey(name: "two PUBLIC KEY blocks", input: .pem(
                    appleProductionPEM + "\n" + appleProductionPEM
                )),
                RejectedKey(name: "a PEM block with a header", input: .pem(headerPEM)),
                RejectedKey(name: "a PEM block of another label", input: .pem(
                    appleProductionPEM.replacingOccurrences(of: "PUBLIC KEY", with: "CERTIFICATE")
                )),
                RejectedKey(name: "garbage text", input: .pem("this is not a key")),
                RejectedKey(name: "empty text", input: .pem("")),
                RejectedKey(name: "empty DER", input: .der([])),
                RejectedKey(name: "garbage DER", input: .der([0x30, 0x03, 0x01, 0x02, 0x03])),
                RejectedKey(name: "DER with a trailing byte", input: .der(apple + [0x00])),
                RejectedKey(name: "DER with a long-form (BER) length", input: .der(longFormLength)),
                RejectedKey(name: "DER whose point is not on the curve", input: .der(offCurve)),
            ]
        }()

        static let appleProductionPEM = """
            -----BEGIN PUBLIC KEY-----
            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWdp8GPcGqmhgzEFj9Z2nSpQVdday
            aPe4FMzqM9wib1+aHaaIzoHoLN9zW4K8y4SPykE3YVK3sVqW6Af0lfx3gg==
            -----END PUBLIC KEY-----
            """

        // Made once with the openssl command line: `openssl genrsa 1024 | openssl rsa -pubout`,
        // `openssl ecparam -name secp384r1 -genkey -noout | openssl ec -pubout`,
        // `openssl genpkey -algorithm ed25519 | openssl pkey -pubout`, and from one P-256 key
        // (`openssl ecparam -name prime256v1 -genkey -noout`): `openssl pkcs8 -topk8 -nocrypt`, the key itself,
        // `openssl ec -pubout -conv_form compressed` and `openssl ec -pubout -param_enc explicit`.
        static let rsaPEM = """
            -----BEGIN PUBLIC KEY-----
            MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDNkCJPIws9eENDFNIm9WEucg4e
            yDeWyfTNTed2sRWsj0BK/ub1Y5VRaBp/C3zcTPTeMjn/rNMTiARjGwJtu42Pewjs
            5qmQHOagg0vlwLCWatqnBBNIEhXeWBLEtBDMKNVSRkc1/WSKAP2WsVamYlSf/9HS
            GqDh6G+M4SP/R2MQdwIDAQAB
            -----END PUBLIC KEY-----
            """
        static let p384PEM = """
            -----BEGIN PUBLIC KEY-----
            MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE8h0jYRPNd0z2/hoG2pPaW1rDnsb4mlqq
            0D+uAPfriLo0g9K76VnakUPsSHrZBHBq38IVLqgm1kwjmPKGoV3XAdlJmyyqcdkb
            X96bjgB/SRhZa+4Sw/mAm9b8Cru9PtS1
            -----END PUBLIC KEY-----
            """
        static let ed25519PEM = """
            -----BEGIN PUBLIC KEY-----
            MCowBQYDK2VwAyEAI3j/Wh1XIbctEhp02zDrzGykiYpi/4tZyJKG7tpqXZA=
            -----END PUBLIC KEY-----
            """
        static let pkcs8PrivateKeyPEM = """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvU0go2Ky52Qp0UTc
            XF6G0rvMbnLWh5fusuWQKdVpBwehRANCAASGQRYLARqmv3V8Lf/5Ef8nZRrw/SXY
            dQY1Zu2kEujOAWmS485t5H1ff6kpK/fl6V8FvzNQwyN+jAPMYzAknBCS
            -----END PRIVATE KEY-----
            """
        static let sec1PrivateKeyPEM = """
            -----BEGIN EC PRIVATE KEY-----
            MHcCAQEEIL1NIKNisudkKdFE3FxehtK7zG5y1oeX7rLlkCnVaQcHoAoGCCqGSM49
            AwEHoUQDQgAEhkEWCwEapr91fC3/+RH/J2Ua8P0l2HUGNWbtpBLozgFpkuPObeR9
            X3+pKSv35elfBb8zUMMjfowDzGMwJJwQkg==
            -----END EC PRIVATE KEY-----
            """
        static let compressedP256PEM = """
            -----BEGIN PUBLIC KEY-----
            MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgAChkEWCwEapr91fC3/+RH/J2Ua8P0l
            2HUGNWbtpBLozgE=
            -----END PUBLIC KEY-----
            """
        static let explicitP256PEM = """
            -----BEGIN PUBLIC KEY-----
            MIIBSzCCAQMGByqGSM49AgEwgfcCAQEwLAYHKoZIzj0BAQIhAP////8AAAABAAAA
            AAAAAAAAAAAA////////////////MFsEIP////8AAAABAAAAAAAAAAAAAAAA////
            ///////////8BCBaxjXYqjqT57PrvVV2mIa8ZR0GsMxTsPY7zjw+J9JgSwMVAMSd
            NgiG5wSTamZ44ROdJreBn36QBEEEaxfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5
            RdiYwpZP40Li/hp/m47n60p8D54WK84zV2sxXs7LtkBoN79R9QIhAP////8AAAAA
            //////////+85vqtpxeehPO5ysL8YyVRAgEBA0IABIZBFgsBGqa/dXwt//kR/ydl
            GvD9Jdh1BjVm7aQS6M4BaZLjzm3kfV9/qSkr9+XpXwW/M1DDI36MA8xjMCScEJI=
            -----END PUBLIC KEY-----
            """
        static let headerPEM = """
            -----BEGIN PUBLIC KEY-----
            Proc-Type: 4,ENCRYPTED
            DEK-Info: AES-128-CBC,00000000000000000000000000000000

            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWdp8GPcGqmhgzEFj9Z2nSpQVdday
            aPe4FMzqM9wib1+aHaaIzoHoLN9zW4K8y4SPykE3YVK3sVqW6Af0lfx3gg==
            -----END PUBLIC KEY-----
            """
    }

    /// One JWK that must be refused, named in the test report.
    struct RejectedJWK: Sendable, CustomTestStringConvertible {
        let name: String
        let jwk: JSONObject

        var testDescription: String { name }

        /// Apple's production key as a JWK (x and y of the point in ``appleProductionKeyDER``).
        static let validMembers: [(String, String)] = [
            ("kty", "EC"), ("crv", "P-256"),
            ("x", "Wdp8GPcGqmhgzEFj9Z2nSpQVddayaPe4FMzqM9wib18"),
            ("y", "mh2miM6B6Czfc1uCvMuEj8pBN2FSt7FalugH9JX8d4I"),
        ]

        static let validJWK = object(validMembers)

        static func object(_ members: [(String, String)]) -> JSONObject {
            JSONObject(members: members.map { JSONObject.Member(name: $0.0, value: .string($0.1)) })
        }

        static func replacing(_ name: String, with value: String?) -> JSONObject {
            var members = validMembers.filter { $0.0 != name }
            if let value { members.append((name, value)) }
            return object(members)
        }

        static let all: [RejectedJWK] = [
            RejectedJWK(name: "kty RSA", jwk: replacing("kty", with: "RSA")),
            RejectedJWK(name: "no kty", jwk: replacing("kty", with: nil)),
            RejectedJWK(name: "crv P-384", jwk: replacing("crv", with: "P-384")),
            RejectedJWK(name: "crv P-192", jwk: replacing("crv", with: "P-192")),
            RejectedJWK(name: "no y", jwk: replacing("y", with: nil)),
            RejectedJWK(
                name: "x of 31 bytes", jwk: replacing("x", with: "Wdp8GPcGqmhgzEFj9Z2nSpQVddayaPe4FMzqM9wibw")
            ),
            RejectedJWK(
                name: "x of 33 bytes", jwk: replacing("x", with: "AFnafBj3BqpoYMxBY_Wdp0qUFXXWsmj3uBTM6jPcIm9f")
            ),
            RejectedJWK(
                name: "x in standard base64", jwk: replacing("x", with: "Wdp8GPcGqmhgzEFj9Z2nSpQVddayaPe4FMzqM9wib1+=")
            ),
            RejectedJWK(
                name: "a point off the curve", jwk: replacing("y", with: "mh2miM6B6Czfc1uCvMuEj8pBN2FSt7FalugH9JX8d4M")
            ),
            RejectedJWK(name: "use enc", jwk: object(validMembers + [("use", "enc")])),
            RejectedJWK(name: "alg ES384", jwk: object(validMembers + [("alg", "ES384")])),
            RejectedJWK(name: "alg none", jwk: object(validMembers + [("alg", "none")])),
            RejectedJWK(name: "a private key (d)", jwk: object(validMembers + [
                ("d", "yy49oPcINGK2ps0LmtxpB6UTEOiITghHBif6wDqmJ3c"),
            ])),
            RejectedJWK(name: "x as a number", jwk: JSONObject(members: [
                .init(name: "kty", value: .string("EC")), .init(name: "crv", value: .string("P-256")),
                .init(name: "x", value: .number(JSONNumber(validatedLiteral: "1"))),
                .init(name: "y", value: .string("mh2miM6B6Czfc1uCvMuEj8pBN2FSt7FalugH9JX8d4I")),
            ])),
        ]
    }
}

// MARK: - Wycheproof JWS file

extension ECPublicKeyTests {
    struct JWSVectorFile: Decodable {
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let comment: String?
        let `public`: WycheproofJWK?
        let `private`: WycheproofJWK?
        let tests: [Test]
    }

    struct Test: Decodable {
        let tcId: Int
        let jws: String
        let result: String
    }
}
