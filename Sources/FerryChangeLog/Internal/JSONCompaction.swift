/// Compact copies of JSON text: the whitespace between tokens removed, strings kept as they are.
enum JSONCompaction {
    /// Copies `text` (valid JSON) compacted to `out`, which has room for `text.count` bytes;
    /// returns the bytes written.
    static func compact(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        var n = 0
        var inString = false
        var i = 0
        while i < text.count {
            let b = text[i]
            if inString {
                out.storeBytes(of: b, toByteOffset: n, as: UInt8.self)
                n += 1
                if b == UInt8(ascii: "\\") {
                    i += 1
                    out.storeBytes(of: text[i], toByteOffset: n, as: UInt8.self)
                    n += 1
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if b == UInt8(ascii: "\"") {
                inString = true
                out.storeBytes(of: b, toByteOffset: n, as: UInt8.self)
                n += 1
            } else if b != 0x20 && b != 0x0A && b != 0x0D && b != 0x09 {
                out.storeBytes(of: b, toByteOffset: n, as: UInt8.self)
                n += 1
            }
            i += 1
        }
        return n
    }
}
