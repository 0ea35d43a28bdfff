extension ECPublicKey: Hashable {
    /// Two keys are equal when their DER SubjectPublicKeyInfo bytes are, which also compares their curves.
    public static func == (lhs: ECPublicKey, rhs: ECPublicKey) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }

    /// Hashes the DER SubjectPublicKeyInfo bytes, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        derRepresentation.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
