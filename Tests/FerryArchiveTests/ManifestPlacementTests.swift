import FerryInternals
import Testing
@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryRecords
import FerryTestSupport

@Suite("A manifest anywhere in the archive")
struct ManifestPlacementTests {
    /// A Ferry archive's members (manifest first, as written) and what reading it gives.
    struct Members {
        var manifest: (path: String, bytes: [UInt8])
        var others: [(path: String, bytes: [UInt8])]
        var items: [ArchiveRecord]
        var assets: [String: [UInt8]]

        /// A tar.gz of the members with the manifest at `position` among the others.
        func archive(manifestAt position: Int, replacing replaced: [String: [UInt8]] = [:],
                     adding added: [(String, [UInt8])] = []) throws -> [UInt8] {
            var entries = others.map { TarBuilder.Entry.file($0.path, replaced[$0.path] ?? $0.bytes) }
            entries += added.map { TarBuilder.Entry.file($0.0, $0.1) }
            entries.insert(.file(manifest.path, manifest.bytes), at: min(position, entries.count))
            return try TarBuilder.tarGzip(entries)
        }
    }

    /// Writes a Ferry archive of generated records in three databases, with assets, and takes its
    /// members apart.
    static func members(seed: UInt64 = 7, count: Int = 120) throws -> Members {
        var generator = RecordGenerator(seed: seed)
        let records = (0..<count).map { _ in generator.record() }
        let scratch = try ScratchDirectory()
        let databases = ["private", "shared", "public"]
        _ = try ArchiveRoundTripTests.writeArchive(records, to: scratch.file("store.tar.gz"), database: { databases[$0 % 3] },
                                                    threads: 1)
        let reader = try ArchiveReader(path: scratch.file("store.tar.gz"))
        var assets: [String: [UInt8]] = [:]
        reader.onMember = { member, source in
            if member.kind == .asset { assets[member.fileChecksum ?? ""] = try source.readAll() }
        }
        let items = try readArchive(reader)
        try ArchiveReader(path: scratch.file("store.tar.gz")).extract(to: scratch.file("x"))
        let manifest = reader.manifest
        return Members(manifest: ("manifest.json", try fileBytes(scratch.file("x/manifest.json"))),
                       others: try manifest.members.map { ($0.path, try fileBytes(scratch.file("x/" + $0.path))) },
                       items: items, assets: assets)
    }

    static func read(_ bytes: [UInt8], name: String = "store.tar.gz") throws -> (ArchiveReader, [ArchiveRecord], [String: [UInt8]]) {
        let reader = try ArchiveReader(source: MemorySource(bytes, name: name))
        var assets: [String: [UInt8]] = [:]
        reader.onMember = { member, source in
            if member.kind == .asset { assets[member.fileChecksum ?? ""] = try source.readAll() }
        }
        return (reader, try readArchive(reader), assets)
    }

    static func key(_ item: ArchiveRecord) -> String {
        "\(item.database ?? "-") \(item.zoneID?.zoneName ?? "-") \(item.zoneID?.ownerRecordName ?? "-") "
            + RecordJSON.encodedString(item.record)
    }

    @Test("A manifest first, in the middle or last gives the same records, zones and assets", arguments: [0, 1, 3, 1000])
    func placements(position: Int) throws {
        let members = try Self.members()
        #expect(members.others.count > 4 && !members.assets.isEmpty)
        let bytes = try members.archive(manifestAt: position)
        let (reader, items, assets) = try Self.read(bytes)
        #expect(items.map(Self.key).sorted() == members.items.map(Self.key).sorted())
        #expect(assets == members.assets)
        let placement = reader.manifestPlacement
        #expect(placement == (position == 0 ? .first : .after(members: min(position, members.others.count))))
        #expect(reader.manifest.members.count == members.others.count)
        #expect(reader.memberCount == members.others.count)
        let report = try ArchiveVerifier().verify(MemorySource(bytes))
        #expect(report.recordCount == members.items.count && report.manifestPlacement == placement)
        #expect(report.summary.contains("match the manifest"))
    }

    @Test("A records member changed before a late manifest fails when the manifest arrives, naming it")
    func corruptEarlyMember() throws {
        let members = try Self.members()
        let target = try #require(members.others.first { $0.path.hasPrefix("records/") })
        var bytes = target.bytes
        bytes[bytes.count / 2] = bytes[bytes.count / 2] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        let archive = try members.archive(manifestAt: 1000, replacing: [target.path: bytes])
        let error = try #require(archiveError { _ = try Self.read(archive) })
        #expect([ArchiveError.Code.checksumMismatch, .invalidRecord].contains(error.code))
        #expect(error.member == target.path)
        let verify = try #require(archiveError { _ = try ArchiveVerifier().verify(MemorySource(archive)) })
        #expect(verify.member == target.path)
    }

    @Test("A member before a late manifest that it does not list is refused when the manifest arrives")
    func unlistedEarlyMember() throws {
        let members = try Self.members()
        let archive = try TarBuilder.tarGzip([.file("extra.ndjson", Array("{\"recordName\":\"x\"}\n".utf8))]
            + members.others.map { .file($0.path, $0.bytes) } + [.file(members.manifest.path, members.manifest.bytes)])
        let error = try #require(archiveError { _ = try Self.read(archive) })
        #expect(error.code == .unexpectedMember && error.member == "extra.ndjson")
        #expect(error.message.contains("before the manifest"))
        #expect(error.offset == 0)
    }

    @Test("A listed member missing from an archive with a late manifest fails at the end")
    func missingMember() throws {
        let members = try Self.members()
        let dropped = members.others[members.others.count - 1].path
        let archive = try TarBuilder.tarGzip(members.others.dropLast().map { .file($0.path, $0.bytes) }
            + [.file(members.manifest.path, members.manifest.bytes)])
        let error = try #require(archiveError { _ = try Self.read(archive) })
        #expect(error.code == .missingMember && error.member == dropped)
    }

    @Test("A second manifest is refused")
    func secondManifest() throws {
        let members = try Self.members(count: 10)
        let archive = try members.archive(manifestAt: 0, adding: [(members.manifest.path, members.manifest.bytes)])
        let error = try #require(archiveError { _ = try Self.read(archive) })
        #expect(error.code == .unexpectedMember && error.member == "manifest.json")
        #expect(error.message.contains("again"))
    }

    /// A hand-made archive: the zone `Chats` stored at a path that does not spell its name.
    static func handMade(manifestFirst: Bool) throws -> [UInt8] {
        let records = Array("{\"recordName\":\"m1\",\"recordType\":\"Message\",\"zoneID\":{\"zoneName\":\"Chats\"}}\n".utf8)
        let manifest = ArchiveManifest(createdAt: 0, ferryVersion: "hand-made", zones: [
            .init(database: "private", zoneID: ZoneID(zoneName: "Chats"), path: "records/private/chats.ndjson",
                  recordCount: 1, recordTypeCounts: ["Message": 1]),
        ], members: [
            .init(path: "records/private/chats.ndjson", kind: .records, size: records.count, sha256: SHA256.hexDigest(of: records)),
        ])
        let manifestBytes = manifest.jsonBytes()
        return try TarBuilder.tarGzip(manifestFirst
            ? [.file("manifest.json", manifestBytes), .file("records/private/chats.ndjson", records)]
            : [.file("records/private/chats.ndjson", records), .file("manifest.json", manifestBytes)])
    }

    @Test("Records read before a late manifest that puts them in another zone fail, and read fine with the manifest first")
    func attributionConflict() throws {
        let error = try #require(archiveError { _ = try Self.read(try Self.handMade(manifestFirst: false)) })
        #expect(error.code == .memberBeforeManifest)
        #expect(error.member == "records/private/chats.ndjson")
        #expect(error.message.contains("zone `chats`") && error.message.contains("zone `Chats`"))
        #expect(error.message.contains("put manifest.json first"))
        let (_, items, _) = try Self.read(try Self.handMade(manifestFirst: true))
        #expect(items.map(\.zoneID?.zoneName) == ["Chats"])
    }

    @Test("extract stages the members before a late manifest and puts them in place once it vouches for them")
    func extractLateManifest() throws {
        let members = try Self.members(count: 40)
        let scratch = try ScratchDirectory()
        let reader = try ArchiveReader(source: MemorySource(try members.archive(manifestAt: 2)))
        #expect(try reader.extract(to: scratch.file("out")) == members.others.count + 1)
        for (path, bytes) in members.others + [members.manifest] {
            #expect(try fileBytes(scratch.file("out/" + path)) == bytes, "\(path)")
        }
        #expect(scratch.listing().filter { $0.contains(".ferry") }.isEmpty)
    }

    @Test("extract writes none of the members before a late manifest when one of them differs from it")
    func extractCorruptEarlyMember() throws {
        let members = try Self.members(count: 40)
        let target = members.others[1]
        var bytes = target.bytes
        bytes[0] ^= 0x01
        let scratch = try ScratchDirectory()
        let archive = try members.archive(manifestAt: 3, replacing: [target.path: bytes])
        let error = try #require(archiveError { try ArchiveReader(source: MemorySource(archive)).extract(to: scratch.file("out")) })
        // Records members are decoded as verify decodes them: the flip may break a record first.
        #expect([ArchiveError.Code.checksumMismatch, .invalidRecord].contains(error.code) && error.member == target.path)
        #expect(scratch.listing().filter { $0.hasPrefix("out/") }.isEmpty, "\(scratch.listing())")
    }

    @Test("The system tar with the manifest put last is read and verified", arguments: ["gnu", "pax"])
    func systemTarManifestLast(format: String) throws {
        let members = try Self.members(count: 60)
        let scratch = try ScratchDirectory()
        let root = scratch.file("store")
        for (path, bytes) in members.others + [members.manifest] {
            _ = try runTool("mkdir", ["-p", root + "/" + (path.split(separator: "/").dropLast().joined(separator: "/"))])
            try writeFile(root + "/" + path, bytes)
        }
        let archive = scratch.file("late.tgz")
        let tar = try runTool("tar", ["--format=\(format)", "-czf", archive, "records", "assets", "manifest.json"], in: root)
        #expect(tar.status == 0, "\(tar.error)")
        let report = try ArchiveVerifier().verify(path: archive)
        #expect(report.recordCount == members.items.count)
        #expect(report.manifestPlacement == .after(members: members.others.count))
        let (_, items, assets) = try Self.read(try fileBytes(archive))
        #expect(items.map(Self.key).sorted() == members.items.map(Self.key).sorted())
        #expect(assets == members.assets)
    }
}
