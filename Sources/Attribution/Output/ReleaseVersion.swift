/// This release, as `--version` prints it. In the library, not in a binary, so that every binary built from one
/// commit (`postback-verify`, and `postback-receiver` in Receiver/) prints the same line and a release changes it
/// in one place.
@_spi(CommandLine) @_spi(Servers) public enum ReleaseVersion {
    /// `postback-verify 1.0.0 (CLI contract version 1.9, docs/cli.md)`: the release, and the version of docs/cli.md's
    /// contract (records, codes, exit statuses) it keeps.
    public static let line = "postback-verify 1.0.0 (CLI contract version 1.9, docs/cli.md)"
}
