@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Tests name rules as the catalogue prints them (`"J1"`); an ID the catalogue lacks stops the test at once. The
/// library itself has no such conversion: there a rule is a case of ``RuleID`` and a typo does not compile.
extension RuleID: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let rule = RuleID(rawValue: value) else { fatalError("\(value) is not in the rule catalogue") }
        self = rule
    }
}
