#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Substring search over raw bytes (`memmem` is not portable).
package enum ByteSearch {
    /// Whether `needle` occurs in `haystack`. Candidates are found with `memchr` on the needle's
    /// first byte other than `"` (quotes are everywhere in JSON), then compared with `memcmp`.
    package static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        let n = haystack.count, m = needle.count
        if m == 0 { return true }
        guard n >= m, let base = haystack.baseAddress, let pattern = needle.baseAddress else { return false }
        var anchor = 0
        while anchor < m - 1 && needle[anchor] == UInt8(ascii: "\"") { anchor += 1 }
        let anchorByte = Int32(needle[anchor])
        var from = anchor
        let stop = n - m + anchor // last position the anchor byte can take
        while from <= stop {
            guard let hit = memchr(base + from, anchorByte, stop - from + 1) else { return false }
            let position = UnsafeRawPointer(hit) - base
            if memcmp(base + position - anchor, pattern, m) == 0 { return true }
            from = position + 1
        }
        return false
    }

    /// The offset of the first `byte` in `bytes` at or after `start` (`memchr`), or `nil`.
    @inlinable
    package static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count else { return nil }
        return memchr(base + start, Int32(byte), bytes.count - start).map { UnsafeRawPointer($0) - base }
    }

    /// Whether the UTF-8 of `needle` occurs in `haystack`.
    package static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: StaticString) -> Bool {
        contains(haystack, UnsafeRawBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount))
    }
}
