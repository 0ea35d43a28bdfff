/// A mistake on the command line or in its setup (a key file that cannot be used): exit status 2.
struct UsageError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
