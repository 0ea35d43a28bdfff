import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Exact repeats skip the ECDSA but give the same record; nothing else gets through the cache.
@Suite("Verified-token cache")
struct VerifiedTokenCacheTests {
    static func appleBody() throws -> [UInt8] {
        try TestPaths.bytes(TestPaths.vector("reference/apple/postback-development-valid.json"))
    }

    @Test("A repeat is served from the cache and gives the same result")
    func repeatGivesSameResult() throws {
        let cache = VerifiedTokenCache()
        let verifier = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true), cache: cache)
        let first = verifier.verify(try Self.appleBody())
        #expect(cache.count == 1)
        let second = verifier.verify(try Self.appleBody())
        #expect(cache.count == 1)
        #expect(first.verdict == .valid && second.verdict == .valid)
        #expect(first.signature == second.signature)
        #expect(first.fields == second.fields)
        #expect(first.unsigned == second.unsigned)
        #expect(first.errors == second.errors && first.warnings == second.warnings)
        #expect(first.tier == second.tier)
    }

    @Test("A token differing in one signature byte is not accepted from the cache")
    func tamperedSignatureMisses() throws {
        let cache = VerifiedTokenCache()
        let verifier = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true), cache: cache)
        _ = verifier.verify(try Self.appleBody())
        let tampered = String(decoding: try Self.appleBody(), as: UTF8.self)
            .replacingOccurrences(of: "_1U4oQ\"", with: "_1U4oA\"")
        let result = verifier.verify(Array(tampered.utf8))
        #expect(result.firstError?.code == .badSignature)
    }

    @Test("A cache shared by key rings that map one kid to different keys vouches only under the verifying key")
    func sharedCacheRespectsKey() throws {
        // The same kid, bound to the real signing key in one ring and to another key in the other: without the
        // key in the cache entry, the second verifier would accept the token from the cache.
        let kid = "fixture-apple-identifier/0"
        let token = try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(
            "valid/postback-jws").appendingPathComponent(try Self.firstPostbackToken()))
            .split(separator: UInt8(ascii: "\n")).first { $0.first != UInt8(ascii: "#") }
        let line = try #require(token)
        func ring(keyFile: String) throws -> KeyRing {
            var ring = KeyRing()
            let pem = String(decoding: try TestPaths.bytes(
                TestPaths.fixtures.appendingPathComponent("keys/\(keyFile)")), as: UTF8.self)
            try ring.add(try ECPublicKey(pemRepresentation: pem), keyID: kid)
            return ring
        }
        let cache = VerifiedTokenCache()
        let genuine = AttributionVerifier(keyRing: try ring(keyFile: "fixture-apple-identifier-0.pem"), cache: cache)
        #expect(genuine.verify(line).signature == .verified)
        #expect(cache.count == 1)
        let other = AttributionVerifier(keyRing: try ring(keyFile: "fixture.adattributionkit.pem"), cache: cache)
        let result = other.verify(line)
        #expect(result.signature == .failed)
        #expect(result.firstError?.code == .badSignature)
    }

    /// A valid bare postback token among the fixtures (signed with the fixture postback key).
    static func firstPostbackToken() throws -> String {
        let names = try FileManager.default.contentsOfDirectory(
            atPath: TestPaths.fixtures.appendingPathComponent("valid/postback-jws").path)
        return try #require(names.sorted().first { $0.hasSuffix(".jws") && !$0.contains("crlf") })
    }

    @Test("The cache never holds more than its capacity")
    func bounded() throws {
        let cache = VerifiedTokenCache(capacity: 3)
        let key = ApplePublishedKey.production.publicKey
        let signature = [UInt8](repeating: 7, count: 64)
        for index in 0..<10 {
            cache.insert(signingInput: SHA256Digest(of: Array("token \(index)".utf8)), signature: signature,
                         verifiedBy: key)
            #expect(cache.count <= 3)
        }
        let last = SHA256Digest(of: Array("token 9".utf8))
        #expect(cache.contains(signingInput: last, signature: signature, verifiedBy: key))
        #expect(!cache.contains(signingInput: last, signature: [UInt8](repeating: 8, count: 64), verifiedBy: key))
        #expect(!cache.contains(signingInput: last, signature: signature,
                                verifiedBy: ApplePublishedKey.development0.publicKey))
    }
}

extension VerifiedTokenCacheTests {
    @Test("Sharded: many tokens never exceed the capacity, and the newest is remembered",
          arguments: [1, 5, 16, 64, 100])
    func shardedBound(capacity: Int) {
        let cache = VerifiedTokenCache(capacity: capacity)
        let key = ApplePublishedKey.production.publicKey
        let signature = [UInt8](repeating: 1, count: 64)
        for index in 0..<1_000 {
            let digest = SHA256Digest(of: Array("token \(index)".utf8))
            cache.insert(signingInput: digest, signature: signature, verifiedBy: key)
            #expect(cache.contains(signingInput: digest, signature: signature, verifiedBy: key))
        }
        #expect(cache.count <= capacity)
        #expect(cache.count >= 1)
    }
}
