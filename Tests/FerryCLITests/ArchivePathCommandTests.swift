@testable import FerryCLI
import FerryRecords
import Foundation
import Testing

/// Zone and owner names that once gave archives Ferry could not read back or unpack.
@Suite("Archive member paths on the command line")
struct ArchivePathCommandTests {
    /// Converts `lines` to an archive, then checks `convert` and `verify` of it and `extract` to
    /// a real folder (and `tar xzf`) give back exactly the input records.
    func roundTrip(_ lines: [String]) throws {
        let dir = scratchDirectory()
        try write(lines.joined(separator: "\n") + "\n", to: dir + "/in.ndjson")
        let input = try records(at: dir + "/in.ndjson")
        let exact = { (records: [Record]) in records.map { Array(RecordJSON.encodedString($0).utf8) }.sorted { $0.lexicographicallyPrecedes($1) } }

        #expect(Ferry.execute(["convert", dir + "/in.ndjson", dir + "/store.tar.gz", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", dir + "/store.tar.gz", dir + "/back.ndjson", "--quiet"]) == 0)
        #expect(exact(try records(at: dir + "/back.ndjson")) == exact(input))
        #expect(Ferry.execute(["verify", dir + "/store.tar.gz", "--quiet"]) == 0)

        #expect(Ferry.execute(["extract", dir + "/store.tar.gz", dir + "/out", "--quiet"]) == 0)
        let files = try FileManager.default.subpathsOfDirectory(atPath: dir + "/out").filter { $0.hasSuffix(".ndjson") }
        #expect(files.count == lines.count)
        var extracted: [Record] = []
        for file in files { extracted += try records(at: dir + "/out/" + file) }
        #expect(exact(extracted) == exact(input))

        let (status, _, error) = try runShell("mkdir '\(dir)/tar' && tar xzf '\(dir)/store.tar.gz' -C '\(dir)/tar'")
        #expect(status == 0, "\(error)")
        let tarFiles = try FileManager.default.subpathsOfDirectory(atPath: dir + "/tar").filter { $0.hasSuffix(".ndjson") }
        #expect(tarFiles.count == lines.count)
    }

    @Test("Owners \"\" and \"\\u0000\" of one zone give an archive that convert, verify and extract read back (F1)")
    func emptyAndNULOwners() throws {
        try roundTrip([
            #"{"recordName":"a","zoneID":{"zoneName":"Z","ownerRecordName":""}}"#,
            #"{"recordName":"b","zoneID":{"zoneName":"Z","ownerRecordName":"\u0000"}}"#,
        ])
    }

    @Test("Zones named \"\" and \"\\u0000\" give an archive that convert, verify and extract read back (F1)")
    func emptyAndNULZones() throws {
        try roundTrip([
            #"{"recordName":"a","zoneID":{"zoneName":""}}"#,
            #"{"recordName":"b","zoneID":{"zoneName":"\u0000"}}"#,
        ])
    }

    @Test("A zone of 21 emoji and an owner of 30 CJK characters are extracted to a real folder (F6)")
    func longNames() throws {
        try roundTrip([
            #"{"recordName":"r","zoneID":{"zoneName":"\#(String(repeating: "😀", count: 21))"},"fields":{}}"#,
            #"{"recordName":"s","zoneID":{"zoneName":"Z","ownerRecordName":"\#(String(repeating: "界", count: 30))"}}"#,
            #"{"recordName":"t","zoneID":{"zoneName":"\#(String(repeating: "é", count: 300))"}}"#,
        ])
    }
}
