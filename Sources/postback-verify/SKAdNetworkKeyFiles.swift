import Attribution

/// `--skadnetwork-key-p256` and `--skadnetwork-key-p192`: key files that replace Apple's SKAdNetwork key for one
/// curve, to test your own signing. Each is refused at start-up unless it is an EC public key on that curve.
enum SKAdNetworkKeyFiles {
    /// Replaces the SKAdNetwork keys the options name in `ring`.
    static func load(_ options: CommandLineOptions, into ring: inout KeyRing) throws(UsageError) {
        let files: [(option: String, curve: ECPublicKey.Curve, path: String?)] = [
            ("--skadnetwork-key-p256", .p256, options.skAdNetworkP256KeyPath),
            ("--skadnetwork-key-p192", .p192, options.skAdNetworkP192KeyPath),
        ]
        for file in files {
            guard let path = file.path else { continue }
            do {
                ring.replaceSKAdNetworkKey(with: try ECPublicKey(keyFile: path, curve: file.curve))
            } catch {
                throw UsageError("key file \(path) (for \(file.option)) cannot be used: \(error.reason)")
            }
        }
    }
}
