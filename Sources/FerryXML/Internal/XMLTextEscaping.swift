// Ferry's lossless escape for characters XML 1.0 cannot carry, and the XML escapes for content.
//
// XML 1.0 forbids U+0000–U+0008, U+000B, U+000C, U+000E–U+001F, U+FFFE and U+FFFF (lone surrogates
// cannot occur in a Swift String). An element holding such a character in any attribute value or
// in its text is written with `escaped="1"`; then every attribute value and the text of that
// element are written with `\\` for a backslash and `\uXXXX` (four uppercase hex digits) for each
// forbidden character. Everything else is written as itself.
import FerryInternals

enum XMLTextEscaping {
    /// Whether `string` holds a character XML 1.0 cannot carry.
    @inline(__always)
    static func needsEscape(_ string: String) -> Bool {
        var copy = string
        return copy.withUTF8 { needsEscape($0) }
    }

    /// Whether the UTF-8 bytes hold a character XML 1.0 cannot carry.
    static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        var i = 0
        while i < n {
            let b = bytes[i]
            if b < 0x20 {
                if b != 0x09 && b != 0x0A && b != 0x0D { return true }
            } else if b == 0xEF && i + 2 < n && bytes[i + 1] == 0xBF && (bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF) {
                return true
            }
            i += 1
        }
        return false
    }

    /// Applies Ferry's escape: `\` → `\\`, forbidden characters → `\uXXXX`.
    static func escape(_ string: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count + 16)
        for scalar in string.unicodeScalars {
            let v = scalar.value
            let forbidden = (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D) || v == 0xFFFE || v == 0xFFFF
            if forbidden {
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"),
                                        hexDigit(v >> 12), hexDigit(v >> 8), hexDigit(v >> 4), hexDigit(v)])
            } else if v == 0x5C {
                out.append(contentsOf: [0x5C, 0x5C])
            } else {
                out.append(contentsOf: String(scalar).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reverses ``escape(_:)``; `nil` when a backslash starts anything but `\\` or `\uXXXX`.
    static func unescape(_ string: String) -> String? {
        guard string.utf8.contains(0x5C) else { return string }
        var out = String.UnicodeScalarView()
        var iterator = string.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\" else {
                out.append(scalar)
                continue
            }
            switch iterator.next() {
            case "\\": out.append("\\")
            case "u":
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = iterator.next(), let d = hexValue(digit) else { return nil }
                    value = value << 4 | d
                }
                guard let decoded = Unicode.Scalar(value) else { return nil }
                out.append(decoded)
            default: return nil
            }
        }
        return String(out)
    }

    private static func hexDigit(_ value: UInt32) -> UInt8 {
        Hex.digit(UInt8(truncatingIfNeeded: value), uppercase: true)
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        guard scalar.isASCII, let value = Hex.value(of: UInt8(scalar.value)) else { return nil }
        return UInt32(value)
    }
}
