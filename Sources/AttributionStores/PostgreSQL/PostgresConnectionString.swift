@_spi(Stores) import Attribution
internal import CAttributionPostgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A libpq connection string (`host=db.internal dbname=postbacks user=verifier`) or URL
/// (`postgresql://verifier@db.internal/postbacks`), checked by libpq's own parser, and the only way its text reaches
/// a message: ``description`` names the server without the password, and ``scrub(_:)`` removes the password from
/// anything libpq or the server says.
struct PostgresConnectionString: Sendable {
    /// The string as given, for libpq only: never print it.
    let value: String
    /// Host (or socket directory), port, database and user as given, without the password.
    let description: String
    /// The password inside the string, if any, to scrub from messages.
    private let password: String?

    /// The string's keywords, as libpq reads them, or the reason it cannot (its quotes elided: they may quote
    /// the password).
    init(_ value: String) throws(PostgresFailure) {
        try LibPQ.load()
        self.value = value
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(value, &error) else {
            let reason = error.map { String(cString: $0) } ?? "out of memory"
            PQfreemem(error)
            throw PostgresFailure(message: "not a valid PostgreSQL connection string or URL ("
                                  + Self.elideQuotes(reason) + ")")
        }
        defer { PQconninfoFree(options) }
        var parsed: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let setting = option.pointee.val {
                parsed[String(cString: keyword)] = String(cString: setting)
            }
            option += 1
        }
        password = parsed["password"].flatMap { $0.isEmpty ? nil : $0 }
        let named = [("host", "host"), ("hostaddr", "hostaddr"), ("port", "port"), ("dbname", "dbname"),
                     ("user", "user"), ("service", "service")]
            .compactMap { key, label in parsed[key].map { "\(label)=\($0)" } }
        description = named.isEmpty ? "the default PostgreSQL server (PGHOST, PGDATABASE, ...)"
            : named.joined(separator: " ")
    }

    /// True when `--state` names a PostgreSQL server rather than a SQLite file: a `postgresql://` or `postgres://`
    /// URL, or a string that starts with a libpq keyword and `=` (`host=...`, `dbname=...`, `service=...`). A file
    /// whose name looks like that is written with a directory: `./host=x`.
    static func recognizes(_ value: String) -> Bool {
        if value.hasPrefix("postgresql://") || value.hasPrefix("postgres://") { return true }
        let trimmed = value.drop { $0 == " " || $0 == "\t" }
        guard let equals = trimmed.firstIndex(of: "=") else { return false }
        let keyword = trimmed[..<equals].trimmingSuffix { $0 == " " || $0 == "\t" }
        return !keyword.isEmpty && keywords.contains(String(keyword))
    }

    /// Every keyword this libpq knows.
    private static let keywords: Set<String> = {
        var names: Set<String> = []
        guard let defaults = PQconndefaults() else { return names }
        defer { PQconninfoFree(defaults) }
        var option = defaults
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()

    /// `message` on one line, with the password (and the whole string) replaced by `***`.
    func scrub(_ message: String) -> String {
        var lines: [String] = []
        for line in message.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters() })
            where !line.isEmpty && !lines.contains(where: { $0.utf8.elementsEqual(line.utf8) }) {
            lines.append(line)  // libpq repeats a message it collected twice
        }
        var text = lines.joined(separator: "; ")
        for secret in [value, password].compactMap({ $0 }) where !secret.isEmpty {
            text = text.replacingAll(secret, with: "***")
        }
        return text
    }

    /// libpq's parse errors quote the part they could not read, which may be the password: a quoted part stays
    /// only when it is a libpq keyword or one punctuation character (`"="`), and is `"…"` otherwise.
    private static func elideQuotes(_ message: String) -> String {
        var out = ""
        var quoted: String?
        for character in message.split(whereSeparator: \.isNewline).joined(separator: " ") {
            if character == "\"" {
                if let part = quoted {
                    let harmless = keywords.contains(part)
                        || (part.count == 1 && part.unicodeScalars.allSatisfy { $0.isASCII && !$0.properties.isAlphabetic
                            && !("0"..."9").contains($0) })
                    out += "\"" + (harmless ? part : "…") + "\""
                    quoted = nil
                } else {
                    quoted = ""
                }
            } else if quoted != nil {
                quoted!.append(character)
            } else {
                out.append(character)
            }
        }
        if quoted != nil { out += "\"…" }
        return out.trimmingCharacters()
    }
}

private extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.trimmingSuffix { $0 == " " || $0 == "\t" })
    }

    func trimmingSuffix(while predicate: (Character) -> Bool) -> SubSequence {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }

    /// Every occurrence of `target`'s bytes replaced (bytes, not Unicode equivalence: a password is bytes).
    func replacingAll(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8), needle = Array(target.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return String(self) }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if index + needle.count <= bytes.count, bytes[index..<index + needle.count].elementsEqual(needle) {
                out += replacement.utf8
                index += needle.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
