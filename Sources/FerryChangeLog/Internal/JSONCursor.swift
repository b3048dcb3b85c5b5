import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward scanner over one JSON text in memory that validates as it skips.
///
/// Replay touches every byte of a history once; this cursor lets it pick out the few members it
/// needs (event kind, record name, zone, change tag, modification time, references) and skip the
/// rest while still checking it is JSON: strings end, escapes are valid, non-ASCII text is UTF-8,
/// numbers and literals are well formed, brackets balance. With `validates == false` (tokens-only
/// reads) strings are only scanned for their end. Duplicate keys are not detected here; the full
/// record decoder (`RecordJSON.decodeRecord`) detects them when a record is materialized.
///
/// The buffer must outlive the cursor.
struct JSONCursor {
    let base: UnsafePointer<UInt8>
    let end: Int
    var position: Int
    var depth = 0
    let maximumDepth: Int
    /// Whether strings are validated (UTF-8, escapes) or only scanned for their end.
    var validates = true
    /// Whether whitespace was skipped since the flag was last cleared (the text is not compact).
    var sawWhitespace = false

    /// A string's content range (between the quotes) and whether it holds escapes.
    struct StringToken {
        var start: Int
        var end: Int
        var hasEscapes: Bool
    }

    init(_ buffer: UnsafeRawBufferPointer, maximumDepth: Int = 512) {
        if let address = buffer.baseAddress {
            base = address.assumingMemoryBound(to: UInt8.self)
        } else {
            base = UnsafePointer(bitPattern: 1)! // empty: never dereferenced because end == 0
        }
        end = buffer.count
        position = 0
        self.maximumDepth = maximumDepth
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

    // MARK: Errors

    func failure(_ code: RecordFormatError.Code, _ message: String, at offset: Int? = nil) -> RecordFormatError {
        RecordFormatError(code, message, byteOffset: offset ?? position)
    }

    func describeCurrent() -> String {
        guard position < end else { return "end of input" }
        switch base[position] {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "n"): return "null"
        case let b where b >= 0x21 && b <= 0x7E: return "'\(Character(Unicode.Scalar(b)))'"
        case let b: return "byte 0x\(String(b, radix: 16, uppercase: true))"
        }
    }

    func unexpected(_ expected: String) -> RecordFormatError {
        let code: RecordFormatError.Code = position >= end ? .truncated : (current >= 0x80 ? .invalidUTF8 : .syntax)
        return failure(code, "expected \(expected), found \(describeCurrent())")
    }

    // MARK: Structure

    mutating func beginObject(_ what: @autoclosure () -> String = "an object") throws(RecordFormatError) {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { throw unexpected(what()) }
        try enter()
    }

    mutating func beginArray(_ what: @autoclosure () -> String = "an array") throws(RecordFormatError) {
        skipWhitespace()
        guard current == UInt8(ascii: "[") else { throw unexpected(what()) }
        try enter()
    }

    @inline(__always) mutating func enter() throws(RecordFormatError) {
        depth += 1
        if depth > maximumDepth { throw failure(.tooDeep, "nesting deeper than \(maximumDepth) levels") }
        position += 1
    }

    /// Moves to the next member key of an object; `false` (after `}`) at its end.
    @inline(__always) mutating func nextMember(_ first: inout Bool) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        let b = current
        if b == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            first = false
            return false
        }
        if first {
            first = false
            return true
        }
        guard b == UInt8(ascii: ",") else { throw unexpected("',' or '}'") }
        position += 1
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected("a key string after ','") }
        return true
    }

    /// Moves to the next element of an array; `false` (after `]`) at its end.
    @inline(__always) mutating func nextElement(_ first: inout Bool) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        let b = current
        if first {
            first = false
            if b == UInt8(ascii: "]") {
                position += 1
                depth -= 1
                return false
            }
            return true
        }
        if b == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return false
        }
        guard b == UInt8(ascii: ",") else { throw unexpected("',' or ']'") }
        position += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") { throw unexpected("a value after ','") }
        return true
    }

    /// Reads a member key and the `:` after it.
    @inline(__always) mutating func readKey() throws(RecordFormatError) -> StringToken {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected("a key string") }
        let key = try scanString()
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw unexpected("':' after a key") }
        position += 1
        return key
    }

    /// Whether a key (or any string token) is `literal`.
    @inline(__always) func equals(_ token: StringToken, _ literal: StaticString) -> Bool {
        if token.hasEscapes { return (try? string(token)) == "\(literal)" }
        let n = literal.utf8CodeUnitCount
        return token.end - token.start == n && memcmp(base + token.start, literal.utf8Start, n) == 0
    }

    // MARK: Strings

    /// Scans the string whose opening quote is at `position`.
    @inline(__always) mutating func scanString() throws(RecordFormatError) -> StringToken {
        let open = position
        var i = position + 1
        var high: UInt64 = 0
        var escaped = false
        while true {
            while i + 8 <= end {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let quote = word ^ 0x2222_2222_2222_2222
                let slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                let special = ((quote &- ones) & ~quote | (slash &- ones) & ~slash | (word &- 0x2020_2020_2020_2020) & ~word) & highs
                if special != 0 {
                    let skip = special.trailingZeroBitCount >> 3
                    high |= word & highs & ((1 << (UInt64(skip) << 3)) &- 1)
                    i += skip
                    break
                }
                high |= word & highs
                i += 8
            }
            guard i < end else {
                throw failure(.truncated, "expected '\"' to close the string that starts here, found end of input", at: open)
            }
            let b = base[i]
            if b == UInt8(ascii: "\"") {
                position = i + 1
                let token = StringToken(start: open + 1, end: i, hasEscapes: escaped)
                if validates && (high != 0 || escaped) { try validate(token) }
                return token
            } else if b == UInt8(ascii: "\\") {
                escaped = true
                i += 2
            } else if b < 0x20 {
                throw failure(.syntax, "expected a printable character in a string, found control character 0x\(String(b, radix: 16, uppercase: true)) (it must be escaped)", at: i)
            } else {
                if b >= 0x80 { high = 1 }
                i += 1
            }
        }
    }

    /// Checks escapes and UTF-8 of a scanned string by decoding it.
    func validate(_ token: StringToken) throws(RecordFormatError) {
        _ = try decode(token, keep: false)
    }

    /// The string's value.
    func string(_ token: StringToken) throws(RecordFormatError) -> String {
        if !token.hasEscapes {
            return String(decoding: UnsafeBufferPointer(start: base + token.start, count: token.end - token.start), as: UTF8.self)
        }
        return try decode(token, keep: true)
    }

    /// Reads a string value (after whitespace).
    mutating func readString(_ what: @autoclosure () -> String = "a string") throws(RecordFormatError) -> String {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected(what()) }
        return try string(try scanString())
    }

    private func decode(_ token: StringToken, keep: Bool) throws(RecordFormatError) -> String {
        var out: [UInt8] = []
        if keep { out.reserveCapacity(token.end - token.start) }
        var i = token.start
        while i < token.end {
            let b = base[i]
            if b == UInt8(ascii: "\\") {
                guard i + 1 < token.end else { throw failure(.syntax, "expected an escape character after '\\'", at: i) }
                let e = base[i + 1]
                var scalar: UInt32
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalar = UInt32(e)
                case UInt8(ascii: "b"): scalar = 8
                case UInt8(ascii: "f"): scalar = 12
                case UInt8(ascii: "n"): scalar = 10
                case UInt8(ascii: "r"): scalar = 13
                case UInt8(ascii: "t"): scalar = 9
                case UInt8(ascii: "u"):
                    scalar = try hex4(at: i + 2, stop: token.end)
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard i + 12 <= token.end, base[i + 6] == UInt8(ascii: "\\"), base[i + 7] == UInt8(ascii: "u") else {
                            throw failure(.loneSurrogate, "expected a low surrogate after \\u\(String(scalar, radix: 16, uppercase: true)), found none", at: i)
                        }
                        let low = try hex4(at: i + 8, stop: token.end)
                        guard low >= 0xDC00 && low <= 0xDFFF else {
                            throw failure(.loneSurrogate, "expected a low surrogate after \\u\(String(scalar, radix: 16, uppercase: true)), found \\u\(String(low, radix: 16, uppercase: true))", at: i + 6)
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        throw failure(.loneSurrogate, "expected a character, found lone low surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: i)
                    }
                    i += 4
                default:
                    throw failure(.syntax, "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found '\\\(Character(Unicode.Scalar(e)))'", at: i)
                }
                i += 2
                if keep { Self.appendUTF8(scalar, to: &out) }
            } else if b < 0x80 {
                if keep { out.append(b) }
                i += 1
            } else {
                let length = try utf8Length(at: i, stop: token.end)
                if keep { out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: length)) }
                i += length
            }
        }
        return keep ? String(decoding: out, as: UTF8.self) : ""
    }

    private func hex4(at offset: Int, stop: Int) throws(RecordFormatError) -> UInt32 {
        guard offset + 4 <= stop else { throw failure(.syntax, "expected four hex digits after \\u", at: offset - 2) }
        var value: UInt32 = 0
        for k in 0..<4 {
            let c = base[offset + k]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw failure(.syntax, "expected four hex digits after \\u", at: offset - 2)
            }
            value = value << 4 | digit
        }
        return value
    }

    /// The length of the UTF-8 sequence at `i`, or an error if it is not valid UTF-8.
    private func utf8Length(at i: Int, stop: Int) throws(RecordFormatError) -> Int {
        let b = base[i]
        var need = 0
        var minimum: UInt32 = 0
        var scalar: UInt32 = 0
        switch b {
        case 0xC2...0xDF: need = 1; scalar = UInt32(b & 0x1F); minimum = 0x80
        case 0xE0...0xEF: need = 2; scalar = UInt32(b & 0x0F); minimum = 0x800
        case 0xF0...0xF4: need = 3; scalar = UInt32(b & 0x07); minimum = 0x10000
        default: throw failure(.invalidUTF8, "expected UTF-8 text, found byte 0x\(String(b, radix: 16, uppercase: true))", at: i)
        }
        guard i + need < stop else { throw failure(.invalidUTF8, "expected UTF-8 text, found a truncated sequence", at: i) }
        for k in 1...need {
            let c = base[i + k]
            guard c & 0xC0 == 0x80 else {
                throw failure(.invalidUTF8, "expected a UTF-8 continuation byte, found byte 0x\(String(c, radix: 16, uppercase: true))", at: i + k)
            }
            scalar = scalar << 6 | UInt32(c & 0x3F)
        }
        if scalar < minimum || scalar > 0x10FFFF || (scalar >= 0xD800 && scalar <= 0xDFFF) {
            throw failure(.invalidUTF8, "expected UTF-8 text, found an overlong, surrogate or out-of-range sequence", at: i)
        }
        return need + 1
    }

    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case ..<0x80: out.append(UInt8(scalar))
        case ..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6)); out.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12)); out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18)); out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F)); out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers and literals

    /// Scans a number; returns its exact value when it is an integer within Int64.
    @discardableResult
    mutating func scanNumber() throws(RecordFormatError) -> Int64? {
        skipWhitespace()
        var i = position
        let negative = i < end && base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < end, base[i] &- UInt8(ascii: "0") <= 9 else {
            position = i
            throw unexpected("a digit")
        }
        var magnitude: UInt64 = 0
        var overflow = false
        if base[i] == UInt8(ascii: "0") {
            i += 1
            if i < end, base[i] &- UInt8(ascii: "0") <= 9 {
                position = i
                throw failure(.syntax, "expected '.', 'e' or the end of the number after a leading 0, found a digit")
            }
        } else {
            while i < end {
                let d = base[i] &- UInt8(ascii: "0")
                if d > 9 { break }
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(d))
                overflow = overflow || o1 || o2
                magnitude = m2
                i += 1
            }
        }
        var isInteger = true
        if i < end && base[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let digits = i
            while i < end, base[i] &- UInt8(ascii: "0") <= 9 { i += 1 }
            if i == digits { position = i; throw unexpected("a digit after '.'") }
        }
        if i < end && base[i] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            i += 1
            if i < end && (base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-")) { i += 1 }
            let digits = i
            while i < end, base[i] &- UInt8(ascii: "0") <= 9 { i += 1 }
            if i == digits { position = i; throw unexpected("a digit in the exponent") }
        }
        position = i
        guard isInteger && !overflow else { return nil }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(RecordFormatError) -> Bool {
        skipWhitespace()
        if match("true") { return true }
        if match("false") { return false }
        throw unexpected("true or false")
    }

    mutating func match(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard position + n <= end, memcmp(base + position, literal.utf8Start, n) == 0 else { return false }
        position += n
        return true
    }

    /// Skips any value, validating it (see the type's summary for what is checked).
    mutating func skipValue() throws(RecordFormatError) {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "{"):
            try enter()
            var first = true
            while try nextMember(&first) {
                _ = try readKey()
                try skipValue()
            }
        case UInt8(ascii: "["):
            try enter()
            var first = true
            while try nextElement(&first) { try skipValue() }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
        default:
            if match("true") || match("false") || match("null") { return }
            throw unexpected("a value")
        }
    }

    /// Checks that nothing but whitespace follows.
    mutating func expectEnd() throws(RecordFormatError) {
        skipWhitespace()
        if position < end { throw unexpected("the end of the value") }
    }

    /// A copy of `range` without the whitespace between tokens (strings are kept as they are).
    func compactCopy(_ range: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var inString = false
        var i = range.lowerBound
        while i < range.upperBound {
            let b = base[i]
            if inString {
                out.append(b)
                if b == UInt8(ascii: "\\") {
                    out.append(base[i + 1])
                    i += 1
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if b == UInt8(ascii: "\"") {
                inString = true
                out.append(b)
            } else if b != 0x20 && b != 0x0A && b != 0x0D && b != 0x09 {
                out.append(b)
            }
            i += 1
        }
        return out
    }

    /// A copy of the bytes in `range`.
    func copy(_ range: Range<Int>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }
}
