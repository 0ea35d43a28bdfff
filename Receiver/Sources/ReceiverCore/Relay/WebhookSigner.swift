@_spi(Servers) import Attribution
import Foundation

/// Signs webhook requests as the Standard Webhooks specification says
/// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md): the signed content
/// is `webhook-id.webhook-timestamp.body`, and `webhook-signature` is `v1,` then the base64 of its HMAC-SHA256 under
/// the secret.
public struct WebhookSigner: Sendable {
    /// The secret's bytes (the base64 after `whsec_`, decoded).
    private let key: [UInt8]

    /// The signer of the secret in `text`: `whsec_` then standard base64 of at least 16 bytes (the form the
    /// specification's libraries take and make); one line end after it is ignored.
    /// - Parameters:
    ///   - text: the secret file's content.
    ///   - path: the file, for the message.
    /// - Throws: ``StartupFailure`` (input file) saying what the file must hold.
    public init(secret text: String, path: String) throws(StartupFailure) {
        var secret = Substring(text)
        while let last = secret.utf8.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") {
            secret = secret.dropLast()
        }
        let prefix = "whsec_"
        guard secret.utf8.starts(with: prefix.utf8),
              let key = Data(base64Encoded: String(secret.dropFirst(prefix.count))), key.count >= 16 else {
            throw StartupFailure(.inputFile, "--webhook-secret \(path) must hold whsec_ then the standard base64 of "
                                 + "at least 16 random bytes (make one with: printf 'whsec_%s\\n' \"$(head -c 32 "
                                 + "/dev/urandom | base64)\" > \(path))")
        }
        self.key = Array(key)
    }

    /// Reads the secret file at `path`.
    /// - Parameter path: the `--webhook-secret` file.
    /// - Throws: ``StartupFailure`` (input file) when it cannot be read or holds no secret.
    public init(contentsOfFile path: String) throws(StartupFailure) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw StartupFailure(.inputFile, "--webhook-secret \(path) cannot be read; give a file readable by the "
                                 + "receiver holding whsec_ and a base64 secret")
        }
        try self.init(secret: text, path: path)
    }

    /// The `webhook-signature` value of a message.
    /// - Parameters:
    ///   - id: the `webhook-id` (the same on every attempt of one message).
    ///   - timestamp: the `webhook-timestamp`, seconds since 1970.
    ///   - body: the request's body, exactly.
    /// - Returns: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
    func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        let signed = Array("\(id).\(timestamp).".utf8) + body
        return "v1," + Data(HMACSHA256.authenticationCode(for: signed, key: key)).base64EncodedString()
    }
}
