import CFerrySystem

/// Ferry's one JSON compaction: the whitespace between tokens removed, strings copied as they
/// are — for keeping records of pretty-printed responses as compact JSON (replay's record
/// blobs), and for writing rejected pretty-printed entries as one line.
///
/// Sixty-four bytes at a time (`CFerrySystem_compactJSON`): bit masks of quotes, backslashes and
/// whitespace; the bytes inside strings from the unescaped quotes; every byte kept but whitespace
/// outside strings.
package enum JSONCompaction {
    /// Copies `text` — valid JSON, or at least JSON whose strings are closed — compacted to
    /// `out`, which has room for `text.count` bytes; returns the bytes written.
    package static func compact(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        guard let base = text.baseAddress, text.count > 0 else { return 0 }
        return CFerrySystem_compactJSON(base.assumingMemoryBound(to: UInt8.self), text.count,
                                        out.assumingMemoryBound(to: UInt8.self))
    }

    /// A compacted copy of `text`.
    package static func compacted(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: text.count) { buffer, count in
            count = compact(text, into: UnsafeMutableRawPointer(buffer.baseAddress!))
        }
    }
}
