extension ItemVerifier {
    /// SKAdNetwork bodies (spec §9) are recognised here; verifying them is not built yet, so they are rejected
    /// rather than passed.
    func verifySKAdNetwork(_ body: JSONObject, into result: inout VerificationResult, findings: inout [Finding]) {
        findings.append(.error(.unsupportedVersion, "S1", "SKAdNetwork postbacks are not verified by this build"))
    }
}
