import FerryChangeLog
import FerryRecords

/// A change read from a history, made ready on the reading thread: a saved record encoded as a
/// row, with the records it points at with DELETE_SELF (with cascade).
typealias ReplayChange = ReplayEvent<StoreSave, ZoneID>

extension ReplayEvent where Saved == StoreSave, ZoneReference == ZoneID {
    /// Makes a change ready for the store: a saved record encoded as a row (on the reading thread).
    init(_ change: ReplayEvent<Record, ZoneID>, encoder: StoreRowEncoder, cascade: Bool, defaultZone: ZoneID?) {
        switch change {
        case .recordSaved(let record, let zone):
            let targets = cascade ? StoreReplayBackend.references(of: record, deletingSelfOnly: true) : []
            var row = StoreRow(record: record, encoder: encoder)
            if row.zoneID == nil, let defaultZone { row.zoneID = defaultZone }
            self = .recordSaved(StoreSave(row: row, cascadeTargets: targets), zone: row.zoneID ?? zone)
        case .recordDeleted(let name, let zoneID, let type): self = .recordDeleted(recordName: name, zoneID: zoneID, recordType: type)
        case .zoneSaved(let zone): self = .zoneSaved(zone)
        case .zoneDeleted(let zone): self = .zoneDeleted(zone)
        case .zonePurged(let zone): self = .zonePurged(zone)
        case .checkpoint(let checkpoint): self = .checkpoint(checkpoint)
        case .serverError(let zoneID, let name, let code, let reason):
            self = .serverError(zoneID: zoneID, recordName: name, code: code, reason: reason)
        }
    }

    /// Makes an event given as a value ready for the store.
    init(_ event: ChangeEvent, encoder: StoreRowEncoder, cascade: Bool, defaultZone: ZoneID?) {
        let change: ReplayEvent<Record, ZoneID> = switch event {
        case .recordSaved(let record): .recordSaved(record, zone: record.zoneID ?? defaultZone ?? .default)
        case .recordDeleted(let id, let type): .recordDeleted(recordName: id.recordName, zoneID: id.zoneID, recordType: type)
        case .zoneSaved(let zone): .zoneSaved(zone)
        case .zoneDeleted(let zone): .zoneDeleted(zone)
        case .zonePurged(let zone): .zonePurged(zone)
        case .checkpoint(let checkpoint): .checkpoint(checkpoint)
        }
        self.init(change, encoder: encoder, cascade: cascade, defaultZone: defaultZone)
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
/// left it, through the one ``ReplayCore`` (the rules `ferry replay` applies in memory) over the
/// store (``StoreReplayBackend``).
///
/// What this adds is where each zone resumes: a zone the store holds tokens for starts
/// *undecided* — its changes are held back until its next checkpoint; a token the store applied
/// before means they were applied already (dropped), a token it does not know means they are new
/// (applied), and the zone then applies changes as they come. Past the zone's latest stored token
/// its changes are still held until its next checkpoint, or until a database change to the zone
/// decides them: dropped with it as applied already, or applied before it. So a history replayed
/// again changes nothing, and a history that continues the last one applies all of it.
final class ReplayApplier {
    /// Where a zone's (or, for the `nil` key, the database's) replay stands.
    struct Scope {
        /// Whether the zone's changes are held back until a checkpoint decides.
        var isUndecided: Bool
        var held: [ReplayItem] = []
    }

    let mutator: StoreMutator
    let connection: SQLiteConnection
    let database: Int64
    /// Restoring a store's journal: each change is followed by a checkpoint carrying the store's
    /// token of that change, whose number the change takes.
    let restoresJournal: Bool
    private let backend: StoreReplayBackend
    private let core: ReplayCore<StoreReplayBackend>
    var anomalies: AnomalyReport { core.anomalies }
    var applied: Int { core.appliedCount }
    private(set) var skipped = 0
    /// The store ID found in restored tokens.
    private(set) var restoredStoreID: String?
    /// Zones by their key; the database by `nil`.
    private var scopes: [StoreZoneKey?: Scope] = [:]
    private var pendingRestore: ReplayItem?
    /// The scope of the change applied last, when it was applying.
    private var lastApplying: StoreZoneKey??

    init(mutator: StoreMutator, database: Int64, cascade: Bool, commitsEachCheckpoint: Bool, restoresJournal: Bool,
         maximumListedAnomalies: Int) {
        self.mutator = mutator
        connection = mutator.connection
        self.database = database
        self.restoresJournal = restoresJournal
        backend = StoreReplayBackend(mutator: mutator, database: database, restoresJournal: restoresJournal,
                                     commitsEachCheckpoint: commitsEachCheckpoint)
        core = ReplayCore(backend: backend, options: .init(cascade: cascade, maximumListedAnomalies: maximumListedAnomalies))
    }

    // MARK: Scopes

    /// The zone a change is about (`nil`: the database, whose checkpoints cover the zones'
    /// creations, deletions and purges).
    private func scopeKey(of change: ReplayChange) -> StoreZoneKey? {
        switch change {
        case .recordSaved(_, let zone): StoreZoneKey(database: database, zone: zone)
        case .recordDeleted(_, let zone, _): StoreZoneKey(database: database, zone: zone)
        case .zoneSaved, .zoneDeleted, .zonePurged, .serverError: nil
        case .checkpoint(let checkpoint): checkpoint.zoneID.map { StoreZoneKey(database: database, zone: $0) }
        }
    }

    /// Loads the scope of `key` into ``scopes`` (once). Callers change it there, in place: a copy
    /// alive while its `held` array grows would copy the array at every change held back.
    private func loadScope(_ key: StoreZoneKey?) throws {
        if scopes[key] != nil { return }
        let applied = try backend.knownTokens(of: key)
        scopes[key] = Scope(isUndecided: !restoresJournal && !applied.isEmpty)
    }

    // MARK: Applying

    /// Takes one change of the history.
    func take(_ item: ReplayItem) throws {
        if restoresJournal { return try restore(item) }
        let key = scopeKey(of: item.change)
        // The zone of the change before is applying: so is this one (zones never go back to holding).
        if lastApplying == .some(key) { return try applyNow(item) }
        try loadScope(key)
        guard scopes[key]!.isUndecided else {
            lastApplying = .some(key)
            return try applyNow(item)
        }
        guard case .checkpoint(let checkpoint) = item.change else {
            scopes[key]!.held.append(item)
            return
        }
        var held: [ReplayItem] = []
        swap(&held, &scopes[key]!.held)
        if try backend.knownTokens(of: key).contains(checkpoint.syncToken) {
            // Applied by an earlier run: so was everything held back before it. Past the zone's
            // latest token its changes are still held, until its next checkpoint (new, then) or a
            // zone deletion the database's checkpoints show was applied already (the earlier run
            // then applied them too, with no zone checkpoint between), or the end of the history.
            skipped += held.count + 1
            if key == nil { for item in held { dropZoneChangesHeld(before: item) } }
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
        let key = StoreZoneKey(database: database, zone: zone)
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
        try core.finish()
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

    /// Hands a change to the rules; a zone change the database applies first lets the changes
    /// its zone held back go before it.
    private func applyNow(_ item: ReplayItem) throws {
        switch item.change {
        case .zoneSaved(let zone), .zoneDeleted(let zone), .zonePurged(let zone): try releaseHeld(zone)
        default: break
        }
        try core.take(item.change, position: item.index)
    }

    /// Before a zone change the database applies: the zone's changes held back come before it in
    /// the history, so they go first, and what follows in the zone is new too.
    private func releaseHeld(_ zone: ZoneID) throws {
        let key = StoreZoneKey(database: database, zone: zone)
        guard let scope = scopes[key], scope.isUndecided else { return }
        scopes[key]?.held.removeAll()
        scopes[key]?.isUndecided = false
        for item in scope.held { try applyNow(item) }
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
            core.anomalies.add(.init(kind: .danglingParent, zoneID: zone, recordName: parents.text(at: 1),
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
            core.anomalies.add(.init(kind: .danglingReference, zoneID: zone, recordName: references.text(at: 1),
                                detail: "the reference to \"\(references.text(at: 2) ?? "")\" names no record in the store"))
        }
    }

}
