import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension RecordBlob: ReplayedRecord {
    var replayName: String { nameString }

    @inline(__always)
    func withReplayChangeTag<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R { try body(tag) }

    @inline(__always)
    var replayModified: Int64? { modified }

    func forEachDeleteSelfTarget(_ body: (ZoneID?, String) throws -> Void) rethrows {
        try forEachReference { reference in
            guard reference.deletesSelf && !reference.isParent else { return }
            try body(reference.zone?.zoneID, String(decoding: reference.name, as: UTF8.self))
        }
    }

    func forEachReferenceTarget(_ body: (ZoneID?, String) throws -> Void) rethrows {
        try forEachReference { reference in try body(reference.zone?.zoneID, String(decoding: reference.name, as: UTF8.self)) }
    }
}

/// The in-memory state of `ferry replay` as the ``ReplayCore`` changes it: each zone a table of
/// record blobs (``ReplayStorage``). Zones are the state's indices; a save names its zone by the
/// number the history's decoders gave it (``ZoneRegistry``), looked up through an array.
///
/// What was applied goes to ``onChange`` (a store journaling a new store's changes, records not
/// decoded) and ``onApply`` (`--log`, records decoded). One thread at a time: the properties read
/// for every change are marked `@exclusivity(unchecked)`.
final class MemoryReplayBackend: ReplayBackend {
    typealias Zone = Int
    typealias ZoneReference = Int
    typealias Saved = RecordBlob
    typealias Held = RecordBlob

    /// A checkpoint's scope (zone index, or -1 for the database) and token.
    private struct ScopedToken: Hashable {
        var zone: Int
        var token: String
    }

    var noun: String { "state" }

    /// The state's storage (replaced by the replayer when a copy of its state was handed out:
    /// ``adopt(_:)``).
    @exclusivity(unchecked) var storage: ReplayStorage
    /// Numbers the zones of saved records, for all the readers of the replay.
    let zones = ZoneRegistry()
    /// Whether saved blobs may keep pointing at their JSON: while applying a mapped history the
    /// storage keeps (``ReplayStorage/mappings``).
    @exclusivity(unchecked) var keepsJSON = false
    /// See ``Replayer/onApply``.
    var onApply: ((ChangeEvent) throws -> Void)?
    /// See ``Replayer/onChange``.
    var onChange: ((AppliedChange) throws -> Int64?)?
    /// The position of the change being applied (for errors naming it).
    var position: () -> Int = { 0 }

    /// The state's index of each zone number (-1: not looked up yet).
    @exclusivity(unchecked) private var zoneIndices: [Int] = []
    /// The table of each zone number looked up so far, for prefetching.
    @exclusivity(unchecked) private(set) var tablesByNumber: [RecordTable?] = []
    /// The zones seen last and their indices (histories touch few zones).
    private var recentZones: [(zoneID: ZoneID, index: Int)] = []
    private var seenTokens: Set<ScopedToken> = []
    /// Where pretty-printed JSON that blobs point at is compacted for ``onChange``.
    private var compactScratch: [UInt8] = []
    /// The same, for the record a save replaces (a separate property: both are in use at once).
    private var replacedScratch: [UInt8] = []

    init(storage: ReplayStorage) {
        self.storage = storage
    }

    /// Takes `storage` as the state's: the one it had, or a copy (whose tables are new objects).
    func adopt(_ storage: ReplayStorage, isCopy: Bool) {
        self.storage = storage
        if isCopy { tablesByNumber = zoneIndices.map { $0 >= 0 ? storage.zones[$0].table : nil } }
    }

    // MARK: Zones

    @inline(__always)
    func zone(_ number: Int) -> Int {
        if number < zoneIndices.count, zoneIndices[number] >= 0 { return zoneIndices[number] }
        let index = zone(zones.zone(number))
        while zoneIndices.count <= number { zoneIndices.append(-1) }
        zoneIndices[number] = index
        while tablesByNumber.count <= number { tablesByNumber.append(nil) }
        tablesByNumber[number] = storage.zones[index].table
        return index
    }

    func zone(_ zoneID: ZoneID) -> Int {
        for (known, index) in recentZones where Self.sameZone(known, zoneID) { return index }
        let index = storage.index(of: zoneID)
        if recentZones.count >= 8 { recentZones.removeFirst() }
        recentZones.append((zoneID, index))
        return index
    }

    func knownZone(_ zoneID: ZoneID) -> Int? { zone(zoneID) }

    private static func sameZone(_ a: ZoneID, _ b: ZoneID) -> Bool {
        guard ExactName.same(a.zoneName, b.zoneName) else { return false }
        switch (a.ownerRecordName, b.ownerRecordName) {
        case (nil, nil): return true
        case (let x?, let y?): return ExactName.same(x, y)
        default: return false
        }
    }

    @inline(__always)
    func zoneID(of zone: Int) -> ZoneID { storage.zones[zone].zoneID }

    @inline(__always)
    func isDeleted(_ zone: Int) -> Bool { storage.zones[zone].isDeleted }

    func makeLive(_ zone: Int, as zoneID: ZoneID?) throws {
        storage.zones[zone].isDeleted = false
        guard let zoneID else { return }
        if zoneID.zoneType != nil { storage.zones[zone].zoneID = zoneID }
        _ = try onChange?(.zoneSaved(zone: zone, zoneID: zoneID))
        try onApply?(.zoneSaved(zoneID))
    }

    func deleteZone(_ zone: Int, zoneID: ZoneID, purge: Bool) throws {
        let removed = storage.zones[zone].table.count
        storage.zones[zone].table.removeAll()
        storage.zones[zone].isDeleted = true
        storage.zones[zone].moreComing = false
        _ = try onChange?(.zoneDeleted(zone: zone, zoneID: zoneID, removed: removed, purged: purge))
        if purge {
            storage.zones[zone].syncToken = nil
            try onApply?(.zonePurged(zoneID))
        } else {
            try onApply?(.zoneDeleted(zoneID))
        }
    }

    // MARK: Records

    @inline(__always)
    func keep(_ record: RecordBlob) -> RecordBlob { storage.allocator.copy(record, keepingJSON: keepsJSON) }

    func drop(_ record: RecordBlob) { storage.allocator.release(record) }

    @inline(__always)
    func replace(_ record: RecordBlob, in zone: Int) -> RecordBlob? { storage.zones[zone].table.insert(record) }

    func didSave(_ record: RecordBlob, in zone: Int, replacing replaced: RecordBlob?) throws {
        if let onChange {
            defer { if let replaced { storage.allocator.release(replaced) } }
            // Compact JSON for the caller, whatever the blobs point at.
            let stamp = try record.withCompactJSON(scratch: &compactScratch) { json in
                try withCompactJSON(of: replaced, scratch: &replacedScratch) { old in
                    var unchanged = false
                    if let old, old.count == json.count {
                        unchanged = json.count == 0 || memcmp(old.baseAddress!, json.baseAddress!, json.count) == 0
                    }
                    return try onChange(.saved(zone: zone, zoneID: storage.zones[zone].zoneID, name: record.name, tag: record.tag, json: json,
                                               replaced: old.map { (json: $0, tag: replaced!.tag) }, unchanged: unchanged))
                }
            }
            record.stamp = stamp ?? replaced?.stamp ?? 0
        } else if let replaced {
            storage.allocator.release(replaced)
        }
        if let onApply {
            let decoded: Record
            do throws(RecordFormatError) { decoded = try ReplayState.decode(record.json) } catch {
                throw ReplayState.recordError(error, json: record.json, zoneID: storage.zones[zone].zoneID, event: position())
            }
            try onApply(.recordSaved(decoded))
        }
    }

    /// Calls `body` with the compact JSON of `blob`, or `nil` without one.
    private func withCompactJSON<R>(of blob: RecordBlob?, scratch: inout [UInt8],
                                    _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard let blob else { return try body(nil) }
        return try blob.withCompactJSON(scratch: &scratch) { try body($0) }
    }

    func remove(named name: String, from zone: Int, recordType: String?) -> RecordBlob? {
        var name = name
        return name.withUTF8 { bytes in
            let bytes = UnsafeRawBufferPointer(bytes)
            return storage.zones[zone].table.remove(bytes, hash: RecordBlob.hash(of: bytes))
        }
    }

    func didRemove(_ old: RecordBlob, named name: String, from zone: Int, recordType: String?) throws {
        if let onChange {
            defer { storage.allocator.release(old) }
            _ = try old.withCompactJSON(scratch: &compactScratch) { json in
                try onChange(.deleted(zone: zone, zoneID: storage.zones[zone].zoneID, name: old.name, json: json, recordType: recordType))
            }
        } else {
            storage.allocator.release(old)
        }
        try onApply?(.recordDeleted(RecordID(recordName: name, zoneID: storage.zones[zone].zoneID), recordType: recordType))
    }

    func didMissDelete(named name: String, zoneID: ZoneID, zone: Int?, recordType: String?) throws {
        try onApply?(.recordDeleted(RecordID(recordName: name, zoneID: zoneID), recordType: recordType))
    }

    // MARK: Checkpoints

    func noteToken(_ token: String, zone: Int?) -> Bool {
        !seenTokens.insert(ScopedToken(zone: zone ?? -1, token: token)).inserted
    }

    func takeCheckpoint(_ checkpoint: ChangeEvent.Checkpoint, zone: Int?, applied: Bool) throws {
        if let zone {
            storage.zones[zone].syncToken = checkpoint.syncToken
            storage.zones[zone].moreComing = checkpoint.moreComing
        } else {
            storage.database = checkpoint
        }
        storage.lastCheckpoint = checkpoint
        guard applied else { return }
        _ = try onChange?(.checkpoint(checkpoint, zone: zone))
        try onApply?(.checkpoint(checkpoint))
    }

    func forEachPossibleReferrer(_ body: (Int, RecordBlob) throws -> Void) throws {
        for (zone, state) in storage.zones.enumerated() {
            for blob in state.table.allBlobs { try body(zone, blob) }
        }
    }
}
