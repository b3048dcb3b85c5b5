import Testing
@testable import FerryArchive
import FerryIO
import FerryInternals
import FerryRecords

@Suite("Tar format and detection")
struct TarFormatTests {
    @Test("A ustar header is recognized and other bytes are not")
    func detection() throws {
        let header = TarHeader.encode(name: "manifest.json", size: 10, modificationTime: 0, typeFlag: TarHeader.TypeFlag.regular)
        #expect(ArchiveDetection.isArchive(prefix: header))
        var corrupted = header
        corrupted[0] ^= 0x01
        #expect(!ArchiveDetection.isArchive(prefix: corrupted))
        #expect(!ArchiveDetection.isArchive(prefix: Array(#"{"recordName":"a"}"#.utf8) + [UInt8](repeating: 0x20, count: 600)))
        #expect(!ArchiveDetection.isArchive(prefix: Array(header.prefix(300))))
        #expect(ArchiveDetection.isArchive(prefix: [UInt8](repeating: 0, count: 1024))) // an empty archive
        #expect(!ArchiveDetection.isArchive(prefix: [UInt8](repeating: 0, count: 1000)))
        #expect(!ArchiveDetection.isArchive(prefix: [UInt8](repeating: 0, count: 1023) + [1]))
    }

    @Test("An archive is detected by content whatever its name, gzip or not, without losing bytes")
    func detectionOfInputs() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("records.ndjson")
        let writer = try ArchiveWriter(path: path)
        try writer.add(Record(recordName: "A", recordType: "T"))
        try writer.finish()
        let detected = try ArchiveDetection.openInput(InputFile(path: path))
        #expect(detected.isArchive)
        let reader = try ArchiveReader(source: detected.source)
        #expect(try readArchive(reader).map(\.record.recordName) == ["A"])

        let plain = try ArchiveDetection.openInput(MemorySource(#"{"recordName":"A"}"# + "\n"))
        #expect(!plain.isArchive)
        #expect(try plain.source.readAll() == Array(#"{"recordName":"A"}"#.utf8) + [0x0A])
    }

    @Test("Pax records count their own length")
    func paxRecordLength() throws {
        for length in [1, 5, 90, 91, 92, 95, 96, 990, 995, 996, 1000] {
            let record = TarHeader.paxRecord(key: "path", value: String(repeating: "x", count: length))
            let text = String(decoding: record, as: UTF8.self)
            let declared = Int(text.prefix { $0 != " " })
            #expect(declared == record.count)
            #expect(try TarHeader.parsePax(record)["path"]?.count == length)
        }
    }

    @Test("Pax records whose declared length runs past the header are refused, however large", arguments: [
        "9223372036854775807", "9223372036854775800", "4611686018427387904", "100",
    ])
    func paxLengthOverflow(declared: String) {
        // The second record's length overflows `index + length` unless compared by subtraction.
        let first = TarHeader.paxRecord(key: "path", value: "a")
        let data = first + Array("\(declared) path=b\n".utf8)
        #expect(throws: TarParseFailure.self) { try TarHeader.parsePax(data) }
        #expect(throws: TarParseFailure.self) { try TarHeader.parsePax(Array("\(declared) path=b\n".utf8)) }
    }

    @Test("Creation times format as ISO 8601 and parse back", arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(951_782_400_123), "2000-02-29T00:00:00.123Z"),
        (Int64(1_715_000_000_000), "2024-05-06T12:53:20.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func iso8601(milliseconds: Int64, text: String) {
        #expect(ISO8601.format(milliseconds: milliseconds) == text)
        #expect(ISO8601.parse(text) == milliseconds)
    }

    @Test("Days a month does not have are not dates", arguments: [
        ("2023-02-29T00:00:00.000Z", false), ("2024-02-29T00:00:00.000Z", true), ("2000-02-29T00:00:00Z", true),
        ("2100-02-29T00:00:00Z", false), ("2024-04-31T00:00:00Z", false), ("2024-12-31T23:59:59Z", true),
    ])
    func iso8601Days(text: String, isDate: Bool) {
        #expect((ISO8601.parse(text) != nil) == isDate)
    }

    @Test("Unsafe member names are refused and harmless ones normalized", arguments: [
        ("../evil", false), ("/etc/passwd", false), ("a/../../b", false), ("a\\b", false), ("", false), ("./", false),
        ("./manifest.json", true), ("records//private/x.ndjson", true), ("records/", true),
    ])
    func pathValidation(name: String, isSafe: Bool) {
        if case .safe = ArchivePath.validate(name) { #expect(isSafe) } else { #expect(!isSafe) }
    }

    @Test("Zone names and checksums become single safe path components")
    func pathEncoding() {
        #expect(ArchivePath.recordsMember(database: "private", zoneName: "Chats", owner: "_abc") == "records/private/Chats@_abc.ndjson")
        #expect(ArchivePath.recordsMember(database: "shared", zoneName: "../x/y", owner: nil) == "records/shared/%2E.%2Fx%2Fy.ndjson")
        #expect(ArchivePath.assetMember(fileChecksum: "AbC/+d=") == "assets/AbC%2F+d=")
    }
}
