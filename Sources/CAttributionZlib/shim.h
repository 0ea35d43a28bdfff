#ifndef C_ATTRIBUTION_ZLIB_SHIM_H
#define C_ATTRIBUTION_ZLIB_SHIM_H

// Only the gzip writer of `postback-verify export --to` (Sources/postback-verify/Export/GzipStream.swift) imports
// this module.
#include <zlib.h>

/// deflateInit2, which Swift cannot call: it is a macro passing the library's version and the stream's size, so
/// that zlib can refuse a header that does not match it.
static inline int attribution_zlib_deflate_init_gzip(z_stream *stream, int level) {
    // 15 + 16: a 32 KiB window with a gzip header and trailer (RFC 1952) instead of a zlib one; memory level 8 is
    // zlib's default.
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif
