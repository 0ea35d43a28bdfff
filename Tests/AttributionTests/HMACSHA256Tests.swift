@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Testing

@Suite("HMAC-SHA256 (libcrypto)")
struct HMACSHA256Tests {
    /// RFC 4231 section 4: test cases 1, 2 and 6 (a key longer than the block, hashed first).
    static let vectors: [(key: [UInt8], message: String, code: String)] = [
        ([UInt8](repeating: 0x0b, count: 20), "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ]

    @Test("matches RFC 4231's vectors", arguments: vectors.indices)
    func rfc4231(index: Int) {
        let vector = Self.vectors[index]
        let code = HMACSHA256.authenticationCode(for: Array(vector.message.utf8), key: vector.key)
        let hex = code.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
        #expect(hex == vector.code)
    }

    @Test("an empty message and an empty key are authenticated, not refused")
    func empty() {
        // HMAC-SHA256("", "") is a fixed, published value.
        let code = HMACSHA256.authenticationCode(for: [UInt8](), key: [UInt8]())
        let hex = code.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
        #expect(hex == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
