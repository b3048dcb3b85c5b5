import CFerrySystem
import FerryInternals

/// A fast yes/no check that a buffer holds exactly one well-formed JSON value (RFC 8259, strict:
/// valid escapes, paired surrogates, UTF-8, number grammar, literals, nesting depth).
///
/// It is the first pass for lines that are only validated, not decoded (records a `--where`
/// prefilter drops): one loop with an explicit stack, no allocation, strings skipped eight bytes
/// at a time. It says only *whether* the input is well-formed; when it is not, callers run
/// ``RecordJSON/validate(_:configuration:)`` for the error with its position and message. The two
/// accept exactly the same inputs (a test feeds both the same corpus).
package enum JSONValidator {
    /// The outcome of a check.
    package struct Result: Equatable {
        /// Whether the input is one well-formed JSON value (surrounding whitespace allowed).
        package var isWellFormed: Bool
        /// Whether it is an object whose top-level keys include none of `records`, `zones` and
        /// `serverErrorCode` (``CloudKitKey/marksNonRecord(_:count:)``: so it can only be a
        /// record dictionary, not a response, a zone listing or an error entry). Meaningful only
        /// when well-formed.
        package var isRecordObject: Bool
    }

    private static let invalid = Result(isWellFormed: false, isRecordObject: false)

    /// Checks `bytes`, allowing nesting up to `maximumDepth` (at most 4,096).
    package static func check(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int = 512) -> Result {
        guard let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return invalid }
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 64) { stack -> Result in
            var machine = Machine(base: start, end: bytes.count, stack: stack.baseAddress!,
                                  depthLimit: min(maximumDepth, 4096))
            return machine.run().result
        }
    }

    /// Checks the one value that starts at offset `start` of `bytes` (after any whitespace) and
    /// ends there, at whitespace, a comma or a closing bracket (whatever follows is not
    /// checked); returns the outcome and, when well-formed, the offset just after the value.
    package static func checkValue(in bytes: UnsafeRawBufferPointer, from start: Int,
                                   maximumDepth: Int = 512) -> (result: Result, end: Int) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), start <= bytes.count else { return (invalid, start) }
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 64) { stack -> (result: Result, end: Int) in
            var machine = Machine(base: base, end: bytes.count, stack: stack.baseAddress!,
                                  depthLimit: min(maximumDepth, 4096))
            machine.i = start
            machine.endsAnywhere = true
            return machine.run()
        }
    }

    /// The checking loop's state: a struct with mutating methods, so accesses are checked at
    /// compile time (closures capturing these variables would check them at run time).
    private struct Machine {
        let base: UnsafePointer<UInt8>
        let end: Int
        /// One bit per open container: 1 = object, 0 = array.
        let stack: UnsafeMutablePointer<UInt64>
        let depthLimit: Int
        var i = 0
        var depth = 0
        var isRecordObject = true
        /// Whether the value may be followed by more text that starts with whitespace, a comma or
        /// a closing bracket (``checkValue(in:from:maximumDepth:)``), rather than only by
        /// whitespace to the end.
        var endsAnywhere = false

        init(base: UnsafePointer<UInt8>, end: Int, stack: UnsafeMutablePointer<UInt64>, depthLimit: Int) {
            self.base = base
            self.end = end
            self.stack = stack
            self.depthLimit = depthLimit
        }

        mutating func run() -> (result: Result, end: Int) {
            let invalid = (result: JSONValidator.invalid, end: i)
            skipSpace()
            let topLevelIsObject = i < end && base[i] == 0x7B
            var expectingValue = true
            while true {
                if expectingValue {
                    skipSpace()
                    guard i < end else { return invalid }
                    switch base[i] {
                    case 0x22:
                        guard skipString() else { return invalid }
                    case 0x7B: // {
                        guard push(true) else { return invalid }
                        i += 1
                        skipSpace()
                        guard i < end else { return invalid }
                        if base[i] == 0x7D { // {}
                            i += 1
                            depth -= 1
                        } else {
                            guard skipKey() else { return invalid }
                            continue
                        }
                    case 0x5B: // [
                        guard push(false) else { return invalid }
                        i += 1
                        skipSpace()
                        guard i < end else { return invalid }
                        if base[i] == 0x5D {
                            i += 1
                            depth -= 1
                        } else {
                            continue
                        }
                    case 0x2D, 0x30...0x39:
                        guard skipNumber() else { return invalid }
                    case 0x74: guard skipLiteral("true") else { return invalid }
                    case 0x66: guard skipLiteral("false") else { return invalid }
                    case 0x6E: guard skipLiteral("null") else { return invalid }
                    default:
                        return invalid
                    }
                    expectingValue = false
                }
                // After a value: ',' or the close of the container, or the end at the top.
                if depth == 0 {
                    let valueEnd = i
                    if endsAnywhere {
                        // What follows must end the value: a number or literal runs on otherwise.
                        if i < end {
                            let b = base[i]
                            guard b == 0x2C || b == 0x5D || b == 0x7D || b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else {
                                return invalid
                            }
                        }
                    } else {
                        skipSpace()
                        guard i == end else { return invalid }
                    }
                    return (Result(isWellFormed: true, isRecordObject: topLevelIsObject && isRecordObject), valueEnd)
                }
                skipSpace()
                guard i < end else { return invalid }
                let b = base[i]
                if b == 0x2C { // ,
                    i += 1
                    if topIsObject() {
                        skipSpace()
                        guard i < end, skipKey() else { return invalid }
                    }
                    expectingValue = true
                } else if b == 0x7D { // }
                    guard topIsObject() else { return invalid }
                    i += 1
                    depth -= 1
                } else if b == 0x5D { // ]
                    guard !topIsObject() else { return invalid }
                    i += 1
                    depth -= 1
                } else {
                    return invalid
                }
            }
        }

        /// Skips whitespace: one byte inline (between tokens of compact or `"key" : value`
        /// text), a run (a line break and its indentation) sixteen bytes at a time.
        @inline(__always)
        mutating func skipSpace() {
            guard i < end, base[i] <= 0x20 else { return }
            let b = base[i]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            i += 1
            if i < end && base[i] > 0x20 { return }
            var found: Int32 = 0
            i += CFerrySystem_skipWhitespace(base + i, end - i, &found)
            guard found == 0 else { return }
            while i < end {
                let b = base[i]
                guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
                i += 1
            }
        }

        @inline(__always)
        mutating func push(_ isObject: Bool) -> Bool {
            guard depth < depthLimit else { return false }
            let word = depth >> 6, bit = UInt64(1) << UInt64(depth & 63)
            if isObject { stack[word] |= bit } else { stack[word] &= ~bit }
            depth += 1
            return true
        }

        @inline(__always)
        func topIsObject() -> Bool {
            let d = depth - 1
            return stack[d >> 6] & (UInt64(1) << UInt64(d & 63)) != 0
        }

        /// A key at `i` (must be a string), then `:`.
        @inline(__always)
        mutating func skipKey() -> Bool {
            guard base[i] == 0x22 else { return false }
            let keyStart = i + 1
            guard skipString() else { return false }
            if depth == 1 && CloudKitKey.marksNonRecord(base + keyStart, count: i - 1 - keyStart) { isRecordObject = false }
            skipSpace()
            guard i < end, base[i] == 0x3A else { return false }
            i += 1
            return true
        }

        /// Skips the string whose quote is at `i`; `false` when it is malformed.
        @inline(__always)
        mutating func skipString() -> Bool {
            let contentStart = i + 1
            var j = contentStart
            // OR of every word looked at: a high bit means the string may hold non-ASCII bytes
            // (or that the bytes after it do; then the check below just looks for nothing).
            var seen: UInt64 = 0
            while true {
                while j + 8 <= end {
                    let word = UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)
                    let quote = word ^ 0x2222_2222_2222_2222
                    let slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                    let ones: UInt64 = 0x0101_0101_0101_0101
                    let special = ((quote &- ones) & ~quote | (slash &- ones) & ~slash
                        | (word &- 0x2020_2020_2020_2020) & ~word) & 0x8080_8080_8080_8080
                    seen |= word
                    if special != 0 {
                        j += special.trailingZeroBitCount >> 3
                        break
                    }
                    j += 8
                }
                guard j < end else { return false }
                let b = base[j]
                if b == 0x22 {
                    i = j + 1
                    return seen & 0x8080_8080_8080_8080 == 0 || validUTF8(from: contentStart, to: j)
                }
                if b == 0x5C {
                    guard skipEscape(&j) else { return false }
                } else if b < 0x20 {
                    return false
                } else {
                    seen |= UInt64(b)
                    j += 1
                }
            }
        }

        /// Skips the escape at `j` (a backslash): one of `\" \\ \/ \b \f \n \r \t`, or `\uXXXX`
        /// with surrogates paired.
        func skipEscape(_ j: inout Int) -> Bool {
            guard j + 1 < end else { return false }
            switch base[j + 1] {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                j += 2
                return true
            case 0x75:
                guard let unit = hex4(j + 2) else { return false }
                if unit >= 0xD800 && unit <= 0xDBFF {
                    guard j + 12 <= end, base[j + 6] == 0x5C, base[j + 7] == 0x75,
                          let low = hex4(j + 8), low >= 0xDC00 && low <= 0xDFFF else { return false }
                    j += 12
                    return true
                }
                if unit >= 0xDC00 && unit <= 0xDFFF { return false }
                j += 6
                return true
            default:
                return false
            }
        }

        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= end else { return nil }
            var value: UInt32 = 0
            for k in 0..<4 {
                let c = base[at + k]
                let digit: UInt8
                switch c {
                case 0x30...0x39: digit = c - 0x30
                case 0x61...0x66: digit = c - 0x61 + 10
                case 0x41...0x46: digit = c - 0x41 + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        func validUTF8(from: Int, to stop: Int) -> Bool {
            UTF8Check.firstProblem(base, from: from, to: stop) == nil
        }

        /// Skips a number at `i` by the JSON grammar.
        mutating func skipNumber() -> Bool {
            if base[i] == 0x2D { i += 1 }
            guard i < end else { return false }
            if base[i] == 0x30 {
                i += 1
            } else if base[i] >= 0x31 && base[i] <= 0x39 {
                i += 1
                while i < end && base[i] >= 0x30 && base[i] <= 0x39 { i += 1 }
            } else {
                return false
            }
            if i < end && base[i] == 0x2E {
                i += 1
                let digits = i
                while i < end && base[i] >= 0x30 && base[i] <= 0x39 { i += 1 }
                if i == digits { return false }
            }
            if i < end && (base[i] == 0x65 || base[i] == 0x45) {
                i += 1
                if i < end && (base[i] == 0x2B || base[i] == 0x2D) { i += 1 }
                let digits = i
                while i < end && base[i] >= 0x30 && base[i] <= 0x39 { i += 1 }
                if i == digits { return false }
            }
            return true
        }

        mutating func skipLiteral(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard i + n <= end else { return false }
            for k in 0..<n where base[i + k] != text.utf8Start[k] { return false }
            i += n
            return true
        }
    }
}
