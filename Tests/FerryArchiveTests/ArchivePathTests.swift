import FerryInternals
import Foundation
import Testing
@testable import FerryArchive
import FerryIO
import FerryRecords
import FerryTestSupport

/// Names that have broken member paths: empty, NUL, escapes, separators, dots, `@`, the
/// shortening mark, canonically equivalent spellings, and long multi-byte strings around the
/// 255-byte limit of a file name.
enum HostileNames {
    static let fixed: [String] = [
        "", "\0", "\0\0", "%", "%%", "%00", "%25", "%2", "/", "//", ".", "..", "../x", ".hidden", "@", "a@b", "@@",
        "~", "a~0123456789abcdef0123456789abcdef", "Z", "_defaultZone", "Chats", "Trips/2024", "é", "e\u{301}",
        "\u{7F}", " ", "\n", String(repeating: "😀", count: 21), String(repeating: "😀", count: 200),
        String(repeating: "界", count: 30), String(repeating: "é", count: 100), String(repeating: "%", count: 90),
        String(repeating: "\0", count: 300), String(repeating: "a", count: 240), String(repeating: "a", count: 241),
        String(repeating: "a", count: 248), String(repeating: "a", count: 249), String(repeating: "a", count: 255),
        String(repeating: "a", count: 256), String(repeating: "a", count: 1000),
        String(repeating: "a", count: 246) + "😀", String(repeating: "a", count: 246) + "é",
    ]

    /// Pieces random names are made of.
    static let alphabet = ["a", "Z", "0", ".", "..", "%", "%00", "/", "@", "~", "\0", "é", "e\u{301}", "😀", "界", " ", "-"]

    /// A random name of 0 to 120 pieces (up to a few hundred bytes).
    static func random(_ random: inout SeededRandom) -> String {
        let length = random.chance(0.2) ? random.below(4) : random.below(121)
        return (0..<length).map { _ in random.pick(alphabet) }.joined()
    }
}

/// A zone of a database, compared by exact bytes (Swift's `==` on strings would merge
/// canonically equivalent names such as `é` and `e\u{301}`).
struct ExactZone: Hashable, CustomStringConvertible {
    var database: [UInt8]
    var zoneName: [UInt8]
    var owner: [UInt8]?

    init(database: String, zoneName: String, owner: String?) {
        self.database = Array(database.utf8)
        self.zoneName = Array(zoneName.utf8)
        self.owner = owner.map { Array($0.utf8) }
    }

    var databaseName: String { String(decoding: database, as: UTF8.self) }
    var zoneID: ZoneID {
        ZoneID(zoneName: String(decoding: zoneName, as: UTF8.self), ownerRecordName: owner.map { String(decoding: $0, as: UTF8.self) })
    }
    var description: String { "\(databaseName.debugDescription)/\(zoneID.zoneName.debugDescription)@\(String(describing: zoneID.ownerRecordName?.debugDescription))" }
}

/// Hostile zones: every fixed name as a zone name (no owner, and owners `""` and `"\0"`), every
/// fixed name as an owner of zone `Z`, some fixed names as databases, and random triples.
func hostileZones(seed: UInt64, randomCount: Int = 300) -> [ExactZone] {
    var zones: [ExactZone] = []
    for name in HostileNames.fixed {
        zones.append(ExactZone(database: "private", zoneName: name, owner: nil))
        zones.append(ExactZone(database: "shared", zoneName: name, owner: ""))
        zones.append(ExactZone(database: "shared", zoneName: name, owner: "\0"))
        zones.append(ExactZone(database: "shared", zoneName: "Z", owner: name))
        if !name.isEmpty { zones.append(ExactZone(database: name, zoneName: "Z", owner: nil)) }
    }
    var random = SeededRandom(seed: seed)
    for _ in 0..<randomCount {
        var database = random.chance(0.8) ? random.pick(["private", "shared", "public"]) : HostileNames.random(&random)
        if database.isEmpty { database = "private" }
        let owner = random.chance(0.5) ? HostileNames.random(&random) : nil
        zones.append(ExactZone(database: database, zoneName: HostileNames.random(&random), owner: owner))
    }
    var seen: Set<ExactZone> = []
    return zones.filter { seen.insert($0).inserted }
}

/// The archive's records, compared by exact bytes.
func exactLines(_ records: [Record]) -> [[UInt8]] {
    records.map { Array(RecordJSON.encodedString($0).utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
}

@Suite("Archive member paths")
struct ArchivePathTests {
    @Test("Every component of a member path fits in 255 bytes and is safe", arguments: [1, 2, 3] as [UInt64])
    func componentsFit(seed: UInt64) {
        for zone in hostileZones(seed: seed) {
            let path = ArchivePath.recordsMember(database: zone.databaseName, zoneName: zone.zoneID.zoneName,
                                                 owner: zone.zoneID.ownerRecordName)
            #expect(path.utf8.allSatisfy { $0 < 0x80 }, "\(zone): \(path)")
            #expect(path.utf8.count <= 4095, "\(zone): \(path)")
            guard case .safe(let components) = ArchivePath.validate(path) else {
                Issue.record("\(zone): unsafe path \(path)")
                continue
            }
            #expect(components.joined(separator: "/") == path)
            #expect(components.count == 3 && components[0] == "records" && components[2].hasSuffix(".ndjson"))
            for component in components {
                #expect(component.utf8.count <= ArchivePath.maximumComponentBytes, "\(zone): \(component.utf8.count) bytes")
                #expect(!component.hasPrefix("."), "\(zone): \(component)")
            }
        }
    }

    @Test("Distinct zones get distinct member paths", arguments: [1, 2, 3] as [UInt64])
    func distinctPaths(seed: UInt64) {
        var owners: [[UInt8]: ExactZone] = [:]
        for zone in hostileZones(seed: seed) {
            let path = ArchivePath.recordsMember(database: zone.databaseName, zoneName: zone.zoneID.zoneName,
                                                 owner: zone.zoneID.ownerRecordName)
            if let other = owners.updateValue(zone, forKey: Array(path.utf8)) {
                Issue.record("\(other) and \(zone) share \(path)")
            }
        }
    }

    @Test("The empty name and a NUL byte are spelled differently, and every name decodes back exactly")
    func componentRoundTrip() {
        var random = SeededRandom(seed: 7)
        let names = HostileNames.fixed + (0..<500).map { _ in HostileNames.random(&random) }
        var spellings: [[UInt8]: [UInt8]] = [:]
        for name in names {
            let encoded = ArchivePath.encodeComponent(name)
            #expect(Array(ArchivePath.decodeComponent(encoded).utf8) == Array(name.utf8), "\(name.debugDescription)")
            if let other = spellings.updateValue(Array(name.utf8), forKey: Array(encoded.utf8)), other != Array(name.utf8) {
                Issue.record("\(String(decoding: other, as: UTF8.self).debugDescription) and \(name.debugDescription) are both \(encoded)")
            }
        }
        #expect(ArchivePath.encodeComponent("") != ArchivePath.encodeComponent("\0"))
    }

    @Test("Ordinary names stay readable")
    func readable() {
        #expect(ArchivePath.recordsMember(database: "private", zoneName: "Chats", owner: "_abc") == "records/private/Chats@_abc.ndjson")
        #expect(ArchivePath.recordsMember(database: "shared", zoneName: "Trips/2024", owner: nil) == "records/shared/Trips%2F2024.ndjson")
        let long = ArchivePath.recordsMember(database: "private", zoneName: String(repeating: "Trip", count: 100), owner: nil)
        #expect(long.hasPrefix("records/private/TripTripTrip"))
    }

    @Test("A name too long for a file name keeps a readable start of whole characters", arguments: [1, 2] as [UInt64])
    func shortenedPrefix(seed: UInt64) {
        for zone in hostileZones(seed: seed) where zone.owner == nil {
            let path = ArchivePath.recordsMember(database: "private", zoneName: zone.zoneID.zoneName, owner: nil)
            guard let mark = path.firstIndex(of: "~") else { continue }
            let start = path.index(path.startIndex, offsetBy: "records/private/".count)
            let prefix = Array(ArchivePath.decodeComponent(String(path[start..<mark])).utf8)
            #expect(path[start..<mark].utf8.count >= 200, "\(zone): \(path)")
            #expect(zone.zoneName.starts(with: prefix), "\(zone): \(path)")
            #expect(Array(String(decoding: prefix, as: UTF8.self).utf8) == prefix, "\(zone): a character is cut in \(path)")
        }
    }

    @Test("A member path read without a manifest gives back the zone, or no zone when the name was shortened",
          arguments: [1, 2] as [UInt64])
    func roleOfPaths(seed: UInt64) {
        for zone in hostileZones(seed: seed) {
            let path = ArchivePath.recordsMember(database: zone.databaseName, zoneName: zone.zoneID.zoneName,
                                                 owner: zone.zoneID.ownerRecordName)
            guard case .safe(let components) = ArchivePath.validate(path),
                  case .records(let database, let zoneID) = MemberRole.of(components) else {
                Issue.record("\(zone): \(path) is not read as records")
                continue
            }
            if let zoneID, let database {
                #expect(ExactZone(database: database, zoneName: zoneID.zoneName, owner: zoneID.ownerRecordName) == zone,
                        "\(zone): \(path)")
            } else {
                // Only a shortened name may leave the zone to the records themselves.
                #expect(path.contains("~"), "\(zone): \(path)")
            }
            if zone.zoneName.count + (zone.owner?.count ?? 0) < 40 && zone.database.count < 40 {
                #expect(zoneID != nil && database != nil, "\(zone): \(path)")
            }
        }
    }

    @Test("A second claim on a member path is refused, naming both claimants")
    func collisionRefused() throws {
        var paths = MemberPaths()
        let path = "records/private/Z.ndjson"
        #expect(try paths.isFree(path, for: "zone \"a\"", archive: "x.tar.gz"))
        paths.claim(path, for: "zone \"a\"")
        #expect(try !paths.isFree(path, for: "zone \"a\"", archive: "x.tar.gz"))
        let error = #expect(throws: ArchiveError.self) { try paths.isFree(path, for: "zone \"b\"", archive: "x.tar.gz") }
        #expect(error?.message.contains("zone \"a\"") == true && error?.message.contains("zone \"b\"") == true)
        #expect(error?.member == path && error?.code == .invalidArgument)
        // Canonically equivalent but different names are different claimants.
        paths.claim("assets/x", for: "asset \"\u{e9}\"")
        #expect(throws: ArchiveError.self) { try paths.isFree("assets/x", for: "asset \"e\u{301}\"", archive: "x.tar.gz") }
    }

    @Test("Two change-log names that spell one member are refused, naming both")
    func changeLogCollision() throws {
        let scratch = try ScratchDirectory()
        let writer = try ArchiveWriter(path: scratch.file("x.tar.gz"))
        try writer.addChangeLog(named: "a/b", from: MemorySource("x\n"))
        let error = #expect(throws: ArchiveError.self) { try writer.addChangeLog(named: "a//b", from: MemorySource("y\n")) }
        #expect(error?.message.contains("\"a/b\"") == true && error?.message.contains("\"a//b\"") == true, "\(String(describing: error))")
        writer.abandon()
    }
}

@Suite("Archives of hostile zone names")
struct HostileZoneArchiveTests {
    /// Writes two records into each zone, reads the archive back with the reader, the verifier
    /// and extraction, and checks every record comes back exactly, in its database and zone.
    func roundTrip(_ zones: [ExactZone]) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("zones.tar.gz")
        let writer = try ArchiveWriter(path: path)
        var written: [Record] = []
        var expected: [[UInt8]: ExactZone] = [:]
        for (index, zone) in zones.enumerated() {
            for copy in 0..<2 {
                var record = Record(recordName: "r\(index)-\(copy)")
                record.zoneID = zone.zoneID
                try writer.add(record, database: zone.databaseName)
                written.append(record)
                expected[Array(record.recordName.utf8)] = zone
            }
        }
        let manifest = try writer.finish()
        #expect(manifest.zones.count == zones.count)
        #expect(Set(manifest.members.map { Array($0.path.utf8) }).count == manifest.members.count)

        let reader = try ArchiveReader(path: path)
        let read = try readArchive(reader)
        #expect(exactLines(read.map(\.record)) == exactLines(written))
        for item in read {
            guard let zone = expected[Array(item.record.recordName.utf8)], let database = item.database,
                  let zoneID = item.zoneID else {
                Issue.record("\(item.record.recordName): no database or zone")
                continue
            }
            #expect(ExactZone(database: database, zoneName: zoneID.zoneName, owner: zoneID.ownerRecordName) == zone)
        }
        _ = try ArchiveVerifier().verify(path: path)

        let extracted = scratch.file("out")
        #expect(try ArchiveReader(path: path).extract(to: extracted) == manifest.members.count + 1)
        for member in manifest.members {
            let bytes = try fileBytes(extracted + "/" + member.path)
            #expect(bytes.count == member.size, "\(member.path)")
        }
    }

    @Test("The empty owner and a NUL owner of one zone name stay two zones (F1)")
    func emptyAndNULOwners() throws {
        try roundTrip([ExactZone(database: "private", zoneName: "Z", owner: ""),
                       ExactZone(database: "private", zoneName: "Z", owner: "\0")])
    }

    @Test("Zones named empty and NUL stay two zones (F1)")
    func emptyAndNULZones() throws {
        try roundTrip([ExactZone(database: "private", zoneName: "", owner: nil),
                       ExactZone(database: "private", zoneName: "\0", owner: nil)])
    }

    @Test("A zone of 21 emoji is extracted to a real folder (F6)")
    func longEmojiZone() throws {
        try roundTrip([ExactZone(database: "private", zoneName: String(repeating: "😀", count: 21), owner: nil),
                       ExactZone(database: "shared", zoneName: "Z", owner: String(repeating: "界", count: 30))])
    }

    @Test("Hostile zones round-trip exactly through writing, reading, verifying and extracting",
          arguments: [1, 2] as [UInt64])
    func hostileRoundTrip(seed: UInt64) throws {
        try roundTrip(hostileZones(seed: seed, randomCount: 150))
    }

    @Test("Without its manifest, a member whose zone name was shortened gives its records their own zones")
    func shortenedWithoutManifest() throws {
        let scratch = try ScratchDirectory()
        let zone = ZoneID(zoneName: String(repeating: "😀", count: 70), ownerRecordName: "_owner")
        let record = Record(recordName: "r", zoneID: zone)
        let member = ArchivePath.recordsMember(database: "shared", zoneName: zone.zoneName, owner: zone.ownerRecordName)
        #expect(ArchivePath.isShortened(member))
        let path = scratch.file("bare.tar.gz")
        try writeFile(path, try TarBuilder.tarGzip([.file(member, Array((RecordJSON.encodedString(record) + "\n").utf8))]))
        let read = try readArchive(ArchiveReader(path: path))
        #expect(read.count == 1)
        #expect(read.first?.database == "shared")
        #expect(read.first?.zoneID == zone)
    }

    @Test("An archive written before empty names were spelled `%` still reads by its manifest")
    func legacyEmptyOwner() throws {
        let scratch = try ScratchDirectory()
        let line = Array("{\"recordName\":\"a\",\"zoneID\":{\"zoneName\":\"Z\",\"ownerRecordName\":\"\"}}\n".utf8)
        let member = "records/private/Z@%00.ndjson"
        let manifest = ArchiveManifest(createdAt: 0, ferryVersion: "0.1.0", zones: [
            .init(database: "private", zoneID: ZoneID(zoneName: "Z", ownerRecordName: ""), path: member, recordCount: 1),
        ], members: [.init(path: member, kind: .records, size: line.count, sha256: SHA256.hexDigest(of: line))])
        let path = scratch.file("old.tar.gz")
        try writeFile(path, try TarBuilder.tarGzip([.file("manifest.json", manifest.jsonBytes()), .file(member, line)]))
        let read = try readArchive(ArchiveReader(path: path))
        #expect(read.count == 1)
        #expect(read.first?.zoneID == ZoneID(zoneName: "Z", ownerRecordName: ""))
        #expect(read.first?.record.recordName == "a")
    }
}
