import Foundation

/// A scratch directory for the tests that run the built binary over files: input files written into it, and runs
/// started with their records going to a file in it (so that no run ever waits on a reader).
struct CommandLineScratch {
    /// The directory, made and deleted as every input test's is.
    private let files: InputTestDirectory
    var directory: URL { URL(fileURLWithPath: files.path) }

    init() throws {
        files = try InputTestDirectory()
    }

    /// The file `name` in the directory.
    func url(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }

    /// Writes `lines` as a JSON Lines input file named `name`; returns its path.
    func input(_ name: String, _ lines: [String]) throws -> String {
        try files.write(Array((lines.joined(separator: "\n") + "\n").utf8), to: name)
    }

    /// Starts the binary (with the test-only signing key trusted) on `arguments`, its standard output into the file
    /// `output`, its standard input empty and its standard error discarded.
    func start(_ arguments: [String], output: URL, environment: [String: String]? = nil) throws -> Process {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = TestPostbackSigner.keyArguments + arguments
        process.currentDirectoryURL = TestPaths.packageRoot
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        if let environment { process.environment = environment }
        try process.run()
        return process
    }

    /// Runs the binary (with the test-only signing key trusted) on `arguments` and `stdin`, to its end.
    func run(_ arguments: [String], stdin: String = "") throws -> CommandLineTests.Run {
        try CommandLineTests.run(TestPostbackSigner.keyArguments + arguments, stdin: stdin)
    }

    /// Deletes the directory and everything in it.
    func remove() {
        files.remove()
    }
}
