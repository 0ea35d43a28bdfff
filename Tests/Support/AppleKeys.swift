import Foundation

enum AppleKeys {
    /// Apple's production key as published on "Verifying a postback" (base64 DER SubjectPublicKeyInfo).
    static let productionDER = [UInt8](Data(base64Encoded:
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWdp8GPcGqmhgzEFj9Z2nSpQVddayaPe4FMzqM9wib1+"
            + "aHaaIzoHoLN9zW4K8y4SPykE3YVK3sVqW6Af0lfx3gg=="
    )!)
}
