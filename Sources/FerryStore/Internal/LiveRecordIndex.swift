/// The live records of a store being built by a replay, in memory: what a save or delete needs to
/// know of a stored record (its row, a hash of its JSON, its change tag and time, what it points
/// at), found by hash instead of by a seek in the name index — which a new store builds once, sorted,
/// at the end. About 250 bytes a record.
final class LiveRecordIndex {
    struct Entry {
        var id: Int64
        var bodyHash: UInt64
        var changeTag: String?
        var modifiedAt: Int64?
        var parent: String?
        /// Records of the same zone its REFERENCE fields name (for the final check).
        var references: [String]
    }

    /// Per zone row id, the live records by name.
    var zones: [Int64: [String: Entry]] = [:]

    /// A 64-bit hash of a record's JSON (FNV-1a over 8-byte words), to see a re-save of the same
    /// bytes without reading the stored ones (equal hashes are confirmed by reading).
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var i = 0
        let n = bytes.count
        while i + 8 <= n {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x100_0000_01b3
            hash ^= hash >> 29
            i += 8
        }
        while i < n {
            hash = (hash ^ UInt64(bytes[i])) &* 0x100_0000_01b3
            i += 1
        }
        return hash ^ UInt64(n)
    }
}
