@_spi(Stores) import Attribution

/// A place a receiver relays stored postbacks to, as the outbox knows it: a name (the rows' `destination`) and
/// which stored rows it is owed. The outbox row of each owed delivery is written in the transaction that stores
/// the postback (`SQLiteReceivedArchive.append(_:owing:)`,
/// ``PostgreSQLDeduplicationStore/claim(_:at:synchronousCommit:owing:archiving:)``), so a delivery is owed from
/// the moment the postback is stored, whatever happens to the process after.
@_spi(Servers) public struct OutboxDestination: Sendable {
    /// Which stored rows a destination is owed.
    @_spi(Servers) public enum Selection: String, Sendable, CaseIterable {
        /// First sightings of valid postbacks (verdict `valid`: duplicates are invalid rows).
        case valid
        /// Every body Apple sent, valid or not, for a partner that verifies on its own; a duplicate (Apple's retry
        /// of a stored postback, code `duplicate`) and a row that kept only its differences are not bodies to send
        /// again.
        case all
    }

    /// The name its deliveries are kept under (at most 200 bytes of printable ASCII: it is a metrics label too).
    public let name: String
    /// Which stored rows it is owed.
    public let selection: Selection

    /// A destination named `name`, owed the rows `selection` picks.
    /// - Parameters:
    ///   - name: printable ASCII without spaces, 1 to 200 bytes (a URL, or a name the operator chose).
    ///   - selection: which stored rows it is owed.
    /// - Throws: ``/Attribution/AttributionError`` (`invalid-option`) for a name outside those bounds.
    public init(name: String, selection: Selection) throws(AttributionError) {
        guard (1...200).contains(name.utf8.count), name.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw AttributionError(.invalidOption, "a destination's name must be 1 to 200 printable ASCII "
                                   + "characters without spaces, not \(TerminalText.escaped(name))")
        }
        self.name = name
        self.selection = selection
    }

    /// True when a stored `row` is owed to this destination.
    /// - Parameter row: a row as the archive stores it.
    /// - Returns: whether its outbox row is written with it.
    public func owes(_ row: ArchivedPostback) -> Bool {
        switch selection {
        case .valid:
            return row.verdict.utf8.elementsEqual("valid".utf8)
        case .all:
            return row.kept == .body
                && !(row.code.map { $0.utf8.elementsEqual(AttributionError.Code.duplicate.rawValue.utf8) } ?? false)
        }
    }
}
