extension FastPostbackPath {
    /// A scanned flat object: its bytes, its members' values by slot, and their order.
    struct Members {
        /// The names the scanner matched, by slot (as decoded: equal to the received names, escapes aside).
        let names: [[UInt8]]
        let bytes: ByteCursor
        let slots: FlatJSONScanner.Slots
        let order: FlatJSONScanner.MemberOrder

        /// `bytes` scanned as a flat object of `names` (``FlatJSONScanner/scan(_:names:)``); nil when it is not one.
        init?(scanning bytes: ByteCursor, names: [[UInt8]]) {
            guard let (slots, order) = FlatJSONScanner.scan(bytes, names: names) else { return nil }
            self.names = names
            self.bytes = bytes
            self.slots = slots
            self.order = order
        }

        func string(_ slot: Int) -> Range<Int>? {
            guard let value = slots[slot], value.kind == .string else { return nil }
            return value.range
        }

        func integer(_ slot: Int) -> UInt64? {
            guard let value = slots[slot], value.kind == .integer else { return nil }
            return value.number
        }

        func boolean(_ slot: Int) -> Bool? {
            guard let value = slots[slot], value.kind == .boolean else { return nil }
            return value.number == 1
        }

        func bytes(_ range: Range<Int>) -> ByteCursor {
            bytes.span(range)
        }

        /// True when the bytes in `range` are exactly `literal`'s.
        func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
            bytes.elementsEqual(range, literal)
        }

        /// The string member as the case of `Choice` whose raw value it spells exactly; nil when absent, not a
        /// string or another value.
        func choice<Choice: ExactlySpelled>(_ slot: Int, _: Choice.Type) -> Choice? {
            guard let range = string(slot) else { return nil }
            return Choice(exactly: bytes(range))
        }

        /// True when the members are as `layout` defines them, which the scanned `names` are: every required one
        /// present, and each present one of its type and within its values (``ValueDomain``). What the general
        /// decoder's ``FieldReader/read(_:skipping:)`` finds nothing wrong with, asked of the scanned bytes.
        func conform(to layout: MessageLayout) -> Bool {
            var required = layout.requiredSlots
            for slot in layout.checks.indices {
                guard let value = slots[slot] else { continue }
                required &= ~(1 << UInt32(slot))
                let check = layout.checks[slot]
                switch (check.type, value.kind) {
                case (.string, .string):
                    guard check.text.admits(bytes(value.range), choices: layout.choices[slot]) else { return false }
                case (.integer, .integer):
                    guard check.integers.contains(value.number) else { return false }
                case (.boolean, .boolean):
                    break
                default:
                    return false
                }
            }
            return required == 0
        }

        /// Adds each member (but `skipped`) to a ``ContentFingerprint``, its value as compact JSON, exactly as
        /// ``appendCompactJSON(to:skipping:)`` writes it.
        func addMembers(to fingerprint: inout ContentFingerprint.Builder, skipping skipped: Int? = nil) {
            for position in 0..<order.count {
                let slot = order.slot(at: position)
                guard slot != skipped, let value = slots[slot] else { continue }
                fingerprint.add(name: names[slot], value: bytes(value.range), quoted: value.kind == .string)
            }
        }

        /// The members in received order as compact JSON, as `JSONValue` writes them: each name and string
        /// between quotes (they hold nothing to escape), integers and Booleans as their literals.
        func appendCompactJSON(to out: inout [UInt8], skipping skipped: Int? = nil) {
            out.append(UInt8(ascii: "{"))
            var first = true
            for position in 0..<order.count {
                let slot = order.slot(at: position)
                guard slot != skipped, let value = slots[slot] else { continue }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: names[slot])
                out.append(UInt8(ascii: "\""))
                out.append(UInt8(ascii: ":"))
                if value.kind == .string { out.append(UInt8(ascii: "\"")) }
                bytes.append(value.range, to: &out)
                if value.kind == .string { out.append(UInt8(ascii: "\"")) }
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
