internal import CAttributionOpenSSL

/// A table of multiples of one P-256 public point Q, so u2·Q costs what u1·G costs: a copy of libcrypto's P-256
/// group whose generator is Q, with the group's precomputed multiples of its generator.
///
/// `EC_POINT_mul` computes a multiple of the generator from the group's table (for P-256's own G a table built
/// into libcrypto) and a multiple of any other point from scratch, doubling and adding a fresh window of
/// multiples per call; the second part is most of what `EVP_PKEY_verify` spends. Postbacks come signed by one
/// key or a handful, so a table per trusted key is built once and serves every later signature. Building one
/// costs as much as the table saves over several hundred signatures, so ``P256KeyTables`` builds it only for a
/// key that has already verified more.
///
/// Shared read-only by all threads once built: `EC_POINT_mul` only reads the group (its `const EC_GROUP *`), and
/// each thread passes its own `BN_CTX` and result points. Nil where libcrypto cannot precompute (see the shim):
/// the verifier then multiplies Q as before.
final class P256KeyTable: @unchecked Sendable {
    // Safe to share across threads: written only in `init`, before the table is published under a lock
    // (``P256KeyTables``); afterwards libcrypto only reads it (openssl-threads(7): concurrent use of an object no
    // call modifies).
    let group: OpaquePointer

    /// Builds the table for `point`, an uncompressed SEC 1 point `04 || x || y` on P-256 (65 bytes).
    init?(uncompressedPoint point: [UInt8]) {
        OpenSSLLibrary.setUp()
        guard point.count == 65, let base = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        let context = BN_CTX_new()
        let generator = EC_POINT_new(base)
        let copy = EC_GROUP_dup(base)
        defer {
            EC_POINT_free(generator)
            BN_CTX_free(context)
            EC_GROUP_free(base)
            OpenSSLErrorQueue.clear()
        }
        guard let context, let generator, let copy,
              point.withUnsafeBufferPointer({
                  EC_POINT_oct2point(base, generator, $0.baseAddress, $0.count, context)
              }) == 1,
              EC_POINT_is_at_infinity(base, generator) == 0,
              EC_GROUP_set_generator(copy, generator, EC_GROUP_get0_order(base), EC_GROUP_get0_cofactor(base)) == 1,
              attribution_precompute_generator_multiples(copy, context) == 1 else {
            EC_GROUP_free(copy)
            return nil
        }
        group = copy
    }

    deinit {
        EC_GROUP_free(group)
    }
}
