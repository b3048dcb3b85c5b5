import FerryChangeLog
import FerryRecords

/// A record a history saves, made ready for the store on a decoding thread: its row, and the
/// records it points at with DELETE_SELF (with cascade).
struct StoreSave: Sendable {
    var row: StoreRow
    var cascadeTargets: [RecordID]
}

extension StoreSave: ReplayedRecord {
    var replayName: String { row.recordName }

    func withReplayChangeTag<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard var tag = row.changeTag else { return try body(nil) }
        return try tag.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    var replayModified: Int64? { row.modifiedAt }

    func forEachDeleteSelfTarget(_ body: (ZoneID?, String) throws -> Void) rethrows {
        for target in cascadeTargets { try body(target.zoneID.zoneName.isEmpty ? nil : target.zoneID, target.recordName) }
    }

    func forEachReferenceTarget(_ body: (ZoneID?, String) throws -> Void) rethrows {
        // Only batch ordering asks, which a store's replay does not do: the row's body is decoded.
        guard let record = try? row.bytes.withUnsafeBytes({ raw in try StoreCodec.record(fromBody: row.slice(.body, in: raw)!, path: "") })
        else { return }
        if let parent = record.parent { try body(nil, parent.recordName) }
        for target in StoreReplayBackend.references(of: record, deletingSelfOnly: false) {
            try body(target.zoneID.zoneName.isEmpty ? nil : target.zoneID, target.recordName)
        }
    }
}

extension StoreMutator.StoredRecord: ReplayedRecord {
    var replayName: String { name }

    func withReplayChangeTag<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard var tag = changeTag else { return try body(nil) }
        return try tag.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    var replayModified: Int64? { modifiedAt }

    func forEachDeleteSelfTarget(_ body: (ZoneID?, String) throws -> Void) rethrows {
        guard let record = try? self.body.withUnsafeBytes({ raw in try StoreCodec.record(fromBody: raw, path: "") }) else { return }
        for target in StoreReplayBackend.references(of: record, deletingSelfOnly: true) {
            try body(target.zoneID.zoneName.isEmpty ? nil : target.zoneID, target.recordName)
        }
    }

    func forEachReferenceTarget(_ body: (ZoneID?, String) throws -> Void) rethrows {
        guard let record = try? self.body.withUnsafeBytes({ raw in try StoreCodec.record(fromBody: raw, path: "") }) else { return }
        if let parent = record.parent { try body(nil, parent.recordName) }
        for target in StoreReplayBackend.references(of: record, deletingSelfOnly: false) {
            try body(target.zoneID.zoneName.isEmpty ? nil : target.zoneID, target.recordName)
        }
    }
}

/// A store as the ``ReplayCore`` changes it, inside the transaction of its replay: zones are the
/// store's zones of one database (by name and owner, as its table tells them apart), records its
/// rows; every change is journaled by the ``StoreMutator``, which also counts what was created,
/// modified, left unchanged and deleted.
final class StoreReplayBackend: ReplayBackend {
    typealias Zone = StoreZoneKey
    typealias ZoneReference = ZoneID
    typealias Saved = StoreSave
    typealias Held = StoreMutator.StoredRecord

    let mutator: StoreMutator
    let database: Int64
    /// Restoring a store's journal: a zone saved again and a delete of a record the store does
    /// not hold are journaled as the journal had them.
    let restoresJournal: Bool
    /// Each checkpoint commits the changes before it, with its token.
    let commitsEachCheckpoint: Bool
    /// The zone ID each zone was named by last (a zone the store makes takes it).
    private var zoneIDs: [StoreZoneKey: ZoneID] = [:]
    /// The zone named last and its key (histories name one zone for many changes in a row).
    private var lastZone: (zoneID: ZoneID, key: StoreZoneKey)?
    /// The store row of the zone of the save being applied (``replace(_:in:)`` to ``didSave(_:in:replacing:)``).
    private var savingInZone: Int64 = 0
    /// The tokens of the checkpoints the store applied, per zone (`nil` key: the database), this
    /// run's included; loaded from the store on first need.
    private var knownTokens: [StoreZoneKey?: Set<String>] = [:]

    var noun: String { "store" }

    init(mutator: StoreMutator, database: Int64, restoresJournal: Bool, commitsEachCheckpoint: Bool) {
        self.mutator = mutator
        self.database = database
        self.restoresJournal = restoresJournal
        self.commitsEachCheckpoint = commitsEachCheckpoint
    }

    // MARK: Zones

    func zone(_ zoneID: ZoneID) -> StoreZoneKey {
        if let last = lastZone, Self.same(last.zoneID, zoneID) { return last.key }
        let key = StoreZoneKey(database: database, zone: zoneID)
        zoneIDs[key] = zoneID
        lastZone = (zoneID, key)
        return key
    }

    func knownZone(_ zoneID: ZoneID) throws -> StoreZoneKey? {
        guard try mutator.existingZone(zoneID, database: database) != nil else { return nil }
        let key = StoreZoneKey(database: database, zone: zoneID)
        if zoneIDs[key] == nil { zoneIDs[key] = zoneID }
        return key
    }

    func zoneID(of zone: StoreZoneKey) -> ZoneID {
        if let last = lastZone, last.key == zone { return last.zoneID }
        return zoneIDs[zone] ?? ZoneID(zoneName: zone.name.string, ownerRecordName: zone.owner.string.isEmpty ? nil : zone.owner.string)
    }

    func isDeleted(_ zone: StoreZoneKey) throws -> Bool {
        let zoneID = zoneID(of: zone)
        if mutator.lastLiveZone(zoneID, database: database) != nil { return false }
        return try mutator.existingZone(zoneID, database: database)?.isDeleted ?? false
    }

    func makeLive(_ zone: StoreZoneKey, as zoneID: ZoneID?) throws {
        // A save into a deleted zone makes it live as it saves (``replace(_:in:)``).
        guard let zoneID else { return }
        let existed = try mutator.existingZone(zoneID, database: database).map { !$0.isDeleted } ?? false
        let id = try mutator.zone(for: zoneID, database: database)
        // Restoring, the journal's entry is kept even for a zone the store holds already.
        if restoresJournal && existed { mutator.journalEntry(.zoneSaved, zone: id, name: nil, type: nil) }
    }

    func deleteZone(_ zone: StoreZoneKey, zoneID: ZoneID, purge: Bool) throws {
        try mutator.deleteZone(zoneID, database: database, purge: purge)
    }

    // MARK: Records

    func keep(_ record: StoreSave) -> StoreSave { record }

    func drop(_ record: StoreSave) {}

    func replace(_ record: StoreSave, in zone: StoreZoneKey) throws -> StoreMutator.StoredRecord? {
        savingInZone = try mutator.zone(for: record.row.zoneID ?? zoneID(of: zone), database: database)
        return try mutator.find(record.row.recordName, zone: savingInZone)
    }

    func didSave(_ record: StoreSave, in zone: StoreZoneKey, replacing old: StoreMutator.StoredRecord?) throws {
        _ = try mutator.save(record.row, zone: savingInZone, existing: old)
    }

    func remove(named name: String, from zone: StoreZoneKey, recordType: String?) throws -> StoreMutator.StoredRecord? {
        guard let entry = try mutator.existingZone(zoneID(of: zone), database: database) else { return nil }
        return try mutator.delete(name, zone: entry.id, recordType: recordType)
    }

    func didRemove(_ old: StoreMutator.StoredRecord, named name: String, from zone: StoreZoneKey, recordType: String?) {}

    func didMissDelete(named name: String, zoneID: ZoneID, zone: StoreZoneKey?, recordType: String?) throws {
        // Restoring, a record created and deleted between two exports is known only by its deletion.
        guard restoresJournal, zone != nil, let entry = try mutator.existingZone(zoneID, database: database) else { return }
        mutator.journalEntry(.deleted, zone: entry.id, name: name, type: recordType)
    }

    // MARK: Checkpoints

    /// The tokens of the checkpoints the store applied to a zone (`nil`: the database), this run's included.
    func knownTokens(of zone: StoreZoneKey?) throws -> Set<String> {
        if let known = knownTokens[zone] { return known }
        var tokens: Set<String> = []
        let zoneRow: Int64?
        if let zone {
            zoneRow = try mutator.existingZone(zoneID(of: zone), database: database)?.id
        } else {
            zoneRow = 0
        }
        if let zoneRow {
            let statement = try mutator.connection.prepare("SELECT sync_token FROM checkpoints WHERE database_id = ?1 AND zone_id = ?2")
            try statement.bind(database, at: 1)
            try statement.bind(zoneRow, at: 2)
            while try statement.step() { tokens.insert(statement.text(at: 0) ?? "") }
        }
        knownTokens[zone] = tokens
        return tokens
    }

    func noteToken(_ token: String, zone: StoreZoneKey?) throws -> Bool {
        _ = try knownTokens(of: zone)
        return !knownTokens[zone]!.insert(token).inserted
    }

    func takeCheckpoint(_ checkpoint: ChangeEvent.Checkpoint, zone: StoreZoneKey?, applied: Bool) throws {
        let row = try zone.map { try mutator.checkpointZone(zoneID(of: $0), database: database) }
        try mutator.checkpoint(zone: row, database: database, token: checkpoint.syncToken, moreComing: checkpoint.moreComing)
        if commitsEachCheckpoint {
            try mutator.flush()
            try mutator.connection.execute("COMMIT")
            try mutator.connection.execute("BEGIN IMMEDIATE")
        }
    }

    func forEachPossibleReferrer(_ body: (StoreZoneKey, StoreMutator.StoredRecord) throws -> Void) throws {
        let statement = try mutator.connection.prepare("""
            SELECT z.zone_json, r.id, r.record_name, r.body, r.change_tag, r.modified_at FROM records r JOIN zones z ON z.id = r.zone_id
            WHERE z.database_id = ?1 AND instr(r.body, 'DELETE_SELF') > 0
            """)
        try statement.bind(database, at: 1)
        while try statement.step() {
            let zoneID = try StoreCodec.zoneID(fromJSON: statement.textBytes(at: 0))
            let record = StoreMutator.StoredRecord(id: statement.int64(at: 1), name: statement.text(at: 2) ?? "",
                                                   body: Array(statement.textBytes(at: 3)), changeTag: statement.text(at: 4),
                                                   modifiedAt: statement.optionalInt64(at: 5))
            try body(knownZone(zoneID) ?? zone(zoneID), record)
        }
    }

    /// Whether two zone IDs are the same, names compared by their bytes (not as Swift strings,
    /// which take "é" and "e" + U+0301 for one).
    private static func same(_ a: ZoneID, _ b: ZoneID) -> Bool {
        guard a == b, ExactName.same(a.zoneName, b.zoneName) else { return false }
        switch (a.ownerRecordName, b.ownerRecordName) {
        case (nil, nil): return true
        case (let x?, let y?): return ExactName.same(x, y)
        default: return false
        }
    }

    // MARK: References

    /// The records a record's REFERENCE fields point at (with DELETE_SELF only, or all; not its
    /// parent); a reference without a zone means the record's own zone (an empty zone name).
    static func references(of record: Record, deletingSelfOnly: Bool) -> [RecordID] {
        var targets: [RecordID] = []
        func visit(_ value: FieldValue) {
            switch value {
            case .reference(let reference) where !deletingSelfOnly || reference.action == .deleteSelf:
                targets.append(RecordID(recordName: reference.recordName, zoneID: reference.zoneID ?? ZoneID(zoneName: "")))
            case .list(let items): items.forEach(visit)
            default: break
            }
        }
        for entry in record.fields ?? RecordFields() { visit(entry.field.value) }
        return targets
    }
}
