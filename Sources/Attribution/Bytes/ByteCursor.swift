#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read position over borrowed bytes: the one type outside `Crypto/` and `State/` that holds a pointer. Every
/// byte scanner (``FlatJSONScanner``, ``StrictJSONParser``, ``Base64Alphabet``, the fast path, the command line's
/// line reader) reads through one, so a scanner holds a cursor, never a pointer.
///
/// A cursor is lent to a closure (`ByteCursor.over(bytes) { ... }`, `overUTF8`, `scratch(count:)`) and is valid
/// only inside it: it must not be stored beyond the call or leave it (the bytes belong to the caller). A scanner
/// that holds one lives inside that closure too.
/// Its bytes are a `RandomAccessCollection` indexed from 0, so a span (``span(_:)``) of a cursor is a cursor too,
/// and library calls that take `some Collection<UInt8>` read it in place (`withContiguousStorageIfAvailable`).
/// Every read and write is bounds-checked in release builds too (`precondition`, which only `-Ounchecked` removes):
/// the bytes are untrusted input, so a slip in a scanner must stop the process, never read or write past them. A
/// scanner still checks its index against ``count`` before it reads; the check here is the backstop, one compare
/// (the index as unsigned against ``count``) that the optimiser drops where the scanner's own check implies it.
/// The exceptions are the `unchecked` reads and writes, for a hot loop only, behind one ``checkBounds(_:)`` or
/// ``checkWritable(_:)`` of the loop's whole range; each caller names that check and its test (docs/hardening.md).
///
/// Everything is `@inlinable` so the scanners in this module and the command line's line reader compile it into
/// their loops: the hot path must not pay a call per byte.
@_spi(CommandLine) public struct ByteCursor: RandomAccessCollection {
    @_spi(CommandLine) public typealias Index = Int
    @_spi(CommandLine) public typealias Element = UInt8
    @_spi(CommandLine) public typealias SubSequence = Slice<ByteCursor>
    @_spi(CommandLine) public typealias Indices = Range<Int>

    /// The first byte; nil only when `count` is 0.
    @usableFromInline let base: UnsafePointer<UInt8>?
    /// Whether the bytes were lent for writing (``store(_:at:)``): a ``scratch(count:_:)`` buffer or a copy.
    @usableFromInline let isWritable: Bool
    /// The number of bytes.
    @_spi(CommandLine) public let count: Int
    /// The read position, from 0 to ``count``: where ``peek()``, ``take(_:)`` and ``advance(by:)`` work.
    @_spi(CommandLine) public var position = 0

    @inlinable
    init(base: UnsafePointer<UInt8>?, count: Int, isWritable: Bool) {
        self.base = count == 0 ? nil : base
        self.count = count
        self.isWritable = isWritable
    }

    @inlinable
    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.init(base: buffer.baseAddress, count: buffer.count, isWritable: false)
    }

    @inlinable
    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.init(base: UnsafePointer(buffer.baseAddress), count: buffer.count, isWritable: true)
    }

    // MARK: - Lending bytes to a cursor

    /// Calls `body` with a cursor over `bytes`, read in place.
    @inlinable
    @_spi(CommandLine) public static func over<Result, Failure: Error>(
        _ bytes: ArraySlice<UInt8>, _ body: (ByteCursor) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) in try body(ByteCursor(buffer)) }
    }

    /// Calls `body` with a cursor over `bytes`, read in place.
    @inlinable
    @_spi(CommandLine) public static func over<Result, Failure: Error>(
        _ bytes: [UInt8], _ body: (ByteCursor) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) in try body(ByteCursor(buffer)) }
    }

    /// Calls `body` with a cursor over `bytes`: in place when they are contiguous, else over a copy.
    @inlinable
    @_spi(CommandLine) public static func over<Result, Failure: Error>(
        _ bytes: some Sequence<UInt8>, _ body: (ByteCursor) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let inPlace = bytes.withContiguousStorageIfAvailable { buffer in
            Swift.Result { () throws(Failure) -> Result in try body(ByteCursor(buffer)) }
        }
        if let inPlace {
            return try inPlace.get()
        }
        return try over(Array(bytes), body)
    }

    /// Calls `body` with a cursor over the UTF-8 of `string` (made contiguous first if it is not).
    @inlinable
    @_spi(CommandLine) public static func overUTF8<Result>(_ string: String, _ body: (ByteCursor) -> Result) -> Result {
        var string = string
        return string.withUTF8 { body(ByteCursor($0)) }
    }

    /// Calls `body` with a cursor over a literal's UTF-8 bytes.
    @inlinable
    @_spi(CommandLine)
    public static func over<Result>(_ literal: StaticString, _ body: (ByteCursor) -> Result) -> Result {
        body(ByteCursor(base: literal.utf8Start, count: literal.utf8CodeUnitCount, isWritable: false))
    }

    /// Calls `body` with a writable cursor over `count` bytes of scratch space (on the stack when small), which
    /// holds no defined bytes until written.
    @inlinable
    @_spi(CommandLine) public static func scratch<Result>(count: Int, _ body: (ByteCursor) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Swift.max(count, 1)) { buffer in
            body(ByteCursor(UnsafeMutableBufferPointer(rebasing: buffer[..<count])))
        }
    }

    /// Calls `body` with a writable cursor over a copy of this cursor's bytes (for scanners that decode in place).
    @inlinable
    @_spi(CommandLine) public func withWritableCopy<Result>(_ body: (ByteCursor) -> Result) -> Result {
        ByteCursor.scratch(count: count) { copy in
            if let base, let target = copy.base {
                UnsafeMutablePointer(mutating: target).update(from: base, count: count)
            }
            return body(copy)
        }
    }

    /// An array of `count` bytes that `body` writes through a writable cursor, returning how many it initialised
    /// (all of them, or 0 for an empty array).
    @inlinable
    @_spi(CommandLine) public static func makeArray(count: Int, _ body: (ByteCursor) -> Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = body(ByteCursor(UnsafeMutableBufferPointer(rebasing: buffer[..<count])))
        }
    }

    // MARK: - Collection

    @inlinable @_spi(CommandLine) public var startIndex: Int { 0 }
    @inlinable @_spi(CommandLine) public var endIndex: Int { count }
    @inlinable @_spi(CommandLine) public var indices: Range<Int> { 0..<count }

    /// The byte at `index` (0 ..< ``count``; checked in every build).
    @inlinable
    @_spi(CommandLine) public subscript(index: Int) -> UInt8 {
        @inline(__always) get {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "ByteCursor index out of range")
            return base.unsafelyUnwrapped[index]
        }
    }

    /// The byte at `index`, checked in debug builds only: for a hot loop whose every index lies in a range that
    /// ``checkBounds(_:)`` checked before the loop on the same path. Each caller names that check and the test
    /// that exercises it in its doc comment; everywhere else reads with the checked subscript.
    @inlinable
    @_spi(CommandLine) public subscript(unchecked index: Int) -> UInt8 {
        @inline(__always) get {
            assert(UInt(bitPattern: index) < UInt(bitPattern: count), "ByteCursor index out of range")
            return base.unsafelyUnwrapped[index]
        }
    }

    /// Stops the process unless `range` lies within the bytes (in every build): the one check a hot loop makes
    /// before it reads the range with ``subscript(unchecked:)``, instead of a compare per byte.
    @inlinable @inline(__always)
    @_spi(CommandLine) public func checkBounds(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteCursor range out of range")
    }

    /// Stops the process unless the cursor is writable and `range` lies within its bytes (in every build): the one
    /// check a hot loop makes before it writes the range with ``store(_:uncheckedAt:)``.
    @inlinable @inline(__always)
    @_spi(CommandLine) public func checkWritable(_ range: Range<Int>) {
        precondition(isWritable && range.lowerBound >= 0 && range.upperBound <= count,
                     "ByteCursor store out of range or read-only")
    }

    @inlinable
    @_spi(CommandLine) public subscript(bounds: Range<Int>) -> Slice<ByteCursor> {
        Slice(base: self, bounds: bounds)
    }

    @inlinable
    @_spi(CommandLine) public func withContiguousStorageIfAvailable<Result>(
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Copies the bytes in one block where an array or buffer is filled from a cursor (`append(contentsOf:)`,
    /// `Array(_:)`), instead of the default's byte-by-byte iteration.
    @inlinable
    @_spi(CommandLine) public func _copyContents(
        initializing target: UnsafeMutableBufferPointer<UInt8>
    ) -> (Iterator, Int) {
        let copied = Swift.min(count, target.count)
        if copied > 0, let base, let destination = target.baseAddress {
            destination.initialize(from: base, count: copied)
        }
        return (Iterator(cursor: self, index: copied), copied)
    }

    /// Iterates the bytes with no more than an index compare per byte, also where the loop is in another module.
    @_spi(CommandLine) public struct Iterator: IteratorProtocol {
        @usableFromInline let cursor: ByteCursor
        @usableFromInline var index: Int

        @inlinable
        init(cursor: ByteCursor, index: Int) {
            self.cursor = cursor
            self.index = index
        }

        @inlinable @inline(__always)
        @_spi(CommandLine) public mutating func next() -> UInt8? {
            guard index < cursor.count else { return nil }
            defer { index += 1 }
            return cursor[index]
        }
    }

    @inlinable
    @_spi(CommandLine) public func makeIterator() -> Iterator {
        Iterator(cursor: self, index: 0)
    }

    // MARK: - Reading at the position

    /// True when the position is at the end.
    @inlinable @_spi(CommandLine) public var isAtEnd: Bool { position >= count }

    /// The byte at the position, or nil at the end.
    @inlinable @inline(__always)
    @_spi(CommandLine) public func peek() -> UInt8? {
        position < count ? self[position] : nil
    }

    /// Moves the position `distance` bytes on, at most to the end (checked in every build).
    @inlinable @inline(__always)
    @_spi(CommandLine) public mutating func advance(by distance: Int = 1) {
        precondition(position + distance <= count, "ByteCursor advanced past its end")
        position += distance
    }

    /// Steps over `byte` when it is at the position; false (position unchanged) otherwise.
    @inlinable @inline(__always)
    @_spi(CommandLine) public mutating func take(_ byte: UInt8) -> Bool {
        guard position < count, self[position] == byte else { return false }
        position += 1
        return true
    }

    /// Steps over `literal` when the bytes at the position spell it; false (position unchanged) otherwise.
    @inlinable
    @_spi(CommandLine) public mutating func take(_ literal: StaticString) -> Bool {
        guard matches(literal, at: position) else { return false }
        position += literal.utf8CodeUnitCount
        return true
    }

    // MARK: - Spans and searching

    /// A cursor over the bytes in `range` (indexed from 0 again, position 0), sharing this cursor's bytes.
    @inlinable
    @_spi(CommandLine) public func span(_ range: Range<Int>) -> ByteCursor {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteCursor span out of range")
        return ByteCursor(base: base.map { $0 + range.lowerBound }, count: range.count, isWritable: isWritable)
    }

    /// The bytes from `start` on.
    @inlinable
    @_spi(CommandLine) public func span(from start: Int) -> ByteCursor { span(start..<count) }

    /// The bytes before `end`.
    @inlinable
    @_spi(CommandLine) public func span(upTo end: Int) -> ByteCursor { span(0..<end) }

    /// The index of the first `byte` at or after `start` (libc's vectorised `memchr`), or nil. `start` is at
    /// least 0 (checked in every build); at or past the end finds nothing.
    @inlinable
    @_spi(CommandLine) public func firstIndex(of byte: UInt8, from start: Int = 0) -> Int? {
        precondition(start >= 0, "ByteCursor search start out of range")
        guard let base, start < count,
              let found = memchr(base + start, Int32(byte), count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// The eight bytes at `index` as one little-endian word (`index + 8 <= count`, checked in every build), for
    /// scanners that test eight bytes at a time.
    @inlinable @inline(__always)
    @_spi(CommandLine) public func word(at index: Int) -> UInt64 {
        precondition(index >= 0 && index <= count &- 8, "ByteCursor word out of range")
        return UInt64(littleEndian: UnsafeRawPointer(base.unsafelyUnwrapped + index).loadUnaligned(as: UInt64.self))
    }

    /// The eight bytes at `index` as one little-endian word, checked in debug builds only: for a hot loop whose
    /// every word lies in a range that ``checkBounds(_:)`` checked before the loop on the same path (named in the
    /// caller's doc comment).
    @inlinable @inline(__always)
    @_spi(CommandLine) public func word(uncheckedAt index: Int) -> UInt64 {
        assert(index >= 0 && index <= count &- 8, "ByteCursor word out of range")
        return UInt64(littleEndian: UnsafeRawPointer(base.unsafelyUnwrapped + index).loadUnaligned(as: UInt64.self))
    }

    // MARK: - Comparing

    /// True when the bytes from `index` on start with `literal`'s.
    @inlinable
    @_spi(CommandLine) public func matches(_ literal: StaticString, at index: Int) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard index >= 0, index + length <= count else { return false }
        guard let base else { return true }
        return ByteCursor.equal(base + index, literal.utf8Start, count: length)
    }

    /// True when the bytes in `range` are exactly `literal`'s (`memcmp`). `range` lies within the bytes (checked in
    /// every build).
    @inlinable
    @_spi(CommandLine) public func elementsEqual(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteCursor range out of range")
        guard range.count == literal.utf8CodeUnitCount else { return false }
        guard let base else { return true }
        return ByteCursor.equal(base + range.lowerBound, literal.utf8Start, count: range.count)
    }

    /// True when the bytes in `range` are exactly `other`'s (`memcmp`). `range` lies within the bytes (checked in
    /// every build).
    @inlinable
    @_spi(CommandLine) public func elementsEqual(_ range: Range<Int>, _ other: [UInt8]) -> Bool {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteCursor range out of range")
        guard range.count == other.count else { return false }
        guard let base else { return true }
        return other.withUnsafeBufferPointer {
            ByteCursor.equal(base + range.lowerBound, $0.baseAddress!, count: $0.count)
        }
    }

    /// True when both cursors hold the same bytes (`memcmp`).
    @inlinable
    @_spi(CommandLine) public func elementsEqual(_ other: ByteCursor) -> Bool {
        guard count == other.count else { return false }
        guard let base, let otherBase = other.base else { return true }
        return ByteCursor.equal(base, otherBase, count: count)
    }

    @inlinable @inline(__always)
    static func equal(_ left: UnsafePointer<UInt8>, _ right: UnsafePointer<UInt8>, count: Int) -> Bool {
        count == 0 || memcmp(left, right, count) == 0
    }

    // MARK: - Copying out and writing

    /// Feeds the bytes to `hasher` in one call (`Hasher.combine(bytes:)`).
    @inlinable
    @_spi(CommandLine) public func combineBytes(into hasher: inout Hasher) {
        hasher.combine(bytes: UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Appends the bytes in `range` to `out` (one copy; `range` checked in every build).
    @inlinable
    @_spi(CommandLine) public func append(_ range: Range<Int>, to out: inout [UInt8]) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteCursor range out of range")
        guard let base else { return }
        out.append(contentsOf: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    /// Appends all the bytes to `out` (one copy).
    @inlinable
    @_spi(CommandLine) public func append(to out: inout [UInt8]) {
        append(0..<count, to: &out)
    }

    /// The bytes in `range` as an array.
    @inlinable
    @_spi(CommandLine) public func array(_ range: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        append(range, to: &out)
        return out
    }

    /// The bytes in `range` decoded as UTF-8 (invalid sequences repaired, as `String(decoding:as:)` does; `range`
    /// checked in every build).
    @inlinable
    @_spi(CommandLine) public func string(_ range: Range<Int>) -> String {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteCursor range out of range")
        return String(decoding: UnsafeBufferPointer(start: base.map { $0 + range.lowerBound }, count: range.count),
                      as: UTF8.self)
    }

    /// Writes `byte` at `index` of a writable cursor (a ``scratch(count:_:)`` buffer or a writable copy; checked in
    /// every build).
    @inlinable @inline(__always)
    @_spi(CommandLine) public func store(_ byte: UInt8, at index: Int) {
        precondition(isWritable && UInt(bitPattern: index) < UInt(bitPattern: count),
                     "ByteCursor store out of range or read-only")
        UnsafeMutablePointer(mutating: base.unsafelyUnwrapped)[index] = byte
    }

    /// Writes `byte` at `index`, checked in debug builds only: for a hot loop whose every index lies in a range
    /// that ``checkWritable(_:)`` checked before the loop on the same path (named in the caller's doc comment).
    @inlinable @inline(__always)
    @_spi(CommandLine) public func store(_ byte: UInt8, uncheckedAt index: Int) {
        assert(isWritable && UInt(bitPattern: index) < UInt(bitPattern: count),
               "ByteCursor store out of range or read-only")
        UnsafeMutablePointer(mutating: base.unsafelyUnwrapped)[index] = byte
    }
}
