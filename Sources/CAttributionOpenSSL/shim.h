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
#include <openssl/pem.h>
#include <openssl/x509.h>

#endif
