import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FerryIO
import FerryRecords

/// Rebuilds the state of every zone from a history of changes.
///
/// A save replaces the record, a delete removes it, deleting or purging a zone removes its
/// records; applying the same history twice gives the same state. Memory is proportional to the
/// live state (plus one entry per checkpoint token, for the token-seen-twice check), not to the
/// history. See `Docs/ReplaySemantics.md`.
///
/// ```swift
/// let replayer = Replayer(configuration: .init(until: "token-42"))
/// try replayer.apply(try InputFile(path: "history.ndjson"))
/// try replayer.finish()
/// try replayer.state.write(toPath: "state.ndjson")   // and state.ndjson.tokens.json
/// print(replayer.anomalies.summary)
/// ```
///
/// One thread at a time: the properties read or written for every event are marked
/// `@exclusivity(unchecked)`, so that applying an event pays no runtime access checks.
public final class Replayer {
    /// What to replay and which checks to run.
    public struct Configuration: Sendable {
        /// Stop right after the first checkpoint carrying this token (point-in-time restore).
        public var until: String?
        /// Apply only what follows the first checkpoint carrying this token (on top of a base
        /// state taken at that checkpoint).
        public var since: String?
        /// Read through the history for its tokens only: record bodies are skipped without being
        /// validated, records are not applied.
        public var tokensOnly: Bool
        /// Apply CloudKit's DELETE_SELF rule: deleting a record deletes the records whose
        /// `REFERENCE` fields point at it with action `DELETE_SELF`, recursively (for histories
        /// that lack the cascaded tombstones).
        public var cascade: Bool
        /// Within each batch (consecutive saves, as a change response lists them), apply parents
        /// and referenced records before the records that point at them; cycles are reported.
        /// Only the order ``Replayer/onApply`` sees changes; the state is the same.
        public var ordersBatches: Bool
        /// At ``Replayer/finish()``, report parents and references that point at no live record.
        public var checksReferences: Bool
        /// The most anomalies listed (all are counted).
        public var maximumListedAnomalies: Int
        /// How histories are read.
        public var reader: ChangeLogReader.Configuration
        /// Threads decoding history lines while the replayer applies earlier ones; `nil` means one
        /// more than the processors available (at most 4; one on a single processor), 0 decodes
        /// on the calling thread. The result is the same.
        public var decodingThreads: Int?

        /// Creates a configuration.
        public init(until: String? = nil, since: String? = nil, tokensOnly: Bool = false, cascade: Bool = false,
                    ordersBatches: Bool = false, checksReferences: Bool = true, maximumListedAnomalies: Int = 10_000,
                    reader: ChangeLogReader.Configuration = .init(), decodingThreads: Int? = nil) {
            self.decodingThreads = decodingThreads
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

    /// A checkpoint's scope (zone index, or -1 for the database) and token.
    private struct ScopedToken: Hashable {
        var zone: Int
        var token: String
    }

    /// A record of the state: its zone's index and its name.
    private struct RecordKey: Hashable {
        var zone: Int
        var name: ExactName
    }

    /// The configuration (a store replaying through this engine sets its decoding threads).
    public package(set) var configuration: Configuration
    /// The state so far.
    public private(set) var state: ReplayState
    /// The anomalies so far.
    public private(set) var anomalies: AnomalyReport
    /// Events read from histories, including those skipped before `since`.
    @exclusivity(unchecked) public private(set) var eventCount = 0
    /// Events applied to the state (cascaded deletes not counted).
    @exclusivity(unchecked) public private(set) var appliedCount = 0
    /// Bytes read from histories so far (decompressed).
    public var bytesRead: Int { finishedBytes + (currentBytes?() ?? 0) }
    /// Called with each change as it is applied, in applied order (dependency order within a
    /// batch when ``Configuration/ordersBatches`` is set; cascaded deletes, and deletes of records
    /// the state does not hold, included). Records are
    /// decoded for it, which costs time: leave it `nil` when not needed.
    public var onApply: ((ChangeEvent) throws -> Void)?
    /// Called every 65,536 events read (for progress reports).
    public var onProgress: ((Replayer) -> Void)?
    /// Called with each change as it is applied, without decoding records (for a store that
    /// journals the changes; the bytes given live only during the call). For a save, what it
    /// returns is kept with the record as its stamp (``ReplayState/liveRecords()``); `nil`
    /// keeps the stamp of the record it replaces.
    package var onChange: ((AppliedChange) throws -> Int64?)?

    @exclusivity(unchecked) private var phase: Phase
    private var untilSeenBeforeSince = false
    private var seenTokens: Set<ScopedToken> = []
    /// With ``Configuration/cascade``: the live records pointing at each record with DELETE_SELF.
    private var referrers: [RecordKey: Set<RecordKey>] = [:]
    /// With ``Configuration/ordersBatches``: the saves of the current batch (their blobs copied
    /// into the state's allocator) and their positions in the history.
    private var batch: [(blob: RecordBlob, zoneID: ZoneID, position: Int)] = []
    /// The position in the history of the event being applied (anomalies name it).
    @exclusivity(unchecked) private var currentEvent = 0
    /// The zones seen last and their indices (histories touch few zones).
    private var recentZones: [(zoneID: ZoneID, index: Int)] = []
    /// Numbers the zones of saved records, for all the readers of this replayer.
    private let zones = ZoneRegistry()
    /// The state's index of each zone number (-1: not looked up yet).
    @exclusivity(unchecked) private var zoneIndices: [Int] = []
    /// The table of each zone number looked up so far, for prefetching (renewed whenever the
    /// storage may be replaced).
    @exclusivity(unchecked) private var tablesByNumber: [RecordTable?] = []
    /// Whether saved blobs may keep pointing at their JSON: while applying a mapped history the
    /// storage keeps (``ReplayStorage/mappings``).
    @exclusivity(unchecked) private var keepsJSON = false
    /// The bytes of history each decoding thread takes at a time (tests make it small).
    var blockSize = 4 << 20
    /// Histories smaller than this are read, not mapped. A saved response page (a few hundred
    /// KiB) is mapped: its live records then keep pointing at it, pretty-printed, instead of being
    /// compacted into fresh memory of the process as they are read.
    package var minimumMappedSize = 64 << 10
    /// Whether live records of a mapped response may keep pointing at their pretty-printed JSON
    /// (compacted when the state is written) rather than be compacted into the state as they are
    /// read.
    package var pointsAtPrettyPrintedJSON = true
    /// The most files this replayer's state keeps mapped (``Replayer/defaultMaximumMappedFiles``);
    /// later files are read and their live records copied.
    package var maximumMappedFiles = Replayer.defaultMaximumMappedFiles
    private var currentBytes: (() -> Int)?
    private var finishedBytes = 0
    /// The storage of ``state``, made unique at every entry point.
    @exclusivity(unchecked) private var storage: ReplayStorage

    /// Creates a replayer starting from `base` (an empty state by default).
    public init(configuration: Configuration = .init(), base: ReplayState = ReplayState()) {
        self.configuration = configuration
        state = base
        state.makeUnique()
        storage = state.storage
        anomalies = AnomalyReport(limit: configuration.maximumListedAnomalies)
        phase = configuration.since == nil ? .applying : .skipping
        if configuration.cascade {
            for (zone, zoneState) in storage.zones.enumerated() {
                for blob in zoneState.table.allBlobs { index(blob, of: RecordKey(zone: zone, name: ExactName(blob.nameString))) }
            }
        }
    }

    /// Makes sure no copy of ``state`` handed out earlier sees what follows.
    private func beginChanges() {
        let before = ObjectIdentifier(storage)
        storage = ReplayStorage() // drop this reference so the uniqueness check counts only copies
        state.makeUnique()
        storage = state.storage
        if ObjectIdentifier(storage) != before {
            // A copy: its tables are new objects. Saves pending in a batch were made by the old
            // storage's allocator, which goes with the copy handed out: copy them into this one.
            tablesByNumber = zoneIndices.map { $0 >= 0 ? storage.zones[$0].table : nil }
            batch = batch.map { (storage.allocator.copy($0.blob, keepingJSON: true), $0.zoneID, $0.position) }
        }
    }

    /// The tokens of the state so far.
    public var tokens: ReplayTokens { state.tokens }

    /// Whether the `until` checkpoint was reached (later input is ignored).
    public var reachedUntil: Bool { phase == .done }

    /// Whether the `since` checkpoint was reached (always true without `since`).
    public var reachedSince: Bool { phase != .skipping }

    // MARK: Input

    /// Applies one history source (decompressed): Ferry change-log lines or saved CloudKit change
    /// responses. Does nothing once the `until` checkpoint was reached.
    ///
    /// A source that can be mapped (``ByteSource/mapRemaining(maximumSize:)``: a regular file) is
    /// read in place when decoding on worker threads, up to ``maximumMappedSize`` bytes of history
    /// per replayer: saved records keep their JSON in the mapping, which the state keeps alive.
    /// The file must not be modified in place while the state lives (rewritten bytes show through;
    /// reading past a truncated end raises `SIGBUS`, which the `ferry` command reports, exiting 1);
    /// ``ReplayState/write(to:order:beforeFinishing:)`` checks each mapped file before it finishes
    /// its writer and throws when one was modified in place.
    ///
    /// - Throws: ``ChangeLogError`` naming the source, line and column of bad input; what the
    ///   source or ``onApply`` throws.
    public func apply(_ source: ByteSource) throws {
        var given: ByteSource? = source
        try apply(sources: {
            defer { given = nil }
            return given
        })
    }

    /// Reads the histories `nextSource` opens, one after another until it returns `nil` (or
    /// ``Configuration/until`` is reached), and applies their events in order: as ``apply(_:)``
    /// does for each, but decoding on worker threads across file boundaries, so a folder of
    /// thousands of saved responses keeps every core busy.
    public func apply(sources nextSource: @escaping () throws -> ByteSource?) throws {
        guard phase != .done else { return }
        beginChanges()
        var decoder = EventDecoder()
        decoder.zones = zones
        decoder.defaultZone = configuration.reader.defaultZone
        decoder.maximumDepth = configuration.reader.maximumDepth
        decoder.tokensOnly = configuration.tokensOnly
        let threads = configuration.decodingThreads ?? EventReader.defaultThreads()
        // A regular file that fits well in memory is read in place: saved records' JSON stays in
        // the mapping (the page cache) instead of being copied into the state.
        let reader = EventReader(sources: nextSource, configuration: configuration.reader, decoder: decoder, threads: threads,
                                 mapsInput: threads > 0 && !configuration.tokensOnly, minimumMappedSize: minimumMappedSize,
                                 mappingBudget: Self.maximumMappedSize - storage.mappedBytes,
                                 mappedFileBudget: maximumMappedFiles - storage.mappings.count,
                                 pointsAtWhitespace: pointsAtPrettyPrintedJSON, unitSize: blockSize)
        if threads > 0 {
            // The table slot a save will probe is loaded while earlier events are applied. (The
            // reader, and with it this closure, goes when this call returns.)
            reader.upcoming = { [self] blob, number in
                guard number < tablesByNumber.count, let table = tablesByNumber[number] else { return }
                table.prefetch(hash: blob.nameHash)
            }
        }
        var lastMapping: MappedFile?
        reader.onUnit = { [self] mapping in
            keepsJSON = mapping != nil
            if let mapping, mapping !== lastMapping {
                storage.mappings.append(mapping)
                lastMapping = mapping
            }
        }
        currentBytes = { reader.bytesRead }
        defer {
            finishedBytes += reader.bytesRead
            currentBytes = nil
            keepsJSON = false
        }
        while phase != .done, let event = try reader.nextRaw() {
            try handle(event)
        }
    }

    /// The most history read in place, all files together (a quarter of physical memory): other
    /// files are read, and their live records copied, so that the state does not point all over
    /// more history than the page cache can keep.
    static var maximumMappedSize: Int { SystemMemory.physical / 4 }

    /// The most files read in place: a quarter of the memory areas a process may map
    /// (`vm.max_map_count`, 65,530 by default), leaving the rest to the allocator, threads and
    /// SQLite; later files are read and their live records copied.
    static var defaultMaximumMappedFiles: Int { (SystemMemory.mapCountLimit ?? 65_530) / 4 }

    /// The files of a history: files as given, folders replaced by the files under them
    /// (`FileSystem.listFiles`: subfolders depth-first, by name; hidden entries and SQLite sidecar
    /// files skipped).
    public static func expandHistory(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            if path != "-" && FileSystem.isDirectory(path) { files += try FileSystem.listFiles(in: path).files } else { files.append(path) }
        }
        return files
    }

    /// Applies one event given as a value.
    public func apply(_ event: ChangeEvent) throws {
        guard phase != .done else { return }
        beginChanges()
        switch event {
        case .zoneSaved(let zone): try handle(.zoneSaved(zone))
        case .zoneDeleted(let zone): try handle(.zoneDeleted(zone))
        case .zonePurged(let zone): try handle(.zonePurged(zone))
        case .recordDeleted(let id, let type): try handle(.recordDeleted(recordName: id.recordName, zoneID: id.zoneID, recordType: type))
        case .checkpoint(let checkpoint): try handle(.checkpoint(checkpoint))
        case .recordSaved(let record):
            try RecordScanner.withScanned(record) { scanned in
                switch scanned {
                case .saved(let blob, let zoneID): try handle(.recordSaved(blob, zone: zones.number(of: zoneID ?? .default)))
                case .deleted(let name, let zoneID, let type): try handle(.recordDeleted(recordName: name, zoneID: zoneID ?? .default, recordType: type))
                case .error(let name, let zoneID, let code, let reason):
                    try handle(.serverError(zoneID: zoneID, recordName: name, code: code, reason: reason))
                }
            }
        }
    }

    /// Ends the replay: applies a pending batch, checks references in the final state, and fails
    /// when `since` or `until` named a token the history did not reach.
    ///
    /// - Throws: ``ChangeLogError`` (``ChangeLogError/Code/tokenNotFound``).
    public func finish() throws {
        try finish(concurrentlyWith: nil)
    }

    /// Ends the replay as ``finish()`` does, running `work` with the final state (writing it,
    /// typically) on the calling thread while the reference check runs on another. Both only read
    /// the state. `work` runs only when the history reached `since` and `until`.
    ///
    /// - Throws: ``ChangeLogError`` (``ChangeLogError/Code/tokenNotFound``), or what `work` throws.
    public func finish(concurrentlyWith work: ((ReplayState) throws -> Void)?) throws {
        beginChanges()
        try flushBatch()
        if let since = configuration.since, phase == .skipping {
            throw ChangeLogError(.tokenNotFound, "expected a checkpoint with token \"\(since)\" (--since) in the history, found none")
        }
        if let until = configuration.until, phase != .done {
            let found = untilSeenBeforeSince ? "found it only before the --since checkpoint" : "found none"
            throw ChangeLogError(.tokenNotFound, "expected a checkpoint with token \"\(until)\" (--until) in the history, \(found)")
        }
        guard configuration.checksReferences && !configuration.tokensOnly else {
            try work?(state)
            return
        }
        // Sort every zone now, so that from here on the state is only read.
        for zone in storage.zones { _ = zone.table.sortedBlobs }
        let check = ReferenceCheck(storage: storage, zoneOrder: state.sortedZones(),
                                   limit: max(0, anomalies.limit - anomalies.anomalies.count))
        if let work {
            let group = DispatchGroup()
            // A queue of its own, so a thread of its own: on the global queue, as wide as the
            // cores, the check held one of the threads the writer's two gathering helpers need,
            // and the output waited for it (about 0.2 s of 2M events).
            DispatchQueue(label: "ferry.replay.reference-check").async(group: group) { check.run() }
            let result = Result { try work(state) }
            group.wait()
            anomalies.merge(check.report)
            try result.get()
        } else {
            check.run()
            anomalies.merge(check.report)
        }
    }

    // MARK: Applying

    /// Handles one event; the event's blob is the replayer's from here on.
    private func handle(_ event: RawEvent) throws {
        eventCount += 1
        if eventCount & 0xFFFF == 0, let onProgress { onProgress(self) }
        if phase == .skipping {
            switch event {
            case .checkpoint(let checkpoint):
                if checkpoint.syncToken == configuration.until { untilSeenBeforeSince = true }
                guard checkpoint.syncToken == configuration.since else { return }
                // The base is the state at this checkpoint: take its token even if the base had none.
                record(checkpoint)
                phase = configuration.until == configuration.since ? .done : .applying
            default:
                break
            }
            return
        }
        if configuration.ordersBatches {
            if case .recordSaved(let blob, let zone) = event {
                batch.append((storage.allocator.copy(blob, keepingJSON: keepsJSON), zones.zone(zone), eventCount))
                return
            }
            try flushBatch()
        }
        currentEvent = eventCount
        try applyNow(event)
    }

    /// The state's index of the zone numbered `number` in ``zones``.
    @inline(__always)
    private func zoneIndex(number: Int) -> Int {
        if number < zoneIndices.count, zoneIndices[number] >= 0 { return zoneIndices[number] }
        let index = zoneIndex(zones.zone(number))
        while zoneIndices.count <= number { zoneIndices.append(-1) }
        zoneIndices[number] = index
        while tablesByNumber.count <= number { tablesByNumber.append(nil) }
        tablesByNumber[number] = storage.zones[index].table
        return index
    }

    private func zoneIndex(_ zone: ZoneID) -> Int {
        for (zoneID, index) in recentZones where Self.sameZone(zoneID, zone) { return index }
        let index = storage.index(of: zone)
        if recentZones.count >= 8 { recentZones.removeFirst() }
        recentZones.append((zone, index))
        return index
    }

    private static func sameZone(_ a: ZoneID, _ b: ZoneID) -> Bool {
        guard ExactName.same(a.zoneName, b.zoneName) else { return false }
        switch (a.ownerRecordName, b.ownerRecordName) {
        case (nil, nil): return true
        case (let x?, let y?): return ExactName.same(x, y)
        default: return false
        }
    }

    private func applyNow(_ event: RawEvent) throws {
        appliedCount += 1
        switch event {
        case .recordSaved(let blob, let zone):
            try save(storage.allocator.copy(blob, keepingJSON: keepsJSON), zone: zoneIndex(number: zone))
        case .recordDeleted(let name, let zoneID, let type):
            let zone = zoneIndex(zoneID)
            if storage.zones[zone].isDeleted {
                anomaly(.eventForDeletedZone, zone: zone, record: name, "a delete of a record in a deleted zone; ignored")
                return
            }
            var utf8 = name
            let removed = utf8.withUTF8 { bytes in
                storage.zones[zone].table.remove(UnsafeRawBufferPointer(bytes), hash: RecordBlob.hash(of: UnsafeRawBufferPointer(bytes)))
            }
            if let removed {
                try self.removed(removed, zone: zone, recordType: type)
            } else {
                anomaly(.unknownRecordDeleted, zone: zone, record: name, "a delete of a record the state does not hold")
                // Still a change of the history: a log of it deletes the record from a state
                // that holds it (the next page of a series, replayed after a base).
                try onApply?(.recordDeleted(RecordID(recordName: name, zoneID: storage.zones[zone].zoneID), recordType: type))
            }
        case .zoneSaved(let zoneID):
            let zone = zoneIndex(zoneID)
            storage.zones[zone].isDeleted = false
            if zoneID.zoneType != nil { storage.zones[zone].zoneID = zoneID }
            _ = try onChange?(.zoneSaved(zone: zone, zoneID: zoneID))
            try onApply?(.zoneSaved(zoneID))
        case .zoneDeleted(let zoneID), .zonePurged(let zoneID):
            let zone = zoneIndex(zoneID)
            let removed = storage.zones[zone].table.count
            storage.zones[zone].table.removeAll()
            storage.zones[zone].isDeleted = true
            storage.zones[zone].moreComing = false
            if configuration.cascade { forgetReferrers(inZone: zone) }
            let purged: Bool
            if case .zonePurged = event { purged = true } else { purged = false }
            _ = try onChange?(.zoneDeleted(zone: zone, zoneID: zoneID, removed: removed, purged: purged))
            if purged {
                storage.zones[zone].syncToken = nil
                try onApply?(.zonePurged(zoneID))
            } else {
                try onApply?(.zoneDeleted(zoneID))
            }
        case .checkpoint(let checkpoint):
            let zone = checkpoint.zoneID.map(zoneIndex) ?? -1
            if !seenTokens.insert(ScopedToken(zone: zone, token: checkpoint.syncToken)).inserted {
                anomalies.add(.init(kind: .tokenSeenTwice, zoneID: checkpoint.zoneID, syncToken: checkpoint.syncToken,
                                    detail: "a checkpoint with a token already seen for this \(zone < 0 ? "database" : "zone")",
                                    eventIndex: currentEvent))
            }
            if zone >= 0 && storage.zones[zone].isDeleted {
                anomalies.add(.init(kind: .eventForDeletedZone, zoneID: checkpoint.zoneID, syncToken: checkpoint.syncToken,
                                    detail: "a checkpoint for a deleted zone", eventIndex: currentEvent))
            }
            record(checkpoint)
            _ = try onChange?(.checkpoint(checkpoint, zone: zone >= 0 ? zone : nil))
            try onApply?(.checkpoint(checkpoint))
            if checkpoint.syncToken == configuration.until { phase = .done }
        case .serverError(let zoneID, let name, let code, let reason):
            anomalies.add(.init(kind: .serverError, zoneID: zoneID, recordName: name,
                                detail: "an error entry: \(code)\(reason.map { ": " + $0 } ?? "")", eventIndex: currentEvent))
        }
    }

    /// Takes a checkpoint's token into the state.
    private func record(_ checkpoint: ChangeEvent.Checkpoint) {
        if let zoneID = checkpoint.zoneID {
            let zone = zoneIndex(zoneID)
            storage.zones[zone].syncToken = checkpoint.syncToken
            storage.zones[zone].moreComing = checkpoint.moreComing
        } else {
            storage.database = checkpoint
        }
        storage.lastCheckpoint = checkpoint
    }

    /// Where pretty-printed JSON that blobs point at is compacted for ``onChange``.
    private var compactScratch: [UInt8] = []
    /// The same, for the record a save replaces (a separate property: both are in use at once).
    private var replacedScratch: [UInt8] = []

    /// Calls `body` with the compact JSON of `blob`, or `nil` without one.
    private func withCompactJSON<R>(of blob: RecordBlob?, scratch: inout [UInt8],
                                    _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard let blob else { return try body(nil) }
        return try blob.withCompactJSON(scratch: &scratch) { try body($0) }
    }

    /// Stores a blob the state's allocator owns.
    private func save(_ blob: RecordBlob, zone: Int) throws {
        if storage.zones[zone].isDeleted {
            anomaly(.eventForDeletedZone, zone: zone, record: blob.nameString,
                    "a save of a record in a deleted zone; the zone is taken as re-created")
            storage.zones[zone].isDeleted = false
        }
        let replaced = storage.zones[zone].table.insert(blob)
        if let old = replaced {
            if let tag = old.tag, let new = blob.tag, tag.elementsEqual(new) {
                anomaly(.unchangedChangeTag, zone: zone, record: blob.nameString,
                        "a re-save with the change tag \"\(String(decoding: tag, as: UTF8.self))\" the state already holds")
            }
            if let before = old.modified, let now = blob.modified, now < before {
                anomaly(.modificationTimeWentBackwards, zone: zone, record: blob.nameString,
                        "modified.timestamp went from \(before) back to \(now)")
            }
            if configuration.cascade { unindex(old, of: RecordKey(zone: zone, name: ExactName(old.nameString))) }
        }
        if let onChange {
            defer { if let replaced { storage.allocator.release(replaced) } }
            // Compact JSON for the caller, whatever the blobs point at.
            let stamp = try blob.withCompactJSON(scratch: &compactScratch) { json in
                try withCompactJSON(of: replaced, scratch: &replacedScratch) { old in
                    var unchanged = false
                    if let old, old.count == json.count {
                        unchanged = json.count == 0 || memcmp(old.baseAddress!, json.baseAddress!, json.count) == 0
                    }
                    return try onChange(.saved(zone: zone, zoneID: storage.zones[zone].zoneID, name: blob.name, tag: blob.tag, json: json,
                                               replaced: old.map { (json: $0, tag: replaced!.tag) }, unchanged: unchanged))
                }
            }
            blob.stamp = stamp ?? replaced?.stamp ?? 0
        } else if let replaced {
            storage.allocator.release(replaced)
        }
        if configuration.cascade { index(blob, of: RecordKey(zone: zone, name: ExactName(blob.nameString))) }
        if let onApply {
            let record: Record
            do throws(RecordFormatError) { record = try ReplayState.decode(blob.json) } catch {
                throw ReplayState.recordError(error, json: blob.json, zoneID: storage.zones[zone].zoneID, event: currentEvent)
            }
            try onApply(.recordSaved(record))
        }
    }

    /// After a record left the state (its blob now the caller's): frees it, tells ``onApply``, and
    /// with cascade deletes what pointed at it.
    private func removed(_ blob: RecordBlob, zone: Int, recordType: String?) throws {
        let key = RecordKey(zone: zone, name: ExactName(blob.nameString))
        if configuration.cascade { unindex(blob, of: key) }
        if let onChange {
            defer { storage.allocator.release(blob) }
            _ = try blob.withCompactJSON(scratch: &compactScratch) { json in
                try onChange(.deleted(zone: zone, zoneID: storage.zones[zone].zoneID, name: blob.name, json: json, recordType: recordType))
            }
        } else {
            storage.allocator.release(blob)
        }
        try onApply?(.recordDeleted(RecordID(recordName: key.name.string, zoneID: storage.zones[zone].zoneID), recordType: recordType))
        guard configuration.cascade else { return }
        var work = [key]
        while let target = work.popLast() {
            guard let dependents = referrers.removeValue(forKey: target) else { continue }
            for dependent in dependents.sorted(by: { $0.name < $1.name }) {
                var name = dependent.name.string
                let gone = name.withUTF8 { bytes in
                    storage.zones[dependent.zone].table.remove(UnsafeRawBufferPointer(bytes), hash: RecordBlob.hash(of: UnsafeRawBufferPointer(bytes)))
                }
                guard let gone else { continue }
                unindex(gone, of: dependent)
                if let onChange {
                    defer { storage.allocator.release(gone) }
                    _ = try gone.withCompactJSON(scratch: &compactScratch) { json in
                        try onChange(.deleted(zone: dependent.zone, zoneID: storage.zones[dependent.zone].zoneID, name: gone.name,
                                              json: json, recordType: nil))
                    }
                } else {
                    storage.allocator.release(gone)
                }
                try onApply?(.recordDeleted(RecordID(recordName: dependent.name.string, zoneID: storage.zones[dependent.zone].zoneID),
                                            recordType: nil))
                work.append(dependent)
            }
        }
    }

    // MARK: Cascade index

    private func cascadeTargets(of blob: RecordBlob, from key: RecordKey) -> [RecordKey] {
        var targets: [RecordKey] = []
        blob.forEachReference { reference in
            guard reference.deletesSelf && !reference.isParent else { return }
            let zone = reference.zone.map { zoneIndex($0.zoneID) } ?? key.zone
            let target = RecordKey(zone: zone, name: ExactName(String(decoding: reference.name, as: UTF8.self)))
            if target != key { targets.append(target) }
        }
        return targets
    }

    private func index(_ blob: RecordBlob, of key: RecordKey) {
        for target in cascadeTargets(of: blob, from: key) { referrers[target, default: []].insert(key) }
    }

    private func unindex(_ blob: RecordBlob, of key: RecordKey) {
        for target in cascadeTargets(of: blob, from: key) {
            referrers[target]?.remove(key)
            if referrers[target]?.isEmpty == true { referrers[target] = nil }
        }
    }

    private func forgetReferrers(inZone zone: Int) {
        var kept: [RecordKey: Set<RecordKey>] = [:]
        for (target, dependents) in referrers where target.zone != zone {
            let rest = dependents.filter { $0.zone != zone }
            if !rest.isEmpty { kept[target] = rest }
        }
        referrers = kept
    }

    // MARK: Batches and checks

    /// Applies the buffered saves of a batch, parents and referenced records first.
    private func flushBatch() throws {
        guard !batch.isEmpty else { return }
        let saves = batch
        batch.removeAll()
        let keys = saves.map { ReferenceTarget(zone: ZoneKey($0.zoneID), name: ExactName($0.blob.nameString)) }
        let targets = saves.map { save in
            var names: [ReferenceTarget] = []
            save.blob.forEachReference { reference in
                names.append(ReferenceTarget(zone: ZoneKey(reference.zone?.zoneID ?? save.zoneID),
                                             name: ExactName(String(decoding: reference.name, as: UTF8.self))))
            }
            return names
        }
        let (order, cyclic) = DependencyOrder.order(keys: keys, targets: targets)
        for index in cyclic {
            anomalies.add(.init(kind: .referenceCycle, zoneID: saves[index].zoneID, recordName: saves[index].blob.nameString,
                                detail: "the record is on a reference cycle within its batch; the cycle is applied in history order",
                                eventIndex: saves[index].position))
        }
        var next = 0
        defer { for k in next..<order.count { storage.allocator.release(saves[order[k]].blob) } } // not applied: a failure
        while next < order.count {
            let save = saves[order[next]]
            next += 1
            currentEvent = save.position
            appliedCount += 1
            try self.save(save.blob, zone: zoneIndex(save.zoneID))
        }
    }

    private func anomaly(_ kind: ReplayAnomaly.Kind, zone: Int, record name: @autoclosure () -> String, _ detail: @autoclosure () -> String) {
        guard !anomalies.isFull else {
            anomalies.count(kind)
            return
        }
        anomalies.add(.init(kind: kind, zoneID: storage.zones[zone].zoneID, recordName: name(), detail: detail(), eventIndex: currentEvent))
    }

    deinit {
        for save in batch { storage.allocator.release(save.blob) }
    }
}

/// A change as ``Replayer`` applies it, records not decoded (``Replayer/onChange``). Zones are
/// given as the state's index and ID; bytes live only during the call.
package enum AppliedChange {
    /// A record saved: its name, change tag and compact JSON; the JSON and change tag of the
    /// record of its name it replaced, and whether that JSON was byte for byte the same.
    case saved(zone: Int, zoneID: ZoneID, name: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer?, json: UnsafeRawBufferPointer,
               replaced: (json: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer?)?, unchanged: Bool)
    /// A record deleted (by the history, or by a cascade: `recordType` nil): its name and JSON.
    case deleted(zone: Int, zoneID: ZoneID, name: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer, recordType: String?)
    /// A zone saved.
    case zoneSaved(zone: Int, zoneID: ZoneID)
    /// A zone deleted or purged, with the number of records it held.
    case zoneDeleted(zone: Int, zoneID: ZoneID, removed: Int, purged: Bool)
    /// A checkpoint (after the state took its token), with its zone's index (`nil`: the database's).
    case checkpoint(ChangeEvent.Checkpoint, zone: Int?)
}

/// A record a reference points at: zone and name, compared by bytes.
private struct ReferenceTarget: Hashable {
    var zone: ZoneKey
    var name: ExactName
}
