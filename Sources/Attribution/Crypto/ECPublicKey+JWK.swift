extension ECPublicKey {
    /// Loads a P-256 public key from a JSON Web Key (RFC 7518 §6.2): `kty` `EC`, `crv` `P-256`, and `x`, `y`
    /// as base64url of exactly 32 bytes each.
    ///
    /// Refuses a private key (a `d` member), a key meant for anything but signatures (`use` other than `sig`, or
    /// `key_ops` without `verify`) and one bound to another algorithm (`alg` other than `ES256`), so a key published
    /// for encryption or for ES384 cannot be used to accept ES256 postbacks (RFC 7517 §4.2-§4.4). The point must be
    /// on the curve.
    /// - Parameter jwk: the JSON Web Key's members.
    /// - Throws: ``AttributionError`` with code `invalid-key` for anything but a P-256 public signing key for ES256.
    init(jwk: JSONObject) throws(AttributionError) {
        guard Self.member("kty", of: jwk, is: "EC") else {
            throw AttributionError(.invalidKey, "JWK kty is not \"EC\"")
        }
        guard Self.member("crv", of: jwk, is: Curve.p256.rawValue) else {
            throw AttributionError(.invalidKey, "JWK crv is not \"P-256\"")
        }
        guard !jwk.contains("d") else {
            throw AttributionError(.invalidKey, "the JWK is a private key (it has a \"d\" member)")
        }
        if jwk.contains("use") && !Self.member("use", of: jwk, is: "sig") {
            throw AttributionError(.invalidKey, "JWK use is not \"sig\"")
        }
        if jwk.contains("key_ops") && !Self.keyOperationsAllowVerify(jwk["key_ops"]) {
            throw AttributionError(
                .invalidKey, "JWK key_ops is not a list of distinct strings that includes \"verify\"")
        }
        if jwk.contains("alg") && !Self.member("alg", of: jwk, is: "ES256") {
            throw AttributionError(.invalidKey, "JWK alg is not \"ES256\"")
        }
        let x = try Self.coordinate(named: "x", of: jwk, curve: .p256)
        let y = try Self.coordinate(named: "y", of: jwk, curve: .p256)
        // SEC1 §2.3.3 uncompressed point under the fixed RFC 5480 header: libcrypto then checks it is on the curve,
        // the one thing that can still fail, since the header is ours.
        do {
            try self.init(derRepresentation: Curve.p256.subjectPublicKeyInfoPrefix + [0x04] + x + y, curve: .p256)
        } catch {
            throw AttributionError(.invalidKey, "the JWK point (x, y) is not on P-256")
        }
    }

    /// True when the member is a string of exactly these UTF-8 bytes: Swift's `==` would also match canonically
    /// equivalent text, and JSON names and values compare byte for byte (RFC 8259 §8.3).
    private static func member(_ name: String, of jwk: JSONObject, is expected: String) -> Bool {
        jwk[name]?.stringValue?.utf8.elementsEqual(expected.utf8) ?? false
    }

    /// True when `key_ops` is an array of distinct strings one of which is exactly `verify` (RFC 7517 §4.3:
    /// duplicates MUST NOT occur; `verify` is the operation a public key checks signatures with).
    private static func keyOperationsAllowVerify(_ value: JSONValue?) -> Bool {
        guard case .array(let elements)? = value else { return false }
        let operations = elements.compactMap(\.stringValue).map { Array($0.utf8) }
        return operations.count == elements.count && Set(operations).count == operations.count
            && operations.contains(Array("verify".utf8))
    }

    /// The big-endian bytes of one JWK coordinate, which RFC 7518 §6.2.1.2 fixes at the field size.
    private static func coordinate(
        named name: String, of jwk: JSONObject, curve: Curve
    ) throws(AttributionError) -> [UInt8] {
        guard let text = jwk[name]?.stringValue else {
            throw AttributionError(.invalidKey, "JWK \(name) is missing or not a string")
        }
        let bytes: [UInt8]
        do {
            bytes = try Base64URL.decode(text.utf8)
        } catch {
            throw AttributionError(.invalidKey, "JWK \(name) is not base64url: \(error.reason)")
        }
        guard bytes.count == curve.coordinateByteCount else {
            throw AttributionError(
                .invalidKey,
                "JWK \(name) holds \(bytes.count) bytes, not \(curve.coordinateByteCount)"
            )
        }
        return bytes
    }
}
