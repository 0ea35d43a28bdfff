internal import CAttributionOpenSSL

/// The one PEM block of a text (RFC 7468): its label (`PUBLIC KEY`) and the DER bytes its base64 carries.
///
/// A key file holding two blocks is refused rather than read up to the first: which key was meant is unclear.
struct PEMBlock {
    /// The longest key file read: a P-256 public key PEM is 178 bytes, so anything near this is not one.
    static let maximumTextByteCount = 64 * 1024

    /// The text between `-----BEGIN ` and `-----`, e.g. `PUBLIC KEY`.
    let label: String

    /// The decoded base64 body.
    let der: [UInt8]

    /// Reads the single PEM block of `text`; explanatory text around it is allowed (RFC 7468 §2), headers are not.
    init(parsing text: String) throws(AttributionError) {
        guard text.utf8.count <= Self.maximumTextByteCount else {
            throw AttributionError(.invalidKey, "more than \(Self.maximumTextByteCount) bytes of PEM text")
        }
        var text = text
        let beginCount = text.ranges(of: "-----BEGIN ").count
        guard beginCount == 1 else {
            throw AttributionError(
                .invalidKey,
                beginCount == 0 ? "no PEM block (-----BEGIN ...-----)" : "\(beginCount) PEM blocks, expected one"
            )
        }
        let block = text.withUTF8 { utf8 -> Result<PEMBlock, AttributionError> in
            guard let bio = BIO_new_mem_buf(utf8.baseAddress, Int32(utf8.count)) else {
                OpenSSLErrorQueue.clear()
                return .failure(AttributionError(.invalidKey, "out of memory reading the PEM text"))
            }
            defer { BIO_free(bio) }
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            let status = PEM_read_bio(bio, &name, &header, &data, &length)
            defer {
                CRYPTO_free(name, #fileID, #line)
                CRYPTO_free(header, #fileID, #line)
                CRYPTO_free(data, #fileID, #line)
            }
            guard status == 1, let name, let header, let data else {
                // libcrypto's reasons (`bad end line`, `bad base64 decode`) name its parser, not the file.
                OpenSSLErrorQueue.clear()
                return .failure(AttributionError(
                    .invalidKey,
                    "a damaged PEM block (its BEGIN and END lines must match and hold base64 between them)"
                ))
            }
            // Proc-Type/DEK-Info headers mean an encrypted legacy key, never a public key.
            guard header.pointee == 0 else {
                return .failure(AttributionError(.invalidKey, "a PEM block with headers"))
            }
            let der = Array(UnsafeBufferPointer(start: data, count: length))
            return .success(PEMBlock(label: String(cString: name), der: der))
        }
        self = try block.get()
    }

    private init(label: String, der: [UInt8]) {
        self.label = label
        self.der = der
    }
}
