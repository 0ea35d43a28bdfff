import Foundation
import Testing
@testable import Attribution

/// Exact repeats skip the ECDSA but give the same record; nothing else gets through the cache.
@Suite("Verified-token cache")
struct VerifiedTokenCacheTests {
    static func appleBody() throws -> [UInt8] {
        try TestPaths.bytes(TestPaths.sharedFile("vectors/apple/postback-development-valid.json"))
    }

    @Test("A repeat is served from the cache and gives the same result")
    func repeatGivesSameResult() throws {
        let cache = VerifiedTokenCache()
        let verifier = ItemVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true), cache: cache)
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
        let verifier = ItemVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true), cache: cache)
        _ = verifier.verify(try Self.appleBody())
        let tampered = String(decoding: try Self.appleBody(), as: UTF8.self)
            .replacingOccurrences(of: "_1U4oQ\"", with: "_1U4oA\"")
        let result = verifier.verify(Array(tampered.utf8))
        #expect(result.firstError?.code == .badSignature)
    }

    @Test("A cache shared with a verifier that does not trust the key does not vouch for its tokens")
    func sharedCacheRespectsKeyRing() throws {
        let cache = VerifiedTokenCache()
        _ = ItemVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true), cache: cache).verify(try Self.appleBody())
        let strict = ItemVerifier(keyRing: KeyRing(), cache: cache).verify(try Self.appleBody())
        #expect(strict.firstError?.code == .untrustedKey)
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
