/// Storing failed: the request is answered 500, so that Apple sends the postback again. `code` is stable.
public struct StorageFailure: Error, Sendable, CustomStringConvertible {
    let code: String
    let message: String

    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    /// The receiver is stopping and takes no more postbacks.
    static let stopping = StorageFailure("stopping", "the receiver is shutting down")
}
