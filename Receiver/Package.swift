// swift-tools-version:6.0
import PackageDescription

// POSTBACK_VERIFY_STRICT=1 (set by `.ci/run`) turns every warning of this package's own targets into an error, as it
// does for the root package's. Only these targets: the pinned packages' own warnings are not ours to fix (SwiftPM
// builds them with -suppress-warnings). An environment variable and not `-Xswiftc -warnings-as-errors`: every script
// that runs `swift build --package-path Receiver` gets the same flags without passing any, so nothing is rebuilt.
// Debug builds (every test, sanitizer and script build of CI) only: a release build compiles the same code.
let strict: [SwiftSetting] =
    Context.environment["POSTBACK_VERIFY_STRICT"].map { $0.isEmpty || $0 == "0" } == false
    ? [.unsafeFlags(["-warnings-as-errors"], .when(configuration: .debug))] : []

// The receiver: an HTTP server that takes Apple's postbacks where Apple sends them, verifies them with the root
// package's `Attribution` library, stores each one durably and only then answers 200. It lives in its own package so
// that the root package (the library and the CLI) keeps no package dependencies.
let package = Package(
    name: "postback-receiver",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "postback-receiver", targets: ["postback-receiver"]),
    ],
    dependencies: [
        .package(name: "postback-verify", path: ".."),
        // Every package is pinned to one version (`exact:`), the one this receiver is built and tested with, so
        // two builds of one commit get the same code (Package.resolved is not committed: its commit ids differ
        // between mirrors). The packages the receiver uses:
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        // The packages those depend on, which their own ranges would let float: pinned here too, because a root
        // package's `exact:` is the only way SwiftPM lets a package fix a dependency's dependency.
        // ReceiverDocumentationTests checks that this list is the whole resolved graph, every entry exact.
        .package(url: "https://github.com/apple/swift-algorithms.git", exact: "1.2.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", exact: "1.7.4"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", exact: "1.1.4"),
        .package(url: "https://github.com/apple/swift-atomics.git", exact: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-collections.git", exact: "1.6.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", exact: "1.7.3"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", exact: "1.7.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", exact: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-transport-services.git", exact: "1.28.0"),
        .package(url: "https://github.com/apple/swift-numerics.git", exact: "1.1.1"),
        .package(url: "https://github.com/apple/swift-service-context.git", exact: "1.5.1"),
        .package(url: "https://github.com/apple/swift-system", exact: "1.8.1"),
    ],
    targets: [
        // The tests' own view of the SQLite files (read and broken apart from the code under test); the receiver
        // stores through the library's SQLite code.
        .systemLibrary(
            name: "CSQLiteForTests",
            path: "Tests/CSQLiteForTests",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "ReceiverCore",
            dependencies: [
                .product(name: "Attribution", package: "postback-verify"),
                .product(name: "AttributionStores", package: "postback-verify"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "postback-receiver",
            dependencies: [
                "ReceiverCore",
                .product(name: "Attribution", package: "postback-verify"),
                .product(name: "AttributionStores", package: "postback-verify"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Release builds link the Swift runtime and Foundation statically (as the root package's CLI does), so
            // the binary runs on a machine without a Swift toolchain (Receiver/deploy/, Receiver/Tests/portable.sh).
            // Debug and test builds stay dynamic.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))] + strict,
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        .testTarget(
            name: "ReceiverTests",
            dependencies: [
                "ReceiverCore",
                "CSQLiteForTests",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Attribution", package: "postback-verify"),
                .product(name: "AttributionStores", package: "postback-verify"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // One product of each package pinned above only for its version that no other target names:
                // SwiftPM warns about a dependency no target uses. All are built and linked here anyway (through
                // HummingbirdTesting and AsyncHTTPClient); nothing imports them.
                .product(name: "Algorithms", package: "swift-algorithms"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "StructuredFieldValues", package: "swift-http-structured-headers"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOTransportServices", package: "swift-nio-transport-services"),
                .product(name: "Numerics", package: "swift-numerics"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict
        ),
    ]
)
