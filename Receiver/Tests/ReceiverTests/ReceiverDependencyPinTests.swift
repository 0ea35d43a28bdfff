import Foundation
import Testing

/// Issue 33: two builds of one commit must get the same Hummingbird, NIO and everything under them. Package.swift
/// pins every package with `exact:`, those the receiver names and those they depend on, and the graph SwiftPM
/// resolved (Package.resolved, written by the build these tests run after, never committed) holds nothing else.
@Suite("Receiver dependencies are pinned")
struct ReceiverDependencyPinTests {
    /// A remote package as Package.swift declares it: its identity (the URL's last component without `.git`,
    /// lowercased, as SwiftPM derives it) and the requirement's text.
    struct Declared: Equatable, CustomStringConvertible {
        let identity: String
        let requirement: String
        var description: String { "\(identity): \(requirement)" }
    }

    /// Every `.package(url: ...)` of a manifest's text, with the rest of its call as the requirement.
    static func declaredPackages(_ manifest: String) -> [Declared] {
        let call = try! NSRegularExpression(pattern: #"\.package\(\s*url:\s*"([^"]+)"\s*,([^)]*)\)"#)
        let range = NSRange(manifest.startIndex..., in: manifest)
        return call.matches(in: manifest, range: range).map { match in
            let url = String(manifest[Range(match.range(at: 1), in: manifest)!])
            var name = url.split(separator: "/").last.map(String.init) ?? url
            if name.hasSuffix(".git") { name.removeLast(4) }
            let requirement = manifest[Range(match.range(at: 2), in: manifest)!]
            return Declared(identity: name.lowercased(),
                            requirement: requirement.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// The version a requirement pins exactly (`exact: "1.2.3"`), or nil for a range, a branch or a revision.
    static func exactVersion(_ requirement: String) -> String? {
        let exact = try! NSRegularExpression(pattern: #"^exact:\s*"(\d+\.\d+\.\d+)"$"#)
        let range = NSRange(requirement.startIndex..., in: requirement)
        guard let match = exact.firstMatch(in: requirement, range: range) else {
            return nil
        }
        return String(requirement[Range(match.range(at: 1), in: requirement)!])
    }

    static func manifest() throws -> String {
        try String(contentsOf: ReceiverDocumentationTests.packageRoot.appendingPathComponent("Package.swift"),
                   encoding: .utf8)
    }

    @Test("The check refuses every requirement that lets a version float", arguments: [
        #"from: "2.28.1""#, #".upToNextMinor(from: "2.28.1")"#, #".upToNextMajor(from: "2.28.1")"#,
        #""2.28.1"..<"3.0.0""#, #""2.28.1"..."2.28.9""#, #"branch: "main""#, #"exact: "2.28""#,
        #"revision: "26726d0d184fa595ab671bc762836684d9d6d3ea""#,
    ])
    func checkRefusesRanges(_ requirement: String) {
        let manifest = #".package(url: "https://github.com/hummingbird-project/hummingbird", \#(requirement)),"#
        let declared = Self.declaredPackages(manifest)
        #expect(declared.map(\.identity) == ["hummingbird"])
        #expect(declared.first.flatMap { Self.exactVersion($0.requirement) } == nil, "\(requirement)")
        #expect(Self.exactVersion(#"exact: "2.28.1""#) == "2.28.1")
    }

    @Test("Regression (dependencies pinned): every remote package in Receiver/Package.swift is exact, none a range")
    func everyPackageExact() throws {
        let manifest = try Self.manifest()
        let declared = Self.declaredPackages(manifest)
        let urlCalls = manifest.components(separatedBy: ".package(url:").count - 1
        #expect(declared.count == urlCalls, "every .package(url:) call was read")
        let identities = declared.map(\.identity)
        try #require(identities.contains("hummingbird") && identities.contains("swift-nio"), "\(identities)")
        for package in declared {
            #expect(Self.exactVersion(package.requirement) != nil, "not pinned exactly: \(package)")
        }
        #expect(Set(declared.map(\.identity)).count == declared.count, "a package declared twice")
    }

    @Test("Regression (dependencies pinned): the resolved graph is exactly the pinned packages at their versions")
    func resolvedGraphIsPinned() throws {
        let resolvedFile = ReceiverDocumentationTests.packageRoot.appendingPathComponent("Package.resolved")
        let data = try #require(try? Data(contentsOf: resolvedFile),
                                "no Receiver/Package.resolved: the build these tests run after writes it")
        let resolved = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let pins = try #require(resolved["pins"] as? [[String: Any]])
        var resolvedVersions: [String: String] = [:]
        for pin in pins {
            let identity = try #require(pin["identity"] as? String)
            let state = try #require(pin["state"] as? [String: Any])
            resolvedVersions[identity] = state["version"] as? String ?? "not a version: \(state)"
        }
        var pinned: [String: String] = [:]
        for package in Self.declaredPackages(try Self.manifest()) {
            pinned[package.identity] = Self.exactVersion(package.requirement)
        }
        #expect(resolvedVersions.count > 0)
        for (identity, version) in resolvedVersions.sorted(by: { $0.key < $1.key }) {
            let pin = pinned[identity]
            #expect(pin != nil, "\(identity) \(version) is resolved but not pinned in Package.swift: it could float")
            #expect(pin == nil || pin == version, "\(identity): resolved \(version), pinned \(pin ?? "")")
        }
        for identity in pinned.keys.sorted() where resolvedVersions[identity] == nil {
            Issue.record("\(identity) is pinned but not in the graph: remove it from Package.swift")
        }
    }
}
