import FerryIO
import FerryRecords
import FerryStore
import FerryTestSupport

/// Helpers for the store tests: generated records, stores made from them, records read back.
enum StoreFixture {
    /// `count` generated records (every field type, hostile values, tombstones).
    static func records(count: Int, seed: UInt64) -> [Record] {
        var generator = RecordGenerator(seed: seed)
        return (0..<count).map { _ in generator.record() }
    }

    /// A new store path in a fresh scratch directory.
    static func newPath(_ name: String = "store.sqlite") -> String {
        TestScratch.directory() + "/" + name
    }

    /// Imports `records` into the store at `path` (new or existing).
    @discardableResult
    static func importRecords(_ records: [Record], into path: String, mode: StoreWriter.Mode = .insert,
                              database: String = "private") throws -> StoreWriter.Statistics {
        let writer = try StoreWriter(path: path, configuration: .init(mode: mode, database: database, batchSize: 7))
        for record in records { try writer.write(record) }
        try writer.finish()
        return writer.statistics
    }

    /// Every record of the store, in stored order.
    static func readAll(_ path: String, query: StoreQuery? = nil) throws -> [Record] {
        let reader = try StoreRecordReader(path: path)
        if let query { try reader.restrict(to: query) }
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// The store's records keyed by zone and name.
    static func keyed(_ records: [Record]) -> [String: Record] {
        var result: [String: Record] = [:]
        for record in records { result[key(record)] = record }
        return result
    }

    static func key(_ record: Record) -> String {
        let zone = record.zoneID ?? .default
        return zone.zoneName + "\u{0}" + (zone.ownerRecordName ?? "") + "\u{0}" + record.recordName
    }

    /// The compact JSON of a record.
    static func json(_ record: Record) -> [UInt8] {
        var out = JSONOutput(capacity: 1024)
        RecordJSON.encode(record, into: &out)
        return out.array
    }
}
