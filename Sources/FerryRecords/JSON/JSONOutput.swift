import CFerrySystem

/// A growable byte buffer that JSON is written into, then handed to a sink in large pieces.
///
/// Noncopyable: owns its storage (freed in `deinit`); being a struct, its accesses are checked
/// for exclusivity at compile time rather than at run time, which matters on this hot path.
/// Owns its storage (freed in `deinit`). Appends are unchecked pointer writes after one capacity
/// check, which is what makes serialization fast.
public struct JSONOutput: ~Copyable {
    @usableFromInline var storage: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    /// The number of bytes written.
    @usableFromInline var length: Int = 0
    /// The number of bytes written.
    public var count: Int { length }

    /// Creates an empty buffer.
    public init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// The bytes written so far (valid until the next write).
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: length) }

    /// Forgets the contents, keeping the storage.
    public mutating func removeAll() { length = 0 }

    /// Drops bytes after `newCount` (to undo a partly written value).
    public mutating func truncate(to newCount: Int) { length = min(length, newCount) }

    /// The contents as an array (tests, small outputs).
    public var array: [UInt8] { Array(bytes) }

    @inlinable @inline(__always)
    mutating func reserve(_ n: Int) {
        if length + n > capacity { grow(length + n) }
    }

    @usableFromInline
    mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStorage.update(from: storage, count: length)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
    }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        storage[length] = byte
        length += 1
    }

    /// Appends raw bytes.
    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        let n = literal.utf8CodeUnitCount
        reserve(n)
        ByteCopy.copy(literal.utf8Start, to: storage + length, count: n)
        length += n
    }

    /// Appends raw bytes.
    @inlinable
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(storage + length).copyMemory(from: base, byteCount: bytes.count)
        length += bytes.count
    }

    /// Appends `text`, JSON, without its whitespace between tokens (``JSONCompaction``).
    package mutating func appendCompacting(_ text: UnsafeRawBufferPointer) {
        reserve(text.count)
        length += JSONCompaction.compact(text, into: UnsafeMutableRawPointer(storage + length))
    }

    /// Appends a decimal integer: two digits at a time, from the end, into place.
    @inlinable
    public mutating func appendInteger(_ value: Int64) {
        reserve(20)
        var magnitude = value.magnitude
        if value < 0 {
            storage[length] = UInt8(ascii: "-")
            length += 1
        }
        if magnitude < 10 {
            storage[length] = UInt8(truncatingIfNeeded: magnitude) + 48
            length += 1
            return
        }
        let digits = Self.decimalDigits(magnitude)
        var i = length + digits
        length = i
        let pairs = JSONOutput.digitPairs.utf8Start
        while magnitude >= 100 {
            let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 100)
            i -= 2
            storage[i] = pairs[Int(remainder) * 2]
            storage[i + 1] = pairs[Int(remainder) * 2 + 1]
            magnitude = quotient
        }
        if magnitude >= 10 {
            storage[i - 2] = pairs[Int(magnitude) * 2]
            storage[i - 1] = pairs[Int(magnitude) * 2 + 1]
        } else {
            storage[i - 1] = UInt8(truncatingIfNeeded: magnitude) + 48
        }
    }

    /// "00" through "99".
    @usableFromInline
    static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// The number of decimal digits of `value` (at least 1): estimated from its bit length
    /// (1233/4096 is just above log10 2), then corrected by one comparison.
    @inlinable
    static func decimalDigits(_ value: UInt64) -> Int {
        let bits = 64 - (value | 1).leadingZeroBitCount
        let estimate = (bits &* 1233) >> 12
        return estimate + (value >= powerOfTen(estimate) ? 1 : 0)
    }

    /// 10 to the power `exponent` (0 through 19).
    @inlinable
    static func powerOfTen(_ exponent: Int) -> UInt64 {
        switch exponent {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        case 18: 1_000_000_000_000_000_000
        default: 10_000_000_000_000_000_000
        }
    }

    /// Appends the shortest text that reads back as exactly `value` (`null` for non-finite values,
    /// which JSON cannot carry and which no JSON input can produce).
    @inlinable
    public mutating func appendDouble(_ value: Double) {
        guard value.isFinite else {
            append("null")
            return
        }
        // The same text as `description`, received as bytes on the stack instead of as a new
        // string (which, at more than 15 characters, is a heap allocation).
        var text = ShortText()
        value.write(to: &text)
        if text.count <= ShortText.capacity {
            withUnsafeBytes(of: text.bytes) { append(UnsafeRawBufferPointer(rebasing: $0[..<text.count])) }
        } else {
            var long = value.description
            long.withUTF8 { append(UnsafeRawBufferPointer($0)) }
        }
    }

    /// `string` as a JSON string literal, quotes included: how messages quote a name. A name of
    /// more than ``messageNameBytes`` UTF-8 bytes is cut on a character boundary and its length
    /// given, `"abc…" (100000 bytes)`, so that one long name cannot flood a terminal.
    package static func literal(_ string: String) -> String {
        let length = string.utf8.count
        guard length > messageNameBytes else {
            var out = JSONOutput(capacity: length + 2)
            out.appendString(string)
            return String(decoding: out.bytes, as: UTF8.self)
        }
        var kept = 0
        var end = string.startIndex
        for character in string {
            let size = character.utf8.count
            guard kept + size <= messageNameBytes / 2 else { break }
            kept += size
            end = string.index(after: end)
        }
        var out = JSONOutput(capacity: kept + 8)
        out.appendString(String(string[..<end]) + "…")
        return String(decoding: out.bytes, as: UTF8.self) + " (\(length) bytes)"
    }

    /// Names up to this many UTF-8 bytes are quoted whole in messages (``literal(_:)``).
    package static let messageNameBytes = 256

    /// Appends a JSON string literal with the escapes JSON requires (`"`, `\`, control characters).
    /// Non-ASCII text is written as UTF-8, unescaped.
    @inlinable
    public mutating func appendString(_ string: String) {
        // Contiguous UTF-8 (native and small strings) is read in place, without the copy (and
        // the retain and release) that `withUTF8` needs to get a mutable string.
        if string.utf8.withContiguousStorageIfAvailable({ appendString(utf8: $0) }) != nil { return }
        var string = string
        string.withUTF8 { appendString(utf8: $0) }
    }

    /// Appends a JSON string literal from UTF-8 bytes.
    @inlinable
    public mutating func appendString(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        reserve(n + 2)
        guard let base = bytes.baseAddress, n > 0 else {
            storage[length] = UInt8(ascii: "\"")
            storage[length + 1] = UInt8(ascii: "\"")
            length += 2
            return
        }
        if !Self.needsEscaping(base, n) {
            // The common case: nothing to escape, one copy.
            storage[length] = UInt8(ascii: "\"")
            ByteCopy.copy(base, to: storage + length + 1, count: n)
            storage[length + 1 + n] = UInt8(ascii: "\"")
            length += n + 2
            return
        }
        appendEscapedString(base, n)
    }

    /// The bytes of a word that JSON strings must escape (`"`, `\`, controls) have their high
    /// bit set in the result; exact for whether any does.
    @inlinable @inline(__always)
    static func escapeMask(_ word: UInt64) -> UInt64 {
        let quote = word ^ 0x2222_2222_2222_2222
        let slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        let ones: UInt64 = 0x0101_0101_0101_0101
        return ((quote &- ones) & ~quote | (slash &- ones) & ~slash | (word &- 0x2020_2020_2020_2020) & ~word)
            & 0x8080_8080_8080_8080
    }

    /// Whether any of the `n` bytes at `base` must be escaped: sixteen at a time with SSE2, else
    /// eight at a time (the last word overlapping the one before); shorter strings in one word
    /// built from overlapping loads or, under four bytes, byte by byte (padded with `A`s).
    @inlinable @inline(__always)
    static func needsEscaping(_ base: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        let raw = UnsafeRawPointer(base)
        if n >= 16 {
            let sse = CFerrySystem_needsEscaping16(base, n)
            if sse >= 0 { return sse != 0 }
        }
        if n >= 8 {
            var found: UInt64 = 0
            var i = 0
            while i + 8 <= n {
                found |= escapeMask(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                i += 8
            }
            if i < n { found |= escapeMask(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) }
            return found != 0
        }
        if n >= 4 {
            // Two overlapping 32-bit loads cover 4 to 7 bytes.
            let head = UInt64(raw.loadUnaligned(as: UInt32.self))
            let tail = UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            return escapeMask(head | tail << 32) != 0
        }
        var word: UInt64 = 0x4141_4141_4141_4141
        for i in 0..<n { word = word << 8 | UInt64(base[i]) }
        return escapeMask(word) != 0
    }

    /// Appends a JSON string literal whose bytes need escapes (the slow path).
    @usableFromInline
    mutating func appendEscapedString(_ base: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n + 2)
        storage[length] = UInt8(ascii: "\"")
        length += 1
        var i = 0
        var runStart = 0
        while i < n {
            let b = base[i]
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 {
                let run = i - runStart
                reserve(run + 8 + (n - i))
                (storage + length).update(from: base + runStart, count: run)
                length += run
                storage[length] = UInt8(ascii: "\\")
                switch b {
                case UInt8(ascii: "\""): storage[length + 1] = UInt8(ascii: "\""); length += 2
                case UInt8(ascii: "\\"): storage[length + 1] = UInt8(ascii: "\\"); length += 2
                case 0x0A: storage[length + 1] = UInt8(ascii: "n"); length += 2
                case 0x0D: storage[length + 1] = UInt8(ascii: "r"); length += 2
                case 0x09: storage[length + 1] = UInt8(ascii: "t"); length += 2
                case 0x08: storage[length + 1] = UInt8(ascii: "b"); length += 2
                case 0x0C: storage[length + 1] = UInt8(ascii: "f"); length += 2
                default:
                    let hex: StaticString = "0123456789abcdef"
                    storage[length + 1] = UInt8(ascii: "u")
                    storage[length + 2] = UInt8(ascii: "0")
                    storage[length + 3] = UInt8(ascii: "0")
                    storage[length + 4] = hex.utf8Start[Int(b >> 4)]
                    storage[length + 5] = hex.utf8Start[Int(b & 15)]
                    length += 6
                }
                i += 1
                runStart = i
            } else {
                i += 1
            }
        }
        let run = n - runStart
        reserve(run + 1)
        (storage + length).update(from: base + runStart, count: run)
        length += run
        storage[length] = UInt8(ascii: "\"")
        length += 1
    }

    /// Appends any JSON value (compact).
    public mutating func appendValue(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let b): b ? append("true") : append("false")
        case .number(let n):
            var text = n.text
            text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
        case .string(let s): appendString(s)
        case .array(let items):
            append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                appendValue(item)
            }
            append(UInt8(ascii: "]"))
        case .object(let object):
            append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                appendString(member.key)
                append(UInt8(ascii: ":"))
                appendValue(member.value)
            }
            append(UInt8(ascii: "}"))
        }
    }
}

/// Up to 32 bytes of text written by a `TextOutputStreamable` value, held on the stack: what
/// `Double.write(to:)` prints (at most 24 bytes) arrives through `_writeASCII` as bytes. A longer
/// text only counts its bytes, and the caller prints it the usual way.
@usableFromInline
struct ShortText: TextOutputStream {
    @usableFromInline static var capacity: Int { 32 }
    @usableFromInline var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    @usableFromInline var count = 0

    @inlinable init() {}

    @inlinable
    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { _writeASCII($0) }
    }

    @inlinable
    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        let start = count
        count += buffer.count
        guard count <= Self.capacity, let source = buffer.baseAddress else { return }
        withUnsafeMutableBytes(of: &bytes) { $0.baseAddress!.advanced(by: start).copyMemory(from: source, byteCount: buffer.count) }
    }
}
