/// Base64 (RFC 4648), the one copy: the standard alphabet with padding (`encode`; CloudKit's
/// checksums and BYTES values), and the URL alphabet (`-`, `_`) without padding (``url``: query
/// cursors).
package enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in the standard alphabet, padded with `=`.
    package static func encode(_ bytes: [UInt8]) -> String {
        var text = encode(bytes, alphabet: standard)
        while text.utf8.count % 4 != 0 { text += "=" }
        return text
    }

    /// Base64 with the URL alphabet and no padding.
    package enum url {
        package static func encode(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: Base64.urlAlphabet) }
        package static func decode(_ text: String) -> [UInt8]? { Base64.decodeURL(text) }
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func decodeURL(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (j, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * j) }
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}
