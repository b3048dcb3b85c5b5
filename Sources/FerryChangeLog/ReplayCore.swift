import FerryRecords

/// A record as the replay core sees it: what the rules compare (change tag, modification time)
/// and the records it points at. A save brings one; the state gives one back for the record a
/// change replaces or deletes.
package protocol ReplayedRecord {
    /// The record's name.
    var replayName: String { get }
    /// Calls `body` with the bytes of the record's `recordChangeTag`, or `nil` without one.
    func withReplayChangeTag<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R
    /// The record's `modified.timestamp`.
    var replayModified: Int64? { get }
    /// Calls `body` with every record the record's `REFERENCE` fields point at with action
    /// `DELETE_SELF` (not its parent): the zone the reference names (`nil` for the record's own)
    /// and the target's name.
    func forEachDeleteSelfTarget(_ body: (ZoneID?, String) throws -> Void) rethrows
    /// Calls `body` with every record the record points at — its parent and its `REFERENCE`
    /// fields — with the zone the reference names (`nil` for the record's own).
    func forEachReferenceTarget(_ body: (ZoneID?, String) throws -> Void) rethrows
}

/// The state a replay applies changes to: the in-memory state of `ferry replay`
/// (`MemoryReplayBackend`) or a record store (FerryStore's). The ``ReplayCore`` decides what a
/// change does — and which anomaly it is — and asks the backend to do it; the backend keeps
/// records, zones and tokens, and journals or logs what it is told was applied.
///
/// Zones are handles the backend gives out (``zone(_:)``): the state's index of a zone, or a
/// key of the store's zone. Records are identified within a zone by the bytes of their names.
package protocol ReplayBackend: AnyObject {
    /// A zone of the state.
    associatedtype Zone: Hashable
    /// How a save names its zone (what the history's decoder gives).
    associatedtype ZoneReference
    /// A record a save brings.
    associatedtype Saved: ReplayedRecord
    /// A record the state held, replaced or deleted by a change.
    associatedtype Held: ReplayedRecord

    /// What the state is called in anomalies (`state`, `store`).
    var noun: String { get }

    /// The zone a save names.
    func zone(_ reference: ZoneReference) throws -> Zone
    /// The zone `zoneID`, known to the state from here on (as a zone the history named).
    func zone(_ zoneID: ZoneID) throws -> Zone
    /// The zone `zoneID` when the state knows it (a delete's, a reference's). The in-memory state
    /// makes it known, as `zone(_:)` does: its tokens list every zone the history named.
    func knownZone(_ zoneID: ZoneID) throws -> Zone?
    /// The zone's ID (as the history last gave it).
    func zoneID(of zone: Zone) -> ZoneID
    /// Whether the zone is deleted (a zone the state does not hold is not).
    func isDeleted(_ zone: Zone) throws -> Bool

    /// Keeps a saved record past the event that brought it (it is applied, or held in a batch).
    func keep(_ record: Saved) -> Saved
    /// Frees a kept record that will not be applied (a failed run).
    func drop(_ record: Saved)

    /// Makes a zone live: the history saved it (`zoneID` as it gave it), or saved a record in it
    /// after it was deleted (`zoneID` nil).
    func makeLive(_ zone: Zone, as zoneID: ZoneID?) throws
    /// Puts `record` into a live zone, replacing the record of its name; returns that record. The
    /// backend may leave the write to ``didSave(_:in:replacing:)``, which always follows.
    func replace(_ record: Saved, in zone: Zone) throws -> Held?
    /// After a save's checks: journals, logs, frees the replaced record.
    func didSave(_ record: Saved, in zone: Zone, replacing old: Held?) throws
    /// Removes the record `name` from a live zone; returns it, or `nil` when the zone does not hold it.
    func remove(named name: String, from zone: Zone, recordType: String?) throws -> Held?
    /// After a record was removed (by the history, `recordType` as it gave it, or by a cascade):
    /// journals, logs, frees it.
    func didRemove(_ old: Held, named name: String, from zone: Zone, recordType: String?) throws
    /// A delete of a record the zone does not hold (`zone` nil: nor the zone), after its anomaly.
    func didMissDelete(named name: String, zoneID: ZoneID, zone: Zone?, recordType: String?) throws
    /// Deletes a zone and its records (a purge also forgets its token).
    func deleteZone(_ zone: Zone, zoneID: ZoneID, purge: Bool) throws

    /// Whether the state saw `token` for the zone (`nil`: the database) before; notes it.
    func noteToken(_ token: String, zone: Zone?) throws -> Bool
    /// Takes a checkpoint's token: the zone's (`nil`: the database's) and the last checkpoint's.
    /// `applied` is false for the checkpoint `since` names, taken while skipping to it.
    func takeCheckpoint(_ checkpoint: ChangeEvent.Checkpoint, zone: Zone?, applied: Bool) throws

    /// Calls `body` with every record the state holds that points at another with `DELETE_SELF`
    /// (it may call it for others too), for the cascade's index.
    func forEachPossibleReferrer(_ body: (Zone, Held) throws -> Void) throws
}

/// A change as the core takes it: a saved record comes with its zone as the decoder named it.
package enum ReplayEvent<Saved, ZoneReference> {
    case zoneSaved(ZoneID)
    case zoneDeleted(ZoneID)
    case zonePurged(ZoneID)
    case recordSaved(Saved, zone: ZoneReference)
    case recordDeleted(recordName: String, zoneID: ZoneID, recordType: String?)
    case checkpoint(ChangeEvent.Checkpoint)
    /// An error entry (`serverErrorCode`) of a change response, for a zone or a record.
    case serverError(zoneID: ZoneID?, recordName: String?, code: String, reason: String?)
}

extension ReplayEvent: Sendable where Saved: Sendable, ZoneReference: Sendable {}

/// The rules of replay, written once: what each change of a history does to a state and which
/// anomalies it raises, over a ``ReplayBackend`` (the in-memory state of `ferry replay`, or a
/// store). See `Docs/ReplaySemantics.md`.
///
/// - A save replaces the record of its name (a save into a deleted zone re-creates the zone:
///   `eventForDeletedZone`; a re-save with the change tag held: `unchangedChangeTag`; a
///   modification time earlier than the one held: `modificationTimeWentBackwards`).
/// - A delete removes the record (`unknownRecordDeleted` when the state does not hold it; in a
///   deleted zone, `eventForDeletedZone` and nothing happens); with ``Options/cascade``, the
///   records pointing at it with `DELETE_SELF` go too, recursively.
/// - Deleting or purging a zone removes its records; a purge forgets its token.
/// - A checkpoint takes its token (`tokenSeenTwice` when the zone or database saw it before,
///   `eventForDeletedZone` for a deleted zone); the one ``Options/until`` names ends the replay.
/// - Before the checkpoint ``Options/since`` names, changes are skipped.
/// - With ``Options/ordersBatches``, the saves of a batch (consecutive saves) are applied parents
///   and referenced records first (`referenceCycle` for records on a cycle).
///
/// One thread at a time.
package final class ReplayCore<Backend: ReplayBackend> {
    /// Which rules apply.
    package struct Options {
        package var until: String?
        package var since: String?
        package var cascade: Bool
        package var ordersBatches: Bool
        package var maximumListedAnomalies: Int

        package init(until: String? = nil, since: String? = nil, cascade: Bool = false, ordersBatches: Bool = false,
                     maximumListedAnomalies: Int = 10_000) {
            self.until = until
            self.since = since
            self.cascade = cascade
            self.ordersBatches = ordersBatches
            self.maximumListedAnomalies = maximumListedAnomalies
        }
    }

    private enum Phase { case skipping, applying, done }

    /// A record of the state, by zone and name (the cascade's index).
    private struct RecordKey: Hashable {
        var zone: Backend.Zone
        var name: ExactName
    }

    /// A record a reference points at: zone and name, compared by bytes (batch ordering).
    private struct ReferenceTarget: Hashable {
        var zone: ZoneKey
        var name: ExactName
    }

    package let backend: Backend
    package let options: Options
    /// The anomalies so far.
    package var anomalies: AnomalyReport
    /// Changes applied (cascaded deletes not counted; checkpoints and error entries counted).
    @exclusivity(unchecked) package private(set) var appliedCount = 0
    @exclusivity(unchecked) private var phase: Phase
    private var untilSeenBeforeSince = false
    /// The position in the history of the change being applied (anomalies name it).
    @exclusivity(unchecked) package private(set) var position = 0
    /// With cascade, once a delete needs it: the live records pointing at each record with DELETE_SELF.
    private var referrers: [RecordKey: Set<RecordKey>]?
    /// With ``Options/ordersBatches``: the saves of the current batch, kept, and their positions.
    private var batch: [(record: Backend.Saved, zone: Backend.Zone, position: Int)] = []

    package init(backend: Backend, options: Options) {
        self.backend = backend
        self.options = options
        anomalies = AnomalyReport(limit: options.maximumListedAnomalies)
        phase = options.since == nil ? .applying : .skipping
    }

    deinit {
        for save in batch { backend.drop(save.record) }
    }

    /// Whether the `until` checkpoint was reached (later changes are ignored).
    package var reachedUntil: Bool { phase == .done }

    /// Whether the `since` checkpoint was reached (always true without `since`).
    package var reachedSince: Bool { phase != .skipping }

    // MARK: Taking changes

    /// Takes the change at `position` (1-based) of the history.
    @inline(__always)
    package func take(_ event: ReplayEvent<Backend.Saved, Backend.ZoneReference>, position: Int) throws {
        switch phase {
        case .done:
            return
        case .skipping:
            guard case .checkpoint(let checkpoint) = event else { return }
            if checkpoint.syncToken == options.until { untilSeenBeforeSince = true }
            guard checkpoint.syncToken == options.since else { return }
            // The base is the state at this checkpoint: take its token even if the base had none.
            try backend.takeCheckpoint(checkpoint, zone: try checkpoint.zoneID.map { try backend.zone($0) }, applied: false)
            phase = options.until == options.since ? .done : .applying
            return
        case .applying:
            break
        }
        if options.ordersBatches {
            if case .recordSaved(let record, let reference) = event {
                batch.append((backend.keep(record), try backend.zone(reference), position))
                return
            }
            try flushBatch()
        }
        self.position = position
        try apply(event)
    }

    /// Ends the history: applies a pending batch, and fails when `since` or `until` named a
    /// token the history did not reach.
    ///
    /// - Throws: ``ChangeLogError`` (``ChangeLogError/Code/tokenNotFound``).
    package func finish() throws {
        try flushBatch()
        if let since = options.since, phase == .skipping {
            throw ChangeLogError(.tokenNotFound, "expected a checkpoint with token \"\(since)\" (--since) in the history, found none")
        }
        if let until = options.until, phase != .done {
            let found = untilSeenBeforeSince ? "found it only before the --since checkpoint" : "found none"
            throw ChangeLogError(.tokenNotFound, "expected a checkpoint with token \"\(until)\" (--until) in the history, \(found)")
        }
    }

    /// Replaces each save held in a batch (a state copied away takes its records with it).
    package func rekeepBatch(_ transform: (Backend.Saved) -> Backend.Saved) {
        batch = batch.map { (transform($0.record), $0.zone, $0.position) }
    }

    // MARK: The rules

    private func apply(_ event: ReplayEvent<Backend.Saved, Backend.ZoneReference>) throws {
        appliedCount += 1
        switch event {
        case .recordSaved(let record, let reference):
            try save(backend.keep(record), zone: try backend.zone(reference))
        case .recordDeleted(let name, let zoneID, let recordType):
            try delete(name, zoneID: zoneID, recordType: recordType)
        case .zoneSaved(let zoneID):
            try backend.makeLive(try backend.zone(zoneID), as: zoneID)
        case .zoneDeleted(let zoneID):
            try deleteZone(zoneID, purge: false)
        case .zonePurged(let zoneID):
            try deleteZone(zoneID, purge: true)
        case .checkpoint(let checkpoint):
            try self.checkpoint(checkpoint)
        case .serverError(let zoneID, let name, let code, let reason):
            anomalies.add(.init(kind: .serverError, zoneID: zoneID, recordName: name,
                                detail: "an error entry: \(code)\(reason.map { ": " + $0 } ?? "")", eventIndex: position))
        }
    }

    /// Saves a kept record.
    private func save(_ record: Backend.Saved, zone: Backend.Zone) throws {
        if try backend.isDeleted(zone) {
            anomaly(.eventForDeletedZone, zone: zone, record: record.replayName,
                    "a save of a record in a deleted zone; the zone is taken as re-created")
            try backend.makeLive(zone, as: nil)
        }
        let old = try backend.replace(record, in: zone)
        if let old {
            let sameTag = record.withReplayChangeTag { new in
                old.withReplayChangeTag { held in
                    guard let new, let held, held.elementsEqual(new) else { return false }
                    return true
                }
            }
            if sameTag {
                anomaly(.unchangedChangeTag, zone: zone, record: record.replayName,
                        "a re-save with the change tag \"\(record.withReplayChangeTag { String(decoding: $0!, as: UTF8.self) })\" the "
                            + "\(backend.noun) already holds")
            }
            if let before = old.replayModified, let now = record.replayModified, now < before {
                anomaly(.modificationTimeWentBackwards, zone: zone, record: record.replayName,
                        "modified.timestamp went from \(before) back to \(now)")
            }
            if referrers != nil { unindex(old, of: RecordKey(zone: zone, name: ExactName(old.replayName))) }
        }
        try backend.didSave(record, in: zone, replacing: old)
        if referrers != nil { index(record, of: RecordKey(zone: zone, name: ExactName(record.replayName))) }
    }

    private func delete(_ name: String, zoneID: ZoneID, recordType: String?) throws {
        guard let zone = try backend.knownZone(zoneID) else {
            anomaly(.unknownRecordDeleted, zoneID: zoneID, record: name, "a delete of a record the \(backend.noun) does not hold")
            return try backend.didMissDelete(named: name, zoneID: zoneID, zone: nil, recordType: recordType)
        }
        if try backend.isDeleted(zone) {
            anomaly(.eventForDeletedZone, zone: zone, record: name, "a delete of a record in a deleted zone; ignored")
            return
        }
        guard let old = try backend.remove(named: name, from: zone, recordType: recordType) else {
            anomaly(.unknownRecordDeleted, zone: zone, record: name, "a delete of a record the \(backend.noun) does not hold")
            // Still a change of the history: a log of it deletes the record from a state that
            // holds it (the next page of a series, replayed after a base).
            return try backend.didMissDelete(named: name, zoneID: backend.zoneID(of: zone), zone: zone, recordType: recordType)
        }
        let key = RecordKey(zone: zone, name: ExactName(name))
        if options.cascade && referrers == nil { try buildCascadeIndex() } else if referrers != nil { unindex(old, of: key) }
        try backend.didRemove(old, named: name, from: zone, recordType: recordType)
        guard options.cascade else { return }
        var work = [key]
        while let target = work.popLast() {
            guard let dependents = referrers?.removeValue(forKey: target) else { continue }
            for dependent in dependents.sorted(by: { $0.name < $1.name }) {
                guard let gone = try backend.remove(named: dependent.name.string, from: dependent.zone, recordType: nil) else { continue }
                unindex(gone, of: dependent)
                try backend.didRemove(gone, named: dependent.name.string, from: dependent.zone, recordType: nil)
                work.append(dependent)
            }
        }
    }

    private func deleteZone(_ zoneID: ZoneID, purge: Bool) throws {
        let zone = try backend.zone(zoneID)
        try backend.deleteZone(zone, zoneID: zoneID, purge: purge)
        guard let all = referrers else { return }
        var kept: [RecordKey: Set<RecordKey>] = [:]
        for (target, dependents) in all where target.zone != zone {
            let rest = dependents.filter { $0.zone != zone }
            if !rest.isEmpty { kept[target] = rest }
        }
        referrers = kept
    }

    private func checkpoint(_ checkpoint: ChangeEvent.Checkpoint) throws {
        let zone = try checkpoint.zoneID.map { try backend.zone($0) }
        if try backend.noteToken(checkpoint.syncToken, zone: zone) {
            anomalies.add(.init(kind: .tokenSeenTwice, zoneID: checkpoint.zoneID, syncToken: checkpoint.syncToken,
                                detail: "a checkpoint with a token already seen for this \(zone == nil ? "database" : "zone")",
                                eventIndex: position))
        }
        if let zone, try backend.isDeleted(zone) {
            anomalies.add(.init(kind: .eventForDeletedZone, zoneID: checkpoint.zoneID, syncToken: checkpoint.syncToken,
                                detail: "a checkpoint for a deleted zone", eventIndex: position))
        }
        try backend.takeCheckpoint(checkpoint, zone: zone, applied: true)
        if checkpoint.syncToken == options.until { phase = .done }
    }

    // MARK: Cascade index

    private func buildCascadeIndex() throws {
        referrers = [:]
        try backend.forEachPossibleReferrer { zone, record in
            index(record, of: RecordKey(zone: zone, name: ExactName(record.replayName)))
        }
    }

    private func cascadeTargets(of record: some ReplayedRecord, from key: RecordKey) -> [RecordKey] {
        var targets: [RecordKey] = []
        record.forEachDeleteSelfTarget { zoneID, name in
            guard let zone = zoneID.map({ (try? backend.knownZone($0)) ?? nil }) ?? key.zone else { return }
            let target = RecordKey(zone: zone, name: ExactName(name))
            if target != key { targets.append(target) }
        }
        return targets
    }

    private func index(_ record: some ReplayedRecord, of key: RecordKey) {
        for target in cascadeTargets(of: record, from: key) { referrers?[target, default: []].insert(key) }
    }

    private func unindex(_ record: some ReplayedRecord, of key: RecordKey) {
        for target in cascadeTargets(of: record, from: key) {
            referrers?[target]?.remove(key)
            if referrers?[target]?.isEmpty == true { referrers?[target] = nil }
        }
    }

    // MARK: Batches

    /// Applies the saves of a batch, parents and referenced records first.
    private func flushBatch() throws {
        guard !batch.isEmpty else { return }
        let saves = batch
        batch.removeAll()
        let zoneKeys = saves.map { ZoneKey(backend.zoneID(of: $0.zone)) }
        let keys = saves.indices.map { ReferenceTarget(zone: zoneKeys[$0], name: ExactName(saves[$0].record.replayName)) }
        let targets = saves.indices.map { index in
            var names: [ReferenceTarget] = []
            saves[index].record.forEachReferenceTarget { zoneID, name in
                names.append(ReferenceTarget(zone: zoneID.map(ZoneKey.init) ?? zoneKeys[index], name: ExactName(name)))
            }
            return names
        }
        let (order, cyclic) = DependencyOrder.order(keys: keys, targets: targets)
        for index in cyclic {
            anomalies.add(.init(kind: .referenceCycle, zoneID: backend.zoneID(of: saves[index].zone), recordName: saves[index].record.replayName,
                                detail: "the record is on a reference cycle within its batch; the cycle is applied in history order",
                                eventIndex: saves[index].position))
        }
        var next = 0
        defer { for k in next..<order.count { backend.drop(saves[order[k]].record) } } // not applied: a failure
        while next < order.count {
            let save = saves[order[next]]
            next += 1
            position = save.position
            appliedCount += 1
            try self.save(save.record, zone: save.zone)
        }
    }

    // MARK: Anomalies

    private func anomaly(_ kind: ReplayAnomaly.Kind, zone: Backend.Zone, record name: @autoclosure () -> String,
                         _ detail: @autoclosure () -> String) {
        anomaly(kind, zoneID: backend.zoneID(of: zone), record: name(), detail())
    }

    private func anomaly(_ kind: ReplayAnomaly.Kind, zoneID: @autoclosure () -> ZoneID, record name: @autoclosure () -> String,
                         _ detail: @autoclosure () -> String) {
        guard !anomalies.isFull else {
            anomalies.count(kind)
            return
        }
        anomalies.add(.init(kind: kind, zoneID: zoneID(), recordName: name(), detail: detail(), eventIndex: position))
    }
}
