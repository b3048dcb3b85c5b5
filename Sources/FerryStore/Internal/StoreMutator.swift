import FerryRecords

/// Applies changes to a store inside a transaction its caller opened — records saved and
/// deleted, zones made, deleted and purged, checkpoints taken — and numbers each change in the
/// journal. Zone counts and change sequences are kept in memory and written by ``flush()``,
/// which the caller runs before committing.
///
/// Statements are prepared once and reused; row text is bound from the row's own buffer without
/// copies (`SQLITE_STATIC`), every parameter rebound before each step.
final class StoreMutator {
    /// What a save did.
    enum SaveOutcome {
        case created, modified, unchanged
    }

    /// A stored record as a save or delete finds it: its row id, name, JSON and the columns
    /// replay compares.
    struct StoredRecord {
        var id: Int64
        var name: String
        var body: [UInt8]
        var changeTag: String?
        var modifiedAt: Int64?
    }

    /// A zone as the mutator caches it.
    struct ZoneEntry {
        var id: Int64
        var zoneID: ZoneID
        var isDeleted: Bool
    }

    let connection: SQLiteConnection
    let path: String
    /// The sequence number the next journal entry gets.
    private(set) var nextSeq: Int64
    private let insertRecord: SQLiteStatement
    private let findRecord: SQLiteStatement
    private let updateRecord: SQLiteStatement
    private let deleteRecordByID: SQLiteStatement
    private let insertJournal: SQLiteStatement
    private var zones: [StoreZoneKey: ZoneEntry] = [:]
    /// The live zone asked for last (forgotten when a zone is deleted).
    private var lastZone: (key: StoreZoneKey, id: Int64)?
    private var zonesByID: [Int64: StoreZoneKey] = [:]
    /// Per zone id: change of the record count, latest sequence number.
    private var zoneChanges: [Int64: (count: Int, seq: Int64)] = [:]
    private let encoder = StoreRowEncoder()
    /// Whether ``insert(_:zone:)`` leaves the journal entries of the records it creates to
    /// ``writeDeferredJournal()`` (a new store's bulk load, where every record is created once:
    /// one statement at the end instead of one per record).
    var defersCreatedJournal = false

    /// Records created, modified, left unchanged, deleted.
    private(set) var created = 0, modified = 0, unchanged = 0, deleted = 0

    init(connection: SQLiteConnection, path: String) throws {
        self.connection = connection
        self.path = path
        nextSeq = (try connection.integer("SELECT max(seq) FROM journal") ?? 0) + 1
        insertRecord = try connection.prepare("""
            INSERT INTO records (zone_id, record_name, record_type, change_tag, created_at, created_by, modified_at, modified_by,
                                 parent_name, share_name, seq, body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            """, persistent: true)
        findRecord = try connection.prepare("SELECT id, body, change_tag, modified_at FROM records WHERE zone_id = ?1 AND record_name = ?2",
                                            persistent: true)
        updateRecord = try connection.prepare("""
            UPDATE records SET record_type = ?3, change_tag = ?4, created_at = ?5, created_by = ?6, modified_at = ?7,
                               modified_by = ?8, parent_name = ?9, share_name = ?10, seq = ?11, body = ?12
            WHERE id = ?1
            """, persistent: true)
        deleteRecordByID = try connection.prepare("DELETE FROM records WHERE id = ?1", persistent: true)
        insertJournal = try connection.prepare("""
            INSERT INTO journal (seq, zone_id, kind, record_name, record_type, change_tag) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """, persistent: true)
    }

    // MARK: Zones

    /// The row id of a zone, made (and journaled) when the store does not hold it; a deleted
    /// zone is made live again.
    func zone(for zoneID: ZoneID?, database: Int64) throws -> Int64 {
        let zone = zoneID ?? .default
        // Histories and imports touch one zone for many records in a row.
        if let last = lastZone, last.key == StoreZoneKey(database: database, zone: zone) {
            return last.id
        }
        let key = StoreZoneKey(database: database, zone: zone)
        let id: Int64
        if let entry = zones[key], !entry.isDeleted { id = entry.id } else { id = try loadZone(key, zone: zone, creating: true)!.id }
        lastZone = (key, id)
        return id
    }

    /// The row id of the live zone asked for last, when `zoneID` names it (no lookup).
    func lastLiveZone(_ zoneID: ZoneID?, database: Int64) -> Int64? {
        let zone = zoneID ?? .default
        guard let last = lastZone, last.key == StoreZoneKey(database: database, zone: zone)
        else { return nil }
        return last.id
    }

    /// The cached zone entry of a zone, loaded from the table; `nil` when the store does not hold
    /// it and `creating` is false.
    func existingZone(_ zoneID: ZoneID, database: Int64) throws -> ZoneEntry? {
        let key = StoreZoneKey(database: database, zone: zoneID)
        if let entry = zones[key] { return entry }
        return try loadZone(key, zone: zoneID, creating: false)
    }

    private func loadZone(_ key: StoreZoneKey, zone: ZoneID, creating: Bool) throws -> ZoneEntry? {
        let find = try connection.prepare("SELECT id, is_deleted, zone_json FROM zones WHERE database_id = ?1 AND zone_name = ?2 AND owner_record_name = ?3")
        try find.bind(key.database, at: 1)
        try find.bind(key.name.string, at: 2)
        try find.bind(key.owner.string, at: 3)
        var entry: ZoneEntry?
        if try find.step() {
            entry = ZoneEntry(id: find.int64(at: 0), zoneID: try StoreCodec.zoneID(fromJSON: find.textBytes(at: 2)),
                              isDeleted: find.int64(at: 1) != 0)
        }
        if var existing = entry {
            if existing.isDeleted && creating {
                let seq = try journal(.zoneSaved, zone: existing.id, name: nil, type: nil, tag: nil)
                let update = try connection.prepare("UPDATE zones SET is_deleted = 0, change_seq = ?2 WHERE id = ?1")
                try update.bind(existing.id, at: 1)
                try update.bind(seq, at: 2)
                try update.run()
                existing.isDeleted = false
            }
            zones[key] = existing
            zonesByID[existing.id] = key
            return existing
        }
        guard creating else { return nil }
        let insert = try connection.prepare("""
            INSERT INTO zones (database_id, zone_name, owner_record_name, zone_type, zone_json) VALUES (?1, ?2, ?3, ?4, ?5)
            """)
        try insert.bind(key.database, at: 1)
        try insert.bind(key.name.string, at: 2)
        try insert.bind(key.owner.string, at: 3)
        try insert.bind(zone.zoneType, at: 4)
        try insert.bind(StoreCodec.json(of: zone), at: 5)
        try insert.run()
        let made = ZoneEntry(id: connection.lastInsertRowID, zoneID: zone, isDeleted: false)
        zones[key] = made
        zonesByID[made.id] = key
        let seq = try journal(.zoneSaved, zone: made.id, name: nil, type: nil, tag: nil)
        zoneChanges[made.id, default: (0, 0)].seq = seq
        return made
    }

    /// The zone ID of a zone row id (cached).
    func zoneID(ofZone id: Int64) -> ZoneID? {
        zonesByID[id].flatMap { zones[$0]?.zoneID }
    }

    /// Deletes every record of a zone and marks it deleted; a purge also forgets its token (the
    /// tokens applied stay listed in `checkpoints`, so replaying the history again skips them).
    /// Returns the names of the records removed when `collectingNames`.
    @discardableResult
    func deleteZone(_ zoneID: ZoneID, database: Int64, purge: Bool, collectingNames: Bool = false) throws -> [String] {
        let id = try zone(for: zoneID, database: database)
        lastZone = nil
        var names: [String] = []
        if collectingNames {
            let list = try connection.prepare("SELECT record_name FROM records WHERE zone_id = ?1")
            try list.bind(id, at: 1)
            while try list.step() { names.append(list.text(at: 0) ?? "") }
        }
        let remove = try connection.prepare("DELETE FROM records WHERE zone_id = ?1")
        try remove.bind(id, at: 1)
        try remove.run()
        deleted += connection.changes
        let seq = try journal(purge ? .zonePurged : .zoneDeleted, zone: id, name: nil, type: nil, tag: nil)
        let update = try connection.prepare("""
            UPDATE zones SET is_deleted = 1, more_coming = 0, record_count = 0, change_seq = ?2,
                             sync_token = CASE WHEN ?3 THEN NULL ELSE sync_token END
            WHERE id = ?1
            """)
        try update.bind(id, at: 1)
        try update.bind(seq, at: 2)
        try update.bind(Int64(purge ? 1 : 0), at: 3)
        try update.run()
        zoneChanges[id] = nil
        if let key = zonesByID[id] { zones[key]?.isDeleted = true }
        return names
    }

    // MARK: Records

    /// Inserts a record that must not exist. A record of the same name in the zone is a conflict
    /// (an error naming it), unless the table has no unique index yet (a new store's bulk load,
    /// which checks when it builds the index).
    func insert(_ row: StoreRow, zone: Int64) throws {
        try row.bytes.withUnsafeBytes { raw in
            try insert(zone: zone, createdAt: row.createdAt, modifiedAt: row.modifiedAt) { row.slice($0, in: raw) }
        }
    }

    /// Inserts row `index` of `rows` as ``insert(_:zone:)`` inserts a row.
    func insert(_ rows: StoreRows, _ index: Int, zone: Int64) throws {
        try rows.withRow(index) { createdAt, modifiedAt, text in
            try insert(zone: zone, createdAt: createdAt, modifiedAt: modifiedAt, text: text)
        }
    }

    /// Counts a record created in a zone at journal number `seq`.
    private static func count(_ change: inout (count: Int, seq: Int64), seq: Int64) {
        change.count += 1
        change.seq = seq
    }

    private func insert(zone: Int64, createdAt: Int64?, modifiedAt: Int64?, text: (StoreRow.Column) -> UnsafeRawBufferPointer?) throws {
        let seq = nextSeq
        do {
            try bindAndStep(insertRecord, first: zone, seq: seq, createdAt: createdAt, modifiedAt: modifiedAt, text: text)
        } catch let error as StoreError where error.code == .conflict {
            let name = text(.recordName).map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw StoreError(.conflict, "the record \(JSONOutput.literal(name)) already exists in the zone \(zoneDescription(zone)); "
                             + "import with --mode upsert or --mode replace to overwrite records", path: path, recordName: name)
        }
        if defersCreatedJournal {
            nextSeq = seq + 1
            // One lookup per row: the count and the last journal number together.
            Self.count(&zoneChanges[zone, default: (0, 0)], seq: seq)
        } else {
            try journalRow(.created, zone: zone, seq: seq, text: text)
            zoneChanges[zone, default: (0, 0)].count += 1
        }
        created += 1
    }

    /// Saves a record: creates it, or replaces it (`merging`: its fields merged into the stored
    /// record's, the stored keys it lacks kept). A save that changes no byte is not journaled.
    @discardableResult
    func save(_ row: StoreRow, zone: Int64, merging: Bool = false) throws -> SaveOutcome {
        try save(row, zone: zone, merging: merging, existing: try find(row.recordName, zone: zone))
    }

    /// Saves a record found (or not) by ``find(_:zone:)`` before.
    func save(_ row: StoreRow, zone: Int64, merging: Bool = false, existing: StoredRecord?) throws -> SaveOutcome {
        guard let existing else {
            try insert(row, zone: zone)
            return .created
        }
        let id = existing.id
        var row = row
        let oldBody = existing.body
        if merging {
            let old = try oldBody.withUnsafeBytes { raw in try StoreCodec.record(fromBody: raw, path: path) }
            let new = try row.bytes.withUnsafeBytes { raw in
                try StoreCodec.record(fromBody: row.slice(.body, in: raw)!, path: path)
            }
            var merged = old
            merged.merge(new)
            row = StoreRow(record: merged, encoder: encoder)
            row.zoneID = new.zoneID ?? old.zoneID
        }
        let same = row.bytes.withUnsafeBytes { raw in oldBody.withUnsafeBytes { $0.elementsEqual(row.slice(.body, in: raw)!) } }
        if same {
            unchanged += 1
            return .unchanged
        }
        let seq = nextSeq
        try bindAndStep(updateRecord, row: row, first: id, seq: seq)
        try journalRow(.modified, row: row, zone: zone, seq: seq)
        modified += 1
        zoneChanges[zone, default: (0, 0)].seq = seq
        return .modified
    }

    /// Writes a record with the journal number of its latest change (a new store built from a
    /// replay's final state: the journal was written as the changes came).
    func writeRecord(_ rows: StoreRows, _ index: Int, zone: Int64, seq: Int64) throws {
        try rows.withRow(index) { createdAt, modifiedAt, text in
            try bindAndStep(insertRecord, first: zone, seq: seq, createdAt: createdAt, modifiedAt: modifiedAt, text: text)
        }
    }

    /// Adds `count` to a zone's record count (written by ``flush()``).
    func addRecords(_ count: Int, zone: Int64) {
        zoneChanges[zone, default: (0, 0)].count += count
    }

    /// Journals a record's change given as bytes; returns its sequence number. A save without a
    /// change tag is journaled with the tag the store gives it (``storeChangeTag(_:)``).
    /// `seq` numbers it when given (by a caller that numbers the changes ahead of the writing).
    @discardableResult
    func journalRecord(_ kind: StoreSchema.JournalKind, zone: Int64, name: UnsafeRawBufferPointer?, type: UnsafeRawBufferPointer?,
                       tag: UnsafeRawBufferPointer?, seq given: Int64? = nil) throws -> Int64 {
        let seq = given ?? nextSeq
        defer { insertJournal.reset() }
        try insertJournal.bind(seq, at: 1)
        try insertJournal.bind(zone, at: 2)
        try insertJournal.bind(kind.rawValue, at: 3)
        try bind(name, insertJournal, 4)
        try bind(type, insertJournal, 5)
        if tag == nil && kind == .deleted {
            try insertJournal.bindNull(at: 6)
        } else {
            try bindChangeTag(tag, seq: seq, insertJournal, 6)
        }
        try insertJournal.step()
        nextSeq = seq + 1
        zoneChanges[zone, default: (0, 0)].seq = seq
        return seq
    }

    /// The row id of the zone a checkpoint names: made (and journaled) when the store does not
    /// hold it; a deleted zone stays deleted (it takes the token).
    func checkpointZone(_ zoneID: ZoneID, database: Int64) throws -> Int64 {
        if let entry = try existingZone(zoneID, database: database) { return entry.id }
        return try zone(for: zoneID, database: database)
    }

    /// A stored record, `nil` when the zone does not hold it.
    func find(_ name: String, zone: Int64) throws -> StoredRecord? {
        defer { findRecord.reset() }
        try findRecord.bind(zone, at: 1)
        try findRecord.bind(name, at: 2)
        guard try findRecord.step() else { return nil }
        return StoredRecord(id: findRecord.int64(at: 0), name: name, body: Array(findRecord.textBytes(at: 1)),
                     changeTag: findRecord.text(at: 2), modifiedAt: findRecord.optionalInt64(at: 3))
    }

    /// Makes the next journal entry take `seq` (restoring a journal with its numbers, which may
    /// come database by database, so not in order). ``resumeSequence()`` continues after the largest.
    func setNextSequence(_ seq: Int64) {
        nextSeq = seq
    }

    /// Makes the next journal entry follow the largest in the journal.
    func resumeSequence() throws {
        nextSeq = (try connection.integer("SELECT max(seq) FROM journal") ?? 0) + 1
    }

    /// Deletes a record; returns it, or `nil` when the zone did not hold it (nothing journaled).
    @discardableResult
    func delete(_ name: String, zone: Int64, recordType: String?) throws -> StoredRecord? {
        guard let found = try find(name, zone: zone) else { return nil }
        try deleteRecordByID.bind(found.id, at: 1)
        try deleteRecordByID.run()
        var type = recordType
        if type == nil {
            type = try? found.body.withUnsafeBytes { raw in try StoreCodec.record(fromBody: raw, path: path) }.recordType
        }
        _ = try journal(.deleted, zone: zone, name: name, type: type, tag: nil)
        deleted += 1
        zoneChanges[zone, default: (0, 0)].count -= 1
        return found
    }

    // MARK: Checkpoints

    /// Records an upstream checkpoint: the zone's (or the database's) token and `moreComing`,
    /// and the token in the list of tokens applied.
    func checkpoint(zone: Int64?, database: Int64, token: String, moreComing: Bool) throws {
        let note = try connection.prepare("""
            INSERT INTO checkpoints (database_id, zone_id, sync_token, more_coming, seq) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (database_id, zone_id, sync_token) DO UPDATE SET more_coming = excluded.more_coming, seq = excluded.seq
            """)
        try note.bind(database, at: 1)
        try note.bind(zone ?? 0, at: 2)
        try note.bind(token, at: 3)
        try note.bind(Int64(moreComing ? 1 : 0), at: 4)
        try note.bind(nextSeq - 1, at: 5)
        try note.run()
        let update = try connection.prepare(zone == nil
            ? "UPDATE databases SET sync_token = ?2, more_coming = ?3 WHERE id = ?1"
            : "UPDATE zones SET sync_token = ?2, more_coming = ?3 WHERE id = ?1")
        try update.bind(zone ?? database, at: 1)
        try update.bind(token, at: 2)
        try update.bind(Int64(moreComing ? 1 : 0), at: 3)
        try update.run()
    }

    /// Writes the zones' record counts and latest sequence numbers. Run before committing.
    func flush() throws {
        guard !zoneChanges.isEmpty else { return }
        let update = try connection.prepare("""
            UPDATE zones SET record_count = record_count + ?2, change_seq = max(change_seq, ?3) WHERE id = ?1
            """)
        for (zone, change) in zoneChanges {
            try update.bind(zone, at: 1)
            try update.bind(Int64(change.count), at: 2)
            try update.bind(change.seq, at: 3)
            try update.run()
        }
        zoneChanges.removeAll(keepingCapacity: true)
    }

    /// Writes the journal entries ``insert(_:zone:)`` left out while ``defersCreatedJournal``: a
    /// `created` entry for every record, with the record's sequence number and change tag, as
    /// `insert` would have written them; from then on each record is journaled as it goes.
    func writeDeferredJournal() throws {
        guard defersCreatedJournal else { return }
        defersCreatedJournal = false
        try connection.execute("""
            INSERT INTO journal (seq, zone_id, kind, record_name, record_type, change_tag)
            SELECT seq, zone_id, '\(StoreSchema.JournalKind.created.rawValue)', record_name, record_type, change_tag FROM records
            """)
    }

    /// Forgets cached zones and counts (after the tables were emptied, to restore a journal).
    func forgetCaches() {
        lastZone = nil
        zones.removeAll()
        zonesByID.removeAll()
        zoneChanges.removeAll()
        created = 0
        modified = 0
        unchanged = 0
        deleted = 0
        nextSeq = 1
    }

    // MARK: Internals

    private func bindAndStep(_ statement: SQLiteStatement, row: StoreRow, first: Int64, seq: Int64) throws {
        try row.bytes.withUnsafeBytes { raw in
            try bindAndStep(statement, first: first, seq: seq, createdAt: row.createdAt, modifiedAt: row.modifiedAt) {
                row.slice($0, in: raw)
            }
        }
    }

    /// Binds a row's columns (`text` gives each text column, `nil` for NULL) and runs `statement`.
    private func bindAndStep(_ statement: SQLiteStatement, first: Int64, seq: Int64, createdAt: Int64?, modifiedAt: Int64?,
                             text: (StoreRow.Column) -> UnsafeRawBufferPointer?) throws {
        defer { statement.reset() }
        try statement.bind(first, at: 1)
        try bind(text(.recordName), statement, 2)
        try bind(text(.recordType), statement, 3)
        try bindChangeTag(text(.changeTag), seq: seq, statement, 4)
        try statement.bind(createdAt, at: 5)
        try bind(text(.createdBy), statement, 6)
        try statement.bind(modifiedAt, at: 7)
        try bind(text(.modifiedBy), statement, 8)
        try bind(text(.parentName), statement, 9)
        try bind(text(.shareName), statement, 10)
        try statement.bind(seq, at: 11)
        try bind(text(.body), statement, 12)
        try statement.step()
    }

    private func bind(_ bytes: UnsafeRawBufferPointer?, _ statement: SQLiteStatement, _ index: Int32) throws {
        if let bytes { try statement.bind(borrowedText: bytes, at: index) } else { try statement.bindNull(at: index) }
    }

    /// The change tag the store gives a record saved without one: its sequence number in base 36.
    static func storeChangeTag(_ seq: Int64) -> String { "s" + String(seq, radix: 36) }

    /// Binds a record's change tag, or the one the store gives it (``storeChangeTag(_:)``).
    private func bindChangeTag(_ tag: UnsafeRawBufferPointer?, seq: Int64, _ statement: SQLiteStatement, _ index: Int32) throws {
        if let tag { try statement.bind(borrowedText: tag, at: index) } else { try statement.bind(Self.storeChangeTag(seq), at: index) }
    }

    private func journalRow(_ kind: StoreSchema.JournalKind, row: StoreRow, zone: Int64, seq: Int64) throws {
        try row.bytes.withUnsafeBytes { raw in try journalRow(kind, zone: zone, seq: seq) { row.slice($0, in: raw) } }
    }

    private func journalRow(_ kind: StoreSchema.JournalKind, zone: Int64, seq: Int64,
                            text: (StoreRow.Column) -> UnsafeRawBufferPointer?) throws {
        try journalRecord(kind, zone: zone, name: text(.recordName), type: text(.recordType), tag: text(.changeTag), seq: seq)
    }

    /// Appends a journal entry that changes no row (restoring a journal). Errors are dropped: a
    /// restore that cannot journal fails at its next statement.
    func journalEntry(_ kind: StoreSchema.JournalKind, zone: Int64, name: String?, type: String?) {
        _ = try? journal(kind, zone: zone, name: name, type: type, tag: nil)
    }

    /// Appends a journal entry; returns its sequence number.
    private func journal(_ kind: StoreSchema.JournalKind, zone: Int64, name: String?, type: String?, tag: String?) throws -> Int64 {
        let seq = nextSeq
        defer { insertJournal.reset() }
        try insertJournal.bind(seq, at: 1)
        try insertJournal.bind(zone, at: 2)
        try insertJournal.bind(kind.rawValue, at: 3)
        try insertJournal.bind(name, at: 4)
        try insertJournal.bind(type, at: 5)
        try insertJournal.bind(tag, at: 6)
        try insertJournal.step()
        nextSeq = seq + 1
        zoneChanges[zone, default: (0, 0)].seq = seq
        return seq
    }

    private func zoneDescription(_ id: Int64) -> String {
        guard let key = zonesByID[id] else { return "#\(id)" }
        return JSONOutput.literal(key.name.string)
            + "\(key.owner.string.isEmpty ? "" : " (owner \(JSONOutput.literal(key.owner.string)))") of the \(StoreCodec.databaseName(key.database)) database"
    }
}

extension Record {
    /// CloudKit's `update`: the other record's keys win, and keys and fields it lacks are kept.
    mutating func merge(_ other: Record) {
        recordName = other.recordName
        if let value = other.recordType { recordType = value }
        if let value = other.zoneID { zoneID = value }
        if let newFields = other.fields {
            var merged = fields ?? RecordFields()
            for entry in newFields.entries { merged[entry.name] = entry.field }
            fields = merged
        }
        if let value = other.pluginFields { pluginFields = value }
        if let value = other.recordChangeTag { recordChangeTag = value }
        if let value = other.created { created = value }
        if let value = other.modified { modified = value }
        if let value = other.deleted { deleted = value }
        if let value = other.parent { parent = value }
        if let value = other.share { share = value }
        if let value = other.shortGUID { shortGUID = value }
        for member in other.unknownKeys.members {
            // A known key given as `null` (kept in `unknownKeys`) wins over the stored value.
            if member.value == .null { clearSystemKey(member.key) }
            unknownKeys[member.key] = member.value
        }
        // A known key given a value wins over a stored `null` (one key, not two).
        for key in Record.systemKeys where unknownKeys[key] == .null && other.unknownKeys[key] == nil && hasSystemKey(key) {
            unknownKeys[key] = nil
        }
    }

    /// Whether the system key `key` holds a value.
    private func hasSystemKey(_ key: String) -> Bool {
        switch key {
        case "recordType": recordType != nil
        case "zoneID": zoneID != nil
        case "recordChangeTag": recordChangeTag != nil
        case "created": created != nil
        case "modified": modified != nil
        case "deleted": deleted != nil
        case "parent": parent != nil
        case "share": share != nil
        case "shortGUID": shortGUID != nil
        case "fields": fields != nil
        case "pluginFields": pluginFields != nil
        default: false
        }
    }

    /// Removes the value of the system key `key` (not `recordName`, which every record has).
    private mutating func clearSystemKey(_ key: String) {
        switch key {
        case "recordType": recordType = nil
        case "zoneID": zoneID = nil
        case "recordChangeTag": recordChangeTag = nil
        case "created": created = nil
        case "modified": modified = nil
        case "deleted": deleted = nil
        case "parent": parent = nil
        case "share": share = nil
        case "shortGUID": shortGUID = nil
        case "fields": fields = nil
        case "pluginFields": pluginFields = nil
        default: break
        }
    }
}
