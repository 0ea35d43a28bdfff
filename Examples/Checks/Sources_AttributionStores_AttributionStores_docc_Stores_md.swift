// The check of the AttributionStores catalog's Stores article (`openMachineState`, `openStateOption`), run by
// Examples/run.sh from a package that sees only the public API.
import Attribution
import AttributionStores
import Foundation

func check_Sources_AttributionStores_AttributionStores_docc_Stores_md(root: String) throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("postback-verify-stores-article-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    // A new file is created and counts; a file that is not a state is refused with not-ours, untouched.
    let state = try openMachineState(at: directory.appendingPathComponent("state.sqlite").path)
    let sighting = PostbackSighting(key: ExactString("k"), source: "r1", line: 1)
    try expect(try state.claim([sighting], at: Date()) == [.firstSeen], "first seen")
    try state.confirm([sighting.key])
    let notes = directory.appendingPathComponent("notes.txt")
    try Data("not a state\n".utf8).write(to: notes)
    do {
        _ = try openMachineState(at: notes.path)
        throw CheckFailed(description: "a text file is not a state")
    } catch let error as AttributionError {
        try expect(error.code == .notOurs, "not a state: not-ours, got \(error)")
    }
    try expect(try Data(contentsOf: notes) == Data("not a state\n".utf8), "left untouched")

    // --state: a path opens the SQLite file (the same state: the key is known), "-" is refused.
    let again = try openStateOption(directory.appendingPathComponent("state.sqlite").path)
    try expect(try again.claim([sighting], at: Date()).first?.duplicateOf?.source == "r1",
               "the same state, through --state")
    do {
        _ = try openStateOption("-")
        throw CheckFailed(description: "--state - is refused")
    } catch let error as AttributionError {
        try expect(error.code == .invalidOption, "--state -: invalid-option, got \(error)")
    }
}
