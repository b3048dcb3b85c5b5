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
    let mutator: StoreMutator
    private let database: Int64
    /// The store's row id of each zone of the state (by the replayer's zone index), while live.
    private var storeZones: [Int64?] = []
    private(set) var statistics = StoreReplayer.Statistics()

    init(mutator: StoreMutator, database: Int64, configuration: StoreReplayer.Configuration) {
        self.mutator = mutator
        self.database = database
        replayer = Replayer(configuration: .init(cascade: configuration.cascade, checksReferences: configuration.checksReferences,
                                                 maximumListedAnomalies: configuration.maximumListedAnomalies,
                                                 reader: configuration.reader))
        replayer.onChange = { [unowned self] change in try self.journal(change) }
    }

    /// The store's row id of a live zone of the state, made or made live again (and journaled).
    private func liveZone(_ index: Int, _ zoneID: ZoneID) throws -> Int64 {
        if index < storeZones.count, let id = storeZones[index] { return id }
        let id = try mutator.zone(for: zoneID, database: database)
        while storeZones.count <= index { storeZones.append(nil) }
        storeZones[index] = id
        return id
    }

    /// Journals one change the replayer applied; for a save, returns its journal number (`nil`
    /// for a save that changed no byte, which is not journaled).
    private func journal(_ change: AppliedChange) throws -> Int64? {
        switch change {
        case .saved(let index, let zoneID, let name, let tag, let json, let replaced, let unchanged):
            if unchanged {
                statistics.unchanged += 1
                return nil
            }
            let zone = try liveZone(index, zoneID)
            if replaced { statistics.modified += 1 } else { statistics.created += 1 }
            return try mutator.journalRecord(replaced ? .modified : .created, zone: zone, name: name,
                                             type: RecordJSON.recordType(in: json), tag: tag)
        case .deleted(let index, let zoneID, let name, let json, let recordType):
            let zone = try liveZone(index, zoneID)
            statistics.deleted += 1
            _ = try mutator.journalRecord(.deleted, zone: zone, name: name, type: recordType ?? RecordJSON.recordType(in: json), tag: nil)
        case .zoneSaved(let index, let zoneID):
            _ = try liveZone(index, zoneID)
        case .zoneDeleted(let index, let zoneID, let removed, let purged):
            if index < storeZones.count { storeZones[index] = nil }
            try mutator.deleteZone(zoneID, database: database, purge: purged)
            statistics.deleted += removed
        case .checkpoint(let checkpoint):
            let zone = try checkpoint.zoneID.map { try mutator.checkpointZone($0, database: database) }
            try mutator.checkpoint(zone: zone, database: database, token: checkpoint.syncToken, moreComing: checkpoint.moreComing)
        }
        return nil
    }

    /// Ends the replay: writes the live records (transcoded to the store's JSON on worker
    /// threads, inserted here in order) while the replayer checks references on another thread.
    func finish() throws {
        try replayer.finish { [self] state in
            let records = state.liveRecords()
            var zones: [Int64] = []
            for record in records where record.zone >= zones.count || zones[record.zone] < 0 {
                while zones.count <= record.zone { zones.append(-1) }
                guard record.zone < storeZones.count, let id = storeZones[record.zone] else {
                    throw StoreError(.invalidArgument, "a live record in a zone the store does not hold", path: mutator.path)
                }
                zones[record.zone] = id
            }
            try write(records, zones: zones)
        }
    }

    private typealias Rows = Swift.Result<[StoreRow], any Error>

    /// Inserts the records, the rows made on worker threads a chunk at a time.
    private func write(_ records: [ReplayState.LiveRecord], zones: [Int64]) throws {
        let chunk = 2048
        let chunks = (records.count + chunk - 1) / chunk
        guard chunks > 0 else { return }
        let workers = max(1, min(Processors.available, 4))
        let results = OrderedResults<Rows>(count: chunks, window: workers * 4)
        let maximumDepth = replayer.configuration.reader.maximumDepth
        let group = DispatchGroup()
        records.withUnsafeBufferPointer { all in
            nonisolated(unsafe) let all = all
            for _ in 0..<workers {
                DispatchQueue.global().async(group: group) {
                    var scratch = TranscodingScratch()
                    var out = JSONOutput(capacity: 1 << 16)
                    var keys = Record(recordName: "")
                    let encoder = StoreRowEncoder()
                    while let index = results.claim() {
                        let part = all[index * chunk..<min(all.count, (index + 1) * chunk)]
                        results.deliver(index, Rows {
                            try part.map { record in
                                try Self.row(of: record.json, out: &out, scratch: &scratch, keys: &keys, encoder: encoder,
                                             maximumDepth: maximumDepth)
                            }
                        })
                    }
                }
            }
        }
        defer {
            results.cancel()
            group.wait()
        }
        var index = 0
        while let result = results.take() {
            for row in try result.get() {
                let record = records[index]
                index += 1
                let zone = zones[record.zone]
                try mutator.writeRecord(row, zone: zone, seq: record.stamp)
                mutator.addRecords(1, zone: zone)
            }
        }
    }

    /// The store's row of a record's JSON as the state holds it: transcoded to the bytes the
    /// store's encoder writes, only the system keys read for the columns.
    private static func row(of json: UnsafeRawBufferPointer, out: inout JSONOutput, scratch: inout TranscodingScratch,
                            keys: inout Record, encoder: StoreRowEncoder, maximumDepth: Int) throws -> StoreRow {
        out.removeAll()
        let configuration = RecordJSON.Configuration(maximumDepth: maximumDepth)
        if RecordJSON.transcodeRecord(json, into: &out, scratch: &scratch, configuration: configuration),
           RecordJSON.decodeSystemKeys(out.bytes, into: &keys, configuration: configuration) {
            return StoreRow(columnsOf: keys, body: out.bytes)
        }
        return StoreRow(record: try RecordJSON.decodeRecord(json, configuration: configuration), encoder: encoder)
    }
}
