import Attribution
import Foundation
import Logging

/// The receiver's log lines on standard error: one line per event (a request, a start-up or storage message), as
/// text or as JSON (`--log-format`).
///
/// Every value is escaped, because request lines carry the path and method a sender chose and storage errors may
/// quote what they were given: in text, a metadata value is written plain only when it is plain printable ASCII
/// without spaces, quotes or `=`, and otherwise as a JSON string literal (the message, the program's own words, is
/// written as it is but for what a terminal must not get raw); in JSON, every string is a JSON string literal.
/// Both escape what must not reach a terminal raw (the library's `TerminalText`: controls, bidirectional
/// overrides, format characters) as `\uXXXX`, so a line cannot be split, forged or recoloured by its input.
public struct ReceiverLogHandler: LogHandler {
    /// `--log-format`.
    public enum Format: String, Sendable, CaseIterable {
        /// `2026-11-27T06:00:00.123Z info Request hb.request.id=… hb.request.method=POST …`
        case text
        /// `{"time":"2026-11-27T06:00:00.123Z","level":"info","message":"Request","hb.request.id":"…",…}`
        case json
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let format: Format
    private let output: LineOutput

    /// A handler writing whole lines to standard error.
    public init(format: Format, level: Logger.Level) {
        self.init(format: format, level: level, output: .standardError)
    }

    init(format: Format, level: Logger.Level, output: LineOutput) {
        self.format = format
        self.logLevel = level
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, new in new }
        }
        if let given = event.metadata, !given.isEmpty {
            merged.merge(given) { _, new in new }
        }
        if let error = event.error {
            merged["error"] = .string("\(error)")
        }
        output.write(Self.line(format: format, time: Date(), level: event.level, message: event.message.description,
                               metadata: merged))
    }

    /// One log line, its newline included; metadata keys in code-point order.
    static func line(format: Format, time: Date, level: Logger.Level, message: String,
                     metadata: Logger.Metadata) -> String {
        let keys = metadata.count < 2 ? Array(metadata.keys)
            : metadata.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
        // By hand, as records write their times: Foundation's formatter cost more than the rest of the line.
        let timestamp = RFC3339Timestamp.string(time)
        switch format {
        case .text:
            // The message is the program's own text, escaped but not quoted; input goes in the metadata.
            var line = timestamp + " " + level.rawValue + " " + TerminalText.escaped(message)
            for key in keys {
                line += " " + plainOrQuoted(key) + "=" + text(metadata[key]!)
            }
            return line + "\n"
        case .json:
            var line = "{\"time\":\"" + timestamp + "\",\"level\":\"" + level.rawValue + "\",\"message\":"
                + quoted(message)
            for key in keys where !["time", "level", "message"].contains(where: { $0.utf8.elementsEqual(key.utf8) }) {
                line += "," + quoted(key) + ":" + json(metadata[key]!)
            }
            return line + "}\n"
        }
    }

    /// A JSON string literal: quotes, backslashes, controls and every scalar `TerminalText` escapes as `\uXXXX`.
    private static func quoted(_ string: String) -> String {
        JSONValue.string(string).jsonText
    }

    /// `string` as it is when that is safe and unambiguous in a `key=value` line, else quoted.
    private static func plainOrQuoted(_ string: String) -> String {
        let plain = !string.isEmpty && string.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "=")
                && byte != UInt8(ascii: "\\")
        }
        return plain ? string : quoted(string)
    }

    private static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): plainOrQuoted(string)
        case .stringConvertible(let convertible): plainOrQuoted(convertible.description)
        case .array, .dictionary: quoted(value.description)
        }
    }

    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string):
            return quoted(string)
        case .stringConvertible(let convertible):
            return quoted(convertible.description)
        case .array(let values):
            return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            let keys = dictionary.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
            return "{" + keys.map { quoted($0) + ":" + json(dictionary[$0]!) }.joined(separator: ",") + "}"
        }
    }
}

/// Where log lines go. A line is written in one call (lines are far below the 4 KiB a pipe writes at once), so
/// lines from concurrent requests do not interleave.
struct LineOutput: Sendable {
    let sink: @Sendable (String) -> Void

    static let standardError = LineOutput { line in
        // Standard error gone (a closed pipe): nothing is left to tell it with.
        try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
    }

    func write(_ line: String) {
        sink(line)
    }
}
