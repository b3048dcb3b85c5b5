import CFerrySystem

/// The records of one zone: an open-addressing hash table (linear probing, at most half full,
/// deletion by backward shift) of ``RecordBlob``s keyed by record name bytes. It owns its blobs
/// and gives them back to its ``BlobAllocator``.
///
/// No Swift strings or reference counting per record, and no runtime exclusivity checks (one
/// thread at a time uses a table): this is replay's hot path.
final class RecordTable {
    /// A slot: the name's hash and the blob (`nil` when empty), side by side so a probe touches
    /// one cache line.
    private struct Slot {
        var hash: Int
        var blob: UnsafeMutableRawPointer?
    }

    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<Slot>
    /// Where the blobs come from and go back to.
    let allocator: BlobAllocator
    @exclusivity(unchecked) private var mask: Int
    /// The number of records.
    @exclusivity(unchecked) private(set) var count = 0
    /// ``sortedBlobs``, until the next change.
    @exclusivity(unchecked) private var sortedCache: [RecordBlob]?

    init(allocator: BlobAllocator, capacity: Int = 8) {
        self.allocator = allocator
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        mask = size - 1
        slots = .allocate(capacity: size)
        slots.initialize(repeating: Slot(hash: 0, blob: nil), count: size)
    }

    deinit {
        removeAll()
        slots.deallocate()
    }

    /// The slot holding `name`, or the empty slot where it would go.
    @inline(__always)
    private func slot(for name: UnsafeRawBufferPointer, hash: Int) -> (index: Int, found: Bool) {
        var i = hash & mask
        while let raw = slots[i].blob {
            if slots[i].hash == hash && RecordBlob(raw: raw).hasName(name, hash: hash) { return (i, true) }
            i = (i + 1) & mask
        }
        return (i, false)
    }

    /// Starts loading the slot where a name with `hash` is looked up first, for a lookup soon.
    @inline(__always)
    func prefetch(hash: Int) {
        CFerrySystem_prefetch(slots + (hash & mask))
    }

    /// Starts loading the record in the slot a name with `hash` is looked up in first (after
    /// ``prefetch(hash:)`` had that slot loaded), for a lookup soon.
    @inline(__always)
    func prefetchRecord(hash: Int) {
        if let raw = slots[hash & mask].blob { CFerrySystem_prefetch(raw + 24) }
    }

    /// The record named `name`.
    func find(_ name: UnsafeRawBufferPointer, hash: Int) -> RecordBlob? {
        let (i, found) = slot(for: name, hash: hash)
        return found ? RecordBlob(raw: slots[i].blob!) : nil
    }

    /// Stores `blob`, returning the blob it replaces (now owned by the caller).
    @discardableResult
    func insert(_ blob: RecordBlob) -> RecordBlob? {
        let hash = blob.nameHash
        let (i, found) = slot(for: blob.name, hash: hash)
        sortedCache = nil
        if found {
            let old = RecordBlob(raw: slots[i].blob!)
            slots[i].blob = blob.raw
            return old
        }
        slots[i] = Slot(hash: hash, blob: blob.raw)
        count += 1
        if count * 2 > mask + 1 { grow() }
        return nil
    }

    /// Removes the record named `name`, returning its blob (now owned by the caller).
    func remove(_ name: UnsafeRawBufferPointer, hash: Int) -> RecordBlob? {
        var (i, found) = slot(for: name, hash: hash)
        guard found else { return nil }
        sortedCache = nil
        let old = RecordBlob(raw: slots[i].blob!)
        // Backward shift: move later entries of the probe run into the hole unless their home
        // slot lies cyclically in (hole, entry].
        var j = i
        while true {
            j = (j + 1) & mask
            guard slots[j].blob != nil else { break }
            let home = slots[j].hash & mask
            let stays = i <= j ? (home > i && home <= j) : (home > i || home <= j)
            if !stays {
                slots[i] = slots[j]
                i = j
            }
        }
        slots[i] = Slot(hash: 0, blob: nil)
        count -= 1
        return old
    }

    /// Frees every record.
    func removeAll() {
        sortedCache = nil
        for i in 0...mask {
            if let raw = slots[i].blob {
                allocator.release(RecordBlob(raw: raw))
                slots[i] = Slot(hash: 0, blob: nil)
            }
        }
        count = 0
    }

    /// Every record, in no particular order.
    var allBlobs: [RecordBlob] {
        var result: [RecordBlob] = []
        result.reserveCapacity(count)
        for i in 0...mask { if let raw = slots[i].blob { result.append(RecordBlob(raw: raw)) } }
        return result
    }

    /// Every record, in name order (bytes).
    var sortedBlobs: [RecordBlob] {
        if let sortedCache { return sortedCache }
        let result = NameSort.sorted(allBlobs)
        sortedCache = result
        return result
    }

    /// A table holding copies of every record, made by `allocator`.
    func copy(into allocator: BlobAllocator) -> RecordTable {
        let table = RecordTable(allocator: allocator, capacity: count)
        for blob in allBlobs { table.insert(allocator.copy(blob)) }
        return table
    }

    private func grow() {
        let old = slots, oldSize = mask + 1
        let size = oldSize * 2
        mask = size - 1
        slots = .allocate(capacity: size)
        slots.initialize(repeating: Slot(hash: 0, blob: nil), count: size)
        for k in 0..<oldSize {
            guard old[k].blob != nil else { continue }
            var i = old[k].hash & mask
            while slots[i].blob != nil { i = (i + 1) & mask }
            slots[i] = old[k]
        }
        old.deallocate()
    }
}
