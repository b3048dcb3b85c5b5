extension JSONOutput {
    /// Appends `text`, compact JSON (as this writer writes it: no whitespace between tokens),
    /// pretty-printed as CloudKit Web Services print their responses: each object member on a
    /// line of its own, indented two spaces per enclosing object, `"key" : value`; arrays inline
    /// (`[ 1, 2 ]`, `[ {` … `}, {` … `} ]`); empty containers as `{ }` and `[ ]`. Strings are
    /// copied as they are.
    ///
    /// Whitespace outside strings in `text` is dropped first, so any valid JSON can be given.
    public mutating func appendPretty(_ text: UnsafeRawBufferPointer) {
        guard let base = text.baseAddress?.assumingMemoryBound(to: UInt8.self), !text.isEmpty else { return }
        reserve(text.count + text.count / 2)
        var level = 0
        var i = 0
        let n = text.count
        func newline(_ out: inout JSONOutput, _ level: Int) {
            out.append(UInt8(ascii: "\n"))
            for _ in 0..<level { out.append("  ") }
        }
        /// The next byte that is not whitespace, from `j`.
        func next(_ j: Int) -> Int {
            var j = j
            while j < n, base[j] == 0x20 || base[j] == 0x0A || base[j] == 0x0D || base[j] == 0x09 { j += 1 }
            return j
        }
        // Whether each open container is an object (to know what a comma separates).
        var objects: [Bool] = []
        while i < n {
            let byte = base[i]
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09:
                i += 1
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                while i < n, base[i] != UInt8(ascii: "\"") { i += base[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i = min(i + 1, n)
                append(UnsafeRawBufferPointer(start: base + start, count: i - start))
            case UInt8(ascii: "{"):
                let after = next(i + 1)
                if after < n, base[after] == UInt8(ascii: "}") {
                    append("{ }")
                    i = after + 1
                } else {
                    append(UInt8(ascii: "{"))
                    objects.append(true)
                    level += 1
                    newline(&self, level)
                    i += 1
                }
            case UInt8(ascii: "["):
                let after = next(i + 1)
                if after < n, base[after] == UInt8(ascii: "]") {
                    append("[ ]")
                    i = after + 1
                } else {
                    append("[ ")
                    objects.append(false)
                    i += 1
                }
            case UInt8(ascii: "}"):
                _ = objects.popLast()
                level = max(level - 1, 0)
                newline(&self, level)
                append(UInt8(ascii: "}"))
                i += 1
            case UInt8(ascii: "]"):
                _ = objects.popLast()
                append(" ]")
                i += 1
            case UInt8(ascii: ":"):
                append(" : ")
                i += 1
            case UInt8(ascii: ","):
                if objects.last == true {
                    append(UInt8(ascii: ","))
                    newline(&self, level)
                } else {
                    append(", ")
                }
                i += 1
            default:
                let start = i
                while i < n {
                    let b = base[i]
                    if b == UInt8(ascii: ",") || b == UInt8(ascii: "}") || b == UInt8(ascii: "]") || b == 0x20 || b == 0x0A
                        || b == 0x0D || b == 0x09 { break }
                    i += 1
                }
                append(UnsafeRawBufferPointer(start: base + start, count: i - start))
            }
        }
    }
}
