import Dispatch
import FerryChangeLog
import FerryIO
import FerryRecords

/// A replay into a new store: `ferry replay`'s engine (``Replayer``) rebuilds the final state
/// in memory, records as compact JSON, while each change it applies is journaled as it comes;
/// at the end the live records are written once, each with the journal number of its latest
/// change, and the name index is built once.
///
/// The store's journal, zones, tokens, checkpoints and counts are those a replay applying each
/// change to the store would make (``ReplayApplier`` on an empty store); the anomalies are
/// `ferry replay`'s. Memory is the size of the final state (about the size of its JSON).
final class NewStoreReplay {
    let replayer: Replayer
    let path: String
    private let database: Int64
    /// The journal and the store's zones are written on a thread of their own while the replayer
    /// applies changes; this side numbers the changes, so the replayer never waits for SQLite but
    /// for the rare change that makes a zone (``sync(_:)``).
    private let pipeline: WritePipeline<StoreMutator, JournalBatch>
    private var batch = JournalBatch()
    /// The number the next journal entry gets.
    private var nextSeq: Int64
    /// The store's row id of each zone of the state (by the replayer's zone index): `live` while
    /// the zone is live, `known` for any zone the store holds. Unchecked exclusivity: used per
    /// event, only on the replaying thread.
    @exclusivity(unchecked) private var live: [Int64?] = []
    @exclusivity(unchecked) private var known: [Int64?] = []
    @exclusivity(unchecked) private(set) var statistics = StoreReplayer.Statistics()
    /// The state's zone each store zone was taken for.
    private var zoneOwners: [Int64: (index: Int, zoneID: ZoneID)] = [:]
    /// For comparing a re-saved record's bytes as the store keeps them.
    private var comparison = JSONOutput(capacity: 1 << 12)
    private var comparisonScratch = TranscodingScratch()
    private let comparisonEncoder = StoreRowEncoder()

    init(mutator: StoreMutator, database: Int64, configuration: StoreReplayer.Configuration) {
        path = mutator.path
        self.database = database
        nextSeq = mutator.nextSeq
        pipeline = WritePipeline(context: mutator) { mutator, batch in try batch.apply(to: mutator) }
        replayer = Replayer(configuration: .init(cascade: configuration.cascade, checksReferences: configuration.checksReferences,
                                                 maximumListedAnomalies: configuration.maximumListedAnomalies,
                                                 reader: configuration.reader))
        replayer.onChange = { [unowned self] change in try self.journal(change) }
        // Records are compacted as they come, not left pointing at pretty-printed responses to
        // be compacted at the end: the end transcodes every live record into the store, faster
        // from compact JSON (measured: pointing, 1.5 GB more resident and no faster on the
        // 2M-event benchmark history). Small files are read, not mapped, as before.
        replayer.pointsAtPrettyPrintedJSON = false
        replayer.minimumMappedSize = 8 << 20
    }

    /// Runs `work` with the mutator once the journal written so far is, and takes its numbering.
    private func sync<T>(_ work: (StoreMutator) throws -> T) throws -> T {
        try submit()
        return try pipeline.sync { mutator in
            let result = try work(mutator)
            nextSeq = mutator.nextSeq
            return result
        }
    }

    private func submit() throws {
        guard !batch.ops.isEmpty else { return }
        let full = batch
        batch = JournalBatch()
        try pipeline.submit([full])
    }

    private static func set(_ table: inout [Int64?], _ index: Int, _ id: Int64?) {
        while table.count <= index { table.append(nil) }
        table[index] = id
    }

    /// Takes `id` as the store zone of the state's zone `index`. The state tells zones apart by the
    /// bytes of their names and owners, the store as text with no owner and an empty one the same:
    /// two zones of the state that are one zone in the store are refused (applying the history
    /// change by change, into an existing store, takes them as one).
    private func assign(_ id: Int64, to index: Int, _ zoneID: ZoneID) throws {
        if let other = zoneOwners[id], other.index != index {
            throw StoreError(.invalidArgument, "the history names the zone \(JSONOutput.literal(other.zoneID.zoneName)) (owner "
                             + "\(other.zoneID.ownerRecordName.map(JSONOutput.literal) ?? "none")) and \(JSONOutput.literal(zoneID.zoneName)) (owner "
                             + "\(zoneID.ownerRecordName.map(JSONOutput.literal) ?? "none")), one zone in a store; replay it into an existing "
                             + "store (make one with `ferry convert /dev/null STORE`), which applies each change to that zone", path: path)
        }
        zoneOwners[id] = (index, zoneID)
        Self.set(&known, index, id)
    }

    /// The store's row id of a live zone of the state, made or made live again (and journaled).
    private func liveZone(_ index: Int, _ zoneID: ZoneID) throws -> Int64 {
        if index < live.count, let id = live[index] { return id }
        let database = database
        let id = try sync { try $0.zone(for: zoneID, database: database) }
        try assign(id, to: index, zoneID)
        Self.set(&live, index, id)
        return id
    }

    /// Whether a save that replaced a record changes the store's bytes of it: the records' JSON
    /// differ as given, and as the store keeps them (transcoded; a change tag that differs is a
    /// difference).
    private func changes(_ json: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer?,
                         from old: (json: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer?)) throws -> Bool {
        if let tag, let oldTag = old.tag, !tag.elementsEqual(oldTag) { return true }
        return try canonical(json) != (try canonical(old.json))
    }

    private func canonical(_ json: UnsafeRawBufferPointer) throws -> [UInt8] {
        let configuration = RecordJSON.Configuration(maximumDepth: replayer.configuration.reader.maximumDepth)
        comparison.removeAll()
        if RecordJSON.transcodeRecord(json, into: &comparison, scratch: &comparisonScratch, configuration: configuration) {
            return Array(comparison.bytes)
        }
        return StoreRow(record: try RecordJSON.decodeRecord(json, configuration: configuration), encoder: comparisonEncoder).body
    }

    /// Journals one change the replayer applied; for a save, returns its journal number (`nil`
    /// for a save that changed no byte, which is not journaled).
    private func journal(_ change: AppliedChange) throws -> Int64? {
        switch change {
        case .saved(let index, let zoneID, let name, let tag, let json, let replaced, let unchanged):
            if let replaced, try unchanged || !changes(json, tag: tag, from: replaced) {
                statistics.unchanged += 1
                return nil
            }
            let zone = try liveZone(index, zoneID)
            if replaced != nil { statistics.modified += 1 } else { statistics.created += 1 }
            return try record(replaced != nil ? .modified : .created, zone: zone, name: name, type: RecordJSON.recordType(in: json), tag: tag)
        case .deleted(let index, let zoneID, let name, let json, let recordType):
            let zone = try liveZone(index, zoneID)
            statistics.deleted += 1
            _ = try record(.deleted, zone: zone, name: name, type: recordType ?? RecordJSON.recordType(in: json), tag: nil)
        case .zoneSaved(let index, let zoneID):
            _ = try liveZone(index, zoneID)
        case .zoneDeleted(let index, let zoneID, let removed, let purged):
            let database = database
            let id = try sync { mutator in
                try mutator.deleteZone(zoneID, database: database, purge: purged)
                return try mutator.existingZone(zoneID, database: database)?.id
            }
            Self.set(&live, index, nil)
            if let id { try assign(id, to: index, zoneID) }
            statistics.deleted += removed
        case .checkpoint(let checkpoint, let index):
            var zone: Int64?
            if let index, let zoneID = checkpoint.zoneID {
                if index < known.count, let id = known[index] {
                    zone = id
                } else {
                    let database = database
                    let id = try sync { try $0.checkpointZone(zoneID, database: database) }
                    try assign(id, to: index, zoneID)
                    zone = id
                }
            }
            batch.ops.append(.checkpoint(database: database, zone: zone, token: checkpoint.syncToken, moreComing: checkpoint.moreComing))
            if batch.ops.count >= JournalBatch.size { try submit() }
        }
        return nil
    }

    /// Queues a record's journal entry; returns its number.
    private func record(_ kind: StoreSchema.JournalKind, zone: Int64, name: UnsafeRawBufferPointer, type: String?,
                        tag: UnsafeRawBufferPointer?) throws -> Int64 {
        let seq = nextSeq
        nextSeq += 1
        batch.append(seq: seq, kind: kind, zone: zone, name: name, type: type, tag: tag)
        if batch.ops.count >= JournalBatch.size { try submit() }
        return seq
    }

    /// Called on the writing thread with the bytes of each chunk of live records inserted.
    var onRowsWritten: ((Int) -> Void)?

    /// Waits for the journal's writing (abandoning).
    func drain() {
        pipeline.drain()
    }

    /// Ends the replay: writes the live records (transcoded to the store's JSON on worker
    /// threads, inserted in order) while the replayer checks references on another thread, and
    /// the zones' counts. Returns the store's last journal number.
    func finish() throws -> Int64 {
        try submit()
        try replayer.finish { [self] state in
            let records = state.liveRecords()
            var zones: [Int64] = []
            for record in records where record.zone >= zones.count || zones[record.zone] < 0 {
                while zones.count <= record.zone { zones.append(-1) }
                guard record.zone < live.count, let id = live[record.zone] else {
                    throw StoreError(.invalidArgument, "a live record in a zone the store does not hold", path: path)
                }
                zones[record.zone] = id
            }
            try pipeline.sync { mutator in
                try write(records, of: state, zones: zones, mutator: mutator)
                try mutator.flush()
            }
        }
        return nextSeq - 1
    }

    /// A chunk of live records whose rows a worker makes: what each worker thread keeps
    /// between chunks, and the chunk's rows. (Written by its worker before the pool hands it back.)
    private final class RowChunk: @unchecked Sendable {
        let range: Range<Int>
        var rows = Swift.Result<StoreRows, any Error>.success(StoreRows(capacity: 0, bytes: 0))

        init(range: Range<Int>) {
            self.range = range
        }
    }

    /// What one worker reuses from chunk to chunk (each worker runs one chunk at a time).
    private final class RowMaker: @unchecked Sendable {
        var scratch = TranscodingScratch()
        var out = JSONOutput(capacity: 1 << 16)
        var keys = Record(recordName: "")
        let encoder = StoreRowEncoder()
    }

    /// Inserts the records, their rows made on worker threads a chunk at a time.
    private func write(_ records: [ReplayState.LiveRecord], of state: ReplayState, zones: [Int64], mutator: StoreMutator) throws {
        let chunk = 2048
        guard !records.isEmpty else { return }
        let threads = max(1, min(Processors.available, 4))
        let configuration = RecordJSON.Configuration(maximumDepth: replayer.configuration.reader.maximumDepth)
        let zoneIDs = state.zoneIDsByNumber
        let makers = (0..<threads).map { _ in RowMaker() }
        try records.withUnsafeBufferPointer { all in
            nonisolated(unsafe) let all = all
            // The workers read `all`: the pool waits for them before it goes, within this closure.
            let workers = OrderedWorkers<RowChunk>(threads: threads, jobsPerWorker: 4) { job, worker in
                let maker = makers[worker]
                job.rows = Swift.Result {
                    let part = all[job.range]
                    var rows = StoreRows(capacity: part.count, bytes: part.reduce(0) { $0 + $1.json.count + 64 })
                    for record in part {
                        // Transcoded to the bytes the store's encoder writes, only the system keys read for the columns.
                        maker.out.removeAll()
                        if RecordJSON.transcodeRecord(record.json, into: &maker.out, scratch: &maker.scratch, configuration: configuration),
                           RecordJSON.decodeSystemKeys(maker.out.bytes, into: &maker.keys, configuration: configuration) {
                            rows.append(columnsOf: maker.keys, body: maker.out.bytes)
                        } else {
                            let decoded: Record
                            do throws(RecordFormatError) {
                                decoded = try RecordJSON.decodeRecord(record.json, configuration: configuration)
                            } catch {
                                throw ReplayState.recordError(error, json: record.json, zoneID: zoneIDs[record.zone])
                            }
                            rows.append(StoreRow(record: decoded, encoder: maker.encoder))
                        }
                    }
                    return rows
                }
            }
            defer { workers.drain() }
            var next = 0
            while true {
                while !workers.isFull && next < all.count {
                    workers.submit(RowChunk(range: next..<min(all.count, next + chunk)))
                    next += chunk
                }
                guard let job = workers.takeHead() else { break }
                let rows = try job.rows.get()
                for k in 0..<rows.count {
                    let record = all[job.range.lowerBound + k]
                    let zone = zones[record.zone]
                    try mutator.writeRecord(rows, k, zone: zone, seq: record.stamp)
                    mutator.addRecords(1, zone: zone)
                }
                onRowsWritten?(rows.bodyBytes)
            }
        }
    }
}

/// Journal entries and checkpoints handed to the writing thread at once, the bytes of record
/// names, types and change tags copied into one buffer.
struct JournalBatch: Sendable {
    enum Op: Sendable {
        case record(seq: Int64, kind: StoreSchema.JournalKind, zone: Int64, name: Range<Int>, type: Range<Int>?, tag: Range<Int>?)
        case checkpoint(database: Int64, zone: Int64?, token: String, moreComing: Bool)
    }

    /// Entries per batch.
    static let size = 1024
    var bytes: [UInt8] = []
    var ops: [Op] = []

    init() {
        bytes.reserveCapacity(64 << 10)
        ops.reserveCapacity(Self.size)
    }

    mutating func append(seq: Int64, kind: StoreSchema.JournalKind, zone: Int64, name: UnsafeRawBufferPointer, type: String?,
                         tag: UnsafeRawBufferPointer?) {
        func put(_ part: UnsafeRawBufferPointer) -> Range<Int> {
            let start = bytes.count
            bytes.append(contentsOf: part)
            return start..<bytes.count
        }
        var typeRange: Range<Int>?
        if var type { typeRange = type.withUTF8 { put(UnsafeRawBufferPointer($0)) } }
        ops.append(.record(seq: seq, kind: kind, zone: zone, name: put(name), type: typeRange, tag: tag.map(put)))
    }

    /// Writes the entries, in order.
    func apply(to mutator: StoreMutator) throws {
        try bytes.withUnsafeBytes { raw in
            for op in ops {
                switch op {
                case .record(let seq, let kind, let zone, let name, let type, let tag):
                    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: raw[range]) }
                    try mutator.journalRecord(kind, zone: zone, name: slice(name), type: type.map(slice), tag: tag.map(slice), seq: seq)
                case .checkpoint(let database, let zone, let token, let moreComing):
                    try mutator.checkpoint(zone: zone, database: database, token: token, moreComing: moreComing)
                }
            }
        }
    }
}
