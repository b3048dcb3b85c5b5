import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The fast path of replay's JSON reading: a conservative scanner that accepts only input it can
/// vouch for and gives up (``Bail``) on anything else.
///
/// Replay reads every byte of a history, and `JSONScanner`'s `package` methods are not inlined
/// across modules, so the common case gets this tight, inlined walk over raw bytes. It never
/// reports errors: on anything unusual — an error, escapes in a name, a number it does not parse
/// itself, nesting deeper than the limit — it bails, and the caller reads the same bytes again
/// with `JSONScanner`, which accepts exactly what is valid and words the error. So the fast path
/// may only ever accept valid JSON; it may refuse valid JSON.
///
/// What it checks when it accepts: structure, string ends, no control characters in strings,
/// UTF-8 (no overlong forms, surrogates or code points beyond U+10FFFF), escapes (strings with
/// `\u` escapes are checked by `JSONScanner`), number grammar, literals, nesting depth, and that
/// no object has a key twice.
struct FastScanner {
    /// Giving up: read these bytes the careful way.
    struct Bail: Error {}

    let base: UnsafePointer<UInt8>
    let end: Int
    var position: Int
    let maximumDepth: Int
    var depth = 0
    /// Whether whitespace between tokens was seen (the text is not compact).
    var sawWhitespace = false
    /// Key spans of open objects (start, end pairs), `keyCount` pairs in use.
    private let keys: UnsafeMutablePointer<Int>
    private let keyCapacity: Int
    private var keyCount = 0

    init(_ text: UnsafeRawBufferPointer, at position: Int, maximumDepth: Int, keys: KeyStack) {
        base = text.baseAddress!.assumingMemoryBound(to: UInt8.self)
        end = text.count
        self.position = position
        self.maximumDepth = maximumDepth
        self.keys = keys.storage
        keyCapacity = keys.capacity
    }

    @inline(__always) var current: UInt8 { position < end ? base[position] : 0 }

    @inline(__always) mutating func skipWhitespace() {
        while position < end {
            let b = base[position]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            position += 1
            sawWhitespace = true
        }
    }

    @inline(__always) mutating func expect(_ byte: UInt8) throws(Bail) {
        skipWhitespace()
        guard current == byte else { throw Bail() }
        position += 1
    }

    /// Whether `bytes[range]` is `literal`.
    @inline(__always) func equals(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        return range.count == n && memcmp(base + range.lowerBound, literal.utf8Start, n) == 0
    }

    // MARK: Strings

    /// Scans the string at the current position (its quote); returns its content range and
    /// whether it is plain (no escapes), so its bytes are its value. Checks UTF-8 and simple
    /// escapes here; `\u` escapes go to `JSONScanner`.
    @inline(__always)
    mutating func string() throws(Bail) -> (range: Range<Int>, isPlain: Bool) {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw Bail() }
        let open = position
        var i = position + 1
        var isPlain = true
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while true {
            // Eight bytes at a time up to a quote, backslash, control character or byte ≥ 0x80.
            while i + 8 <= end {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let quote = word ^ 0x2222_2222_2222_2222
                let slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                let special = ((quote &- ones) & ~quote | (slash &- ones) & ~slash | (word &- 0x2020_2020_2020_2020) & ~word | word) & highs
                if special != 0 {
                    i += special.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            guard i < end else { throw Bail() }
            let b = base[i]
            if b == UInt8(ascii: "\"") {
                position = i + 1
                return (open + 1..<i, isPlain)
            } else if b == UInt8(ascii: "\\") {
                guard i + 1 < end else { throw Bail() }
                switch base[i + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    isPlain = false
                    i += 2
                default:
                    return try careful(open) // \u escapes (surrogates) and errors
                }
            } else if b >= 0x80 {
                i += try utf8Sequence(at: i)
            } else if b < 0x20 {
                throw Bail()
            } else {
                i += 1
            }
        }
    }

    /// The length of the valid UTF-8 sequence at `i` (lead byte ≥ 0x80), else ``Bail``.
    @inline(__always)
    private func utf8Sequence(at i: Int) throws(Bail) -> Int {
        let b0 = base[i]
        @inline(__always) func continuation(_ k: Int) throws(Bail) -> UInt8 {
            guard i + k < end else { throw Bail() }
            let b = base[i + k]
            guard b & 0xC0 == 0x80 else { throw Bail() }
            return b
        }
        switch b0 {
        case 0xC2...0xDF:
            _ = try continuation(1)
            return 2
        case 0xE0...0xEF:
            let b1 = try continuation(1)
            _ = try continuation(2)
            if b0 == 0xE0 && b1 < 0xA0 { throw Bail() } // overlong
            if b0 == 0xED && b1 >= 0xA0 { throw Bail() } // surrogates
            return 3
        case 0xF0...0xF4:
            let b1 = try continuation(1)
            _ = try continuation(2)
            _ = try continuation(3)
            if b0 == 0xF0 && b1 < 0x90 { throw Bail() } // overlong
            if b0 == 0xF4 && b1 >= 0x90 { throw Bail() } // beyond U+10FFFF
            return 4
        default:
            throw Bail()
        }
    }

    /// A string with `\u` escapes: checked by `JSONScanner`.
    private mutating func careful(_ open: Int) throws(Bail) -> (range: Range<Int>, isPlain: Bool) {
        var s = JSONScanner(UnsafeRawBufferPointer(start: base, count: end))
        s.position = open
        guard let token = try? s.readStringToken() else { throw Bail() }
        position = s.position
        return (token.start..<token.end, !token.isEscaped)
    }

    // MARK: Values

    /// Skips any value, checking it.
    mutating func skipValue() throws(Bail) {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "{"):
            try object { s, _ throws(Bail) in try s.skipValue() }
        case UInt8(ascii: "["):
            try array { s throws(Bail) in try s.skipValue() }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try number()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: throw Bail()
        }
    }

    @inline(__always) mutating func literal(_ text: StaticString) throws(Bail) {
        let n = text.utf8CodeUnitCount
        guard position + n <= end, memcmp(base + position, text.utf8Start, n) == 0 else { throw Bail() }
        position += n
    }

    /// Reads `true` or `false`.
    mutating func bool() throws(Bail) -> Bool {
        skipWhitespace()
        if current == UInt8(ascii: "t") {
            try literal("true")
            return true
        }
        try literal("false")
        return false
    }

    /// Scans a number; returns its value when it is an integer that fits in 64 bits (nil for
    /// other valid numbers).
    mutating func number() throws(Bail) -> Int64? {
        skipWhitespace()
        var i = position
        let negative = i < end && base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < end, base[i] &- UInt8(ascii: "0") <= 9 else { throw Bail() }
        var magnitude: UInt64 = 0
        var digits = 0
        if base[i] == UInt8(ascii: "0") {
            i += 1
            if i < end, base[i] &- UInt8(ascii: "0") <= 9 { throw Bail() }
        } else {
            while i < end, base[i] &- UInt8(ascii: "0") <= 9 {
                magnitude = magnitude &* 10 &+ UInt64(base[i] &- UInt8(ascii: "0"))
                digits += 1
                i += 1
            }
        }
        var isInteger = digits <= 18 // larger integers are valid; their value is left to JSONScanner
        if i < end && base[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let start = i
            while i < end, base[i] &- UInt8(ascii: "0") <= 9 { i += 1 }
            if i == start { throw Bail() }
        }
        if i < end && base[i] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            i += 1
            if i < end && (base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-")) { i += 1 }
            let start = i
            while i < end, base[i] &- UInt8(ascii: "0") <= 9 { i += 1 }
            if i == start { throw Bail() }
        }
        position = i
        guard isInteger else { return nil }
        return negative ? -Int64(magnitude) : Int64(magnitude)
    }

    /// Walks an object: `member` is called at each value, with the key's range, and must consume
    /// the value. Keys are checked for duplicates.
    @inline(__always)
    mutating func object(_ member: (inout FastScanner, Range<Int>) throws(Bail) -> Void) throws(Bail) {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { throw Bail() }
        position += 1
        depth += 1
        guard depth <= maximumDepth else { throw Bail() }
        let frame = keyCount
        defer { keyCount = frame }
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return
        }
        while true {
            let key = try string()
            try remember(key, frame: frame)
            try expect(UInt8(ascii: ":"))
            try member(&self, key.range)
            skipWhitespace()
            let b = current
            position += 1
            if b == UInt8(ascii: ",") { continue }
            guard b == UInt8(ascii: "}") else { throw Bail() }
            depth -= 1
            return
        }
    }

    /// Notes a key of the object whose keys start at `frame`, failing on a repeated one.
    @inline(__always)
    private mutating func remember(_ key: (range: Range<Int>, isPlain: Bool), frame: Int) throws(Bail) {
        guard key.isPlain, keyCount < keyCapacity else { throw Bail() } // escaped keys: compared by value, slowly
        let start = key.range.lowerBound, count = key.range.count
        var k = frame
        while k < keyCount {
            let otherStart = keys[2 * k], otherEnd = keys[2 * k + 1]
            if otherEnd - otherStart == count && memcmp(base + otherStart, base + start, count) == 0 { throw Bail() }
            k += 1
        }
        keys[2 * keyCount] = start
        keys[2 * keyCount + 1] = key.range.upperBound
        keyCount += 1
    }

    /// Walks an array: `element` is called at each element and must consume it.
    @inline(__always)
    mutating func array(_ element: (inout FastScanner) throws(Bail) -> Void) throws(Bail) {
        skipWhitespace()
        guard current == UInt8(ascii: "[") else { throw Bail() }
        position += 1
        depth += 1
        guard depth <= maximumDepth else { throw Bail() }
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return
        }
        while true {
            try element(&self)
            skipWhitespace()
            let b = current
            position += 1
            if b == UInt8(ascii: ",") { continue }
            guard b == UInt8(ascii: "]") else { throw Bail() }
            depth -= 1
            return
        }
    }
}

/// Storage for ``FastScanner``'s key spans, reused across scans.
final class KeyStack {
    let capacity = 4096
    let storage: UnsafeMutablePointer<Int>

    init() { storage = .allocate(capacity: 2 * capacity) }

    deinit { storage.deallocate() }
}
