@testable import FerryChangeLog
import FerryIO
import FerryRecords
import FerryTestSupport
import Testing

@Suite("Scanning records for replay")
struct RecordScannerTests {
    /// What a scan made of a record, comparable between the two paths.
    private struct Outcome: Equatable {
        var kind: String
        var name: [UInt8]
        var tag: [UInt8]?
        var modified: Int64?
        var references: [UInt8]
        var json: [UInt8]
    }

    private func outcome(_ scanned: ScannedRecord) -> Outcome {
        switch scanned {
        case .saved(let blob, _):
            defer { blob.free() }
            return Outcome(kind: "saved", name: Array(blob.name), tag: blob.tag.map(Array.init), modified: blob.modified,
                           references: Array(blob.references), json: Array(blob.json))
        case .deleted(let name, _, let type):
            return Outcome(kind: "deleted " + (type ?? "-"), name: Array(name.utf8), references: [], json: [])
        case .error(let name, _, let code, _):
            return Outcome(kind: "error " + code, name: Array((name ?? "").utf8), references: [], json: [])
        }
    }

    /// What scanning `text` gives, or nil when it found the input invalid.
    private func scan(_ text: [UInt8]) -> Outcome? {
        var scanner = RecordScanner()
        return text.withUnsafeBytes { bytes in
            var s = JSONScanner(bytes)
            guard let scanned = try? scanner.scan(&s, in: bytes), (try? s.expectEnd()) != nil else { return nil }
            return outcome(scanned)
        }
    }

    private func isValidJSON(_ text: [UInt8]) -> Bool {
        text.withUnsafeBytes { (try? RecordJSON.parseValue($0)) != nil }
    }

    @Test("Generated records with every field type and hostile values scan alike compact and pretty-printed")
    func compactAndPrettyAgree() {
        var generator = RecordGenerator(seed: 77)
        for i in 0..<600 {
            var record = generator.record()
            if i % 3 == 0 { record.deleted = nil }
            var out = JSONOutput(capacity: 4096)
            RecordJSON.encode(record, into: &out)
            let compact = scan(out.array)
            #expect(compact != nil, "record \(i) is valid")
            #expect(scan(spaced(out.array)) == compact, "record \(i): whitespace between tokens is compacted away")
            if compact?.kind == "saved" { #expect(compact?.json == out.array, "record \(i) keeps its JSON") }
        }
    }

    @Test("The scanner never accepts invalid JSON: mutated records are refused or are valid")
    func neverAcceptsInvalid() {
        var generator = RecordGenerator(seed: 78)
        var random = SeededRandom(seed: 79)
        let breakers: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x01], [0x0A],
                                   Array("\\x".utf8), Array("\\u12".utf8), Array("\\ud800".utf8), Array("01".utf8), Array("1.".utf8),
                                   Array("-".utf8), Array("1e".utf8), Array("tru".utf8), Array("nul".utf8), Array(",}".utf8),
                                   Array(",]".utf8), Array("\"".utf8), Array("{".utf8), Array(":".utf8), Array("[1,,2]".utf8)]
        var checked = 0
        for i in 0..<400 {
            var out = JSONOutput(capacity: 4096)
            RecordJSON.encode(generator.record(), into: &out)
            var text = out.array
            switch i % 3 {
            case 0: text.removeLast(1 + random.below(min(text.count - 1, 40))) // truncated
            case 1: text.insert(contentsOf: random.pick(breakers), at: 1 + random.below(text.count - 1))
            default:
                // A key repeated: the record's first member again after the first comma.
                if let comma = text.firstIndex(of: UInt8(ascii: ",")) {
                    text.insert(contentsOf: Array(text[1..<comma]) + [UInt8(ascii: ",")], at: comma + 1)
                }
            }
            if scan(text) != nil {
                checked += 1
                #expect(isValidJSON(text), "mutation \(i) accepted but invalid: \(String(decoding: text, as: UTF8.self))")
            }
        }
        #expect(checked < 400)
    }

    @Test("Valid strings are taken: escapes, every UTF-8 length, the limits of UTF-8, \\u escapes", arguments: [
        #""plain""#, #""tab\tquote\"slash\/\\""#, "\"é日😀\"", #""\u00e9\ud83d\ude00""#, "\"\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}\"",
    ])
    func strings(value: String) {
        let text = Array("{\"recordName\":\"n\",\"fields\":{\"s\":{\"value\":\(value),\"type\":\"STRING\"}}}".utf8)
        #expect(scan(text) != nil)
    }

    @Test("Invalid UTF-8 and control characters are never accepted", arguments: [
        [0xC0, 0x80], [0xE0, 0x9F, 0xBF], [0xED, 0xBF, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0x80], [0xC3], [0x1F], [0x00],
    ] as [[UInt8]])
    func invalidBytes(bytes: [UInt8]) {
        let text = Array("{\"recordName\":\"n\",\"fields\":{\"s\":{\"value\":\"a".utf8) + bytes + Array("b\",\"type\":\"STRING\"}}}".utf8)
        #expect(scan(text) == nil)
    }

    /// The JSON with a space or newline after every structural character outside strings.
    private func spaced(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var inString = false
        var escaped = false
        for b in text {
            out.append(b)
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: ",") || b == UInt8(ascii: ":") || b == UInt8(ascii: "{") {
                out.append(contentsOf: b == UInt8(ascii: ",") ? [0x0A, 0x20] : [0x20])
            }
        }
        return out
    }
}

@Suite("Decoders on several threads")
struct DecoderSharingTests {
    @Test("Replaying a CloudKit history on four threads gives the same state as on the calling thread")
    func cloudKitHistoryOnFourThreads() throws {
        let history = HistoryGenerator.generate(seed: 77, configuration: .init(batches: 600, changesPerBatch: 40, keepsSnapshots: false))
        let expected = try contents(replay(history.cloudKitLines, .init(decodingThreads: 0)).state)
        #expect(expected == canonical(history.finalSnapshot))
        for _ in 0..<3 {
            #expect(try contents(replay(history.cloudKitLines, .init(decodingThreads: 4)).state) == expected)
        }
    }
}

@Suite("Zones of saved records")
struct SavedRecordZoneTests {
    /// Zone `i` of 70 (more than a scanner caches): 35 names under two owners, spelled with its
    /// keys in either order (the same zone, other bytes).
    static func zone(_ i: Int, swapped: Bool) -> (id: ZoneID, json: String) {
        let name = "Z\(i % 35)", owner = "_o\(i / 35)"
        let json = swapped ? #"{"ownerRecordName":"\#(owner)","zoneName":"\#(name)"}"# : #"{"zoneName":"\#(name)","ownerRecordName":"\#(owner)"}"#
        return (ZoneID(zoneName: name, ownerRecordName: owner), json)
    }

    static func save(_ name: String, _ value: Int, zone: String?) -> String {
        let zoneMember = zone.map { #""zoneID":\#($0),"# } ?? ""
        return #"{"event":"recordSaved","record":{"recordName":"\#(name)","recordType":"Item",\#(zoneMember)"fields":{"k":{"value":\#(value),"type":"INT64"}}}}"#
    }

    @Test("Each record lands in the zone it names: both spellings of a zone, zones past the cache's capacity, records naming none, deletions; on 0, 2 and 4 threads in small blocks")
    func recordsLandInTheirZones() throws {
        // A record naming no zone comes first, so zone numbers are not the cache's indices.
        var lines = [Self.save("first", -1, zone: nil)]
        for k in 0..<420 {
            // Zone (k/2) % 70, its two spellings one after the other.
            let zone = Self.zone((k / 2) % 70, swapped: k % 2 == 1)
            lines.append(Self.save("r\(k)", k, zone: zone.json))
            // The same name in every zone: a record of its own in each.
            lines.append(Self.save("shared", k, zone: zone.json))
            if k % 10 == 0 { lines.append(Self.save("n\(k)", k, zone: nil)) }
            if k % 7 == 0 {
                let other = Self.zone((k / 2) % 70, swapped: k % 2 == 0).json
                lines.append(#"{"event":"recordDeleted","recordName":"r\#(k)","zoneID":\#(other)}"#)
            }
        }
        let defaultZone = ZoneID(zoneName: "Inbox")
        for threads in [0, 2, 4] {
            var configuration = Replayer.Configuration(decodingThreads: threads)
            configuration.reader.defaultZone = defaultZone
            let replayer = Replayer(configuration: configuration)
            replayer.blockSize = 2048 // blocks of about ten events, spread over the workers
            try replayer.apply(MemorySource(Array(lines.joined(separator: "\n").utf8), name: "history"))
            try replayer.finish()
            let state = replayer.state
            #expect(state.recordCount == 1 + 360 + 70 + 42, "threads \(threads)")
            #expect(try state.record(named: "first", in: defaultZone)?[field: "k"]?.int64Value == -1)
            for k in 0..<420 {
                let zone = Self.zone((k / 2) % 70, swapped: false).id
                let record = try state.record(named: "r\(k)", in: zone)
                if k % 7 == 0 {
                    #expect(record == nil, "r\(k) was deleted, threads \(threads)")
                } else {
                    #expect(record?[field: "k"]?.int64Value == Int64(k), "r\(k) in \(zone.zoneName)/\(zone.ownerRecordName ?? "-"), threads \(threads)")
                }
                if k % 10 == 0 {
                    #expect(try state.record(named: "n\(k)", in: defaultZone)?[field: "k"]?.int64Value == Int64(k), "n\(k), threads \(threads)")
                }
            }
            for z in 0..<70 {
                // The last save of "shared" in zone z is k = 2 (z + 140) + 1.
                let record = try state.record(named: "shared", in: Self.zone(z, swapped: false).id)
                #expect(record?[field: "k"]?.int64Value == Int64(2 * (z + 140) + 1), "shared in zone \(z), threads \(threads)")
            }
        }
    }
}
