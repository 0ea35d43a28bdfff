import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// ``ByteCursor`` is the one type outside `Crypto/` and `State/` that reads through a pointer, so its edges are
/// checked here against what the standard library's collection algorithms say about the same bytes: every search,
/// comparison and copy at the start, in the middle, at the end and past it.
@Suite("ByteCursor")
struct ByteCursorTests {
    /// Texts with the searched byte nowhere, first, last, repeated, and long enough for vectorised search.
    static let texts: [String] = [
        "", ".", "a", "a.b.c", ".ab", "ab.", "..", String(repeating: "x", count: 100) + ".y",
        String(repeating: "é", count: 40) + ".",
    ]

    @Test("firstIndex(of:from:) finds what Array.firstIndex finds, from every start", arguments: texts)
    func firstIndexMatchesArray(_ text: String) {
        let bytes = Array(text.utf8)
        ByteCursor.over(bytes) { cursor in
            for start in 0...bytes.count {
                let expected = bytes[start...].firstIndex(of: UInt8(ascii: "."))
                #expect(cursor.firstIndex(of: UInt8(ascii: "."), from: start) == expected, "from \(start)")
            }
        }
    }

    @Test("Spans, iteration and copies hold exactly the bytes of the range", arguments: texts)
    func spansAndCopies(_ text: String) {
        let bytes = Array(text.utf8)
        ByteCursor.over(bytes) { cursor in
            #expect(Array(cursor) == bytes)
            #expect(cursor.elementsEqual(bytes))
            for lower in 0...bytes.count {
                for upper in lower...bytes.count {
                    let span = cursor.span(lower..<upper)
                    #expect(Array(span) == Array(bytes[lower..<upper]))
                    #expect(cursor.array(lower..<upper) == Array(bytes[lower..<upper]))
                    #expect(cursor.elementsEqual(lower..<upper, Array(bytes[lower..<upper])))
                    var appended: [UInt8] = [0xFF]
                    cursor.append(lower..<upper, to: &appended)
                    #expect(appended == [0xFF] + bytes[lower..<upper])
                }
            }
        }
    }

    @Test("Comparisons refuse a different length, a different byte and a literal past the end")
    func comparisons() {
        ByteCursor.over(Array("ES256".utf8)) { cursor in
            #expect(cursor.elementsEqual(0..<5, "ES256"))
            #expect(!cursor.elementsEqual(0..<4, "ES256"))
            #expect(!cursor.elementsEqual(0..<5, "ES257"))
            #expect(cursor.elementsEqual(0..<0, ""))
            #expect(cursor.matches("256", at: 2))
            #expect(!cursor.matches("2566", at: 2))
            #expect(!cursor.matches("S", at: 5))
            #expect(cursor.matches("", at: 5))
            #expect(!cursor.elementsEqual(0..<5, Array("es256".utf8)))
        }
        ByteCursor.over([UInt8]()) { empty in
            #expect(empty.isEmpty && empty.isAtEnd && empty.peek() == nil)
            #expect(empty.firstIndex(of: 0) == nil)
            #expect(empty.elementsEqual(0..<0, ""))
            #expect(Array(empty).isEmpty)
        }
    }

    @Test("take(_:) steps over a byte or a literal only when it is there, and leaves the position otherwise")
    func takeAndAdvance() {
        ByteCursor.over(Array(#"{"a":true}"#.utf8)) { bytes in
            var cursor = bytes
            #expect(!cursor.take(UInt8(ascii: "[")) && cursor.position == 0)
            #expect(cursor.take(UInt8(ascii: "{")) && cursor.position == 1)
            cursor.advance(by: 4)
            #expect(cursor.peek() == UInt8(ascii: "t"))
            #expect(!cursor.take("truth") && cursor.position == 5)
            #expect(cursor.take("true") && cursor.position == 9)
            #expect(cursor.take(UInt8(ascii: "}")) && cursor.isAtEnd)
            #expect(!cursor.take(UInt8(ascii: "}")) && cursor.peek() == nil)
        }
    }

    @Test("word(at:) reads eight bytes little-endian at any offset")
    func words() {
        let bytes: [UInt8] = Array(0..<17)
        ByteCursor.over(bytes) { cursor in
            for offset in 0...9 {
                let expected = bytes[offset..<(offset + 8)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                #expect(cursor.word(at: offset) == expected)
            }
        }
    }

    /// The unchecked forms are for hot loops behind one `checkBounds`/`checkWritable` of the loop's range (the
    /// checked forms trap in every build, which a test process cannot show without dying): after those checks pass
    /// for the whole cursor, they read and write exactly what the checked forms do.
    @Test("After checkBounds and checkWritable, unchecked reads and writes agree with the checked ones")
    func uncheckedAgreesWithChecked() {
        let bytes: [UInt8] = (0..<23).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) }
        ByteCursor.over(bytes) { cursor in
            cursor.checkBounds(0..<cursor.count)
            cursor.checkBounds(cursor.count..<cursor.count)
            for index in cursor.indices {
                #expect(cursor[unchecked: index] == cursor[index])
            }
            for offset in 0...(cursor.count - 8) {
                #expect(cursor.word(uncheckedAt: offset) == cursor.word(at: offset))
            }
        }
        let written = ByteCursor.makeArray(count: bytes.count) { out in
            out.checkWritable(0..<out.count)
            for (index, byte) in bytes.enumerated() {
                out.store(byte, uncheckedAt: index)
            }
            return out.count
        }
        #expect(written == bytes)
    }

    @Test("Scratch space, a writable copy and makeArray hold what was stored, and the original stays as it was")
    func writing() {
        let original = Array("abc".utf8)
        ByteCursor.over(original) { cursor in
            let changed = cursor.withWritableCopy { copy -> [UInt8] in
                copy.store(UInt8(ascii: "X"), at: 1)
                return Array(copy)
            }
            #expect(changed == Array("aXc".utf8))
            #expect(Array(cursor) == original)
        }
        let made = ByteCursor.makeArray(count: 3) { out in
            for index in 0..<3 { out.store(UInt8(index), at: index) }
            return 3
        }
        #expect(made == [0, 1, 2])
        #expect(ByteCursor.makeArray(count: 3) { _ in 0 }.isEmpty)
        let scratched = ByteCursor.scratch(count: 0) { Array($0) }
        #expect(scratched.isEmpty)
    }

    @Test("A cursor over a non-contiguous collection reads a copy of the same bytes")
    func nonContiguous() {
        let lazy = Array("a.b".utf8).lazy.map { $0 }
        let seen = ByteCursor.over(lazy) { Array($0) }
        #expect(seen == Array("a.b".utf8))
        #expect(ByteCursor.overUTF8("é.") { Array($0) } == Array("é.".utf8))
    }
}
