/// The options that set up verification, as every program that verifies takes them (`postback-verify` and
/// `postback-receiver` alike): `--key KID=PATH`, `--allow-development`, `--skadnetwork-key-p256 PATH`,
/// `--skadnetwork-key-p192 PATH`, `--strict` and `--max-impression-age DURATION`.
///
/// One definition of what each value means and of the message when it cannot be used, and one place that builds the
/// key ring and the policy from them, so a flag means the same, and fails with the same words, in every program.
/// Values of the wrong form throw ``AttributionError`` with code `invalid-option`; key files that are not keys throw
/// it with `invalid-key` from ``keyRing()``.
public struct VerifierOptions: Sendable {
    /// A key file trusted for one kid (`--key KID=PATH`).
    struct KeyFile: Sendable, Equatable {
        /// The kid the key is trusted for (before the first `=`).
        public let keyID: String
        /// The key file's path (after the first `=`).
        public let path: String
    }

    /// Every `--key`, in the order given.
    private(set) var keyFiles: [KeyFile] = []
    /// `--allow-development`: also trust Apple's development kids (never on production traffic).
    public var allowsDevelopmentKeys = false
    /// `--skadnetwork-key-p256` and `--skadnetwork-key-p192`: files whose keys replace Apple's SKAdNetwork key for
    /// that curve (testing your own signing).
    public private(set) var skAdNetworkKeyPaths: [ECPublicKey.Curve: String] = [:]
    /// `--strict`: warnings become rejections (code `rule-warning`).
    public var isStrict = false
    /// `--max-impression-age`, in milliseconds: I3 warns on impressions older than this.
    public private(set) var maximumImpressionAge: UInt64?

    /// No option given: Apple's production keys only, not strict, no impression-age limit.
    public init() {}

    /// The option that names the SKAdNetwork replacement key on `curve`.
    /// - Parameter curve: the key's curve.
    /// - Returns: `--skadnetwork-key-p256` or `--skadnetwork-key-p192`.
    public static func skAdNetworkKeyOption(_ curve: ECPublicKey.Curve) -> String {
        curve == .p256 ? "--skadnetwork-key-p256" : "--skadnetwork-key-p192"
    }

    /// Adds `--key`'s value, `KID=PATH` (the kid is everything before the first `=`).
    /// - Parameter argument: `--key`'s value.
    /// - Throws: ``AttributionError`` with code `invalid-option` when it has no `=`, or nothing before or after it.
    public mutating func addKey(_ argument: String) throws(AttributionError) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
              argument.index(after: equals) != argument.endIndex else {
            throw AttributionError(.invalidOption, "--key takes KID=PATH, got \(argument)")
        }
        keyFiles.append(KeyFile(keyID: String(argument[..<equals]),
                                path: String(argument[argument.index(after: equals)...])))
    }

    /// Sets the SKAdNetwork replacement key file for `curve` (each option once).
    /// - Parameters:
    ///   - curve: the curve of the key the file replaces.
    ///   - path: the key file (read by ``keyRing()``).
    /// - Throws: ``AttributionError`` with code `invalid-option` when the option for `curve` was given already.
    public mutating func replaceSKAdNetworkKey(_ curve: ECPublicKey.Curve, path: String) throws(AttributionError) {
        guard skAdNetworkKeyPaths[curve] == nil else {
            throw AttributionError(.invalidOption, "\(Self.skAdNetworkKeyOption(curve)) given twice")
        }
        skAdNetworkKeyPaths[curve] = path
    }

    /// Sets `--max-impression-age` from a duration: `30d`, `12h`, `90m`, `3600s` or a bare number of seconds.
    /// - Parameter duration: `--max-impression-age`'s value.
    /// - Throws: ``AttributionError`` with code `invalid-option` for anything else.
    public mutating func setMaximumImpressionAge(_ duration: String) throws(AttributionError) {
        guard let milliseconds = VerificationPolicy.milliseconds(inDuration: duration) else {
            throw AttributionError(
                .invalidOption, "--max-impression-age takes a duration like 30d, 12h, 90m or 3600s, not \(duration)")
        }
        maximumImpressionAge = milliseconds
    }

    /// Apple's keys plus every `--key`, with the SKAdNetwork replacement keys; a file that is not a public key on
    /// the curve it is for throws `invalid-key`, naming the file and the option or kid it was given for.
    /// - Returns: the key ring, development keys included with ``allowsDevelopmentKeys``.
    /// - Throws: ``AttributionError`` with code `invalid-key` for a key file that cannot be read or used.
    public func keyRing() throws(AttributionError) -> KeyRing {
        var ring = KeyRing(allowingDevelopmentKeys: allowsDevelopmentKeys)
        for file in keyFiles {
            do {
                try ring.add(ECPublicKey(keyFile: file.path), keyID: file.keyID)
            } catch {
                throw AttributionError(.invalidKey, "key file \(file.path) (for kid \(file.keyID)) cannot be used: "
                    + Self.withRemedy(error.reason, "give the kid's P-256 public key, PEM or DER"))
            }
        }
        for curve in [ECPublicKey.Curve.p256, .p192] {
            guard let path = skAdNetworkKeyPaths[curve] else { continue }
            do {
                ring.replaceSKAdNetworkKey(with: try ECPublicKey(keyFile: path, curve: curve))
            } catch {
                throw AttributionError(.invalidKey, "key file \(path) (for \(Self.skAdNetworkKeyOption(curve))) "
                    + "cannot be used: " + Self.withRemedy(error.reason, "give a public key on that curve, PEM or DER"))
            }
        }
        return ring
    }

    /// The key file's reason, with `remedy` after it unless the reason says what to do already (a certificate, a
    /// private key, a wrong curve: ``ECPublicKey/init(keyFile:curve:)`` names the fix; an unreadable file: it does
    /// not).
    static func withRemedy(_ reason: String, _ remedy: String) -> String {
        reason.contains("give ") || reason.contains("expected ") ? reason : "\(reason); \(remedy)"
    }

    /// The policy `--strict` and `--max-impression-age` ask for.
    public var policy: VerificationPolicy {
        VerificationPolicy(isStrict: isStrict, maximumImpressionAge: maximumImpressionAge)
    }

    /// A verifier with ``keyRing()`` and ``policy``.
    /// - Returns: the verifier the options ask for.
    /// - Throws: what ``keyRing()`` throws.
    public func verifier() throws(AttributionError) -> AttributionVerifier {
        AttributionVerifier(keyRing: try keyRing(), policy: policy)
    }
}
