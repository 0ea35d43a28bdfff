extension StrictJSONParser {
    /// The limits and policies a parse applies beyond the RFC 8259 grammar.
    package struct Options: Sendable {
        /// The deepest nesting of arrays and objects accepted; a top-level `[]` has depth 1.
        ///
        /// The product allows 16 (spec section 2). The parser itself never recurses, but values nested this deep
        /// are released and serialised recursively, so keep the limit small.
        package var maximumDepth: Int = 16

        /// Whether two members of one object may not share a name (compared scalar by scalar after unescaping).
        ///
        /// RFC 8259 section 4 only says names SHOULD be unique; parsers then disagree on which duplicate wins
        /// (Foundation's `JSONDecoder` keeps the first, `JSONSerialization` the last), so a verifier refuses them.
        package var rejectsDuplicateMembers: Bool = true

        /// Creates options; the defaults are the verifier's policy (depth 16, duplicates refused).
        package init(maximumDepth: Int = 16, rejectsDuplicateMembers: Bool = true) {
            self.maximumDepth = maximumDepth
            self.rejectsDuplicateMembers = rejectsDuplicateMembers
        }
    }
}
