import Foundation

/// String operations with `[c]`/`[d]` options: folding, prefix/suffix/substring, LIKE, tokens.
enum StringMatching {
    /// Folds for comparison: full Unicode case folding for `[c]`, diacritic removal for `[d]`.
    /// ASCII text with only `[c]` is lower-cased without Foundation.
    static func fold(_ text: String, _ options: PredicateComparison.Options) -> String {
        let c = options.contains(.caseInsensitive)
        let d = options.contains(.diacriticInsensitive)
        guard c || d else { return text }
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard c else { return text }
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        var folded = text
        if d { folded = folded.folding(options: [.diacriticInsensitive], locale: nil) }
        // Full case folding: upper-casing expands ß to SS and maps the Kelvin sign and long s;
        // lower-casing the result then gives the folded form.
        if c { folded = folded.uppercased().lowercased() }
        return folded
    }

    static func hasPrefix(_ text: String, _ prefix: String) -> Bool { text.hasPrefix(prefix) }
    static func hasSuffix(_ text: String, _ suffix: String) -> Bool { text.hasSuffix(suffix) }
    static func contains(_ text: String, _ part: String) -> Bool {
        if part.isEmpty { return true }
        // Foundation's search skips U+0000 ("Boat" contains "t\0") and can trap on it (`Straße`
        // and "e\0"): with a NUL on either side, the standard library's search by characters.
        if part.utf8.contains(0) || text.utf8.contains(0) { return text.firstRange(of: part) != nil }
        return text.contains(part)
    }

    /// Case-insensitive substring search for an ASCII needle already lower-cased, without
    /// allocating. Returns `nil` when the byte-level answer might differ from the full Unicode
    /// answer (the caller then folds and searches in full).
    ///
    /// With an ASCII needle, non-ASCII text can only matter in two ways: a character whose case
    /// folding produces ASCII letters (ß → ss, ı → i, ſ → s, K → k, ligatures: exactly the scalars
    /// of ``foldsIntoASCII(_:)``), or a combining or prepended mark
    /// glued to a matched character. Without either, matching ASCII bytes case-insensitively is
    /// exactly the folded comparison.
    static func asciiContainsFolded(_ haystack: String, needle: [UInt8]) -> Bool? {
        guard let first = needle.first else { return true }
        var text = haystack
        return text.withUTF8 { bytes -> Bool? in
            let n = bytes.count, m = needle.count
            var i = 0
            if m <= n {
                while i <= n - m {
                    let b = bytes[i]
                    if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) == first {
                        var j = 1
                        while j < m {
                            let c = bytes[i + j]
                            if (c >= 0x41 && c <= 0x5A ? c | 0x20 : c) != needle[j] { break }
                            j += 1
                        }
                        if j == m {
                            // A mark before or after the match could make it part of a larger character.
                            if (i + m < n && bytes[i + m] >= 0x80) || (i > 0 && bytes[i - 1] >= 0x80) { return nil }
                            return true
                        }
                    }
                    i += 1
                }
            }
            // No ASCII match: exact unless some character could fold into ASCII letters.
            var k = 0
            while k < n {
                let b = bytes[k]
                if b < 0x80 { k += 1; continue }
                var scalar: UInt32
                var length: Int
                switch b {
                case 0xC0...0xDF: scalar = UInt32(b & 0x1F); length = 2
                case 0xE0...0xEF: scalar = UInt32(b & 0x0F); length = 3
                default: scalar = UInt32(b & 0x07); length = 4
                }
                guard k + length <= n else { return nil }
                for t in 1..<length { scalar = scalar << 6 | UInt32(bytes[k + t] & 0x3F) }
                if foldsIntoASCII(scalar) { return nil }
                k += length
            }
            return false
        }
    }

    /// Whether a scalar's case folding (upper-casing, then lower-casing, as ``fold(_:_:)`` does)
    /// produces ASCII letters: ß, İ, ı, ŉ, ſ, ǰ, ẖ ẗ ẘ ẙ ẚ, the Kelvin sign and the ligatures
    /// ﬀ–ﬆ. The list is checked against every Unicode scalar by a test.
    @inline(__always)
    static func foldsIntoASCII(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0xDF, 0x130, 0x131, 0x149, 0x17F, 0x1F0, 0x1E96...0x1E9A, 0x212A, 0xFB00...0xFB06: return true
        default: return false
        }
    }

    /// LIKE: the whole string matches the pattern; `*` any run of characters, `?` one character.
    /// Runs in O(n·m) without recursion.
    static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        var t = 0, p = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                starP = p
                starT = t
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    /// Words of a text: runs of letters and digits.
    static func tokens(_ text: String) -> [String] {
        text.split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }
}
