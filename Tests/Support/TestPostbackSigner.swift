import CAttributionOpenSSL
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Signs AdAttributionKit postback bodies with the TEST-ONLY fixture key `Fixtures/keys/fixture-apple-identifier-0`
/// (kid `fixture-apple-identifier/0`), and SKAdNetwork 4.0 bodies with `Fixtures/keys/fixture-skadnetwork-p256`,
/// so tests can make as many distinct genuine postbacks as they need.
///
/// Signing goes through libcrypto's `EVP_DigestSign` directly, not through this package's verification code;
/// the payload is the valid tier-2 postback of `Fixtures/dedupe/` with the identifier given.
final class TestPostbackSigner {
    static let keyID = "fixture-apple-identifier/0"
    /// The CLI arguments that trust the fixture keys (paths relative to the package root, where tests run it).
    static let keyArguments = ["--key", "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem",
                               "--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p256.pem"]

    private let key: OpaquePointer
    private let skAdNetworkKey: OpaquePointer

    init() throws {
        key = try Self.privateKey("fixture-apple-identifier-0.private.pem")
        skAdNetworkKey = try Self.privateKey("fixture-skadnetwork-p256.private.pem")
    }

    private static func privateKey(_ file: String) throws -> OpaquePointer {
        let pem = try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent("keys/\(file)"))
        let bio = pem.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        defer { BIO_free(bio) }
        return try #require(PEM_read_bio_PrivateKey(bio, nil, nil, nil), "cannot read the fixture private key")
    }

    deinit {
        EVP_PKEY_free(key)
        EVP_PKEY_free(skAdNetworkKey)
    }

    /// One SKAdNetwork 4.0 body (one line) for `transactionID`, signed over the spec's section 9 string: the
    /// values of version, ad-network-id, source-identifier, app-id, transaction-id, redownload, source-app-id,
    /// fidelity-type, did-win and postback-sequence-index, joined by U+2063 (like `Fixtures/make-fixtures.py`).
    func skAdNetworkBody(transactionID: String) throws -> String {
        let signed = ["4.0", "fixture.skadnetwork", "5239", "1108187390", transactionID, "false", "1234567891", "1",
                      "true", "0"].joined(separator: "\u{2063}")
        let signature = try der(Array(signed.utf8), key: skAdNetworkKey).base64EncodedString()
        return #"{"version":"4.0","ad-network-id":"fixture.skadnetwork","source-identifier":"5239","#
            + #""app-id":1108187390,"transaction-id":"# + Self.quoted(transactionID)
            + #","redownload":false,"source-app-id":1234567891,"fidelity-type":1,"did-win":true,"#
            + #""postback-sequence-index":0,"attribution-signature":""# + signature + #""}"#
    }

    /// One compact postback body (one JSON Lines line) whose signed `postback-identifier` is `identifier`. Non-ASCII
    /// characters are written as `\uXXXX` escapes, so the exact code points reach the verifier whatever any
    /// library between here and there does to strings.
    func body(postbackIdentifier identifier: String, conversionValue: Int = 21) throws -> String {
        try body(postbackIdentifier: identifier, signedExtra: "", unsignedExtra: #","conversion-value":"#
                    + "\(conversionValue)")
    }

    /// The body above with `signedExtra` added at the end of the payload and `unsignedExtra` at the end of the
    /// body (each empty, or a comma and members), and no conversion value; `network` is written as it is (raw
    /// UTF-8, unescaped).
    func body(postbackIdentifier identifier: String, signedExtra: String, unsignedExtra: String,
              network: String = "fixture.adattributionkit") throws -> String {
        let payload = #"{"postback-identifier":"# + Self.quoted(identifier)
            + #","ad-network-identifier":""# + network + #"","advertised-item-identifier":1108187390,"#
            + #""conversion-type":"download","impression-type":"app-impression","did-win":true,"#
            + #""postback-sequence-index":0,"source-identifier":"1234","marketplace-identifier":"com.apple.AppStore""#
            + signedExtra + "}"
        let header = #"{"kid":"\#(Self.keyID)","alg":"ES256"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try sign(Array(signingInput.utf8))
        let token = signingInput + "." + Base64URL.encode(signature)
        return #"{"jws-string":""# + token + #"","ad-interaction-type":"click""# + unsignedExtra + "}"
    }

    /// `count` bodies with distinct upper-case UUID identifiers, made from `seed` (the same on every run).
    func bodies(count: Int, seed: UInt64) throws -> [String] {
        var random = SplitMix64(seed: seed)
        return try (0..<count).map { _ in
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6],
                                   bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13],
                                   bytes[14], bytes[15]))
            return try body(postbackIdentifier: uuid.uuidString)
        }
    }

    /// An ECDSA-SHA256 signature of `message` in DER, as SKAdNetwork's `attribution-signature` holds it.
    private func der(_ message: [UInt8], key: OpaquePointer) throws -> Data {
        let context = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(context) }
        try #require(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        try #require(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var der = [UInt8](repeating: 0, count: length)
        try #require(EVP_DigestSign(context, &der, &length, message, message.count) == 1)
        return Data(der[..<length])
    }

    /// A raw r‖s ES256 signature (RFC 7518 section 3.4) of `message`.
    private func sign(_ message: [UInt8]) throws -> [UInt8] {
        let der = [UInt8](try der(message, key: key))
        let parsed = try der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return try #require(d2i_ECDSA_SIG(nil, &cursor, buffer.count))
        }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer?, s: OpaquePointer?
        ECDSA_SIG_get0(parsed, &r, &s)
        var raw = [UInt8](repeating: 0, count: 64)
        raw.withUnsafeMutableBufferPointer { buffer in
            _ = BN_bn2binpad(r, buffer.baseAddress, 32)
            _ = BN_bn2binpad(s, buffer.baseAddress! + 32, 32)
        }
        return raw
    }

    /// A JSON string literal with every non-ASCII or control character as `\uXXXX` (UTF-16 escapes).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            if unit >= 0x20 && unit < 0x7F && unit != 0x22 && unit != 0x5C {
                out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            } else {
                out += String(format: "\\u%04x", unit)
            }
        }
        return out + "\""
    }
}
