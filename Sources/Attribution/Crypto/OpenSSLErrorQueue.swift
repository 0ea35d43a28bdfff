internal import CAttributionOpenSSL

/// libcrypto's thread-local error queue, emptied after every failed call so no stale error leaks into the next one.
///
/// libcrypto reports failures by pushing entries onto a per-thread queue; a queue left non-empty makes later,
/// unrelated calls on the same thread look as if they failed (STYLE: "Drain or clear the OpenSSL error queue").
enum OpenSSLErrorQueue {
    /// The most entries one reason quotes; a bad key can push a dozen decoder errors that say the same thing.
    private static let maximumQuotedEntries = 3

    /// Empties the queue and returns its entries as one readable line, e.g. for a key that failed to load.
    static func drainedReason() -> String {
        var entries: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            guard entries.count < maximumQuotedEntries else { continue }
            let library = ERR_lib_error_string(code).map { String(cString: $0) } ?? "libcrypto"
            let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
            let entry = "\(library): \(reason)"
            if !entries.contains(entry) { entries.append(entry) }
        }
        return entries.isEmpty ? "no detail from libcrypto" : entries.joined(separator: "; ")
    }

    /// True when this thread's queue holds no error (tests check that failures leave it so).
    static var isEmpty: Bool {
        ERR_peek_error() == 0
    }

    /// Empties the queue without reading it: a failed verification needs no more than `false`.
    static func clear() {
        ERR_clear_error()
    }
}
