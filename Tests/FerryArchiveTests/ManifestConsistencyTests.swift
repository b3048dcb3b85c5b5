import FerryInternals
import Foundation
import Testing
@testable import FerryArchive
import FerryIO
import FerryRecords
import FerryTestSupport

/// Archives whose members are intact (sizes and SHA-256 match the manifest) but whose records
/// or zones disagree with what the manifest says of them: `verify`, `extract` and reading all
/// refuse them, the same way.
@Suite("Manifests that disagree with the records")
struct ManifestConsistencyTests {
    static let chats = "records/private/Chats.ndjson"
    static let lists = "records/private/Lists.ndjson"

    static func line(_ name: String, _ type: String, zone: String, count: String = "1") -> String {
        "{\"recordName\":\"\(name)\",\"recordType\":\"\(type)\",\"zoneID\":{\"zoneName\":\"\(zone)\"},"
            + "\"fields\":{\"count\":{\"value\":\(count),\"type\":\"INT64\"}}}\n"
    }

    /// Two Message records and one Chat in `Chats`, one Item in `Lists`.
    static let chatsBytes = Array((line("m1", "Message", zone: "Chats") + line("m2", "Message", zone: "Chats")
        + line("c1", "Chat", zone: "Chats")).utf8)
    static let listsBytes = Array(line("i1", "Item", zone: "Lists").utf8)

    /// A consistent manifest for the two members, then changed by `change`; its JSON, then
    /// changed by `edit`; the archive with the manifest first.
    static func archive(chats: [UInt8] = chatsBytes, _ change: (inout ArchiveManifest) -> Void = { _ in },
                        edit: (String) -> String = { $0 }) throws -> [UInt8] {
        var manifest = ArchiveManifest(createdAt: 0, ferryVersion: "hand-made", zones: [
            .init(database: "private", zoneID: ZoneID(zoneName: "Chats"), path: Self.chats, recordCount: 3,
                  recordTypeCounts: ["Chat": 1, "Message": 2]),
            .init(database: "private", zoneID: ZoneID(zoneName: "Lists"), path: Self.lists, recordCount: 1,
                  recordTypeCounts: ["Item": 1]),
        ], members: [
            .init(path: Self.chats, kind: .records, size: chats.count, sha256: SHA256.hexDigest(of: chats)),
            .init(path: Self.lists, kind: .records, size: listsBytes.count, sha256: SHA256.hexDigest(of: listsBytes)),
        ])
        manifest.schema = [
            "Chat": .init(recordCount: 1, fields: ["count": ["INT64": 1]]),
            "Message": .init(recordCount: 2, fields: ["count": ["INT64": 2]]),
            "Item": .init(recordCount: 1, fields: ["count": ["INT64": 1]]),
        ]
        change(&manifest)
        let json = Array(edit(String(decoding: manifest.jsonBytes(), as: UTF8.self)).utf8)
        return try TarBuilder.tarGzip([.file("manifest.json", json), .file(Self.chats, chats), .file(Self.lists, listsBytes)])
    }

    /// Archives with intact members that disagree with their manifest, and the error expected.
    static let inconsistent: [(String, ArchiveError.Code, @Sendable () throws -> [UInt8])] = [
        ("a zone's record count", .countMismatch, { try archive { $0.zones[0].recordCount = 2; $0.zones[0].recordTypeCounts["Message"] = 1 } }),
        ("a zone's counts per type", .countMismatch, { try archive { $0.zones[0].recordTypeCounts = ["Chat": 2, "Message": 1] } }),
        ("a record of the wrong field type", .invalidRecord, {
            try archive(chats: Array((line("m1", "Message", zone: "Chats") + line("m2", "Message", zone: "Chats", count: "\"x\"")
                + line("c1", "Chat", zone: "Chats")).utf8))
        }),
        ("the schema", .countMismatch, { try archive { $0.schema["Message"]?.fields["count"] = ["DOUBLE": 2] } }),
        ("two zones sharing one records member", .invalidManifest, { try archive { $0.zones[1].path = ManifestConsistencyTests.chats } }),
        ("a records member of no zone", .invalidManifest, { try archive { $0.zones.removeLast() } }),
        ("the top-level record count", .invalidManifest, {
            try archive(edit: { $0.replacingFirst("\"recordCount\": 4,", with: "\"recordCount\": 99,") })
        }),
    ]

    @Test("The consistent archive reads, verifies and extracts")
    func consistent() throws {
        let bytes = try Self.archive()
        #expect(try readRecords(ArchiveReader(source: MemorySource(bytes))).count == 4)
        #expect(try ArchiveVerifier().verify(MemorySource(bytes)).recordCount == 4)
        let scratch = try ScratchDirectory()
        let reader = try ArchiveReader(source: MemorySource(bytes))
        #expect(try reader.extract(to: scratch.file("out")) == 3)
        #expect(reader.recordCount == 4)
        #expect(try fileBytes(scratch.file("out/" + Self.chats)) == Self.chatsBytes)
    }

    @Test("extract fails where verify fails, with the same error, and puts no member in place",
          arguments: ManifestConsistencyTests.inconsistent.indices)
    func extractChecksWhatVerifyChecks(index: Int) throws {
        let (what, code, make) = Self.inconsistent[index]
        let bytes = try make()
        let verified = try #require(archiveError { _ = try ArchiveVerifier().verify(MemorySource(bytes)) }, "\(what)")
        #expect(verified.code == code, "\(what): \(verified)")
        let scratch = try ScratchDirectory()
        let extracted = try #require(archiveError {
            try ArchiveReader(source: MemorySource(bytes)).extract(to: scratch.file("out"))
        }, "\(what)")
        #expect(extracted.description == verified.description, "\(what)")
        #expect(scratch.listing().filter { $0 != "out" }.isEmpty, "\(what): \(scratch.listing())")
    }

    @Test("Reading records refuses a manifest whose zones and records members do not pair up one to one, naming them",
          arguments: ManifestConsistencyTests.inconsistent.indices.filter { ManifestConsistencyTests.inconsistent[$0].1 == .invalidManifest })
    func readingRefusesInconsistentZones(index: Int) throws {
        let (what, _, make) = Self.inconsistent[index]
        let error = try #require(archiveError { _ = try readRecords(ArchiveReader(source: MemorySource(try make()))) }, "\(what)")
        #expect(error.code == .invalidManifest, "\(what): \(error)")
        #expect(error.message.contains("Lists") || error.message.contains("recordCount"), "\(what): \(error.message)")
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced (the test fails if there is none).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else {
            Issue.record("expected `\(target)` in the text")
            return self
        }
        return replacingCharacters(in: range, with: replacement)
    }
}

@Suite("Extracting archives without a manifest")
struct ExtractWithoutManifestTests {
    @Test("extract writes a record file that does not decode when no manifest vouches for it, byte for byte")
    func writesUndecodableRecordFiles() throws {
        let response = Array(#"{"records":[{"recordName":"a","serverErrorCode":"NOT_FOUND","reason":"gone"}]}"#.utf8)
        let broken = Array("{\"recordName\":\n".utf8)
        let bytes = try TarBuilder.tarGzip([.file("pages/lookup.json", response), .file("pages/broken.ndjson", broken),
                                            .file("package.json", Array(#"{"name":"x"}"#.utf8))])
        let scratch = try ScratchDirectory()
        #expect(try ArchiveReader(source: MemorySource(bytes)).extract(to: scratch.file("out")) == 3)
        #expect(try fileBytes(scratch.file("out/pages/lookup.json")) == response)
        #expect(try fileBytes(scratch.file("out/pages/broken.ndjson")) == broken)
    }
}
