/// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
/// the one implementation behind the JSON scanner's errors, the JSON validator's yes/no answer and
/// the XML reader's diagnosis of where libxml2 stopped.
///
/// Two questions, two functions, one rule: ``firstProblem(_:from:to:)`` scans a whole range (ASCII
/// runs eight bytes at a time) and says where and what the first problem is, a sequence cut by the
/// end of the range included; ``startsInvalidSequence(_:atEOF:)`` looks at the one sequence at the
/// start of a buffer that may continue later, so a cut sequence counts only at end of input.
@usableFromInline
package enum UTF8Check {
    /// What is wrong at the offset ``firstProblem(_:from:to:)`` returns.
    @usableFromInline
    package enum Problem {
        /// A byte that cannot start a sequence.
        case invalidLeadByte(UInt8)
        /// A sequence cut short by the end of the range.
        case truncated
        /// A byte that should continue a sequence and does not (its offset is the byte's own).
        case invalidContinuationByte(UInt8)
        /// An overlong form, a surrogate or a scalar above U+10FFFF.
        case invalidScalar

        /// The error message readers give.
        @usableFromInline
        package var message: String {
            switch self {
            case .invalidLeadByte(let b): "expected UTF-8 text, found byte \(Hex.prefixed(b, uppercase: true))"
            case .truncated: "expected UTF-8 text, found a truncated sequence"
            case .invalidContinuationByte(let c):
                "expected a UTF-8 continuation byte, found byte \(Hex.prefixed(c, uppercase: true))"
            case .invalidScalar: "expected UTF-8 text, found an invalid sequence (overlong, surrogate or out of range)"
            }
        }
    }

    /// The offset and kind of the first invalid sequence in `base[start..<stop]`, or `nil` when the
    /// range is valid UTF-8.
    @inlinable @inline(__always)
    package static func firstProblem(_ base: UnsafePointer<UInt8>, from start: Int, to stop: Int) -> (offset: Int, problem: Problem)? {
        var i = start
        while i < stop {
            // ASCII runs eight bytes at a time.
            while i + 8 <= stop && UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
            }
            guard i < stop else { return nil }
            let b = base[i]
            if b < 0x80 { i += 1; continue }
            var need = 0
            var minimum: UInt32 = 0
            var scalar: UInt32 = 0
            switch b {
            case 0xC2...0xDF: need = 1; scalar = UInt32(b & 0x1F); minimum = 0x80
            case 0xE0...0xEF: need = 2; scalar = UInt32(b & 0x0F); minimum = 0x800
            case 0xF0...0xF4: need = 3; scalar = UInt32(b & 0x07); minimum = 0x10000
            default: return (i, .invalidLeadByte(b))
            }
            if i + need >= stop { return (i, .truncated) }
            for k in 1...need {
                let c = base[i + k]
                guard c & 0xC0 == 0x80 else { return (i + k, .invalidContinuationByte(c)) }
                scalar = scalar << 6 | UInt32(c & 0x3F)
            }
            if scalar < minimum || scalar > 0x10FFFF || (scalar >= 0xD800 && scalar <= 0xDFFF) {
                return (i, .invalidScalar)
            }
            i += need + 1
        }
        return nil
    }

    /// Whether `bytes` begins with a byte sequence that is not UTF-8 (overlong forms, surrogates and
    /// values past U+10FFFF included); a sequence cut by the end of `bytes` counts only at EOF.
    package static func startsInvalidSequence(_ bytes: UnsafeRawBufferPointer, atEOF: Bool) -> Bool {
        guard let lead = bytes.first else { return false }
        let (length, low, high): (Int, UInt8, UInt8)
        switch lead {
        case 0x00...0x7F: return false
        case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
        case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE, 0xEF: (length, low, high) = (3, 0x80, 0xBF)
        case 0xED: (length, low, high) = (3, 0x80, 0x9F)
        case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
        case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
        case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
        default: return true
        }
        for k in 1..<length {
            guard k < bytes.count else { return atEOF }
            let b = bytes[k]
            if k == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xBF) { return true }
        }
        return false
    }
}
