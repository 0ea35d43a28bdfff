import Foundation

extension ECPublicKey {
    /// The public key in a key file's bytes: PEM (`-----BEGIN PUBLIC KEY-----`) or DER SubjectPublicKeyInfo, refused
    /// unless it is an EC public key on `curve` (spec section 3: a bad key file is refused when loaded, not later).
    ///
    /// A refusal says what the file looks like (empty, text without a PEM block, bare base64, a private key, a
    /// certificate, binary that is not DER) and what is expected, never libcrypto's internal error names.
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - curve: the curve the key must be on; P-256 by default.
    /// - Throws: ``AttributionError`` with code `invalid-key`, saying what the file looks like and what is expected.
    public init(keyFileContents bytes: [UInt8], curve: Curve = .p256) throws(AttributionError) {
        let expected = "expected an EC \(curve) public key, PEM (-----BEGIN PUBLIC KEY-----) or DER"
        guard !bytes.isEmpty else {
            throw AttributionError(.invalidKey, "the file is empty; \(expected)")
        }
        let text = String(bytes: bytes, encoding: .utf8)
        if let text, text.contains("-----BEGIN") {
            let block: PEMBlock
            do {
                block = try PEMBlock(parsing: text)
            } catch {
                throw AttributionError(.invalidKey, "\(error.reason); \(expected)")
            }
            guard block.label.utf8.elementsEqual("PUBLIC KEY".utf8) else {
                // A private key or a certificate: the refusal names the command that gives the public key.
                try self.init(pemRepresentation: text, curve: curve)
                return
            }
            do {
                try self.init(derRepresentation: block.der, curve: curve)
            } catch {
                throw AttributionError(.invalidKey, "\(error.reason); \(expected)")
            }
        } else if bytes.first == 0x30 {  // a DER SEQUENCE, as every SubjectPublicKeyInfo starts
            do {
                try self.init(derRepresentation: bytes, curve: curve)
            } catch {
                throw AttributionError(.invalidKey, "\(error.reason); \(expected)")
            }
        } else if let text, Self.isBareBase64(text) {
            throw AttributionError(
                .invalidKey,
                "the file holds bare base64 without PEM lines (as Apple's pages print keys); put it between "
                    + "-----BEGIN PUBLIC KEY----- and -----END PUBLIC KEY----- lines, or decode it to DER "
                    + "(base64 -d); \(expected)")
        } else if let text, Self.isPlainText(text) {
            throw AttributionError(.invalidKey, "the file is text with no PEM block; \(expected)")
        } else {
            throw AttributionError(
                .invalidKey,
                "the file is binary but not DER (it does not start with a SEQUENCE); \(expected)")
        }
    }

    /// The public key in the key file at `path` (see ``init(keyFileContents:curve:)``); a file that cannot be read
    /// is refused with the system's reason (`No such file or directory`, `Permission denied`, `Is a directory`).
    /// - Parameters:
    ///   - path: the key file's path.
    ///   - curve: the curve the key must be on; P-256 by default.
    /// - Throws: ``AttributionError`` with code `invalid-key` for a file that cannot be read or holds no such key.
    public init(keyFile path: String, curve: Curve = .p256) throws(AttributionError) {
        let bytes: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            // A public key is a few hundred bytes; reading one byte past PEM's cap is enough to refuse a big file.
            bytes = [UInt8](try handle.read(upToCount: PEMBlock.maximumTextByteCount + 1) ?? Data())
        } catch {
            throw AttributionError(.invalidKey, "cannot read the key file: \(Self.systemReason(error))")
        }
        guard bytes.count <= PEMBlock.maximumTextByteCount else {
            throw AttributionError(
                .invalidKey,
                "the file is over \(PEMBlock.maximumTextByteCount) bytes, far more than a public key (under 200)")
        }
        try self.init(keyFileContents: bytes, curve: curve)
    }

    /// Whether a text is only base64 (with line breaks and spaces), long enough to be a key: Apple's published form.
    private static func isBareBase64(_ text: String) -> Bool {
        var count = 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "+", "/", "=":
                count += 1
            case " ", "\t", "\r", "\n":
                continue
            default:
                return false
            }
        }
        return count >= 64
    }

    /// Whether a text has no control characters but line breaks and tabs: a text file, not binary.
    private static func isPlainText(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" }
    }

    /// The operating system's words for why a file could not be read, from Foundation's error.
    private static func systemReason(_ error: any Error) -> String {
        let error = error as NSError
        let posix = error.domain == NSPOSIXErrorDomain
            ? error : error.userInfo[NSUnderlyingErrorKey] as? NSError
        if let posix, posix.domain == NSPOSIXErrorDomain, let text = strerror(Int32(posix.code)) {
            return String(cString: text)  // "No such file or directory", "Permission denied", "Is a directory"
        }
        return error.localizedDescription
    }
}
