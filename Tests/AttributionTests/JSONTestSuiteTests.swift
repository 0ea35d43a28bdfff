import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// nst/JSONTestSuite's `test_parsing` files, copied into `Vectors/jsontestsuite/` (see its PROVENANCE.md).
///
/// The suite's `y_` files are RFC 8259 grammar, which lets member names repeat; the verifier refuses duplicates
/// (spec section 2). So the whole suite runs under the grammar (duplicates allowed), and the `y_` files run again
/// under the verifier's default options, where exactly the two duplicate-member files must be refused.
@Suite("JSONTestSuite test_parsing")
struct JSONTestSuiteTests {
    static let directory = TestPaths.vector("jsontestsuite/test_parsing")

    static let fileNames: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        .filter { $0.hasSuffix(".json") }
        .sorted()

    /// Must be accepted by an RFC 8259 parser.
    static let mustAccept = fileNames.filter { $0.hasPrefix("y_") }
    /// Must be rejected.
    static let mustReject = fileNames.filter { $0.hasPrefix("n_") }
    /// Either, without crashing or hanging.
    static let implementationDefined = fileNames.filter { $0.hasPrefix("i_") }

    /// The two `y_` files whose objects repeat a member name: grammatical, but refused by the verifier policy.
    static let duplicateMemberFiles = ["y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json"]

    /// The RFC 8259 grammar: duplicate names allowed. The depth limit stays at the verifier's 16, so the `y_` run
    /// under these options also shows that the limit refuses no valid file.
    static let grammar = StrictJSONParser.Options(rejectsDuplicateMembers: false)

    static func contents(of name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static func depth(of value: JSONValue) -> Int {
        switch value {
        case .array(let elements):
            1 + (elements.map(depth(of:)).max() ?? 0)
        case .object(let object):
            1 + (object.members.map { depth(of: $0.value) }.max() ?? 0)
        default:
            0
        }
    }

    @Test("The suite is all there: 95 y_, 188 n_ and 35 i_ files")
    func suiteIsComplete() {
        #expect(Self.mustAccept.count == 95)
        #expect(Self.mustReject.count == 188)
        #expect(Self.implementationDefined.count == 35)
        #expect(Self.fileNames.count == 95 + 188 + 35)
    }

    @Test("Every y_ file is accepted under the RFC 8259 grammar", arguments: mustAccept)
    func acceptsUnderGrammar(_ name: String) throws {
        let bytes = try Self.contents(of: name)
        _ = try StrictJSONParser.parse(bytes, options: Self.grammar)
    }

    @Test("Every n_ file is rejected as malformed input (J1)", arguments: mustReject)
    func rejectsUnderGrammar(_ name: String) throws {
        let bytes = try Self.contents(of: name)
        #expect(throws: AttributionError.malformed("any reason")) {
            try StrictJSONParser.parse(bytes, options: Self.grammar)
        }
    }

    @Test("Every i_ file returns or throws malformed-input, without crashing", arguments: implementationDefined)
    func decidesImplementationDefined(_ name: String) throws {
        let bytes = try Self.contents(of: name)
        do {
            _ = try StrictJSONParser.parse(bytes, options: Self.grammar)
        } catch {
            #expect(error == .malformed("any reason"))
        }
    }

    @Test(
        "Every y_ file except the two duplicate-member files is accepted under the verifier policy",
        arguments: mustAccept.filter { !duplicateMemberFiles.contains($0) }
    )
    func acceptsUnderVerifierPolicy(_ name: String) throws {
        let bytes = try Self.contents(of: name)
        _ = try StrictJSONParser.parse(bytes)
    }

    @Test(
        "The verifier policy rejects the suite's grammatical duplicate-member files", arguments: duplicateMemberFiles
    )
    func verifierPolicyRejectsDuplicateMembers(_ name: String) throws {
        #expect(Self.mustAccept.contains(name))
        let bytes = try Self.contents(of: name)
        let error = #expect(throws: AttributionError.self) {
            try StrictJSONParser.parse(bytes)
        }
        #expect(error?.reason.contains("duplicate member \"a\"") == true)
    }

    @Test("No y_ file nests deeper than the verifier's limit of 16")
    func validFilesFitTheDepthLimit() throws {
        let unlimited = StrictJSONParser.Options(maximumDepth: 1_000, rejectsDuplicateMembers: false)
        let depths = try Self.mustAccept.map { name in
            Self.depth(of: try StrictJSONParser.parse(Self.contents(of: name), options: unlimited))
        }
        #expect(depths.count == 95)
        #expect(depths.allSatisfy { $0 <= 16 })
    }
}
