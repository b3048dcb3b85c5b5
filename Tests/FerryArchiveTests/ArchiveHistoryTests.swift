import Foundation
import Testing
@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryRecords

/// Reads every history member of `reader` whole: (path, bytes) in order.
private func historyMembers(_ reader: ArchiveReader) throws -> [(path: String, bytes: [UInt8])] {
    var members: [(path: String, bytes: [UInt8])] = []
    while let member = try reader.nextHistoryMember() {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 7) // small reads: members are read across many calls
        while case let n = try buffer.withUnsafeMutableBytes({ try member.source.read(into: $0) }), n > 0 { bytes += buffer[..<n] }
        members.append((member.path, bytes))
    }
    return members
}

@Suite("Archives read as history")
struct ArchiveHistoryTests {
    let logA = Array(#"{"event":"checkpoint","syncToken":"a1","moreComing":false}"#.utf8) + [10]
    let logB = Array(#"{"event":"checkpoint","syncToken":"b1","moreComing":false}"#.utf8) + [10]

    /// A Ferry archive with a record, an asset and the two change logs.
    private func ferryArchive(_ scratch: ScratchDirectory) throws -> String {
        let path = scratch.file("store.tar.gz")
        let writer = try ArchiveWriter(path: path)
        try writer.add(Record(recordName: "r1", recordType: "Note"))
        try writer.addAsset(fileChecksum: "abc", bytes: Array("asset".utf8))
        try writer.addChangeLog(named: "a.ndjson", from: MemorySource(logA))
        try writer.addChangeLog(named: "b.ndjson", from: MemorySource(logB))
        try writer.finish()
        return path
    }

    @Test("An archive Ferry wrote gives its change logs, byte for byte, and checks the other members")
    func ferryArchiveGivesChangeLogs() throws {
        let scratch = try ScratchDirectory()
        let reader = try ArchiveReader(path: try ferryArchive(scratch))
        let members = try historyMembers(reader)
        #expect(members.map(\.path) == ["changes/a.ndjson", "changes/b.ndjson"])
        #expect(members.map(\.bytes) == [logA, logB])
    }

    @Test("A change log altered inside the archive fails its SHA-256 check when the next member is asked for")
    func alteredChangeLogIsCaught() throws {
        let scratch = try ScratchDirectory()
        let tarGzip = try Array(Data(contentsOf: URL(fileURLWithPath: try ferryArchive(scratch))))
        var tar = try GzipSource(wrapping: MemorySource(tarGzip)).readAll()
        let needle = Array("\"a1\"".utf8)
        let at = try #require((0...(tar.count - needle.count)).first { Array(tar[$0..<($0 + needle.count)]) == needle })
        tar[at + 1] = UInt8(ascii: "z") // same size, other bytes
        let reader = try ArchiveReader(source: MemorySource(tar, name: "altered.tar"))
        let error = #expect(throws: ArchiveError.self) { _ = try historyMembers(reader) }
        #expect(error?.code == .checksumMismatch && error?.member == "changes/a.ndjson", "\(String(describing: error))")
    }

    @Test("A tar without a manifest gives its record files and change logs in name order, decompressed; other members are skipped")
    func tarWithoutManifest() throws {
        let page = Array(#"{"zones":[]}"#.utf8)
        let bytes = try TarBuilder.tarGzip([
            .directory("pages/"), .file("pages/._001.json", [0]), .file("pages/001.json", page),
            .file("pages/002.json.gz", try TarBuilder.gzip(page)), .file("pages/notes.txt", Array("n".utf8)),
            .file("assets/abc", Array("asset".utf8)), .file("pages/sub/003.ndjson", logA), .file("pages/z.jsonl", logB),
        ])
        let reader = try ArchiveReader(source: MemorySource(bytes, name: "pages.tar.gz"))
        let members = try historyMembers(reader)
        #expect(members.map(\.path) == ["pages/001.json", "pages/002.json.gz", "pages/sub/003.ndjson", "pages/z.jsonl"])
        #expect(members.map(\.bytes) == [page, page, logA, logB])
        #expect(Set(reader.skippedMembers.map(\.path)) == ["pages/._001.json", "pages/notes.txt"])
    }

    @Test("History members out of name order are refused, naming the member and the one before it")
    func outOfOrder() throws {
        let bytes = try TarBuilder.tarGzip([.file("p/b.json", Array("{}".utf8)), .file("p/a.json", Array("{}".utf8))])
        let reader = try ArchiveReader(source: MemorySource(bytes, name: "p.tar.gz"))
        let error = #expect(throws: ArchiveError.self) { _ = try historyMembers(reader) }
        #expect(error?.member == "p/a.json" && error?.message.contains("after `p/b.json`") == true, "\(String(describing: error))")
    }

    @Test("An archive of records and no change log is a state, refused as history")
    func stateIsRefused() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("state.tar.gz")
        let writer = try ArchiveWriter(path: path)
        try writer.add(Record(recordName: "r1", recordType: "Note"))
        try writer.finish()
        let error = #expect(throws: ArchiveError.self) { _ = try historyMembers(try ArchiveReader(path: path)) }
        #expect(error?.message.contains("holding a state") == true, "\(String(describing: error))")
    }
}
