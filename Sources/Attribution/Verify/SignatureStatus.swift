/// How far signature checking got, as the contract's `signature` member reports it.
public enum SignatureStatus: String, Sendable, Hashable {
    /// The signature verified against a trusted key.
    case verified
    /// A trusted key was found and the signature did not verify (or was not a well-formed signature).
    case failed
    /// Checking was not reached: malformed input, unsupported algorithm, unknown or untrusted key.
    case notChecked = "not-checked"
}
