import FerryKit
import FerryTestSupport
import Foundation
import Testing

@Suite("Inspecting and comparing through FerryKit")
struct InspectionTests {
    @Test("Records are summed up by zone, type and field; stores and archives describe themselves")
    func inspect() throws {
        let folder = TestFiles.folder()
        let chat = TestFiles.sample("chat.ndjson")
        let records = try Inspection(configuration: .init(inputs: [chat])).run()
        #expect(records.summary.records == 5 && records.archives.isEmpty && records.stores.isEmpty)
        #expect(records.summary.bytes == (try TestFiles.bytes(chat).count))
        #expect(records.json == records.summary.json && records.text == records.summary.text)

        try Conversion(configuration: .init(inputs: [chat], output: folder + "/s.sqlite")).run()
        try Conversion(configuration: .init(inputs: [chat], output: folder + "/a.tar.gz")).run()
        let described = try Inspection(configuration: .init(inputs: [folder + "/a.tar.gz", folder + "/s.sqlite"])).run()
        #expect(described.summary.records == 0 && !described.showsRecords)
        #expect(described.stores.map(\.recordCount) == [5])
        #expect(described.archives.map(\.manifest.recordCount) == [5])
        let json = try JSONValue(parsing: described.json)
        #expect(json["stores"] != nil && json["archives"] != nil && json["records"] == nil)
        #expect(described.text.hasPrefix("\(folder)/s.sqlite: Ferry store"))
    }

    @Test("Responses that list zones are collected, not counted as records")
    func zoneListings() throws {
        let folder = TestFiles.folder()
        try TestFiles.write(#"{"zones": [{"zoneID": {"zoneName": "Chats"}, "syncToken": "T1"}]}"# + "\n", to: folder + "/zones.json")
        let report = try Inspection(configuration: .init(inputs: [folder + "/zones.json", TestFiles.sample("chat.ndjson")])).run()
        #expect(report.summary.records == 5)
        #expect(report.summary.zoneListings.map(\.shape) == ["zones/list"])
        #expect(report.summary.zoneListings.first?.warning.hasSuffix("holds no records; `ferry inspect` describes its zones") == true)
    }

    @Test("Two exports compare record by record: only in A, only in B, changed")
    func diff() throws {
        let folder = TestFiles.folder()
        var lines = try String(contentsOfFile: TestFiles.sample("chat.ndjson"), encoding: .utf8).split(separator: "\n").map(String.init)
        try TestFiles.write(lines.joined(separator: "\n") + "\n", to: folder + "/a.ndjson")
        let removed = lines.removeFirst()
        lines[0] = lines[0].replacingOccurrences(of: "Hello!", with: "Hi!")
        try TestFiles.write(lines.joined(separator: "\n") + "\n", to: folder + "/b.ndjson")
        let diff = try Comparison(configuration: .init(a: folder + "/a.ndjson", b: folder + "/b.ndjson")).run()
        #expect(diff.onlyInA.map(\.recordName) == [try RecordJSON.decodeRecord(removed).recordName])
        #expect(diff.onlyInB.isEmpty && diff.changed.count == 1 && diff.changed.first?.fields == ["text"])
        #expect(Comparison.text(diff).hasSuffix("different: A has 5 records, B 4; 3 identical, 1 only in A, 0 only in B, 1 changed\n"))
        #expect(try JSONValue(parsing: Comparison.json(diff))["identical"] == .bool(false))
        let same = try Comparison(configuration: .init(a: folder + "/a.ndjson", b: TestFiles.sample("chat.ndjson"))).run()
        #expect(same.isIdentical)
    }

    @Test("An input that cannot be read is a data error, with the error underneath")
    func unreadable() throws {
        let folder = TestFiles.folder()
        // SQLite's header, another program's application_id: not a store, and not to be read as one.
        try TestFiles.write(Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0, count: 84), to: folder + "/x.sqlite")
        #expect {
            try Inspection(configuration: .init(inputs: [folder + "/x.sqlite"])).run()
        } throws: { error in
            guard let error = error as? FerryError else { return false }
            return error.kind == .data && error.message.hasPrefix("\(folder)/x.sqlite: expected a Ferry store")
                && error.message.contains("belongs to another program")
        }
    }

    @Test("Archives and stores verify, and a truncated archive says where it broke")
    func verify() throws {
        let folder = TestFiles.folder()
        try Conversion(configuration: .init(inputs: [TestFiles.sample("chat.ndjson")], output: folder + "/a.tar.gz")).run()
        try Conversion(configuration: .init(inputs: [TestFiles.sample("chat.ndjson")], output: folder + "/s.sqlite")).run()
        let verification = Verification()
        #expect(verification.verify(folder + "/a.tar.gz").isSuccess)
        #expect(verification.verify(folder + "/s.sqlite").line?.contains("SQLite's integrity check and Ferry's invariants hold") == true)
        try TestFiles.write(Array(try TestFiles.bytes(folder + "/a.tar.gz").prefix(300)), to: folder + "/t.tar.gz")
        let broken = verification.verify(folder + "/t.tar.gz")
        #expect(!broken.isSuccess && broken.problems.count == 1)
        #expect(try JSONValue(parsing: broken.json ?? "")["member"] == .string("manifest.json"))
    }
}
