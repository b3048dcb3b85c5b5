import Testing
import FerryArchive
import FerryRecords
import FerryTestSupport

@Suite("Zone identity in archives")
struct ZoneKeyTests {
    @Test("Zones whose names differ only in Unicode normalization get a records member each")
    func normalizationVariantsStayApart() throws {
        let composed = ZoneID(zoneName: "caf\u{E9}")
        let decomposed = ZoneID(zoneName: "cafe\u{301}")
        let scratch = try ScratchDirectory()
        let path = scratch.file("zones.tgz")
        let writer = try ArchiveWriter(path: path, configuration: .init(ferryVersion: "test", createdAt: 0))
        try writer.add(Record(recordName: "a", zoneID: composed), database: "private")
        try writer.add(Record(recordName: "b", zoneID: decomposed), database: "private")
        try writer.finish()

        let reader = try ArchiveReader(path: path)
        #expect(reader.manifest.zones.count == 2)
        let read = try readArchive(reader)
        #expect(read.count == 2)
        for item in read {
            #expect(Array((item.zoneID?.zoneName ?? "").utf8) == Array((item.record.zoneID ?? .default).zoneName.utf8))
        }
    }
}
