import CFerrySystem

/// Ferry's one JSON compaction: the whitespace between tokens removed, strings copied as they
/// are — for keeping records of pretty-printed responses as compact JSON (replay's record
/// blobs), and for writing rejected pretty-printed entries as one line.
///
/// Sixteen bytes at a time (SSE2): runs of tokens are found up to the next quote or whitespace,
/// whitespace is skipped as runs, and strings are copied up to their closing quote.
package enum JSONCompaction {
    /// Copies `text` — valid JSON, or at least JSON whose strings are closed — compacted to
    /// `out`, which has room for `text.count` bytes; returns the bytes written.
    package static func compact(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        guard let base = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        let count = text.count
        var i = 0, n = 0
        @inline(__always) func copy(_ from: Int, _ to: Int) {
            if to > from {
                (out + n).copyMemory(from: base + from, byteCount: to - from)
                n += to - from
            }
        }
        while i < count {
            // Tokens up to the next quote or whitespace.
            var found: Int32 = 0
            var j = i + CFerrySystem_findQuoteOrWhitespace(base + i, count - i, &found)
            if found == 0 {
                while j < count {
                    let b = base[j]
                    if b == UInt8(ascii: "\"") || b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { break }
                    j += 1
                }
            }
            copy(i, j)
            i = j
            guard i < count else { break }
            if base[i] != UInt8(ascii: "\"") {
                // Whitespace: skipped.
                found = 0
                i += 1
                i += CFerrySystem_skipWhitespace(base + i, count - i, &found)
                if found == 0 {
                    while i < count {
                        let b = base[i]
                        guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { break }
                        i += 1
                    }
                }
                continue
            }
            // A string: copied through its closing quote, escapes and all.
            var k = i + 1
            while k < count {
                var high: UInt32 = 0
                found = 0
                k += CFerrySystem_scanPlainString(base + k, count - k, &high, &found)
                if found == 0 {
                    while k < count && base[k] != UInt8(ascii: "\"") && base[k] != UInt8(ascii: "\\") { k += 1 }
                }
                guard k < count else { break }
                let b = base[k]
                if b == UInt8(ascii: "\"") {
                    k += 1
                    break
                }
                // A backslash takes the next byte with it; a control character is copied as is.
                k += b == UInt8(ascii: "\\") ? 2 : 1
            }
            let stop = min(k, count)
            copy(i, stop)
            i = stop
        }
        return n
    }

    /// A compacted copy of `text`.
    package static func compacted(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: text.count) { buffer, count in
            count = compact(text, into: UnsafeMutableRawPointer(buffer.baseAddress!))
        }
    }
}
