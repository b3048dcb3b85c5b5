import FerryRecords
import FerryStore
import Testing

/// Values at the edges of what a configuration or a query may hold open a store and run, rather
/// than trap in arithmetic.
@Suite("Store limits")
struct StoreLimitTests {
    @Test("Any busy timeout opens a store: none for zero, less or NaN, SQLite's longest wait for more",
          arguments: [0, -1, .nan, .infinity, -.infinity, 1e16, 1e300, RecordStore.Configuration.maximumBusyTimeout])
    func busyTimeout(seconds: Double) throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 5, seed: 4), into: path)
        let count = try RecordStore(path: path).recordCount()
        let store = try RecordStore(path: path, access: .readWrite, configuration: .init(busyTimeout: seconds))
        #expect(try store.recordCount() == count)
        let writer = try StoreWriter(path: path, configuration: .init(mode: .upsert, busyTimeout: seconds))
        try writer.write(Record(recordName: "x", recordType: "T"))
        try writer.finish()
    }

    @Test("A query limit of Int.max returns every record, with no next page")
    func largestLimit() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 20, seed: 5), into: path)
        let store = try RecordStore(path: path)
        let page = try store.query(StoreQuery(limit: .max))
        #expect(page.recordsJSON.count == (try store.recordCount()))
        #expect(page.recordsJSON.count > 0)
        #expect(page.continuationMarker == nil)
    }
}
