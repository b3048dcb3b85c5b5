import FerryPredicate

/// The byte search behind the store's SQL function `ferry_may_contain(text, needle, options)`: a
/// cheap test that is true for every text in which the compiled filter's `CONTAINS[c]` (options
/// `c`) or `CONTAINS[cd]`/`[d]` (options `d`) could find the needle, an ASCII string already
/// lower-cased. True when the text holds the needle ASCII-case-insensitively, or (`c`) a
/// character whose case folding gives ASCII letters (``CaseFolding``), or (`d`) any non-ASCII
/// character (removing a diacritic may give ASCII). The compiled filter then decides.
///
/// Eight bytes at a time: candidates for the needle's first byte, and runs of ASCII, are found by
/// word arithmetic; each candidate is then compared byte by byte.
enum FoldingSearch {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    static func mayContain(_ text: UnsafeRawBufferPointer, needle: UnsafeRawBufferPointer, diacritics: Bool) -> Bool {
        let n = text.count, m = needle.count
        if m == 0 { return true }
        if m <= n && find(needle, in: text) { return true }
        return holdsFoldingCharacter(text, anyNonASCII: diacritics)
    }

    /// Whether `text` holds `needle` (lower-case ASCII), ASCII letters compared without case.
    private static func find(_ needle: UnsafeRawBufferPointer, in text: UnsafeRawBufferPointer) -> Bool {
        let n = text.count, m = needle.count
        let first = needle[0]
        @inline(__always) func matches(at i: Int) -> Bool {
            var j = 0
            while j < m {
                let c = text[i + j]
                if (c >= 0x41 && c <= 0x5A ? c | 0x20 : c) != needle[j] { return false }
                j += 1
            }
            return true
        }
        let last = n - m
        var i = 0
        // Bytes whose value with bit 5 set equals the first byte: every case of it (and, when the
        // first byte has bit 5 set, a few others, compared and dropped).
        if first & 0x20 != 0 {
            let pattern = UInt64(first) &* ones
            while i + 8 <= n && i <= last {
                let word = text.loadUnaligned(fromByteOffset: i, as: UInt64.self) | (0x20 &* ones)
                let x = word ^ pattern
                var candidates = (x &- ones) & ~x & highs
                while candidates != 0 {
                    let k = i + candidates.trailingZeroBitCount / 8
                    if k > last { return false }
                    if matches(at: k) { return true }
                    candidates &= candidates &- 1
                }
                i += 8
            }
        }
        while i <= last {
            let b = text[i]
            if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) == first && matches(at: i) { return true }
            i += 1
        }
        return false
    }

    /// Whether `text` holds a character whose case folding gives ASCII letters, or with
    /// `anyNonASCII` any non-ASCII byte.
    private static func holdsFoldingCharacter(_ text: UnsafeRawBufferPointer, anyNonASCII: Bool) -> Bool {
        let n = text.count
        var k = 0
        while k < n {
            if k + 8 <= n && text.loadUnaligned(fromByteOffset: k, as: UInt64.self) & highs == 0 {
                k += 8
                continue
            }
            let b = text[k]
            if b < 0x80 { k += 1; continue }
            if anyNonASCII { return true }
            var scalar: UInt32
            var length: Int
            switch b {
            case 0xC0...0xDF: scalar = UInt32(b & 0x1F); length = 2
            case 0xE0...0xEF: scalar = UInt32(b & 0x0F); length = 3
            case 0xF0...0xF7: scalar = UInt32(b & 0x07); length = 4
            default: return true // not UTF-8 as expected: keep the record, the filter decides
            }
            guard k + length <= n else { return true }
            for t in 1..<length { scalar = scalar << 6 | UInt32(text[k + t] & 0x3F) }
            if CaseFolding.foldsIntoASCII(scalar) { return true }
            k += length
        }
        return false
    }
}
