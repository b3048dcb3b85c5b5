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

    /// The configuration (a store replaying through this engine sets its decoding threads).
    public package(set) var configuration: Configuration
    /// The state so far.
    public private(set) var state: ReplayState
    /// The anomalies so far.
    public var anomalies: AnomalyReport { core.anomalies }
    /// Events read from histories, including those skipped before `since`.
    @exclusivity(unchecked) public private(set) var eventCount = 0
    /// Events applied to the state (cascaded deletes not counted).
    public var appliedCount: Int { core.appliedCount }
    /// Bytes read from histories so far (decompressed).
    public var bytesRead: Int { finishedBytes + (currentBytes?() ?? 0) }
    /// Called with each change as it is applied, in applied order (dependency order within a
    /// batch when ``Configuration/ordersBatches`` is set; cascaded deletes, and deletes of records
    /// the state does not hold, included). Records are
    /// decoded for it, which costs time: leave it `nil` when not needed.
    public var onApply: ((ChangeEvent) throws -> Void)? {
        get { backend.onApply }
        set { backend.onApply = newValue }
    }
    /// Called every 65,536 events read (for progress reports).
    public var onProgress: ((Replayer) -> Void)?
    /// Called with each change as it is applied, without decoding records (for a store that
    /// journals the changes; the bytes given live only during the call). For a save, what it
    /// returns is kept with the record as its stamp (``ReplayState/liveRecords()``); `nil`
    /// keeps the stamp of the record it replaces.
    package var onChange: ((AppliedChange) throws -> Int64?)? {
        get { backend.onChange }
        set { backend.onChange = newValue }
    }

    /// The state the rules change: ``state``'s storage.
    private let backend: MemoryReplayBackend
    /// The rules of replay.
    private let core: ReplayCore<MemoryReplayBackend>
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

    /// Creates a replayer starting from `base` (an empty state by default).
    public init(configuration: Configuration = .init(), base: ReplayState = ReplayState()) {
        self.configuration = configuration
        state = base
        state.makeUnique()
        backend = MemoryReplayBackend(storage: state.storage)
        core = ReplayCore(backend: backend, options: .init(
            until: configuration.until, since: configuration.since, cascade: configuration.cascade,
            ordersBatches: configuration.ordersBatches, maximumListedAnomalies: configuration.maximumListedAnomalies))
        backend.position = { [unowned core] in core.position }
    }

    /// Makes sure no copy of ``state`` handed out earlier sees what follows.
    private func beginChanges() {
        let before = ObjectIdentifier(backend.storage)
        backend.storage = ReplayStorage() // drop this reference so the uniqueness check counts only copies
        state.makeUnique()
        let isCopy = ObjectIdentifier(state.storage) != before
        backend.adopt(state.storage, isCopy: isCopy)
        if isCopy {
            // A copy: saves pending in a batch were made by the old storage's allocator, which
            // goes with the copy handed out: copy them into this one.
            core.rekeepBatch { [storage = state.storage] in storage.allocator.copy($0, keepingJSON: true) }
        }
    }

    /// The tokens of the state so far.
    public var tokens: ReplayTokens { state.tokens }

    /// Whether the `until` checkpoint was reached (later input is ignored).
    public var reachedUntil: Bool { core.reachedUntil }

    /// Whether the `since` checkpoint was reached (always true without `since`).
    public var reachedSince: Bool { core.reachedSince }

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
        guard !core.reachedUntil else { return }
        beginChanges()
        let storage = backend.storage
        var decoder = EventDecoder()
        decoder.zones = backend.zones
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
            reader.upcoming = { [backend] blob, number in
                guard number < backend.tablesByNumber.count, let table = backend.tablesByNumber[number] else { return }
                table.prefetch(hash: blob.nameHash)
            }
        }
        var lastMapping: MappedFile?
        reader.onUnit = { [backend] mapping in
            backend.keepsJSON = mapping != nil
            if let mapping, mapping !== lastMapping {
                storage.mappings.append(mapping)
                lastMapping = mapping
            }
        }
        currentBytes = { reader.bytesRead }
        defer {
            finishedBytes += reader.bytesRead
            currentBytes = nil
            backend.keepsJSON = false
        }
        while !core.reachedUntil, let event = try reader.nextRaw() {
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

    /// Applies one event given as a value.
    public func apply(_ event: ChangeEvent) throws {
        guard !core.reachedUntil else { return }
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
                case .saved(let blob, let zoneID): try handle(.recordSaved(blob, zone: backend.zones.number(of: zoneID ?? .default)))
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
        try core.finish()
        guard configuration.checksReferences && !configuration.tokensOnly else {
            try work?(state)
            return
        }
        let storage = state.storage
        // Sort every zone now, so that from here on the state is only read.
        for zone in storage.zones { _ = zone.table.sortedBlobs }
        let check = ReferenceCheck(storage: storage, zoneOrder: state.sortedZones(),
                                   limit: max(0, core.anomalies.limit - core.anomalies.anomalies.count))
        if let work {
            let group = DispatchGroup()
            // A queue of its own, so a thread of its own: on the global queue, as wide as the
            // cores, the check held one of the threads the writer's two gathering helpers need,
            // and the output waited for it (about 0.2 s of 2M events).
            DispatchQueue(label: "ferry.replay.reference-check").async(group: group) { check.run() }
            let result = Result { try work(state) }
            group.wait()
            core.anomalies.merge(check.report)
            try result.get()
        } else {
            check.run()
            core.anomalies.merge(check.report)
        }
    }

    // MARK: Applying

    /// Hands one event to the rules; the event's blob is the replayer's from here on.
    @inline(__always)
    private func handle(_ event: RawEvent) throws {
        eventCount += 1
        if eventCount & 0xFFFF == 0, let onProgress { onProgress(self) }
        try core.take(event, position: eventCount)
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
