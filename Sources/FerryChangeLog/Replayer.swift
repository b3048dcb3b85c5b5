import FerryIO
import FerryRecords

/// Rebuilds the state of every zone from a history of changes.
///
/// A save replaces the record, a delete removes it, deleting or purging a zone removes its records;
/// applying the same history twice gives the same state. See `Docs/ReplaySemantics.md`.
///
/// ```swift
/// let replayer = Replayer(configuration: .init(until: "token-42"))
/// try replayer.apply(historyFiles: ["history/"])
/// try replayer.finish()
/// try replayer.state.write(toPath: "state.ndjson")   // and state.ndjson.tokens.json
/// ```
public final class Replayer {
    /// What to replay and which checks to run.
    public struct Configuration: Sendable {
        /// Stop right after the first checkpoint carrying this token (point-in-time restore).
        public var until: String?
        /// Apply only what follows the first checkpoint carrying this token (on top of a base state).
        public var since: String?
        /// Read through the history for its tokens only: record bodies are skipped structurally.
        public var tokensOnly: Bool
        /// Apply CloudKit's DELETE_SELF rule: deleting a record deletes the records whose
        /// `REFERENCE` fields point at it with action `DELETE_SELF`, recursively.
        public var cascade: Bool
        /// Within each batch (the events between two checkpoints), apply saved parents and
        /// referenced records before the records that point at them; cycles are reported.
        /// Only the order seen by ``Replayer/onApply`` changes; the final state is the same.
        public var ordersBatches: Bool
        /// At ``Replayer/finish()``, report parents and references that point at no live record.
        public var checksReferences: Bool
        /// The most anomalies listed (all are counted).
        public var maximumListedAnomalies: Int
        /// How histories are read.
        public var reader: ChangeLogReader.Configuration

        /// Creates a configuration.
        public init(until: String? = nil, since: String? = nil, tokensOnly: Bool = false, cascade: Bool = false,
                    ordersBatches: Bool = false, checksReferences: Bool = true, maximumListedAnomalies: Int = 10_000,
                    reader: ChangeLogReader.Configuration = .init()) {
            self.until = until
            self.since = since
            self.tokensOnly = tokensOnly
            self.cascade = cascade
            self.ordersBatches = ordersBatches
            self.checksReferences = checksReferences
            self.maximumListedAnomalies = maximumListedAnomalies
            self.reader = reader
        }
    }

    private enum Phase { case skipping, applying, done }

    private struct ScopedToken: Hashable {
        var zone: Int
        var token: String
    }

    private struct CascadeKey: Hashable {
        var zone: Int
        var name: String
    }

    /// The configuration.
    public let configuration: Configuration
    /// The state so far.
    public private(set) var state: ReplayState
    /// The anomalies so far.
    public private(set) var anomalies: AnomalyReport
    /// Events read from histories (including those skipped before `since`).
    public private(set) var eventCount = 0
    /// Events applied to the state.
    public private(set) var appliedCount = 0
    /// Called with each change as it is applied, in applied order (dependency order within a batch
    /// when ``Configuration/ordersBatches`` is set; cascaded deletes included).
    public var onApply: ((ChangeEvent) throws -> Void)?

    private var phase: Phase
    private var seenTokens: Set<ScopedToken> = []
    private var referrers: [CascadeKey: [String]] = [:]
    private var batch: [RawEvent] = []
    private var scanner = RecordScanner()
    private var lastZone: ZoneID?
    private var lastZoneIndex = -1

    /// Creates a replayer starting from `base` (an empty state by default).
    public init(configuration: Configuration = .init(), base: ReplayState = ReplayState()) {
        self.configuration = configuration
        state = base
        anomalies = AnomalyReport(limit: configuration.maximumListedAnomalies)
        phase = configuration.since == nil ? .applying : .skipping
    }

    /// The tokens of the state so far.
    public var tokens: ReplayTokens { state.tokens }

    /// Whether the `until` checkpoint was reached (later input is ignored).
    public var reachedUntil: Bool { phase == .done }

    /// Whether the history had reached the `since` checkpoint (always true without `since`).
    public var reachedSince: Bool { phase != .skipping }

    // MARK: Input

    /// Applies one history source: Ferry change-log lines or saved CloudKit change responses.
    public func apply(_ source: ByteSource) throws {
        guard phase != .done else { return }
        let reader = ChangeLogReader(source: source, configuration: configuration.reader)
        reader.decoder.tokensOnly = configuration.tokensOnly
        reader.decoder.collectReferences = configuration.cascade || configuration.ordersBatches
        while phase != .done, let event = try reader.nextRaw() {
            try handle(event)
        }
    }

    /// Applies history sources in order.
    public func apply(history sources: [ByteSource]) throws {
        for source in sources { try apply(source) }
    }

    /// Applies history files in order; a folder stands for its files in name order.
    public func apply(historyFiles paths: [String]) throws {
        for path in try Self.expandHistory(paths) {
            guard phase != .done else { return }
            try apply(try InputFile(path: path))
        }
    }

    /// The files of a history: files as given, folders replaced by their files in name order.
    public static func expandHistory(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            if FileSystem.isDirectory(path) { files += try FileSystem.files(in: path) } else { files.append(path) }
        }
        return files
    }

    /// Applies one event given as a value.
    public func apply(_ event: ChangeEvent) throws {
        guard phase != .done else { return }
        switch event {
        case .zoneSaved(let zone): try handle(.zoneSaved(zone))
        case .zoneDeleted(let zone): try handle(.zoneDeleted(zone))
        case .zonePurged(let zone): try handle(.zonePurged(zone))
        case .recordDeleted(let id, let type): try handle(.recordDeleted(recordName: id.recordName, zoneID: id.zoneID, recordType: type))
        case .checkpoint(let checkpoint): try handle(.checkpoint(checkpoint))
        case .recordSaved(let record):
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(record, into: &out)
            let summary = try out.array.withUnsafeBytes { bytes in
                var cursor = JSONCursor(bytes)
                return try scanner.scan(&cursor, collectReferences: true)
            }
            try handle(.recordSaved(summary))
        }
    }

    /// Ends the replay: applies a pending batch, checks references in the final state, and fails
    /// when `since` or `until` named a token the history never reached.
    public func finish() throws {
        try flushBatch()
        if let since = configuration.since, phase == .skipping {
            throw ChangeLogError(.tokenNotFound, "expected a checkpoint with token \"\(since)\" (--since), found none in the history")
        }
        if let until = configuration.until, phase != .done {
            throw ChangeLogError(.tokenNotFound, "expected a checkpoint with token \"\(until)\" (--until), found none in the history")
        }
        if configuration.checksReferences && !configuration.tokensOnly { try checkReferences() }
    }

    // MARK: Applying

    private func handle(_ event: RawEvent) throws {
        eventCount += 1
        if phase == .skipping {
            if case .checkpoint(let checkpoint) = event, checkpoint.syncToken == configuration.since { phase = .applying }
            return
        }
        if configuration.ordersBatches {
            if case .recordSaved = event {
                batch.append(event)
                return
            }
            try flushBatch()
        }
        try applyNow(event)
    }

    private func zoneIndex(_ zone: ZoneID) -> Int {
        if lastZoneIndex >= 0, let last = lastZone, last == zone { return lastZoneIndex }
        lastZoneIndex = state.index(of: zone)
        lastZone = zone
        return lastZoneIndex
    }

    private func applyNow(_ event: RawEvent) throws {
        appliedCount += 1
        switch event {
        case .recordSaved(let summary):
            let zone = zoneIndex(summary.zoneID ?? .default)
            if state.zoneList[zone].isDeleted {
                anomalies.add(.init(kind: .eventForDeletedZone, zoneID: state.zoneList[zone].zoneID, recordName: summary.recordName,
                                    detail: "a save of a record in a deleted zone; the zone is taken as re-created", eventIndex: eventCount))
                state.zoneList[zone].isDeleted = false
            }
            let stored = StoredRecord(bytes: summary.bytes, changeTag: summary.changeTag, modifiedTimestamp: summary.modifiedTimestamp)
            if let old = state.zoneList[zone].records.updateValue(stored, forKey: summary.recordName) {
                if let tag = old.changeTag, tag == summary.changeTag {
                    anomalies.add(.init(kind: .unchangedChangeTag, zoneID: state.zoneList[zone].zoneID, recordName: summary.recordName,
                                        detail: "a re-save with the change tag \"\(tag)\" already held", eventIndex: eventCount))
                }
                if let before = old.modifiedTimestamp, let now = summary.modifiedTimestamp, now < before {
                    anomalies.add(.init(kind: .modificationTimeWentBackwards, zoneID: state.zoneList[zone].zoneID, recordName: summary.recordName,
                                        detail: "modified.timestamp went from \(before) back to \(now)", eventIndex: eventCount))
                }
            }
            if configuration.cascade {
                for reference in summary.references where reference.deletesSelf && !reference.isParent {
                    let target = reference.zoneID.map(zoneIndex) ?? zone
                    referrers[CascadeKey(zone: target, name: reference.recordName), default: []].append(summary.recordName)
                }
            }
            if let onApply {
                try onApply(.recordSaved(try ReplayState.decode(summary.bytes)))
            }
        case .recordDeleted(let name, let zoneID, let type):
            let zone = zoneIndex(zoneID)
            if state.zoneList[zone].isDeleted {
                anomalies.add(.init(kind: .eventForDeletedZone, zoneID: zoneID, recordName: name,
                                    detail: "a delete of a record in a deleted zone", eventIndex: eventCount))
                return
            }
            if state.zoneList[zone].records.removeValue(forKey: name) == nil {
                anomalies.add(.init(kind: .unknownRecordDeleted, zoneID: zoneID, recordName: name,
                                    detail: "a delete of a record the state does not hold", eventIndex: eventCount))
            } else {
                try onApply?(.recordDeleted(RecordID(recordName: name, zoneID: state.zoneList[zone].zoneID), recordType: type))
            }
            if configuration.cascade { try cascadeDelete(zone: zone, name: name) }
        case .zoneSaved(let zoneID):
            let zone = zoneIndex(zoneID)
            state.zoneList[zone].isDeleted = false
            if zoneID.zoneType != nil { state.zoneList[zone].zoneID = zoneID }
            try onApply?(.zoneSaved(zoneID))
        case .zoneDeleted(let zoneID), .zonePurged(let zoneID):
            let zone = zoneIndex(zoneID)
            state.zoneList[zone].records = [:]
            state.zoneList[zone].isDeleted = true
            if case .zonePurged = event {
                state.zoneList[zone].syncToken = nil
                try onApply?(.zonePurged(zoneID))
            } else {
                try onApply?(.zoneDeleted(zoneID))
            }
        case .checkpoint(let checkpoint):
            let zone = checkpoint.zoneID.map(zoneIndex) ?? -1
            if !seenTokens.insert(ScopedToken(zone: zone, token: checkpoint.syncToken)).inserted {
                anomalies.add(.init(kind: .tokenSeenTwice, zoneID: checkpoint.zoneID, syncToken: checkpoint.syncToken,
                                    detail: "a checkpoint with a token already seen for this \(zone < 0 ? "database" : "zone")", eventIndex: eventCount))
            }
            if zone >= 0 {
                state.zoneList[zone].syncToken = checkpoint.syncToken
                state.zoneList[zone].moreComing = checkpoint.moreComing
            } else {
                state.database = checkpoint
            }
            state.lastCheckpoint = checkpoint
            try onApply?(.checkpoint(checkpoint))
            if checkpoint.syncToken == configuration.until { phase = .done }
        case .zoneError(let zoneID, let code, let reason):
            anomalies.add(.init(kind: .zoneError, zoneID: zoneID, detail: "\(code)\(reason.map { ": " + $0 } ?? "")", eventIndex: eventCount))
        }
    }

    /// Deletes, recursively, the records that point at (`zone`, `name`) with DELETE_SELF.
    private func cascadeDelete(zone: Int, name: String) throws {
        var work = [CascadeKey(zone: zone, name: name)]
        while let target = work.popLast() {
            guard let names = referrers.removeValue(forKey: target) else { continue }
            for referrer in names {
                // The index may be stale: check the referrer still points at the target.
                guard let stored = state.zoneList[target.zone].records[referrer],
                      try stillDeletesSelf(stored.bytes, target: target) else { continue }
                state.zoneList[target.zone].records.removeValue(forKey: referrer)
                try onApply?(.recordDeleted(RecordID(recordName: referrer, zoneID: state.zoneList[target.zone].zoneID), recordType: nil))
                work.append(CascadeKey(zone: target.zone, name: referrer))
            }
        }
    }

    private func stillDeletesSelf(_ bytes: [UInt8], target: CascadeKey) throws -> Bool {
        let summary = try bytes.withUnsafeBytes { buffer in
            var cursor = JSONCursor(buffer)
            return try scanner.scan(&cursor, collectReferences: true)
        }
        return summary.references.contains { reference in
            reference.deletesSelf && !reference.isParent && reference.recordName == target.name
                && (reference.zoneID.map { state.zoneIndex[ZoneKey($0)] == target.zone } ?? true)
        }
    }

    /// Applies the buffered saves of a batch, parents and referenced records first.
    private func flushBatch() throws {
        guard !batch.isEmpty else { return }
        let events = batch
        batch.removeAll()
        let summaries = events.map { event -> RecordSummary in
            if case .recordSaved(let summary) = event { return summary }
            preconditionFailure("only saves are batched")
        }
        let (order, cyclic) = DependencyOrder.order(summaries)
        for index in cyclic {
            anomalies.add(.init(kind: .referenceCycle, zoneID: summaries[index].zoneID, recordName: summaries[index].recordName,
                                detail: "the record is part of a reference cycle within its batch; applied in history order",
                                eventIndex: eventCount))
        }
        for index in order { try applyNow(events[index]) }
    }

    /// Reports parents and references in the final state that point at no live record.
    private func checkReferences() throws {
        var found: [ReplayAnomaly] = []
        try state.forEachRecordJSON { zone, name, stored in
            let summary = try stored.bytes.withUnsafeBytes { buffer in
                var cursor = JSONCursor(buffer)
                return try scanner.scan(&cursor, collectReferences: true)
            }
            for reference in summary.references {
                let target = reference.zoneID ?? zone.zoneID
                guard let index = state.zoneIndex[ZoneKey(target)], state.zoneList[index].records[reference.recordName] != nil else {
                    let what = reference.isParent ? "parent" : "field \"\(reference.field ?? "")\""
                    found.append(.init(kind: reference.isParent ? .danglingParent : .danglingReference, zoneID: zone.zoneID, recordName: name,
                                       detail: "\(what) points at \"\(reference.recordName)\", which the final state does not hold"))
                    continue
                }
            }
        }
        for anomaly in found { anomalies.add(anomaly) }
    }
}
