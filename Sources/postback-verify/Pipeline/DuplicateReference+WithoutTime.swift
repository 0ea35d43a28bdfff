import Attribution

extension DuplicateReference {
    /// The same reference without its time: without `--state`, a run's records depend on its input alone.
    var withoutTime: DuplicateReference {
        DuplicateReference(source: source, line: line, firstSeen: nil, firstContent: firstContent,
                           isPending: isPending)
    }
}
