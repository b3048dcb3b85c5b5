import Testing
import FerryIO
import FerryRecords
@testable import FerryStore
import FerryTestSupport

/// Zone names and owners are compared by their bytes, as record names are: "é" (U+00E9) and
/// "e" + U+0301 look alike and are equal as Swift strings, yet they name different zones.
@Suite("The store tells names apart by their bytes")
struct StoreExactNameTests {
    static let composed = "\u{E9}", decomposed = "e\u{301}"

    /// A record `r` in the zone `name` (or owned by `name`, with the zone `Z`).
    static func record(in name: String, asOwner: Bool) -> Record {
        var record = Record(recordName: "r", recordType: "T",
                            zoneID: asOwner ? ZoneID(zoneName: "Z", ownerRecordName: name) : ZoneID(zoneName: name))
        record.fields = ["v": RecordField(.string(name == composed ? "composed" : "decomposed"), type: .string)]
        return record
    }

    /// Each record's zone name, owner and `v`, as bytes, sorted.
    static func contents(_ path: String) throws -> [[UInt8]] {
        try StoreFixture.readAll(path).map { record in
            let zone = record.zoneID ?? .default
            return Array(zone.zoneName.utf8) + [0] + Array((zone.ownerRecordName ?? "").utf8) + [0] + StoreFixture.json(record)
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func expected(asOwner: Bool) -> [[UInt8]] {
        [composed, decomposed].map { name in
            let record = record(in: name, asOwner: asOwner)
            let zone = record.zoneID!
            return Array(zone.zoneName.utf8) + [0] + Array((zone.ownerRecordName ?? "").utf8) + [0] + StoreFixture.json(record)
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    @Test("Zones whose names or owners differ only in normalization are two zones, imported new or into a store",
          arguments: [false, true])
    func importKeepsBoth(asOwner: Bool) throws {
        let records = [Self.composed, Self.decomposed].map { Self.record(in: $0, asOwner: asOwner) }
        let fresh = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: fresh)
        #expect(try Self.contents(fresh) == Self.expected(asOwner: asOwner))

        let existing = StoreFixture.newPath()
        try StoreFixture.importRecords([], into: existing)
        try StoreFixture.importRecords(records, into: existing, mode: .upsert)
        #expect(try Self.contents(existing) == Self.expected(asOwner: asOwner))
    }

    @Test("Replayed into a new or an existing store, both zones keep their record", arguments: [false, true])
    func replayKeepsBoth(asOwner: Bool) throws {
        var history: [UInt8] = []
        for name in [Self.composed, Self.decomposed] {
            var out = JSONOutput(capacity: 256)
            RecordJSON.encode(Self.record(in: name, asOwner: asOwner), into: &out)
            history += Array("{\"event\":\"recordSaved\",\"record\":".utf8) + out.array + Array("}\n".utf8)
        }
        let fresh = StoreFixture.newPath()
        try StoreReplayTests.replay(history, into: fresh)
        #expect(try Self.contents(fresh) == Self.expected(asOwner: asOwner))

        let existing = StoreFixture.newPath()
        try StoreFixture.importRecords([], into: existing)
        try StoreReplayTests.replay(history, into: existing)
        #expect(try Self.contents(existing) == Self.expected(asOwner: asOwner))
    }
}

@Suite("The store keeps what every format keeps")
struct StoreEmptyNameTests {
    @Test("A record with an empty recordName is stored, read back and replaced like any other")
    func emptyName() throws {
        var record = Record(recordName: "", recordType: "T", zoneID: ZoneID(zoneName: "Z"))
        record.fields = ["v": RecordField(.string("first"), type: .string)]
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords([record, Record(recordName: "other", recordType: "T")], into: path)
        #expect(try StoreFixture.readAll(path).map { StoreFixture.json($0) } == [StoreFixture.json(record), StoreFixture.json(Record(recordName: "other", recordType: "T"))])
        record.fields = ["v": RecordField(.string("second"), type: .string)]
        try StoreFixture.importRecords([record], into: path, mode: .upsert)
        #expect(try StoreFixture.readAll(path).first.map { StoreFixture.json($0) } == StoreFixture.json(record))
        #expect(try RecordStore(path: path).verify().isIntact)
    }
}
