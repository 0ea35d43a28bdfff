// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "postback-verify",
    products: [
        .library(name: "Attribution", targets: ["Attribution"]),
        .executable(name: "postback-verify", targets: ["postback-verify"]),
    ],
    targets: [
        .systemLibrary(
            name: "CAttributionOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "Attribution",
            dependencies: ["CAttributionOpenSSL"]
        ),
        .executableTarget(
            name: "postback-verify",
            dependencies: ["Attribution"]
        ),
        .testTarget(
            name: "AttributionTests",
            dependencies: ["Attribution"]
        ),
    ]
)
