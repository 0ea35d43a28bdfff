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
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#if OPENSSL_VERSION_MAJOR == 3
// The one deprecated function used, on purpose and only here: deprecated in 3.0, still exported by every 3.x
// libcrypto, and the only way to read a point's Jacobian coordinates. The batch ES256 check compares x(R) with r
// as X == r * Z^2 (mod p), which saves the field inversion of EC_POINT_get_affine_coordinates (~5% of a
// verification). Declared here because OPENSSL_NO_DEPRECATED hides its declaration.
int EC_POINT_get_Jprojective_coordinates_GFp(const EC_GROUP *group, const EC_POINT *p, BIGNUM *x, BIGNUM *y,
                                             BIGNUM *z, BN_CTX *ctx);
#endif

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
