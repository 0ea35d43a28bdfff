@_spi(CommandLine) import AttributionStores
import Foundation

/// What a report counts, as its page's header names it and its JSON `inputs` member lists it: the paths a run
/// read, or the state a period's received postbacks were exported from.
enum ReportInputs {
    /// A run's paths as given on the command line, `-` for standard input (none given: standard input alone).
    case run(paths: [String])
    /// A period's state (``StateLocation``), named without what could hold a password.
    case period(state: String)

    /// The JSON `inputs` member: the paths (`["-"]` when none was given), or the state's name.
    var names: [String] {
        switch self {
        case .run(let paths): paths.isEmpty ? ["-"] : paths
        case .period(let state): [state]
        }
    }

    /// True when the run read standard input, so that `--label` names some of what it counted.
    var readsStandardInput: Bool {
        guard case .run = self else { return false }
        return names.contains { $0.utf8.elementsEqual("-".utf8) }
    }
}

extension StateLocation {
    /// The state as a report names it: a SQLite file's path; a PostgreSQL URL's host, port and database, without
    /// its user, password or parameters (a libpq keyword string, which can hold a password anywhere, is not shown).
    var reportName: String {
        switch self {
        case .sqlite(let path):
            return path
        case .postgreSQL(let connection):
            guard let url = URLComponents(string: connection), let host = url.host, !host.isEmpty else {
                return "a PostgreSQL database"
            }
            return "postgresql://" + host + (url.port.map { ":\($0)" } ?? "") + url.path
        }
    }
}
