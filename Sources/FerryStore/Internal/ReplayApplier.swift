import FerryChangeLog
import FerryRecords

/// A change read from a history, made ready on the reading thread.
enum ReplayChange: Sendable {
    /// A save, and the records it points at with DELETE_SELF (with cascade).
    case save(StoreRow, cascadeTargets: [RecordID])
    case delete(RecordID, recordType: String?)
    case zoneSaved(ZoneID)
    case zoneDeleted(ZoneID)
    case zonePurged(ZoneID)
    case checkpoint(ChangeEvent.Checkpoint)
}

extension ReplayChange {
    /// Makes an event ready for the store: a saved record encoded as a row (on the reading thread).
    init(_ event: ChangeEvent, encoder: StoreRowEncoder, cascade: Bool, defaultZone: ZoneID?) {
        switch event {
        case .recordSaved(let record):
            let targets = cascade ? ReplayApplier.cascadeTargets(of: record) : []
            var row = StoreRow(record: record, encoder: encoder)
            if row.zoneID == nil, let defaultZone { row.zoneID = defaultZone }
            self = .save(row, cascadeTargets: targets)
        case .recordDeleted(let id, let type): self = .delete(id, recordType: type)
        case .zoneSaved(let zone): self = .zoneSaved(zone)
        case .zoneDeleted(let zone): self = .zoneDeleted(zone)
        case .zonePurged(let zone): self = .zonePurged(zone)
        case .checkpoint(let checkpoint): self = .checkpoint(checkpoint)
        }
    }
}

/// Changes handed to the applying thread at once: those of one history file, or the events
/// given one by one since the last hand-over; the first one's 1-based position in the history.
struct ReplayBatch: Sendable {
    var changes: [ReplayChange]
    var firstIndex: Int
}

/// A change and its 1-based position in the history.
struct ReplayItem: Sendable {
    var change: ReplayChange
    var index: Int
}

/// Applies a history's changes to a store on the writing thread, each zone from where the store
/// left it: a zone the store holds tokens for starts *undecided* — its changes are held back
/// until its next checkpoint; a token the store applied before means they were applied already
/// (dropped), a token it does not know means they are new (applied), and the zone then applies
/// changes as they come. Past the zone's latest stored token its changes are still held until its
/// next checkpoint, or until a database change to the zone decides them: dropped with it as
/// applied already, or applied before it. So a history replayed again changes nothing, and a
/// history that continues the last one applies all of it.
final class ReplayApplier {
    /// A zone of the history (its name and owner, `''` for none), or the database (whose
    /// checkpoints cover the zones' creations, deletions and purges).
    struct ScopeKey: Hashable {
        /// By their bytes, as the store compares names (Swift strings take "é" and "e" + U+0301
        /// for one).
        var name: ExactName
        var owner: ExactName
        var isDatabase = false
        init(_ zone: ZoneID) {
            name = ExactName(zone.zoneName)
            owner = ExactName(zone.ownerRecordName ?? "")
        }
        static let database: ScopeKey = {
            var key = ScopeKey(ZoneID(zoneName: ""))
            key.isDatabase = true
            return key
        }()
    }

    /// Where a zone's replay stands.
    struct Scope {
        /// Tokens of the checkpoints applied to the zone before (this run's included).
        var knownTokens: Set<String>
        /// The zone's latest token when the run started.
        var latestToken: String?
        /// Whether the zone's changes are held back until a checkpoint decides.
        var isUndecided: Bool
        var held: [ReplayItem] = []
    }

    /// A live record by zone row id and name (for the cascade index).
    struct RecordKey: Hashable {
        var zone: Int64
        var name: ExactName

        init(zone: Int64, name: String) {
            self.zone = zone
            self.name = ExactName(name)
        }
    }

    let mutator: StoreMutator
    let connection: SQLiteConnection
    let database: Int64
    let cascade: Bool
    let commitsEachCheckpoint: Bool
    /// Restoring a store's journal: each change is followed by a checkpoint carrying the store's
    /// token of that change, whose number the change takes.
    let restoresJournal: Bool
    private(set) var anomalies: AnomalyReport
    private(set) var applied = 0
    private(set) var skipped = 0
    /// The store ID found in restored tokens.
    private(set) var restoredStoreID: String?
    private var scopes: [ScopeKey: Scope] = [:]
    private var pendingRestore: ReplayItem?
    /// The scope of the change applied last, when it was applying.
    private var lastApplying: ScopeKey?
    /// With cascade: the live records pointing at each record with DELETE_SELF (built on first need).
    private var referrers: [RecordKey: Set<RecordKey>]?

    init(mutator: StoreMutator, database: Int64, cascade: Bool, commitsEachCheckpoint: Bool, restoresJournal: Bool,
         maximumListedAnomalies: Int) {
        self.mutator = mutator
        connection = mutator.connection
        self.database = database
        self.cascade = cascade
        self.commitsEachCheckpoint = commitsEachCheckpoint
        self.restoresJournal = restoresJournal
        anomalies = AnomalyReport(limit: maximumListedAnomalies)
    }

    // MARK: Scopes

    private func scopeKey(of change: ReplayChange) -> ScopeKey {
        switch change {
        case .save(let row, _): ScopeKey(row.zoneID ?? .default)
        case .delete(let id, _): ScopeKey(id.zoneID)
        case .zoneSaved, .zoneDeleted, .zonePurged: .database
        case .checkpoint(let checkpoint): checkpoint.zoneID.map(ScopeKey.init) ?? .database
        }
    }

    /// Loads the scope of `key` into ``scopes`` (once). Callers change it there, in place: a copy
    /// alive while its `held` array grows would copy the array at every change held back.
    private func loadScope(_ key: ScopeKey, zone: ZoneID) throws {
        if scopes[key] != nil { return }
        var scope = Scope(knownTokens: [], latestToken: nil, isUndecided: false)
        if key.isDatabase {
            let tokens = try connection.prepare("SELECT sync_token FROM checkpoints WHERE database_id = ?1 AND zone_id = 0")
            try tokens.bind(database, at: 1)
            while try tokens.step() { scope.knownTokens.insert(tokens.text(at: 0) ?? "") }
            let latest = try connection.prepare("SELECT sync_token FROM databases WHERE id = ?1")
            try latest.bind(database, at: 1)
            if try latest.step() { scope.latestToken = latest.text(at: 0) }
            scope.isUndecided = !scope.knownTokens.isEmpty && !restoresJournal
        } else if let entry = try mutator.existingZone(zone, database: database) {
            let tokens = try connection.prepare("SELECT sync_token FROM checkpoints WHERE database_id = ?1 AND zone_id = ?2")
            try tokens.bind(database, at: 1)
            try tokens.bind(entry.id, at: 2)
            while try tokens.step() { scope.knownTokens.insert(tokens.text(at: 0) ?? "") }
            let latest = try connection.prepare("SELECT sync_token FROM zones WHERE id = ?1")
            try latest.bind(entry.id, at: 1)
            if try latest.step() { scope.latestToken = latest.text(at: 0) }
            scope.isUndecided = !scope.knownTokens.isEmpty && !restoresJournal
        }
        scopes[key] = scope
    }

    // MARK: Applying

    /// Takes one change of the history.
    func take(_ item: ReplayItem) throws {
        if restoresJournal { return try restore(item) }
        let key = scopeKey(of: item.change)
        // The zone of the change before is applying: so is this one (zones never go back to holding).
        if key == lastApplying { return try applyNow(item) }
        let zone: ZoneID = switch item.change {
        case .save(let row, _): row.zoneID ?? .default
        case .delete(let id, _): id.zoneID
        case .zoneSaved(let z), .zoneDeleted(let z), .zonePurged(let z): z
        case .checkpoint(let c): c.zoneID ?? .default
        }
        try loadScope(key, zone: zone)
        guard scopes[key]!.isUndecided else {
            lastApplying = key
            return try applyNow(item)
        }
        guard case .checkpoint(let checkpoint) = item.change else {
            scopes[key]!.held.append(item)
            return
        }
        var held: [ReplayItem] = []
        swap(&held, &scopes[key]!.held)
        if scopes[key]!.knownTokens.contains(checkpoint.syncToken) {
            // Applied by an earlier run: so was everything held back before it. Past the zone's
            // latest token its changes are still held, until its next checkpoint (new, then) or a
            // zone deletion the database's checkpoints show was applied already (the earlier run
            // then applied them too, with no zone checkpoint between), or the end of the history.
            skipped += held.count + 1
            if key.isDatabase { for item in held { dropZoneChangesHeld(before: item) } }
        } else {
            scopes[key]!.isUndecided = false
            for earlier in held { try applyNow(earlier) }
            try applyNow(item)
        }
    }

    /// After a database change was dropped as applied by an earlier run: when it created, deleted
    /// or purged a zone, the changes that zone holds back from before it in the history were
    /// applied by that run as well, before it (so a record saved and then taken away with its
    /// zone does not come back).
    private func dropZoneChangesHeld(before item: ReplayItem) {
        let zone: ZoneID
        switch item.change {
        case .zoneSaved(let z), .zoneDeleted(let z), .zonePurged(let z): zone = z
        default: return
        }
        let key = ScopeKey(zone)
        guard let held = scopes[key]?.held, !held.isEmpty else { return }
        let kept = held.filter { $0.index > item.index }
        skipped += held.count - kept.count
        scopes[key]?.held = kept
    }

    /// At the end of the history: changes still held back (after the last known checkpoint, with
    /// no checkpoint after them) are applied.
    func finishHistory() throws {
        if let pending = pendingRestore {
            pendingRestore = nil
            try applyNow(pending)
        }
        // In history order across scopes (a zone's records around a held zone deletion), not in
        // the scopes' hash order, which changes from one process to the next.
        var held: [ReplayItem] = []
        for key in scopes.keys where !(scopes[key]?.held.isEmpty ?? true) {
            held += scopes[key]!.held
            scopes[key]?.held.removeAll()
        }
        held.sort { $0.index < $1.index }
        for item in held { try applyNow(item) }
    }

    /// Restoring: a change waits for the checkpoint after it, whose store token gives its number.
    private func restore(_ item: ReplayItem) throws {
        if case .checkpoint(let checkpoint) = item.change, let token = try? StoreToken(parsing: checkpoint.syncToken) {
            if restoredStoreID == nil { restoredStoreID = token.storeID }
            if let pending = pendingRestore {
                pendingRestore = nil
                mutator.setNextSequence(token.sequence)
                try applyNow(pending)
            }
            return
        }
        if let pending = pendingRestore { try applyNow(pending) }
        pendingRestore = nil
        if case .checkpoint = item.change {
            // An upstream checkpoint the store applied, at its place in the journal.
            return try applyNow(item)
        }
        pendingRestore = item
    }

    private func applyNow(_ item: ReplayItem) throws {
        applied += 1
        switch item.change {
        case .save(let row, let targets):
            let zoneID = row.zoneID ?? .default
            let zone: Int64
            if let live = mutator.lastLiveZone(zoneID, database: database) {
                zone = live
            } else {
                if let entry = try mutator.existingZone(zoneID, database: database), entry.isDeleted {
                    anomaly(.eventForDeletedZone, item, zone: zoneID, record: row.recordName,
                            "a save of a record in a deleted zone; the zone is taken as re-created")
                }
                zone = try mutator.zone(for: zoneID, database: database)
            }
            let existing = try mutator.find(row.recordName, zone: zone)
            if let existing {
                if let old = existing.changeTag, let new = row.changeTag, old == new {
                    anomaly(.unchangedChangeTag, item, zone: zoneID, record: row.recordName,
                            "a re-save with the change tag \"\(new)\" the store already holds")
                }
                if let before = existing.modifiedAt, let now = row.modifiedAt, now < before {
                    anomaly(.modificationTimeWentBackwards, item, zone: zoneID, record: row.recordName,
                            "modified.timestamp went from \(before) back to \(now)")
                }
            }
            let outcome = try mutator.save(row, zone: zone, existing: existing)
            if referrers != nil, outcome != .unchanged {
                let key = RecordKey(zone: zone, name: row.recordName)
                if let existing { try unindex(existing.body, of: key) }
                try index(targets, of: key)
            }
        case .delete(let id, let type):
            guard let entry = try mutator.existingZone(id.zoneID, database: database) else {
                anomaly(.unknownRecordDeleted, item, zone: id.zoneID, record: id.recordName, "a delete of a record the store does not hold")
                return
            }
            if entry.isDeleted {
                anomaly(.eventForDeletedZone, item, zone: id.zoneID, record: id.recordName, "a delete in a deleted zone; ignored")
                return
            }
            try delete(RecordKey(zone: entry.id, name: id.recordName), zoneID: id.zoneID, type: type, item: item)
        case .zoneSaved(let zone):
            try releaseHeld(zone)
            let existed = try mutator.existingZone(zone, database: database).map { !$0.isDeleted } ?? false
            let id = try mutator.zone(for: zone, database: database)
            // Restoring, the journal's entry is kept even for a zone the store holds already.
            if restoresJournal && existed { mutator.journalEntry(.zoneSaved, zone: id, name: nil, type: nil) }
        case .zoneDeleted(let zone), .zonePurged(let zone):
            try releaseHeld(zone)
            let purge: Bool
            if case .zonePurged = item.change { purge = true } else { purge = false }
            try mutator.deleteZone(zone, database: database, purge: purge)
            if var referrers, let entry = try mutator.existingZone(zone, database: database) {
                for (target, sources) in referrers {
                    if target.zone == entry.id { referrers[target] = nil; continue }
                    let rest = sources.filter { $0.zone != entry.id }
                    referrers[target] = rest.isEmpty ? nil : rest
                }
                self.referrers = referrers
            }
        case .checkpoint(let checkpoint):
            var zone: Int64?
            if checkpoint.zoneID == nil, scopes[.database]?.knownTokens.insert(checkpoint.syncToken).inserted == false {
                anomaly(.tokenSeenTwice, item, zone: nil, record: nil, "a checkpoint with a token already applied to the database",
                        token: checkpoint.syncToken)
            }
            if let zoneID = checkpoint.zoneID {
                let key = ScopeKey(zoneID)
                if let entry = try mutator.existingZone(zoneID, database: database), entry.isDeleted {
                    anomaly(.eventForDeletedZone, item, zone: zoneID, record: nil, "a checkpoint for a deleted zone", token: checkpoint.syncToken)
                }
                zone = try mutator.checkpointZone(zoneID, database: database)
                if scopes[key]?.knownTokens.insert(checkpoint.syncToken).inserted == false {
                    anomaly(.tokenSeenTwice, item, zone: zoneID, record: nil, "a checkpoint with a token already applied to this zone",
                            token: checkpoint.syncToken)
                }
            }
            try mutator.checkpoint(zone: zone, database: database, token: checkpoint.syncToken, moreComing: checkpoint.moreComing)
            if commitsEachCheckpoint {
                try mutator.flush()
                try connection.execute("COMMIT")
                try connection.execute("BEGIN IMMEDIATE")
            }
        }
    }

    /// Before a zone change the database applies: the zone's changes held back come before it in
    /// the history, so they go first, and what follows in the zone is new too.
    private func releaseHeld(_ zone: ZoneID) throws {
        let key = ScopeKey(zone)
        guard let scope = scopes[key], scope.isUndecided else { return }
        scopes[key]?.held.removeAll()
        scopes[key]?.isUndecided = false
        for item in scope.held { try applyNow(item) }
    }

    private func delete(_ key: RecordKey, zoneID: ZoneID, type: String?, item: ReplayItem) throws {
        guard let body = try mutator.delete(key.name.string, zone: key.zone, recordType: type) else {
            // Restoring, a record created and deleted between two exports is known only by its deletion.
            if restoresJournal { return mutator.journalEntry(.deleted, zone: key.zone, name: key.name.string, type: type) }
            anomaly(.unknownRecordDeleted, item, zone: zoneID, record: key.name.string, "a delete of a record the store does not hold")
            return
        }
        guard cascade else { return }
        if referrers == nil { try buildCascadeIndex() } else { try unindex(body, of: key) }
        var work = [key]
        while let target = work.popLast() {
            guard let dependents = referrers?.removeValue(forKey: target) else { continue }
            for dependent in dependents.sorted(by: { $0.name < $1.name }) {
                guard let gone = try mutator.delete(dependent.name.string, zone: dependent.zone, recordType: nil) else { continue }
                try unindex(gone, of: dependent)
                work.append(dependent)
            }
        }
    }

    // MARK: Cascade index

    /// Indexes every stored record's DELETE_SELF references (the first time a cascade needs them).
    private func buildCascadeIndex() throws {
        referrers = [:]
        let statement = try connection.prepare("SELECT zone_id, record_name, body FROM records WHERE instr(body, 'DELETE_SELF') > 0")
        while try statement.step() {
            let key = RecordKey(zone: statement.int64(at: 0), name: statement.text(at: 1) ?? "")
            let record = try StoreCodec.record(fromBody: statement.textBytes(at: 2), path: mutator.path)
            try index(Self.cascadeTargets(of: record), of: key)
        }
    }

    private func index(_ targets: [RecordID], of key: RecordKey) throws {
        guard referrers != nil else { return }
        for target in targets {
            guard let zone = try targetZone(target, from: key) else { continue }
            let targetKey = RecordKey(zone: zone, name: target.recordName)
            if targetKey != key { referrers![targetKey, default: []].insert(key) }
        }
    }

    private func unindex(_ body: [UInt8], of key: RecordKey) throws {
        guard referrers != nil else { return }
        let record = try body.withUnsafeBytes { try StoreCodec.record(fromBody: $0, path: mutator.path) }
        for target in Self.cascadeTargets(of: record) {
            guard let zone = try targetZone(target, from: key) else { continue }
            let targetKey = RecordKey(zone: zone, name: target.recordName)
            referrers![targetKey]?.remove(key)
            if referrers![targetKey]?.isEmpty == true { referrers![targetKey] = nil }
        }
    }

    /// The zone row id of a cascade target: the referring record's zone when the reference names
    /// none, else the named zone if the store holds it.
    private func targetZone(_ target: RecordID, from key: RecordKey) throws -> Int64? {
        if target.zoneID.zoneName.isEmpty { return key.zone }
        return try mutator.existingZone(target.zoneID, database: database)?.id
    }

    /// The records a record's REFERENCE fields point at with DELETE_SELF (not its parent); a
    /// reference without a zone means the record's own zone (an empty zone name).
    static func cascadeTargets(of record: Record) -> [RecordID] {
        var targets: [RecordID] = []
        func visit(_ value: FieldValue) {
            switch value {
            case .reference(let reference) where reference.action == .deleteSelf:
                targets.append(RecordID(recordName: reference.recordName, zoneID: reference.zoneID ?? ZoneID(zoneName: "")))
            case .list(let items): items.forEach(visit)
            default: break
            }
        }
        for entry in record.fields ?? RecordFields() { visit(entry.field.value) }
        return targets
    }

    // MARK: Checks

    /// Reports parents and REFERENCE values of the records saved since `sequence` that point at
    /// no live record of their zone.
    func checkReferences(since sequence: Int64) throws {
        let parents = try connection.prepare("""
            SELECT z.zone_json, r.record_name, r.parent_name FROM records r JOIN zones z ON z.id = r.zone_id
            WHERE r.seq > ?1 AND r.parent_name IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM records p WHERE p.zone_id = r.zone_id AND p.record_name = r.parent_name)
            ORDER BY z.zone_name, r.record_name
            """)
        try parents.bind(sequence, at: 1)
        while try parents.step() {
            let zone = try StoreCodec.zoneID(fromJSON: parents.textBytes(at: 0))
            anomalies.add(.init(kind: .danglingParent, zoneID: zone, recordName: parents.text(at: 1),
                                detail: "the parent \"\(parents.text(at: 2) ?? "")\" is not in the store"))
        }
        // A reference names a record of its record's zone, or of the zone it names (in the same
        // database), as `ferry replay` checks them.
        func target(_ value: String) -> String {
            """
            NOT EXISTS (SELECT 1 FROM records p WHERE p.record_name = json_extract(\(value), '$.recordName') AND p.zone_id =
                CASE WHEN json_extract(\(value), '$.zoneID.zoneName') IS NULL THEN r.zone_id
                     ELSE (SELECT t.id FROM zones t WHERE t.database_id = z.database_id
                           AND t.zone_name = json_extract(\(value), '$.zoneID.zoneName')
                           AND t.owner_record_name = coalesce(json_extract(\(value), '$.zoneID.ownerRecordName'), '')) END)
            """
        }
        let references = try connection.prepare("""
            SELECT z.zone_json, r.record_name, json_extract(f.value, '$.value.recordName')
            FROM records r JOIN zones z ON z.id = r.zone_id, json_each(r.body, '$.fields') f
            WHERE r.seq > ?1 AND instr(r.body, '"REFERENCE"') > 0 AND json_extract(f.value, '$.type') = 'REFERENCE'
              AND \(target("json_extract(f.value, '$.value')"))
            UNION ALL
            SELECT z.zone_json, r.record_name, json_extract(e.value, '$.recordName')
            FROM records r JOIN zones z ON z.id = r.zone_id, json_each(r.body, '$.fields') f, json_each(f.value, '$.value') e
            WHERE r.seq > ?1 AND instr(r.body, '"REFERENCE_LIST"') > 0 AND json_extract(f.value, '$.type') = 'REFERENCE_LIST'
              AND \(target("e.value"))
            """)
        try references.bind(sequence, at: 1)
        while try references.step() {
            let zone = try StoreCodec.zoneID(fromJSON: references.textBytes(at: 0))
            anomalies.add(.init(kind: .danglingReference, zoneID: zone, recordName: references.text(at: 1),
                                detail: "the reference to \"\(references.text(at: 2) ?? "")\" names no record in the store"))
        }
    }

    private func anomaly(_ kind: ReplayAnomaly.Kind, _ item: ReplayItem, zone: ZoneID?, record: String?, _ detail: String, token: String? = nil) {
        anomalies.add(.init(kind: kind, zoneID: zone, recordName: record, syncToken: token, detail: detail, eventIndex: item.index))
    }
}
