@_spi(Stores) import Attribution
import Foundation

/// One line of `manifest.jsonl` in a `postback-verify export --to` directory: a finished file and what it holds.
/// A file is named here only once it is whole and renamed into place, so a loader that loads what the manifest
/// names never reads a partial file; the last line's `last-cursor` is where the next export resumes. Beside
/// `ExportedPostback`: both are the export's format, written and read with the library's strict JSON.
@_spi(CommandLine) public struct ExportManifestEntry {
    /// The file's name in the directory (`postbacks-00000001.jsonl.gz`).
    @_spi(CommandLine) public let file: String
    /// Its number (1 for the first file the directory ever got), from which the name is made.
    @_spi(CommandLine) public let sequence: Int
    /// Lines (rows) in the file.
    @_spi(CommandLine) public let rows: Int
    /// The compressed file's size.
    @_spi(CommandLine) public let bytes: Int
    /// SHA-256 of the compressed file, 64 lowercase hexadecimal digits (as `sha256sum` prints it).
    @_spi(CommandLine) public let sha256: String
    @_spi(CommandLine) public let firstCursor: ArchiveCursor
    @_spi(CommandLine) public let lastCursor: ArchiveCursor
    /// When the file was finished.
    @_spi(CommandLine) public let finished: Date

    /// The file name for `sequence`: eight digits (more past 99,999,999), so names sort as files were written.
    @_spi(CommandLine) public static func fileName(_ sequence: Int) -> String {
        let digits = String(sequence)
        return "postbacks-" + String(repeating: "0", count: max(0, 8 - digits.utf8.count)) + digits + ".jsonl.gz"
    }

    /// The sequence number a name of ``fileName(_:)``'s form carries; nil for any other name.
    @_spi(CommandLine) public static func sequence(ofFileName name: String) -> Int? {
        let bytes = Array(name.utf8)
        let prefix = Array("postbacks-".utf8), suffix = Array(".jsonl.gz".utf8)
        guard bytes.count >= prefix.count + 8 + suffix.count, bytes.starts(with: prefix),
              bytes.reversed().starts(with: suffix.reversed()) else { return nil }
        let digits = bytes[prefix.count..<(bytes.count - suffix.count)]
        guard digits.count <= 18, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let number = Int(String(decoding: digits, as: UTF8.self)), number > 0,
              fileName(number).utf8.elementsEqual(name.utf8) else { return nil }
        return number
    }

    /// The line as written into the manifest, without its line end.
    @_spi(CommandLine) public var jsonLine: [UInt8] {
        let members: [(String, JSONValue)] = [
            ("file", .string(file)),
            ("rows", .number(JSONNumber(validatedLiteral: String(rows)))),
            ("bytes", .number(JSONNumber(validatedLiteral: String(bytes)))),
            ("sha256", .string(sha256)),
            ("first-cursor", .string(firstCursor.description)),
            ("last-cursor", .string(lastCursor.description)),
            ("first-position", .number(JSONNumber(validatedLiteral: firstCursor.position))),
            ("last-position", .number(JSONNumber(validatedLiteral: lastCursor.position))),
            ("finished", .string(RFC3339Timestamp.string(finished))),
        ]
        var out: [UInt8] = []
        JSONValue.appendObject(members, to: &out)
        return out
    }

    /// Reads a manifest line back; nil when it is not one this release writes (the caller names the line).
    @_spi(CommandLine) public init?(jsonLine bytes: ArraySlice<UInt8>) {
        guard let value = try? StrictJSONParser.parse(bytes, options: .init(maximumDepth: 2, valueBudget: nil)),
              let object = value.objectValue,
              let file = object["file"]?.stringValue, let sequence = Self.sequence(ofFileName: file),
              let rows = object["rows"]?.numberValue?.int64Value, rows > 0,
              let size = object["bytes"]?.numberValue?.int64Value, size > 0,
              let sha256 = object["sha256"]?.stringValue, sha256.utf8.count == 64,
              let first = object["first-cursor"]?.stringValue.flatMap(ArchiveCursor.init),
              let last = object["last-cursor"]?.stringValue.flatMap(ArchiveCursor.init), first <= last,
              (first.transaction == nil) == (last.transaction == nil),
              let finished = object["finished"]?.stringValue,
              let milliseconds = try? RFC3339Timestamp.milliseconds(finished) else { return nil }
        self.init(file: file, sequence: sequence, rows: Int(rows), bytes: Int(size), sha256: sha256,
                  firstCursor: first, lastCursor: last, finished: Date(milliseconds: milliseconds))
    }

    @_spi(CommandLine)
    public init(file: String, sequence: Int, rows: Int, bytes: Int, sha256: String, firstCursor: ArchiveCursor,
         lastCursor: ArchiveCursor, finished: Date) {
        self.file = file
        self.sequence = sequence
        self.rows = rows
        self.bytes = bytes
        self.sha256 = sha256
        self.firstCursor = firstCursor
        self.lastCursor = lastCursor
        self.finished = finished
    }
}
