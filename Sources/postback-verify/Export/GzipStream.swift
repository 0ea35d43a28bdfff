internal import CAttributionZlib

/// zlib's deflate writing one gzip member (RFC 1952): bytes in, compressed bytes out, the header first and the
/// CRC-32 and length trailer at ``finish()``. The only importer of `CAttributionZlib`: it owns the `z_stream`
/// (freed on release) and the pointers into it, which never leave this type.
final class GzipStream {
    /// What zlib said when it failed (it fails only without memory or on misuse), for the error message.
    struct Failure: Error {
        let reason: String
    }

    private var stream = z_stream()
    private var isFinished = false
    /// The output of one deflate call, reused.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    /// Starts a gzip member at zlib's default level (6): most of level 9's ratio at a fraction of its time.
    init() throws(Failure) {
        let status = attribution_zlib_deflate_init_gzip(&stream, Z_DEFAULT_COMPRESSION)
        guard status == Z_OK else { throw Failure(reason: "zlib cannot start (status \(status))") }
    }

    deinit {
        deflateEnd(&stream)
    }

    /// Compresses `bytes`, appending what deflate gives out now to `output` (often nothing: it buffers a block).
    func compress(_ bytes: [UInt8], into output: inout [UInt8]) throws(Failure) {
        precondition(!isFinished, "compress after finish")
        try run(bytes, flush: Z_NO_FLUSH, into: &output)
    }

    /// Ends the member: everything still buffered, then the trailer, appended to `output`.
    func finish(into output: inout [UInt8]) throws(Failure) {
        precondition(!isFinished, "finish twice")
        isFinished = true
        try run([], flush: Z_FINISH, into: &output)
    }

    private func run(_ bytes: [UInt8], flush: Int32, into output: inout [UInt8]) throws(Failure) {
        var input = bytes
        let status = input.withUnsafeMutableBufferPointer { inputBytes -> Int32 in
            stream.next_in = inputBytes.baseAddress
            stream.avail_in = UInt32(inputBytes.count)
            defer {
                stream.next_in = nil
                stream.avail_in = 0
            }
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    defer {
                        stream.next_out = nil
                        stream.avail_out = 0
                    }
                    let status = deflate(&stream, flush)
                    return (status, out.count - Int(stream.avail_out))
                }
                output.append(contentsOf: chunk[..<produced])
                switch status {
                case Z_STREAM_END:
                    return Z_OK
                case Z_OK, Z_BUF_ERROR:
                    // Done with this input once deflate left room in the chunk (it had nothing more to give); with
                    // Z_FINISH, only Z_STREAM_END ends it.
                    if flush != Z_FINISH && produced < chunk.count { return Z_OK }
                    if status == Z_BUF_ERROR && produced == 0 { return Z_BUF_ERROR }
                default:
                    return status
                }
            }
        }
        guard status == Z_OK else { throw Failure(reason: "zlib failed to compress (status \(status))") }
    }
}
