// swift-tools-version:6.0
import PackageDescription

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
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
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
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
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
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        .testTarget(
            name: "ReceiverTests",
            dependencies: [
                "ReceiverCore",
                "CSQLiteForTests",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Attribution", package: "postback-verify"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
