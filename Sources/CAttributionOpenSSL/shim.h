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

#if !defined(OPENSSL_VERSION_MAJOR) || OPENSSL_VERSION_MAJOR < 3
#error "postback-verify needs OpenSSL 3 or later (libssl-dev on Debian 12 and Ubuntu 22.04 or later, Homebrew's openssl@3; LibreSSL and OpenSSL 1.1 lack the functions used here)"
#endif

// The deprecated functions used, on purpose and only here: deprecated in 3.0, still exported by every 3.x
// libcrypto. Declared here because OPENSSL_NO_DEPRECATED hides their declarations.
//
// The only way to read a point's Jacobian coordinates. The batch ES256 check compares x(R) with r as
// X == r * Z^2 (mod p), which saves the field inversion of EC_POINT_get_affine_coordinates (~5% of a
// verification).
int EC_POINT_get_Jprojective_coordinates_GFp(const EC_GROUP *group, const EC_POINT *p, BIGNUM *x, BIGNUM *y,
                                             BIGNUM *z, BN_CTX *ctx);
// Converts many points to affine coordinates (Z = 1) with one field inversion: the P-192 key's table of
// multiples is built with it, so that each addition from the table is a cheaper mixed addition.
int EC_POINTs_make_affine(const EC_GROUP *group, size_t num, EC_POINT *points[], BN_CTX *ctx);

/// Makes `points` affine (Z = 1), all with one field inversion. Returns 1 on success.
static inline int attribution_points_make_affine(const EC_GROUP *group, size_t count, EC_POINT *points[],
                                                 BN_CTX *context) {
    return EC_POINTs_make_affine(group, count, points, context);
}

/// Jacobian coordinates X and Z of `point`, not at infinity, with affine x = X / Z^2 (mod p). Returns 1 on success.
static inline int attribution_point_x_and_z(const EC_GROUP *group, const EC_POINT *point, BIGNUM *x, BIGNUM *z,
                                            BN_CTX *context) {
    return EC_POINT_get_Jprojective_coordinates_GFp(group, point, x, NULL, z, context);
}

#endif
