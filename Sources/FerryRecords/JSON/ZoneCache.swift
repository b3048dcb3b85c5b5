#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif


/// The zone ID objects a scanner has decoded, by their exact bytes: histories name few zones, so
/// a record's `zoneID` is almost always bytes seen before, and is found here instead of decoded.
///
/// The bytes of every entry lie end to end in one array, so a lookup compares spans of it without
/// touching (and reference counting) a buffer per entry. Entries are only ever added, so an
/// entry's index names the same zone for the cache's lifetime: callers key their own per-zone
/// facts (a zone's number) by it. An index means something only to the copy of the cache that
/// gave it: copies (one per decoding thread) grow apart.
package struct ZoneCache {
    package init() {}

    /// The most entries kept; later zones are decoded each time.
    package static let capacity = 64
    /// The longest zone object kept.
    package static let maximumBytes = 1024

    private var bytes: [UInt8] = []
    private var spans: [Range<Int>] = []
    private var zones: [ZoneID] = []

    /// The index of the entry whose bytes are `text[range]`.
    @inline(__always)
    package func index(of text: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        let count = range.count
        let probe = text.baseAddress! + range.lowerBound
        return bytes.withUnsafeBytes { keys in
            spans.withUnsafeBufferPointer { spans in
                for i in spans.indices where spans[i].count == count
                    && memcmp(keys.baseAddress! + spans[i].lowerBound, probe, count) == 0 {
                    return i
                }
                return nil
            }
        }
    }

    /// The zone of entry `index`.
    @inline(__always)
    package func zone(at index: Int) -> ZoneID { zones[index] }

    /// Adds `zone`, read from `text[range]` (bytes not in the cache: look them up first);
    /// returns its index, or `nil` when the cache is full or the object too long.
    package mutating func add(_ zone: ZoneID, from text: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard zones.count < Self.capacity, range.count <= Self.maximumBytes else { return nil }
        let start = bytes.count
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[range]))
        spans.append(start..<bytes.count)
        zones.append(zone)
        return zones.count - 1
    }
}
