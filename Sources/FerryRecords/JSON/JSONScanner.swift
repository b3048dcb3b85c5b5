#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CFerrySystem
import FerryInternals

/// A pull scanner over one JSON document in memory (RFC 8259, strict).
///
/// It never copies the document: strings are validated in place (eight bytes at a time while they
/// hold nothing special) and numbers are parsed straight from the bytes. Strict means: no comments,
/// no trailing commas, no control characters in strings, no invalid UTF-8 and no lone surrogates;
/// every error carries the byte offset and says what was expected and what was found.
///
/// The buffer must outlive the scanner; values it returns are copies.
package struct JSONScanner {
    @usableFromInline let base: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    @usableFromInline package var position: Int
    @usableFromInline var depth = 0
    package let maximumDepth: Int
    /// How many containers are open at the position.
    package var nestingDepth: Int { depth }
    /// When set, only these fields (and stamps if asked) are decoded; the rest are skipped. Not
    /// owned: the selection outlives the scan (``RecordJSON/decodeRecord(_:selecting:configuration:)``
    /// keeps it), so the scanner stays plain data, copied without reference counting.
    package var selectionPointer: UnsafePointer<FieldSelection>?

    /// The field selection, if any.
    @inlinable package var selection: FieldSelection? { selectionPointer?.pointee }
    /// When set, ``skipValueStructure()`` also checks the strings it skips: escapes, surrogate
    /// pairs and UTF-8 (for validating without decoding).
    package var checksSkippedStrings = false
    /// Set when whitespace between tokens was skipped (the text is not compact); callers clear it.
    package var sawWhitespace = false

    /// Creates a scanner over `buffer`.
    package init(_ buffer: UnsafeRawBufferPointer, maximumDepth: Int = 512) {
        if let address = buffer.baseAddress {
            base = address.assumingMemoryBound(to: UInt8.self)
        } else {
            base = UnsafePointer(bitPattern: 1)! // empty buffer: never dereferenced (end == 0)
        }
        end = buffer.count
        position = 0
        self.maximumDepth = maximumDepth
    }

    // MARK: Bytes

    /// The byte at the current position, or 0 at the end (NUL is never valid outside strings).
    @inlinable @inline(__always)
    package var current: UInt8 { position < end ? base[position] : 0 }

    @inlinable @inline(__always)
    package var isAtEnd: Bool { position >= end }

    /// Skips whitespace between tokens. Compact text pays one compare; pretty-printed text
    /// (CloudKit answers with `"key" : value` and two-space indents) goes to
    /// ``skipWhitespaceRun()``.
    @inlinable @inline(__always)
    package mutating func skipWhitespace() {
        guard position < end && base[position] <= 0x20 else { return }
        // A single space between tokens (`"key" : value`) is skipped here, without a call.
        if base[position] == 0x20 && position + 1 < end && base[position + 1] > 0x20 {
            position += 1
            sawWhitespace = true
            return
        }
        skipWhitespaceRun()
    }

    /// Skips a run of whitespace, 16 bytes at a time (a line break and its indentation).
    @inlinable
    package mutating func skipWhitespaceRun() {
        var i = position
        var found: Int32 = 0
        // One byte first: between tokens of a pretty-printed document it is often a single space.
        let first = base[i]
        if first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 {
            i += 1
            if i < end && base[i] > 0x20 {
                position = i
                sawWhitespace = true
                return
            }
            i += CFerrySystem_skipWhitespace(base + i, end - i, &found)
            if found == 0 {
                while i < end {
                    let b = base[i]
                    guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { break }
                    i += 1
                }
            }
            position = i
            sawWhitespace = true
        }
    }

    /// Consumes `byte` if it comes next, after any whitespace.
    @inlinable @inline(__always)
    package mutating func matchByte(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < end && base[position] == byte else { return false }
        position += 1
        return true
    }

    /// Consumes a member key given with its quotes (`#""zoneName""#`), the `:` after it and the
    /// whitespace around them, if the key comes next; otherwise leaves the position where it was.
    /// Compact text is matched in one or two word compares; pretty-printed text just as well.
    @inline(__always)
    package mutating func matchKey(_ quotedKey: StaticString) -> Bool {
        let start = position
        skipWhitespace()
        guard matchLiteral(quotedKey) else {
            position = start
            return false
        }
        if current != UInt8(ascii: ":") {
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                position = start
                return false
            }
        }
        position += 1
        skipWhitespace()
        return true
    }

    // MARK: Errors

    package func error(_ code: RecordFormatError.Code, _ message: String, at offset: Int? = nil) -> RecordFormatError {
        RecordFormatError(code, message, byteOffset: offset ?? position)
    }

    /// Describes what is at the current position, for "expected …, found …" messages.
    package func describeCurrent() -> String {
        guard position < end else { return "end of input" }
        let b = base[position]
        switch b {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "t") where startsWith("true"), UInt8(ascii: "f") where startsWith("false"): return "a boolean"
        case UInt8(ascii: "n") where startsWith("null"): return "null"
        case 0x21...0x7E: return "'\(Character(Unicode.Scalar(b)))'"
        default:
            let hex = String(b, radix: 16, uppercase: true)
            return "byte 0x\(b < 16 ? "0" : "")\(hex)"
        }
    }

    func startsWith(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        return position + n <= end && memcmp(base + position, literal.utf8Start, n) == 0
    }

    package func unexpected(_ expected: String) -> RecordFormatError {
        let code: RecordFormatError.Code = isAtEnd ? .truncated : (current >= 0x80 ? .invalidUTF8 : .syntax)
        return error(code, "expected \(expected), found \(describeCurrent())")
    }

    // MARK: Structure

    /// Consumes `{` (after whitespace) and enters an object.
    @inlinable
    package mutating func beginObject(_ what: @autoclosure () -> String = "an object") throws(RecordFormatError) {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { throw unexpected(what()) }
        try enter()
        position += 1
    }

    /// Consumes `[` (after whitespace) and enters an array.
    @inlinable
    package mutating func beginArray(_ what: @autoclosure () -> String = "an array") throws(RecordFormatError) {
        skipWhitespace()
        guard current == UInt8(ascii: "[") else { throw unexpected(what()) }
        try enter()
        position += 1
    }

    @inlinable @inline(__always)
    mutating func enter() throws(RecordFormatError) {
        depth += 1
        if depth > maximumDepth {
            throw error(.tooDeep, "nesting deeper than \(maximumDepth) levels")
        }
    }

    /// Moves to the next member of an object: returns `false` (having consumed `}`) at its end.
    /// `first` must start `true` for each object.
    @inlinable @inline(__always)
    package mutating func nextMember(_ first: inout Bool) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        if first {
            first = false
            if current == UInt8(ascii: "}") {
                position += 1
                depth -= 1
                return false
            }
            return true
        }
        switch current {
        case UInt8(ascii: ","):
            position += 1
            skipWhitespace()
            if current != UInt8(ascii: "\"") { throw unexpected("a key string after ','") }
            return true
        case UInt8(ascii: "}"):
            position += 1
            depth -= 1
            return false
        default:
            throw unexpected("',' or '}'")
        }
    }

    /// Moves to the next element of an array: returns `false` (having consumed `]`) at its end.
    @inlinable @inline(__always)
    package mutating func nextElement(_ first: inout Bool) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        if first {
            first = false
            if current == UInt8(ascii: "]") {
                position += 1
                depth -= 1
                return false
            }
            return true
        }
        switch current {
        case UInt8(ascii: ","):
            position += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") { throw unexpected("a value after ','") }
            return true
        case UInt8(ascii: "]"):
            position += 1
            depth -= 1
            return false
        default:
            throw unexpected("',' or ']'")
        }
    }

    /// Reads a member key and the `:` after it.
    @inlinable
    package mutating func readKey() throws(RecordFormatError) -> JSONKey {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected("a key string") }
        let start = position
        let key: JSONKey
        let (contentEnd, special) = try scanStringBody()
        if special & Self.escapeFlag == 0 {
            if special & Self.highFlag != 0 {
                try validateUTF8(from: start + 1, to: contentEnd)
            }
            key = JSONKey(raw: UnsafeBufferPointer(start: base + start + 1, count: contentEnd - start - 1), offset: start)
        } else {
            position = start
            key = JSONKey(decoded: try readString(), offset: start)
        }
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw unexpected("':' after key \"\(key.string)\"") }
        position += 1
        return key
    }

    // MARK: Strings

    @usableFromInline static let escapeFlag: UInt64 = 1
    @usableFromInline static let highFlag: UInt64 = 2

    /// Scans a string whose opening quote is at `position`; leaves `position` after the closing
    /// quote. Returns the offset of the closing quote and flags: escapes seen, non-ASCII seen.
    ///
    /// The common short string (keys, type tags, names: plain ASCII ending within 16 bytes) is
    /// found inline with two word compares; anything else goes to ``scanLongStringBody()``.
    @inlinable @inline(__always)
    mutating func scanStringBody() throws(RecordFormatError) -> (end: Int, flags: UInt64) {
        let i = position + 1
        if i + 16 <= end {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            @inline(__always) func special(_ word: UInt64) -> UInt64 {
                let quote = word ^ 0x2222_2222_2222_2222, slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                return ((quote &- ones) & ~quote | (slash &- ones) & ~slash | (word &- 0x2020_2020_2020_2020) & ~word | word) & highs
            }
            let first = special(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
            let offset: Int
            if first != 0 {
                offset = first.trailingZeroBitCount >> 3
            } else {
                let second = special(UnsafeRawPointer(base + i + 8).loadUnaligned(as: UInt64.self))
                offset = second != 0 ? 8 + second.trailingZeroBitCount >> 3 : 16
            }
            if offset < 16 && base[i + offset] == UInt8(ascii: "\"") {
                position = i + offset + 1
                return (i + offset, 0)
            }
        }
        return try scanLongStringBody()
    }

    /// ``scanStringBody()`` for strings that are long, hold escapes or non-ASCII bytes, or end
    /// near the end of the text.
    @inlinable
    mutating func scanLongStringBody() throws(RecordFormatError) -> (end: Int, flags: UInt64) {
        var i = position + 1
        var high: UInt64 = 0
        var escaped = false
        while true {
            // Sixteen bytes at a time (SSE2) while none is a quote, a backslash or a control
            // character; then, or without SSE2, eight at a time.
            var seenHigh: UInt32 = 0
            var atSpecial: Int32 = 0
            i += CFerrySystem_scanPlainString(base + i, end - i, &seenHigh, &atSpecial)
            high |= UInt64(seenHigh)
            while atSpecial == 0 && i + 8 <= end {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let quote = word ^ 0x2222_2222_2222_2222
                let slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                let special = ((quote &- ones) & ~quote | (slash &- ones) & ~slash | (word &- 0x2020_2020_2020_2020) & ~word) & highs
                if special != 0 {
                    // The lowest flagged byte is exact: jump straight to it.
                    let skip = special.trailingZeroBitCount >> 3
                    high |= word & highs & ((1 << (UInt64(skip) << 3)) &- 1)
                    i += skip
                    break
                }
                high |= word & highs
                i += 8
            }
            guard i < end else {
                throw error(.truncated, "expected '\"' to close the string that starts here, found end of input", at: position)
            }
            let b = base[i]
            if b == UInt8(ascii: "\"") {
                position = i + 1
                return (i, (escaped ? Self.escapeFlag : 0) | (high != 0 ? Self.highFlag : 0))
            } else if b == UInt8(ascii: "\\") {
                escaped = true
                i += 2
                if i > end { i = end }
            } else if b < 0x20 {
                throw error(.syntax, "expected a printable character in a string, found control character 0x\(String(b, radix: 16, uppercase: true)) (it must be escaped)", at: i)
            } else {
                if b >= 0x80 { high = 1 }
                i += 1
            }
        }
    }

    /// Reads a JSON string.
    @inlinable
    package mutating func readString() throws(RecordFormatError) -> String {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected("a string") }
        let start = position
        let (contentEnd, flags) = try scanStringBody()
        let count = contentEnd - start - 1
        if flags == 0 {
            return String(scannedUTF8: UnsafeBufferPointer(start: base + start + 1, count: count), isASCII: true)
        }
        if flags & Self.escapeFlag == 0 {
            try validateUTF8(from: start + 1, to: contentEnd)
            return String(scannedUTF8: UnsafeBufferPointer(start: base + start + 1, count: count))
        }
        return try unescape(from: start + 1, to: contentEnd)
    }

    /// Decodes a string with escapes (the slow path).
    @usableFromInline
    func unescape(from start: Int, to stop: Int) throws(RecordFormatError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(stop - start)
        try unescape(from: start, to: stop, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Checks a string body with escapes — every escape valid, surrogates paired, UTF-8 valid —
    /// without building it.
    @usableFromInline
    func checkEscapedString(from start: Int, to stop: Int) throws(RecordFormatError) {
        var nothing = DiscardedBytes()
        try unescape(from: start, to: stop, into: &nothing)
    }

    /// Decodes (or, into ``DiscardedBytes``, only checks) a string body with escapes.
    @usableFromInline
    func unescape<Output: UnescapedBytes>(from start: Int, to stop: Int, into out: inout Output) throws(RecordFormatError) {
        var i = start
        var runStart = start
        while i < stop {
            let b = base[i]
            if b != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if runStart < i {
                try validateUTF8(from: runStart, to: i)
                out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart))
            }
            guard i + 1 < stop else { throw error(.syntax, "expected an escape character after '\\'", at: i) }
            let e = base[i + 1]
            switch e {
            case UInt8(ascii: "\""): out.append(0x22); i += 2
            case UInt8(ascii: "\\"): out.append(0x5C); i += 2
            case UInt8(ascii: "/"): out.append(0x2F); i += 2
            case UInt8(ascii: "b"): out.append(0x08); i += 2
            case UInt8(ascii: "f"): out.append(0x0C); i += 2
            case UInt8(ascii: "n"): out.append(0x0A); i += 2
            case UInt8(ascii: "r"): out.append(0x0D); i += 2
            case UInt8(ascii: "t"): out.append(0x09); i += 2
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: i + 2, stop: stop)
                var length = 6
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    guard i + 12 <= stop, base[i + 6] == UInt8(ascii: "\\"), base[i + 7] == UInt8(ascii: "u") else {
                        throw error(.loneSurrogate, "expected a low surrogate \\uDC00-\\uDFFF after high surrogate \\u\(String(scalar, radix: 16, uppercase: true)), found none", at: i)
                    }
                    let low = try hex4(at: i + 8, stop: stop)
                    guard low >= 0xDC00 && low <= 0xDFFF else {
                        throw error(.loneSurrogate, "expected a low surrogate \\uDC00-\\uDFFF after high surrogate \\u\(String(scalar, radix: 16, uppercase: true)), found \\u\(String(low, radix: 16, uppercase: true))", at: i + 6)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    length = 12
                } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                    throw error(.loneSurrogate, "expected a character, found lone low surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: i)
                }
                out.appendScalar(scalar)
                i += length
            default:
                throw error(.syntax, "expected an escape (one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found '\\\(Character(Unicode.Scalar(e)))'", at: i)
            }
            runStart = i
        }
        if runStart < stop {
            try validateUTF8(from: runStart, to: stop)
            out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: stop - runStart))
        }
    }

    @usableFromInline
    func hex4(at offset: Int, stop: Int) throws(RecordFormatError) -> UInt32 {
        guard offset + 4 <= stop else { throw error(.syntax, "expected four hex digits after \\u", at: offset - 2) }
        var value: UInt32 = 0
        for k in 0..<4 {
            let c = base[offset + k]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error(.syntax, "expected four hex digits after \\u", at: offset - 2)
            }
            value = value << 4 | digit
        }
        return value
    }

    /// Checks that bytes `start..<stop` are UTF-8, throwing with the offset of the first bad byte.
    @usableFromInline
    func validateUTF8(from start: Int, to stop: Int) throws(RecordFormatError) {
        if let (offset, problem) = UTF8Check.firstProblem(base, from: start, to: stop) {
            throw error(.invalidUTF8, problem.message, at: offset)
        }
    }

    // MARK: Numbers

    /// Reads a number token: its extent and, when it is an integer that fits, its exact value.
    @inlinable
    package mutating func readNumber() throws(RecordFormatError) -> JSONNumberToken {
        skipWhitespace()
        let start = position
        var i = position
        var negative = false
        if i < end && base[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < end, base[i] >= UInt8(ascii: "0"), base[i] <= UInt8(ascii: "9") else {
            position = i
            throw unexpected("a digit")
        }
        // Integer part: accumulate as a negative number so Int64.min fits.
        var magnitude: UInt64 = 0
        var overflow = false
        var digits = 0
        if base[i] == UInt8(ascii: "0") {
            i += 1
            digits = 1
            if i < end, base[i] >= UInt8(ascii: "0"), base[i] <= UInt8(ascii: "9") {
                position = i
                throw error(.syntax, "expected '.', 'e' or the end of the number after a leading 0, found a digit")
            }
        } else {
            // Up to 19 digits cannot overflow 64 bits; count them without checks first, eight
            // at a time while eight are digits (a millisecond timestamp has 13).
            while digits <= 11 && i + 8 <= end {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                let high: UInt64 = 0xF0F0_F0F0_F0F0_F0F0, threes: UInt64 = 0x3030_3030_3030_3030
                guard word & high == threes, (word &+ 0x0606_0606_0606_0606) & high == threes else { break }
                // Little-endian: the first digit is the lowest byte. Pairs, then fours, then eight.
                var value = word & 0x0F0F_0F0F_0F0F_0F0F
                value = (value &* 10 &+ (value >> 8)) & 0x00FF_00FF_00FF_00FF
                value = (value &* 100 &+ (value >> 16)) & 0x0000_FFFF_0000_FFFF
                value = (value &* 10000 &+ (value >> 32)) & 0xFFFF_FFFF
                magnitude = magnitude &* 100_000_000 &+ value
                digits += 8
                i += 8
            }
            while i < end {
                let d = base[i] &- UInt8(ascii: "0")
                if d > 9 { break }
                if digits < 19 {
                    magnitude = magnitude &* 10 &+ UInt64(d)
                } else {
                    let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (m2, o2) = m1.addingReportingOverflow(UInt64(d))
                    if o1 || o2 { overflow = true }
                    magnitude = m2
                }
                digits += 1
                i += 1
            }
        }
        var isInteger = true
        if i < end && base[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let fractionStart = i
            while i < end, base[i] >= UInt8(ascii: "0"), base[i] <= UInt8(ascii: "9") { i += 1 }
            if i == fractionStart {
                position = i
                throw unexpected("a digit after '.'")
            }
        }
        if i < end && (base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            if i < end && (base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-")) { i += 1 }
            let exponentStart = i
            while i < end, base[i] >= UInt8(ascii: "0"), base[i] <= UInt8(ascii: "9") { i += 1 }
            if i == exponentStart {
                position = i
                throw unexpected("a digit in the exponent")
            }
        }
        position = i
        var exact: Int64? = nil
        if isInteger && !overflow {
            if negative {
                if magnitude <= UInt64(Int64.max) + 1 { exact = magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude) }
            } else if magnitude <= UInt64(Int64.max) {
                exact = Int64(magnitude)
            }
        }
        _ = digits
        return JSONNumberToken(start: start, end: i, isInteger: isInteger, exactInteger: exact)
    }

    /// The double nearest to a number token (correctly rounded).
    @inlinable
    package func doubleValue(of token: JSONNumberToken) -> Double {
        // An integer converts exactly, but `-0` is the double -0.0, which no integer holds.
        if let exact = token.exactInteger, exact.magnitude <= 1 << 53, exact != 0 || base[token.start] != UInt8(ascii: "-") {
            return Double(exact)
        }
        return Self.parseDouble(base + token.start, count: token.end - token.start)
    }

    @usableFromInline
    static func parseDouble(_ start: UnsafePointer<UInt8>, count: Int) -> Double {
        if let exact = fastDouble(start, count: count) { return exact }
        return parseDoubleSlowly(start, count: count)
    }

    /// Powers of ten that a `Double` holds exactly.
    @usableFromInline
    static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// The value of a valid JSON number when it is exact in one IEEE operation (Clinger's fast
    /// path): at most 2^53 as an integer of its significant digits, times or divided by a power
    /// of ten up to 10^22. Both operands are then exact, so the one rounding is the correct one.
    /// `nil` for the rest (17-digit mantissas, large exponents), which `strtod` reads.
    @usableFromInline
    static func fastDouble(_ start: UnsafePointer<UInt8>, count: Int) -> Double? {
        var i = 0
        let negative = start[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        // The digits before and after the point, as one integer and a power of ten.
        var afterPoint = false
        while i < count {
            if start[i] == UInt8(ascii: "."), !afterPoint {
                afterPoint = true
                i += 1
                continue
            }
            let d = start[i] &- UInt8(ascii: "0")
            if d > 9 { break }
            if mantissa != 0 || d != 0 { digits += 1 }
            if digits > 19 { return nil }
            mantissa = mantissa &* 10 &+ UInt64(d)
            if afterPoint { exponent -= 1 }
            i += 1
        }
        if i < count {
            // The exponent (the scanner has checked its syntax).
            i += 1
            var exponentNegative = false
            if start[i] == UInt8(ascii: "-") || start[i] == UInt8(ascii: "+") {
                exponentNegative = start[i] == UInt8(ascii: "-")
                i += 1
            }
            var value = 0
            while i < count {
                value = value * 10 + Int(start[i] &- UInt8(ascii: "0"))
                if value > 400 { return nil }
                i += 1
            }
            exponent += exponentNegative ? -value : value
        }
        guard mantissa <= 1 << 53, exponent >= -22, exponent <= 22 else { return nil }
        var value = Double(mantissa)
        if exponent < 0 { value /= exactPowersOfTen[-exponent] } else if exponent > 0 { value *= exactPowersOfTen[exponent] }
        return negative ? -value : value
    }

    @usableFromInline
    static func parseDoubleSlowly(_ start: UnsafePointer<UInt8>, count: Int) -> Double {
        // strtod needs a terminator; numbers are short, so copy to a NUL-terminated stack buffer.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { buffer in
            let raw = UnsafeMutableRawPointer(buffer.baseAddress!)
            raw.copyMemory(from: start, byteCount: count)
            buffer[count] = 0
            return strtod(buffer.baseAddress!, nil)
        }
    }

    /// The literal text of a number token.
    package func text(of token: JSONNumberToken) -> String {
        String(decoding: UnsafeBufferPointer(start: base + token.start, count: token.end - token.start), as: UTF8.self)
    }

    // MARK: Literals and generic values

    /// Reads `true` or `false`.
    package mutating func readBool() throws(RecordFormatError) -> Bool {
        skipWhitespace()
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw unexpected("a value")
    }

    /// Reads `null` if it is next; returns whether it was.
    package mutating func readNullIfPresent() -> Bool {
        skipWhitespace()
        return matchLiteral("null")
    }

    /// Consumes `literal` if the input continues with it. Inlined, so the literal's words are
    /// constants: the keys of the compact record shapes are matched in one to three word
    /// compares instead of a call to `memcmp`.
    @inline(__always)
    mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard position + n <= end else { return false }
        let input = UnsafeRawPointer(base + position), expected = UnsafeRawPointer(literal.utf8Start)
        if n >= 8 {
            // Whole words, then the last eight bytes (overlapping the word before).
            var i = 0
            while i + 8 <= n {
                if input.loadUnaligned(fromByteOffset: i, as: UInt64.self) != expected.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                    return false
                }
                i += 8
            }
            if i < n && input.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) != expected.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) {
                return false
            }
        } else if position + 8 <= end {
            // One masked word (little-endian: the first `n` bytes are the low ones).
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { $0.baseAddress!.copyMemory(from: expected, byteCount: n) }
            let mask: UInt64 = n == 0 ? 0 : ~0 >> (64 - 8 * UInt64(n))
            if UInt64(littleEndian: input.loadUnaligned(as: UInt64.self)) & mask != UInt64(littleEndian: word) { return false }
        } else if memcmp(input, expected, n) != 0 {
            return false
        }
        position += n
        return true
    }

    /// Reads any JSON value into a ``JSONValue`` tree.
    package mutating func readValue() throws(RecordFormatError) -> JSONValue {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let token = try readNumber()
            return .number(JSONNumber(text: text(of: token)))
        case UInt8(ascii: "{"):
            try beginObject()
            var object = JSONObject()
            var first = true
            while try nextMember(&first) {
                let key = try readKey()
                let keyString = key.string
                if object.members.contains(where: { ExactName.same($0.key, keyString) }) {
                    throw error(.duplicateKey, "expected each key once, found \"\(keyString)\" twice", at: key.offset)
                }
                object.append(key: keyString, value: try readValue())
            }
            return .object(object)
        case UInt8(ascii: "["):
            try beginArray()
            var array: [JSONValue] = []
            var first = true
            while try nextElement(&first) {
                array.append(try readValue())
            }
            return .array(array)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try readBool())
        case UInt8(ascii: "n"):
            if readNullIfPresent() { return .null }
            throw unexpected("a value")
        default:
            throw unexpected("a value")
        }
    }

    /// Skips any JSON value, validating it.
    package mutating func skipValue() throws(RecordFormatError) {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "\""):
            let start = position
            let (stop, flags) = try scanStringBody()
            if flags & Self.escapeFlag != 0 {
                _ = try unescape(from: start + 1, to: stop)
            } else if flags & Self.highFlag != 0 {
                try validateUTF8(from: start + 1, to: stop)
            }
        case UInt8(ascii: "{"):
            try beginObject()
            var first = true
            var keys: [JSONKey] = []
            while try nextMember(&first) {
                let key = try readKey()
                if keys.contains(where: { $0 == key }) {
                    throw error(.duplicateKey, "expected each key once, found \"\(key.string)\" twice", at: key.offset)
                }
                keys.append(key)
                try skipValue()
            }
        case UInt8(ascii: "["):
            try beginArray()
            var first = true
            while try nextElement(&first) { try skipValue() }
        default:
            _ = try readValue()
        }
    }

    /// Skips a value checking only its structure (brackets, string ends, literals), without
    /// allocating: for values that are decoded, and so fully validated, right afterwards.
    package mutating func skipValueStructure() throws(RecordFormatError) {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"):
            try beginObject()
            var first = true
            while try nextMember(&first) {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw unexpected("a key string") }
                try skipString()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw unexpected("':' after a key") }
                position += 1
                try skipValueStructure()
            }
        case UInt8(ascii: "["):
            try beginArray()
            var first = true
            while try nextElement(&first) { try skipValueStructure() }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try readNumber()
        default:
            if matchLiteral("true") || matchLiteral("false") || matchLiteral("null") { return }
            throw unexpected("a value")
        }
    }

    /// Skips the string at `position`, checking its contents when ``checksSkippedStrings`` is set.
    @inline(__always)
    mutating func skipString() throws(RecordFormatError) {
        let start = position
        let (stop, flags) = try scanStringBody()
        guard checksSkippedStrings, flags != 0 else { return }
        if flags & Self.escapeFlag != 0 {
            try checkEscapedString(from: start + 1, to: stop)
        } else {
            try validateUTF8(from: start + 1, to: stop)
        }
    }

    /// Checks that nothing but whitespace follows.
    package mutating func expectEnd() throws(RecordFormatError) {
        skipWhitespace()
        if !isAtEnd { throw unexpected("the end of the value") }
    }
}

/// A number as scanned: where it is and, for integers that fit, the exact value.
package struct JSONNumberToken {
    package var start: Int
    package var end: Int
    /// No fraction, no exponent.
    package var isInteger: Bool
    /// The value when it is an integer within Int64.
    package var exactInteger: Int64?
}

/// A member key as scanned: its bytes in place when it had no escapes, else the decoded string.
package struct JSONKey: Equatable {
    @usableFromInline let raw: UnsafeBufferPointer<UInt8>?
    @usableFromInline let decoded: String?
    /// Offset of the key's opening quote.
    package let offset: Int

    @usableFromInline init(raw: UnsafeBufferPointer<UInt8>, offset: Int) {
        self.raw = raw
        decoded = nil
        self.offset = offset
    }

    @usableFromInline init(decoded: String, offset: Int) {
        raw = nil
        self.decoded = decoded
        self.offset = offset
    }

    /// The key as a string.
    package var string: String {
        if let raw { return String(scannedUTF8: raw) }
        return decoded!
    }

    /// Whether the key is `literal`.
    @inlinable @inline(__always)
    package func equals(_ literal: StaticString) -> Bool {
        if let raw {
            return raw.count == literal.utf8CodeUnitCount && memcmp(raw.baseAddress!, literal.utf8Start, raw.count) == 0
        }
        return decoded!.utf8.elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Whether the key's UTF-8 bytes are `bytes`.
    @inlinable
    package func equals(bytes: [UInt8]) -> Bool {
        if let raw {
            guard raw.count == bytes.count else { return false }
            return bytes.withUnsafeBufferPointer { raw.count == 0 || memcmp(raw.baseAddress!, $0.baseAddress!, raw.count) == 0 }
        }
        return decoded!.utf8.elementsEqual(bytes)
    }

    package static func == (a: JSONKey, b: JSONKey) -> Bool {
        if let ar = a.raw, let br = b.raw {
            return ar.count == br.count && memcmp(ar.baseAddress!, br.baseAddress!, ar.count) == 0
        }
        return a.string == b.string
    }
}

/// Where ``JSONScanner/unescape(from:to:into:)`` puts decoded bytes.
@usableFromInline
protocol UnescapedBytes {
    mutating func append(_ byte: UInt8)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>)
}

extension UnescapedBytes {
    /// Appends the UTF-8 encoding of `scalar`.
    @inlinable
    mutating func appendScalar(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            append(UInt8(scalar))
        case ..<0x800:
            append(UInt8(0xC0 | scalar >> 6))
            append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            append(UInt8(0xE0 | scalar >> 12))
            append(UInt8(0x80 | scalar >> 6 & 0x3F))
            append(UInt8(0x80 | scalar & 0x3F))
        default:
            append(UInt8(0xF0 | scalar >> 18))
            append(UInt8(0x80 | scalar >> 12 & 0x3F))
            append(UInt8(0x80 | scalar >> 6 & 0x3F))
            append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}

extension Array: UnescapedBytes where Element == UInt8 {}

/// Discards what is unescaped: for checking strings without building them.
@usableFromInline
struct DiscardedBytes: UnescapedBytes {
    @inlinable init() {}
    @inlinable mutating func append(_ byte: UInt8) {}
    @inlinable mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {}
}
