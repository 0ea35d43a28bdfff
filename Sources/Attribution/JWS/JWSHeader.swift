/// The protected header of an ES256 JWS, read strictly (RFC 7515 §4.1, RFC 7518 §3.4).
///
/// Only `alg`, `kid` and `crit` matter. Key-carrying members (`jwk`, `jku`, `x5c`, `x5u`) are deliberately
/// ignored: a key named by the token proves nothing about who signed it.
struct JWSHeader: Sendable, Hashable {
    /// The decoded `kid` (after JSON unescaping: Apple writes `apple-development-identifier\/1`).
    let keyID: String
    /// The header as decoded, for reporting.
    let object: JSONObject

    /// Parses header JSON (J1) and applies J2 (`alg` exactly `ES256`, no `crit`) and the `kid` part of J3.
    ///
    /// - Returns: the header, or the error (with its rule) that rejects the token.
    static func read(_ headerBytes: [UInt8]) -> Result<JWSHeader, AttributionError> {
        let object: JSONObject
        do {
            guard let parsed = try StrictJSONParser.parse(headerBytes).objectValue else {
                return .failure(AttributionError(.j1, "the JWS header is not a JSON object"))
            }
            object = parsed
        } catch {
            return .failure(AttributionError.malformed("the JWS header is not valid JSON: \(error.reason)"))
        }
        switch object["alg"] {
        case .string(let alg) where alg.isExactlyEqual(to: "ES256"):
            break
        case .string(let other):
            return .failure(AttributionError(.j2, "alg \(JSONValue.quoted(other)) is not ES256"))
        case nil:
            return .failure(AttributionError(.j2, "the JWS header has no alg"))
        case let other?:
            return .failure(AttributionError(.j2, "alg is \(other.typeName), not the string ES256"))
        }
        if object.contains("crit") {
            return .failure(AttributionError(.j2, "the JWS header has crit, which this verifier refuses"))
        }
        guard case .string(let keyID)? = object["kid"], !keyID.isEmpty else {
            return .failure(AttributionError(.j3, "the JWS header has no non-empty string kid"))
        }
        return .success(JWSHeader(keyID: keyID, object: object))
    }
}
