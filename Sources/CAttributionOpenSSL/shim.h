#ifndef C_ATTRIBUTION_OPENSSL_SHIM_H
#define C_ATTRIBUTION_OPENSSL_SHIM_H

// Hide every API deprecated as of OpenSSL 3.0 so none can be used by accident.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#if OPENSSL_VERSION_MAJOR == 3
// The deprecated functions used, on purpose and only here: deprecated in 3.0, still exported by every 3.x
// libcrypto. Declared here because OPENSSL_NO_DEPRECATED hides their declarations; other major versions take
// the fallbacks below rather than assume the functions are still exported.
//
// The only way to read a point's Jacobian coordinates. The batch ES256 check compares x(R) with r as
// X == r * Z^2 (mod p), which saves the field inversion of EC_POINT_get_affine_coordinates (~5% of a
// verification).
int EC_POINT_get_Jprojective_coordinates_GFp(const EC_GROUP *group, const EC_POINT *p, BIGNUM *x, BIGNUM *y,
                                             BIGNUM *z, BN_CTX *ctx);
// Converts many points to affine coordinates (Z = 1) with one field inversion: the P-192 key's table of
// multiples is built with it, so that each addition from the table is a cheaper mixed addition.
int EC_POINTs_make_affine(const EC_GROUP *group, size_t num, EC_POINT *points[], BN_CTX *ctx);
#endif

/// Makes `points` affine (Z = 1): in one batch where libcrypto offers it, else point by point through the affine
/// coordinates (EC_POINT_set_affine_coordinates sets Z = 1). Returns 1 on success.
static inline int attribution_points_make_affine(const EC_GROUP *group, size_t count, EC_POINT *points[],
                                                 BN_CTX *context) {
#if OPENSSL_VERSION_MAJOR == 3
    return EC_POINTs_make_affine(group, count, points, context);
#else
    BIGNUM *x = BN_new(), *y = BN_new();
    int ok = x != NULL && y != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        ok = EC_POINT_get_affine_coordinates(group, points[i], x, y, context)
            && EC_POINT_set_affine_coordinates(group, points[i], x, y, context);
    }
    BN_free(x);
    BN_free(y);
    return ok;
#endif
}

/// Coordinates X and Z of `point`, not at infinity, with affine x = X / Z^2 (mod p): Jacobian coordinates where
/// libcrypto offers them, else the affine x and Z = 1. Returns 1 on success.
static inline int attribution_point_x_and_z(const EC_GROUP *group, const EC_POINT *point, BIGNUM *x, BIGNUM *z,
                                            BN_CTX *context) {
#if OPENSSL_VERSION_MAJOR == 3
    return EC_POINT_get_Jprojective_coordinates_GFp(group, point, x, NULL, z, context);
#else
    return EC_POINT_get_affine_coordinates(group, point, x, NULL, context) && BN_one(z);
#endif
}

#endif
