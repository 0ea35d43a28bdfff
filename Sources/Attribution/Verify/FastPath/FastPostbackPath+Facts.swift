extension FastPostbackPath {
    /// The conversion facts of a valid item the fast path answered, read back from its record (from
    /// ``takeRecord(from:)``): the same facts ``ConversionFacts/init(_:)`` reads from the general path's result.
    ///
    /// Read only when a caller asks (a conversion schema, a run report), so the fast path itself does no more per
    /// item than before. The record is the fast path's own: `fields` and `unsigned` are flat objects whose strings
    /// hold no quote or backslash, so each ends at its first `}`. Nil when the record is not one it wrote.
    func conversionFacts(record: [UInt8], answer: Answer) -> ConversionFacts? {
        let key = keys[answer.key]
        return ByteCursor.over(record) { bytes -> ConversionFacts? in
            // The source is a quoted JSON string, so the first `,"kind":` is the key's status.
            guard let statusStart = Self.firstIndex(of: #","kind":"#, in: bytes),
                  bytes.count > statusStart + key.recordStatus.count,
                  bytes.elementsEqual(statusStart..<(statusStart + key.recordStatus.count), key.recordStatus)
            else { return nil }
            let fieldsStart = statusStart + key.recordStatus.count
            guard let fieldsEnd = bytes.firstIndex(of: UInt8(ascii: "}"), from: fieldsStart),
                  bytes.matches(#","unsigned":"#, at: fieldsEnd + 1)
            else { return nil }
            let unsignedStart = fieldsEnd + 1 + Self.unsignedOpening
            guard let unsignedEnd = bytes.firstIndex(of: UInt8(ascii: "}"), from: unsignedStart),
                  bytes.matches(#","tier":"#, at: unsignedEnd + 1)
            else { return nil }
            let tierAt = unsignedEnd + 1 + Self.tierOpening
            guard tierAt < bytes.count,
                  let payload = Members(scanning: bytes.span(fieldsStart..<(fieldsEnd + 1)),
                                        names: payloadLayout.names),
                  let body = Members(scanning: bytes.span(unsignedStart..<(unsignedEnd + 1)), names: bodyLayout.names),
                  let item = payload.integer(PostbackPayloadMember.advertisedItemIdentifier.slot),
                  let source = payload.string(PostbackPayloadMember.sourceIdentifier.slot),
                  let network = payload.string(PostbackPayloadMember.adNetworkIdentifier.slot),
                  let index = payload.integer(PostbackPayloadMember.postbackSequenceIndex.slot)
            else { return nil }
            let tierDigit = bytes[tierAt]
            return ConversionFacts(
                environment: key.trusted.environment, advertisedItemIdentifier: item,
                sourceIdentifier: payload.bytes.string(source), postbackSequenceIndex: Int(index),
                fineValue: body.integer(PostbackBodyMember.conversionValue.slot).map(Int.init),
                coarseValue: body.choice(PostbackBodyMember.coarseConversionValue.slot, CoarseConversionValue.self),
                valuesAreSigned: false,
                tier: (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(tierDigit)
                    ? Int(tierDigit - UInt8(ascii: "0")) : nil,
                adNetworkIdentifier: ExactString(utf8: payload.bytes.array(network)))
        }
    }

    private static let unsignedOpening = #","unsigned":"#.utf8.count
    private static let tierOpening = #","tier":"#.utf8.count

    /// The first position of `literal` in `bytes`.
    private static func firstIndex(of literal: StaticString, in bytes: ByteCursor) -> Int? {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return nil }
        for start in 0...(bytes.count - count) where bytes.matches(literal, at: start) {
            return start
        }
        return nil
    }
}
