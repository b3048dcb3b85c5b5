import CFerrySystem

/// Sorts blobs by record name (byte order) fast: a radix sort on the first eight bytes of each
/// name, then the rare runs that share those bytes by full comparison.
enum NameSort {
    /// How many blobs ahead reading the names loads a blob's first cache line (its header and
    /// the start of its name): the blobs lie all over memory.
    private static let prefetchDistance = 16

    private struct Entry {
        var key: UInt64
        var blob: RecordBlob
    }

    static func sorted(_ blobs: [RecordBlob]) -> [RecordBlob] {
        let n = blobs.count
        guard n > 1 else { return blobs }
        var entries: [Entry] = []
        entries.reserveCapacity(n)
        blobs.withUnsafeBufferPointer { blobs in
            for i in 0..<n {
                if i + prefetchDistance < n { CFerrySystem_prefetch(blobs[i + prefetchDistance].raw) }
                entries.append(Entry(key: prefix(blobs[i].name), blob: blobs[i]))
            }
        }
        var scratch = entries
        // LSD radix sort, 16 bits at a time (4 passes), skipping passes where all digits agree.
        var counts = [Int](repeating: 0, count: 1 << 16)
        for pass in 0..<4 {
            let shift = UInt64(pass * 16)
            for i in counts.indices { counts[i] = 0 }
            for entry in entries { counts[Int((entry.key >> shift) & 0xFFFF)] += 1 }
            if counts.contains(n) { continue }
            var total = 0
            for i in counts.indices {
                let c = counts[i]
                counts[i] = total
                total += c
            }
            for entry in entries {
                let digit = Int((entry.key >> shift) & 0xFFFF)
                scratch[counts[digit]] = entry
                counts[digit] += 1
            }
            swap(&entries, &scratch)
        }
        // Runs with equal prefixes: names of eight bytes or more that start alike.
        var start = 0
        while start < n {
            var end = start + 1
            while end < n && entries[end].key == entries[start].key { end += 1 }
            if end - start > 1 { entries[start..<end].sort { RecordBlob.nameOrder($0.blob, $1.blob) } }
            start = end
        }
        return entries.map(\.blob)
    }

    /// The first eight bytes of a name, big-endian, zero-padded (so integer order is byte order
    /// for names that differ in them).
    @inline(__always)
    private static func prefix(_ name: UnsafeRawBufferPointer) -> UInt64 {
        var key: UInt64 = 0
        for i in 0..<8 { key = key << 8 | UInt64(i < name.count ? name[i] : 0) }
        return key
    }
}
