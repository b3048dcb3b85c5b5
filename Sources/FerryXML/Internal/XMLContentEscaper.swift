import FerryInternals
import FerryRecords

/// Escapes attribute values and text for the writer, in one pass that also applies Ferry's
/// control-character escape (see ``XMLTextEscaping``) when the element is marked `escaped="1"`.
enum XMLContentEscaper {
    /// Byte classes: 0 plain, 1 always escaped (`&` `<` `>`), 2 escaped in attributes (`"` LF TAB),
    /// 3 CR (escaped everywhere, else the parser turns it into LF), 4 a forbidden control,
    /// 5 0xEF (may start U+FFFE/U+FFFF), 6 backslash.
    static let classes: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for b in 0..<0x20 { table[b] = 4 }
        table[0x09] = 2
        table[0x0A] = 2
        table[0x0D] = 3
        table[Int(UInt8(ascii: "&"))] = 1
        table[Int(UInt8(ascii: "<"))] = 1
        table[Int(UInt8(ascii: ">"))] = 1
        table[Int(UInt8(ascii: "\""))] = 2
        table[0xEF] = 5
        table[Int(UInt8(ascii: "\\"))] = 6
        return table
    }()

    /// Whether the bytes can be written as they are (no XML escape, no Ferry escape needed).
    @inline(__always)
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>, attribute: Bool, escaped: Bool) -> Bool {
        classes.withUnsafeBufferPointer { table in
            for b in bytes {
                let c = table[Int(b)]
                if c == 0 { continue }
                if c == 2 && !attribute { continue }
                if (c == 5 || c == 6) && !escaped { continue }
                return false
            }
            return true
        }
    }

    /// Appends the escaped form of `bytes` to `out`.
    static func append(_ bytes: UnsafeBufferPointer<UInt8>, attribute: Bool, escaped: Bool, to out: inout JSONOutput) {
        let n = bytes.count
        var i = 0
        var run = 0
        func flush(_ end: Int, _ out: inout JSONOutput) {
            if end > run { out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[run..<end])) }
        }
        while i < n {
            let b = bytes[i]
            let c = classes[Int(b)]
            if c == 0 || (c == 2 && !attribute) || (c == 6 && !escaped) || (c == 5 && !escaped) {
                i += 1
                continue
            }
            if c == 5 {
                // U+FFFE / U+FFFF are EF BF BE / EF BF BF.
                if i + 2 < n && bytes[i + 1] == 0xBF && (bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF) {
                    flush(i, &out)
                    out.append(bytes[i + 2] == 0xBE ? "\\uFFFE" : "\\uFFFF")
                    i += 3
                    run = i
                } else {
                    i += 1
                }
                continue
            }
            flush(i, &out)
            switch b {
            case UInt8(ascii: "&"): out.append("&amp;")
            case UInt8(ascii: "<"): out.append("&lt;")
            case UInt8(ascii: ">"): out.append("&gt;")
            case UInt8(ascii: "\""): out.append("&quot;")
            case 0x0A: out.append("&#10;")
            case 0x09: out.append("&#9;")
            case 0x0D: out.append("&#13;")
            case UInt8(ascii: "\\"): out.append("\\\\")
            default:
                // A forbidden control character; `escaped` is set whenever one is present.
                out.append("\\u00")
                out.append(Hex.digit(b >> 4, uppercase: true))
                out.append(Hex.digit(b, uppercase: true))
            }
            i += 1
            run = i
        }
        flush(n, &out)
    }
}
