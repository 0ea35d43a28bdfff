extension KeyRing {
    /// Replaces the SKAdNetwork key on `key`'s curve (P-256 for 2.1 and later, P-192 for 1.0 and 2.0) with
    /// `key`; results it verifies report environment `custom`. For testing your own signing only: genuine
    /// SKAdNetwork postbacks verify only with Apple's keys.
    package mutating func replaceSKAdNetworkKey(with key: ECPublicKey) {
        skAdNetworkKeys = skAdNetworkKeys.replacing(with: key)
    }
}
