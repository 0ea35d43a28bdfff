internal import CAttributionOpenSSL

/// libcrypto, set up once for the process without its clean-up at exit.
///
/// By default libcrypto frees its global state (providers, fetched algorithms, thread-local data) in an `atexit`
/// handler. A process whose threads are still running when `main` returns (the command line's reader and workers,
/// a server's event loops) then races that handler: a worker ending at the same moment frees its own contexts
/// (``ThreadVerificationContexts``, freed when its thread ends) against a library being torn down under it. That
/// race corrupted the heap in about one `--jobs 16` run in twenty of the test suite's (`malloc_consolidate():
/// invalid chunk size`, signal 11 after every record was written; regression test: `FloodTests.endsCleanly`).
/// `OPENSSL_INIT_NO_ATEXIT` (OPENSSL_init_crypto(3)) keeps libcrypto's state until the process is gone, which the
/// operating system reclaims anyway.
///
/// It only takes effect if it is libcrypto's first initialisation in the process, so every path into libcrypto
/// that can come first (a key, SHA-256, a thread's contexts, a batch verifier, a key table) asks for it.
enum OpenSSLLibrary {
    private static let initialised = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Sets libcrypto up without its exit handler, once; later calls cost one check.
    static func setUp() {
        _ = initialised
    }
}
