@_spi(Servers) import Attribution
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
@_spi(Servers) @testable import ReceiverCore
import Testing

/// The request log: one line per request once it is answered (`RequestLogMiddleware`: Hummingbird's
/// `LogRequestsMiddleware`'s fields, then the answer's status, verdict, code and latency), written by
/// `ReceiverLogHandler` as text or JSON, every value from the request escaped; and the request id that line carries
/// is the one the stored row and a retry's `duplicate-of-source` name.
@Suite struct ReceiverLoggingTests {
    /// What a sender can put in a path or a message that a terminal or a log parser must not get raw.
    static let hostile: [String] = [
        "\u{1B}[31mred\u{1B}[0m", "line\nforged=1 level=critical", "quote\"and\\backslash", "\u{202E}reversed",
        "zero\u{200B}width", "bell\u{07}", "nul\u{0}byte", "key=value spaced", "",
    ]

    @Test("a JSON line is one JSON object, whatever a value holds: parsed back, the value is the same string",
          arguments: hostile)
    func jsonLineRoundTrips(value: String) throws {
        let line = ReceiverLogHandler.line(format: .json, time: Date(timeIntervalSince1970: 0), level: .info,
                                           message: value, metadata: ["hb.request.path": .string(value)])
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().utf8.allSatisfy { $0 != UInt8(ascii: "\n") })
        Self.expectTerminalSafe(line)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == value)
        #expect(object["hb.request.path"] as? String == value)
        #expect(object["level"] as? String == "info")
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
    }

    @Test("a text line is one line: a value that is not plain is a JSON string literal, so it cannot forge a pair",
          arguments: hostile)
    func textLineEscapes(value: String) throws {
        let line = ReceiverLogHandler.line(format: .text, time: Date(timeIntervalSince1970: 0), level: .warning,
                                           message: "Request", metadata: ["hb.request.path": .string(value)])
        #expect(line.hasPrefix("1970-01-01T00:00:00.000Z warning Request hb.request.path="))
        #expect(line.dropLast().utf8.allSatisfy { $0 != UInt8(ascii: "\n") })
        Self.expectTerminalSafe(line)
        let written = String(line.dropFirst("1970-01-01T00:00:00.000Z warning Request hb.request.path=".count)
            .dropLast())
        let decoded = try JSONSerialization.jsonObject(with: Data(written.utf8), options: .fragmentsAllowed) as? String
        #expect(decoded == value)
    }

    @Test("a text line's message stays on its line, escaped but not quoted", arguments: hostile)
    func textMessageEscapes(message: String) {
        let line = ReceiverLogHandler.line(format: .text, time: Date(timeIntervalSince1970: 0), level: .error,
                                           message: message, metadata: [:])
        #expect(line == "1970-01-01T00:00:00.000Z error \(TerminalText.escaped(message))\n")
        Self.expectTerminalSafe(line)
    }

    @Test("a plain value stays as it is in text", arguments: ["POST", "/healthz", "4f2a9c01"])
    func plainValues(value: String) {
        let line = ReceiverLogHandler.line(format: .text, time: Date(timeIntervalSince1970: 0), level: .info,
                                           message: "Request", metadata: ["v": .string(value)])
        #expect(line == "1970-01-01T00:00:00.000Z info Request v=\(value)\n")
    }

    /// Strings whose bytes decide the written form: every ASCII byte alone, and the hostile values.
    static let escapingCases: [String] = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + hostile + [
        "plain", "caf\u{E9}", "e\u{301}", "\u{7F}", "\u{85}", "\u{A0}", "\u{2028}", "\u{1F600}", "a\"b\\c",
    ]

    @Test("a line's bytes escape as the library does: JSON strings as JSONValue, the text message as TerminalText",
          arguments: escapingCases)
    func escapingIsTheLibrarys(value: String) {
        var quoted: [UInt8] = []
        ReceiverLogHandler.appendQuoted(value, to: &quoted)
        #expect(quoted == Array(JSONValue.string(value).jsonText.utf8))
        var message: [UInt8] = []
        ReceiverLogHandler.appendTerminalSafe(value, to: &message)
        #expect(message == Array(TerminalText.escaped(value).utf8))
    }

    @Test("a logged line: later metadata overrides earlier, keys in code-point order, each key once")
    func loggedMetadataMerges() throws {
        let lines = LogLines()
        var logger = Logger(label: "receiver-tests") { _ in
            ReceiverLogHandler(format: .text, level: .info,
                               output: LineOutput { lines.append(String(decoding: $0, as: UTF8.self)) })
        }
        logger[metadataKey: "b"] = "handler"
        logger[metadataKey: "a"] = "handler"
        logger[metadataKey: "\u{E9}"] = "1"
        logger.info("Request", metadata: ["b": "event", "Z": "2", "e\u{301}": "3"])
        let line = try #require(lines.all.first)
        // Canonically equivalent keys from two sources are still two keys: they differ in code points (a
        // dictionary would take them for one).
        #expect(line.drop { $0 != " " } == " info Request Z=2 a=handler b=event \"e\u{301}\"=3 \"\u{E9}\"=1\n")
    }

    @Test("metadata keys are ordered by code points, as their UTF-8 bytes order them",
          arguments: [("a", "b"), ("", "a"), ("ab", "abc"), ("Z", "a"), ("e\u{301}", "\u{E9}"),
                      ("\u{FFFF}", "\u{10000}"), ("hb.request.id", "hb.request.method")])
    func keyOrder(first: String, second: String) {
        #expect(ReceiverLogHandler.Entries.codePointOrder(first, second) < 0)
        #expect(ReceiverLogHandler.Entries.codePointOrder(second, first) > 0)
        #expect(ReceiverLogHandler.Entries.codePointOrder(first, first) == 0)
        #expect(first.unicodeScalars.lexicographicallyPrecedes(second.unicodeScalars))
    }

    @Test("a logged line's time is when it was logged, as RFC3339Timestamp writes it",
          arguments: ReceiverLogHandler.Format.allCases)
    func loggedTime(format: ReceiverLogHandler.Format) throws {
        let lines = LogLines()
        let logger = Logger(label: "receiver-tests") { _ in
            ReceiverLogHandler(format: format, level: .info,
                               output: LineOutput { lines.append(String(decoding: $0, as: UTF8.self)) })
        }
        let before = RFC3339Timestamp.string(Date())
        logger.info("Request")
        let after = RFC3339Timestamp.string(Date())
        let line = try #require(lines.all.first)
        let time = String(line.dropFirst(format == .json ? #"{"time":""#.utf8.count : 0).prefix(before.utf8.count))
        // The fixed-width text sorts as time does.
        #expect(before <= time && time <= after, "\(time) not within \(before) and \(after)")
        if format == .json {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["time"] as? String == time)
        }
    }

    /// The line carries the answer's status, verdict, code and latency.
    @Test("every request is one log line; a stored postback's row and its retry name the id that line carries",
          arguments: ReceiverLogHandler.Format.allCases)
    func requestLinesAndIDs(format: ReceiverLogHandler.Format) async throws {
        let receiver = try TestReceiver()
        let lines = LogLines()
        let body = try TestReceiver.body("valid/apple/postback-development-valid.json")
        try await receiver.application(loggingTo: lines, format: format).test(.router) { client in
            for _ in 0..<2 {
                let response = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                        body: body)
                #expect(response.status == .ok)
            }
            #expect(try await client.execute(uri: "/no/such/path", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
        }
        let requestLines = lines.all.filter { $0.contains("Request") }
        #expect(requestLines.count == 4)
        let ids = requestLines.map { Self.requestID(in: $0, format: format) }
        #expect(Set(ids.compactMap { $0 }).count == 4)
        #expect(requestLines[2].contains("/no/such/path"))
        let rows = try receiver.rows()
        try #require(rows.count == 2)
        let first = try JSONSerialization.jsonObject(with: Data(rows[0].record.utf8)) as? [String: Any]
        let retry = try JSONSerialization.jsonObject(with: Data(rows[1].record.utf8)) as? [String: Any]
        #expect(first?["source"] as? String == ids[0])
        #expect(retry?["source"] as? String == ids[1])
        #expect(retry?["duplicate-of-source"] as? String == ids[0])
        // What each answer was: its status, a postback's verdict and code, and the latency.
        let fields = requestLines.map { Self.fields(of: $0, format: format) }
        #expect(fields.map { $0["status"] } == ["200", "200", "404", "200"])
        #expect(fields.map { $0["postback.verdict"] } == ["valid", "invalid", nil, nil])
        #expect(fields.map { $0["postback.code"] } == [nil, "duplicate", nil, nil])
        for field in fields {
            let latency = field["latency_ms"] ?? ""
            #expect(latency.wholeMatch(of: /[0-9]+\.[0-9]{3}/) != nil, "latency_ms=\(latency)")
        }
        if format == .text {
            // Hummingbird's fields where they were, the answer's after them.
            let keys = requestLines[1].split(separator: " ").dropFirst(3).map { $0.prefix { $0 != "=" } }
            #expect(keys == ["hb.request.id", "hb.request.method", "hb.request.path", "latency_ms", "postback.code",
                             "postback.verdict", "status"])
        }
    }

    @Test("latency_ms is milliseconds with three decimals, from microseconds",
          arguments: [(Duration.zero, "0.000"), (.microseconds(7), "0.007"), (.microseconds(1500), "1.500"),
                      (.nanoseconds(999), "0.000"), (.seconds(12), "12000.000"), (.milliseconds(-3), "0.000")])
    func latencyText(duration: Duration, text: String) {
        #expect(RequestLogMiddleware<BasicRequestContext>.milliseconds(duration) == text)
    }

    /// A line's metadata as text: JSON members, or `key=value` fields of a text line (the values in these tests
    /// have no spaces).
    static func fields(of line: String, format: ReceiverLogHandler.Format) -> [String: String] {
        switch format {
        case .json:
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
            return object.compactMapValues { $0 as? String }
        case .text:
            var fields: [String: String] = [:]
            for field in line.dropLast().split(separator: " ").dropFirst(3) {
                let parts = field.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            return fields
        }
    }

    @Test("a request's path reaches the log escaped: an escape sequence in it is \\u001b, never the byte")
    func hostilePathIsEscaped() async throws {
        let receiver = try TestReceiver()
        let lines = LogLines()
        try await receiver.application(loggingTo: lines, format: .text).test(.router) { client in
            _ = try await client.execute(uri: "/%1B[31m\u{1B}[2J", method: .get)
        }
        let requestLines = lines.all.filter { $0.contains("Request") }
        #expect(requestLines.count == 1)
        for line in requestLines { Self.expectTerminalSafe(line) }
    }

    /// No scalar in `line` but its final newline is one `TerminalText` escapes.
    static func expectTerminalSafe(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let unsafe = line.dropLast().unicodeScalars.filter(TerminalText.mustEscape)
        #expect(unsafe.isEmpty, "raw: \(unsafe.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
    }

    static func requestID(in line: String, format: ReceiverLogHandler.Format) -> String? {
        switch format {
        case .json:
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["hb.request.id"] as? String
        case .text:
            return line.split(separator: " ").first { $0.hasPrefix("hb.request.id=") }
                .map { String($0.dropFirst("hb.request.id=".count)) }
        }
    }
}
