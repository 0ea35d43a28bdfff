import Attribution
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
@testable import ReceiverCore
import Testing

/// The request log: one line per request through Hummingbird's `LogRequestsMiddleware`, written by
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
