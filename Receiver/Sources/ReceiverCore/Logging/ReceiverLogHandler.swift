@_spi(Servers) import Attribution
import Foundation
import Logging
import Synchronization

/// The receiver's log lines on standard error: one line per event (a request, a start-up or storage message), as
/// text or as JSON (`--log-format`).
///
/// Every value is escaped, because request lines carry the path and method a sender chose and storage errors may
/// quote what they were given: in text, a metadata value is written plain only when it is plain printable ASCII
/// without spaces, quotes or `=`, and otherwise as a JSON string literal (the message, the program's own words, is
/// written as it is but for what a terminal must not get raw); in JSON, every string is a JSON string literal.
/// Both escape what must not reach a terminal raw (the library's `TerminalText`: controls, bidirectional
/// overrides, format characters) as `\uXXXX`, so a line cannot be split, forged or recoloured by its input.
///
/// A line is written as bytes, straight into one buffer: a value that is printable ASCII without a quote or a
/// backslash is copied as it is (what the library's escaping leaves of it), any other goes through the library's
/// `TerminalText` or JSON escaping. Standard error gets the lines in batches (``BatchedLineWriter``): a line waits
/// there a few milliseconds at most, never holds its caller when standard error stalls (past 1 MiB waiting, lines
/// are dropped and counted), and ``stopBuffering()`` writes them all before the process exits, waiting 1 s at most.
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

    /// Makes this handler the process's log (`LoggingSystem.bootstrap`, once per process), on standard error, and
    /// the line telling how many lines standard error did not take one of the same format.
    public static func bootstrap(format: Format, level: Logger.Level) {
        BatchedLineWriter.standardError.setDropNotice { count in
            Array(line(format: format, time: Date(), level: .warning,
                       message: "\(count) log lines dropped: standard error did not take them",
                       metadata: ["log.lines.dropped": "\(count)"]).utf8)
        }
        LoggingSystem.bootstrap { _ in ReceiverLogHandler(format: format, level: level) }
    }

    /// Writes the lines still waiting for standard error, waiting for it 1 s at most (a stalled standard error
    /// must not hold a stop back: the lines still waiting then are dropped and counted); later lines are written
    /// as they come. The receiver calls it as it stops, after a start-up failure's line, so that a graceful stop
    /// loses no line standard error takes.
    public static func stopBuffering() {
        BatchedLineWriter.standardError.close(timeout: BatchedLineWriter.standardErrorCloseTimeout)
    }

    /// Queues `line` (its newline included) for standard error as it is, after the lines logged before it: a
    /// start-up failure's line, the program's own words (escaped by whoever wrote them).
    public static func writeUnformatted(_ line: String) {
        BatchedLineWriter.standardError.append(Array(line.utf8))
    }

    /// Log lines standard error has not taken (dropped past the 1 MiB cap, refused, or lost at a stop): the
    /// metric `postback_receiver_log_lines_dropped_total`.
    static var droppedLineCount: Int {
        BatchedLineWriter.standardError.droppedLineCount
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // Later sources override earlier ones, as swift-log's handlers merge them.
        var entries = Entries(capacity: metadata.count + (event.metadata?.count ?? 0) + 1)
        for (key, value) in metadata { entries.set(key, value) }
        if let provided = metadataProvider?.get() {
            for (key, value) in provided { entries.set(key, value) }
        }
        if let given = event.metadata {
            for (key, value) in given { entries.set(key, value) }
        }
        if let error = event.error {
            entries.set("error", .string("\(error)"))
        }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Self.append(format: format, time: Self.clock.appendNow, level: event.level,
                    message: event.message.description, entries: entries, to: &line)
        output.write(line)
    }

    /// One log line, its newline included; metadata keys in code-point order.
    static func line(format: Format, time: Date, level: Logger.Level, message: String,
                     metadata: Logger.Metadata) -> String {
        var entries = Entries(capacity: metadata.count)
        for (key, value) in metadata { entries.set(key, value) }
        var line: [UInt8] = []
        append(format: format, time: { $0.append(contentsOf: RFC3339Timestamp.string(time).utf8) }, level: level,
               message: message, entries: entries, to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// A whole line; `time` appends the timestamp's text.
    private static func append(format: Format, time: (inout [UInt8]) -> Void, level: Logger.Level, message: String,
                               entries: Entries, to line: inout [UInt8]) {
        switch format {
        case .text:
            // The message is the program's own text, escaped but not quoted; input goes in the metadata.
            time(&line)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: level.rawValue.utf8)
            line.append(UInt8(ascii: " "))
            appendTerminalSafe(message, to: &line)
            for (key, value) in entries.sorted {
                line.append(UInt8(ascii: " "))
                appendPlainOrQuoted(key, to: &line)
                line.append(UInt8(ascii: "="))
                appendText(value, to: &line)
            }
            line.append(UInt8(ascii: "\n"))
        case .json:
            line.append(contentsOf: #"{"time":""#.utf8)
            time(&line)
            line.append(contentsOf: #"","level":""#.utf8)
            line.append(contentsOf: level.rawValue.utf8)
            line.append(contentsOf: #"","message":"#.utf8)
            appendQuoted(message, to: &line)
            for (key, value) in entries.sorted where !isReservedJSONKey(key) {
                line.append(UInt8(ascii: ","))
                appendQuoted(key, to: &line)
                line.append(UInt8(ascii: ":"))
                appendJSON(value, to: &line)
            }
            line.append(contentsOf: "}\n".utf8)
        }
    }

    /// The members every JSON line has: metadata under these names is left out, so each name appears once.
    private static func isReservedJSONKey(_ key: String) -> Bool {
        ["time", "level", "message"].contains { $0.utf8.elementsEqual(key.utf8) }
    }

    /// Whether the library's escaping leaves `bytes` as they are: printable ASCII, and in a JSON string literal
    /// neither a quote nor a backslash. A test holds this to `JSONValue` and `TerminalText` over every ASCII byte.
    static func isVerbatim(_ bytes: UnsafeBufferPointer<UInt8>, inJSONString: Bool) -> Bool {
        for byte in bytes {
            guard byte >= 0x20, byte < 0x7F else { return false }
            if inJSONString, byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
        }
        return true
    }

    /// `string` as the library's `TerminalText.escaped` gives it.
    static func appendTerminalSafe(_ string: String, to line: inout [UInt8]) {
        withUTF8(of: string) { bytes in
            if isVerbatim(bytes, inJSONString: false) {
                line.append(contentsOf: bytes)
            } else {
                line.append(contentsOf: TerminalText.escaped(string).utf8)
            }
        }
    }

    /// `string` as a JSON string literal, as the library's `JSONValue` writes it: quotes, backslashes, controls and
    /// every scalar `TerminalText` escapes as `\uXXXX`.
    static func appendQuoted(_ string: String, to line: inout [UInt8]) {
        withUTF8(of: string) { bytes in
            if isVerbatim(bytes, inJSONString: true) {
                line.append(UInt8(ascii: "\""))
                line.append(contentsOf: bytes)
                line.append(UInt8(ascii: "\""))
            } else {
                line.append(contentsOf: JSONValue.string(string).jsonText.utf8)
            }
        }
    }

    /// `string` as it is when that is safe and unambiguous in a `key=value` line, else quoted.
    static func appendPlainOrQuoted(_ string: String, to line: inout [UInt8]) {
        withUTF8(of: string) { bytes in
            let plain = !bytes.isEmpty && bytes.allSatisfy { byte in
                byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "=")
                    && byte != UInt8(ascii: "\\")
            }
            if plain {
                line.append(contentsOf: bytes)
            } else {
                appendQuoted(string, to: &line)
            }
        }
    }

    /// The bytes of `string` (its own when it is native, as Swift's strings are on Linux).
    private static func withUTF8(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var native = string
        native.withUTF8(body)
    }

    private static func appendText(_ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .string(let string): appendPlainOrQuoted(string, to: &line)
        case .stringConvertible(let convertible): appendPlainOrQuoted(convertible.description, to: &line)
        case .array, .dictionary: appendQuoted(value.description, to: &line)
        }
    }

    private static func appendJSON(_ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .string(let string):
            appendQuoted(string, to: &line)
        case .stringConvertible(let convertible):
            appendQuoted(convertible.description, to: &line)
        case .array(let values):
            line.append(UInt8(ascii: "["))
            for (position, element) in values.enumerated() {
                if position > 0 { line.append(UInt8(ascii: ",")) }
                appendJSON(element, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        case .dictionary(let dictionary):
            var entries = Entries(capacity: dictionary.count)
            for (key, value) in dictionary { entries.set(key, value) }
            line.append(UInt8(ascii: "{"))
            for (position, entry) in entries.sorted.enumerated() {
                if position > 0 { line.append(UInt8(ascii: ",")) }
                appendQuoted(entry.key, to: &line)
                line.append(UInt8(ascii: ":"))
                appendJSON(entry.value, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
    }

    private static let clock = Clock()
}

extension ReceiverLogHandler {
    /// A line's metadata, kept in code-point order of its keys as it is set (a line has a handful: no dictionary
    /// is merged or sorted per line). Keys are equal when their code points are.
    struct Entries {
        private(set) var sorted: [(key: String, value: Logger.Metadata.Value)] = []

        init(capacity: Int) {
            sorted.reserveCapacity(capacity)
        }

        /// Sets `key` to `value`, replacing the value it had.
        mutating func set(_ key: String, _ value: Logger.Metadata.Value) {
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                let order = Self.codePointOrder(sorted[middle].key, key)
                if order == 0 {
                    sorted[middle].value = value
                    return
                }
                if order < 0 {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            sorted.insert((key, value), at: low)
        }

        /// Negative, zero or positive as `a` comes before, is or comes after `b` in code-point order, which is
        /// the order of their UTF-8 bytes.
        static func codePointOrder(_ a: String, _ b: String) -> Int {
            let order = a.utf8.withContiguousStorageIfAvailable { a in
                b.utf8.withContiguousStorageIfAvailable { b in
                    let common = min(a.count, b.count)
                    let bytes = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                    return bytes != 0 ? Int(bytes) : a.count - b.count
                }
            }
            if let order = order ?? nil { return order }
            if a.utf8.elementsEqual(b.utf8) { return 0 }
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        }
    }

    /// The time for log lines, as the library's `RFC3339Timestamp` writes it: taken in whole milliseconds, and
    /// each millisecond's text made once (a busy receiver logs dozens of lines in one).
    final class Clock: Sendable {
        private let last = Mutex<(milliseconds: Int64, text: [UInt8])>((.min, []))

        /// Appends the current time's text.
        func appendNow(to line: inout [UInt8]) {
            append(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)), to: &line)
        }

        /// Appends the text of `milliseconds` since 1970.
        func append(milliseconds: Int64, to line: inout [UInt8]) {
            last.withLock { last in
                if last.milliseconds != milliseconds {
                    let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
                    last = (milliseconds, Array(RFC3339Timestamp.string(date).utf8))
                }
                line.append(contentsOf: last.text)
            }
        }
    }
}

/// Where log lines go, each line whole (its newline included) in one call.
struct LineOutput: Sendable {
    let sink: @Sendable ([UInt8]) -> Void

    /// Standard error, through the process's ``BatchedLineWriter``.
    static let standardError = LineOutput { line in
        BatchedLineWriter.standardError.append(line)
    }

    func write(_ line: [UInt8]) {
        sink(line)
    }
}
