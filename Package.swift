// swift-tools-version:6.0
import PackageDescription

// POSTBACK_VERIFY_STRICT=1 (set by `.ci/run`) turns every warning of this package's own targets into an error. Only
// then: `unsafeFlags` would make the package unusable as a dependency by URL, and a newer compiler's new warning must
// not break a build outside CI.
// Debug builds (every test, sanitizer and script build of CI) only: a release build compiles the same code.
let strict: [SwiftSetting] =
    Context.environment["POSTBACK_VERIFY_STRICT"].map { $0.isEmpty || $0 == "0" } == false
    ? [.unsafeFlags(["-warnings-as-errors"], .when(configuration: .debug))] : []

let package = Package(
    name: "postback-verify",
    products: [
        .library(name: "Attribution", targets: ["Attribution"]),
        // The deduplication stores that outlive a run (a SQLite file, a PostgreSQL database): a second product, so a
        // program that only verifies links libcrypto alone.
        .library(name: "AttributionStores", targets: ["AttributionStores"]),
        .executable(name: "postback-verify", targets: ["postback-verify"]),
    ],
    targets: [
        .systemLibrary(
            name: "CAttributionOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CAttributionSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // libpq's declarations, for a deduplication state on a PostgreSQL server (`--state postgresql://...`,
        // docs/state.md). No pkg-config, so nothing links libpq: it is opened when a PostgreSQL state is first used
        // (AttributionStores/PostgreSQL/LibPQ.swift), sparing every other run its ~20 libraries at start-up. Build
        // needs libpq-dev's headers; only a PostgreSQL state needs libpq5 at run time.
        .systemLibrary(name: "CAttributionPostgres"),
        // zlib, for the gzip files of `postback-verify export --to DIR` (the command line only: the libraries never
        // compress).
        .systemLibrary(
            name: "CAttributionZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Verification: strict JWS and JSON, ES256, the rules, the records, and the in-memory deduplication store.
        .target(
            name: "Attribution",
            dependencies: ["CAttributionOpenSSL"],
            swiftSettings: strict
        ),
        .target(
            name: "AttributionStores",
            dependencies: ["Attribution", "CAttributionSQLite", "CAttributionPostgres"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "postback-verify",
            dependencies: ["Attribution", "AttributionStores", "CAttributionZlib"],
            // Release builds link the Swift runtime and Foundation statically: start-up drops from ~17 ms to
            // ~8 ms on a 2-core VM (no runtime relocation of libFoundation and friends), so a one-item run (a CI
            // fixture check) is instant. Debug, test and sanitizer builds stay dynamic. Only this executable has the
            // flag: the `Attribution` library product stays free of unsafe flags for packages that depend on it.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))] + strict,
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        // A test target per product (issue 34 item 4). The helpers several need are in `Tests/Support`, which each
        // compiles through its own `Support` link to that folder (they use `@testable import`, so they cannot be a
        // regular target: a release build would fail on them).
        .testTarget(
            name: "AttributionTests",
            // CAttributionOpenSSL: the tests sign their own postbacks with the test-only fixture keys.
            dependencies: ["Attribution", "CAttributionOpenSSL"],
            // External test data, read from disk by path (see Vectors/README.md), not bundled as resources;
            // Support/Postgres needs AttributionStores.
            exclude: ["Vectors", "Support/Postgres"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AttributionStoresTests",
            dependencies: ["Attribution", "AttributionStores", "CAttributionOpenSSL"],
            swiftSettings: strict
        ),
        // The command line: its input readers and pipeline tested directly, and the built binary run as a user would.
        .testTarget(
            name: "PostbackVerifyTests",
            dependencies: ["Attribution", "AttributionStores", "CAttributionOpenSSL", "postback-verify"],
            swiftSettings: strict
        ),
    ]
)
