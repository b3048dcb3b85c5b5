import Testing
import FerryIO
import FerryJSON
import FerryRecords
import FerryStore
import FerryTestSupport

@Suite("Store round trips")
struct StoreRoundTripTests {
    @Test("Records imported into a new store come back identical, in the order they were written",
          arguments: [0, 1, 7, 300])
    func newStoreRoundTrip(count: Int) throws {
        let records = StoreFixture.records(count: count, seed: UInt64(count) + 11)
        let path = StoreFixture.newPath()
        let statistics = try StoreFixture.importRecords(records, into: path)
        #expect(statistics.created == count)
        let back = try StoreFixture.readAll(path)
        #expect(back.count == records.count)
        for (a, b) in zip(records, back) {
            #expect(StoreFixture.json(a) == StoreFixture.json(b))
        }
    }

    @Test("A hundred thousand generated records round-trip through a store byte for byte")
    func largeRoundTrip() throws {
        var generator = RecordGenerator(seed: 99)
        let ndjson = generator.ndjson(count: 100_000)
        let directory = TestScratch.directory()
        let input = directory + "/in.ndjson"
        let file = try OutputFile(path: input)
        try ndjson.withUnsafeBytes { try file.write($0) }
        try file.commit()

        let store = directory + "/big.sqlite"
        let reader = NDJSONReader(source: try InputFile(path: input))
        let writer = try StoreWriter(path: store)
        while let record = try reader.next() { try writer.write(record) }
        try writer.finish()
        #expect(writer.recordCount == 100_000)

        let out = directory + "/out.ndjson"
        let sink = try OutputFile(path: out)
        let ndjsonWriter = NDJSONWriter(sink: sink)
        let storeReader = try StoreRecordReader(path: store)
        while let record = try storeReader.next() { try ndjsonWriter.write(record) }
        try ndjsonWriter.finish()
        try sink.commit()
        let written = try InputFile(path: out).readAll(limit: 1 << 30)
        #expect(written == ndjson)
    }

    @Test("Records handed over as encoded lines are stored as the records are: the same bytes, the same columns",
          arguments: [1, 3, 64, 5000])
    func encodedLines(linesPerCall: Int) throws {
        let records = StoreFixture.records(count: 2000, seed: 23)
        let byRecord = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: byRecord)
        let byLines = StoreFixture.newPath()
        let writer = try StoreWriter(path: byLines, configuration: .init(batchSize: 7))
        #expect(writer.acceptsEncodedLines)
        var start = 0
        while start < records.count {
            let end = min(records.count, start + linesPerCall)
            var lines = JSONOutput(capacity: 1 << 16)
            for record in records[start..<end] {
                RecordJSON.encode(record, into: &lines)
                lines.append(0x0A)
            }
            try writer.write(encodedLines: lines.bytes, records: end - start)
            start = end
        }
        try writer.finish()
        #expect(writer.statistics.created == records.count)
        let back = try StoreFixture.readAll(byLines)
        #expect(back.map(StoreFixture.json) == records.map(StoreFixture.json))
        let other = try StoreFixture.readAll(byRecord)
        #expect(back.map(StoreFixture.json) == other.map(StoreFixture.json))
        // Every column agrees with the stored JSON (the deep check compares each system column).
        let verification = try RecordStore(path: byLines).verify(deep: true)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
        #expect(try RecordStore(path: byRecord).verify(deep: true).problems.isEmpty)
    }

    @Test("Encoded lines saved over stored records (upsert, replace) give the store that the records give",
          arguments: [StoreWriter.Mode.upsert, .replace])
    func encodedLinesSavedOver(mode: StoreWriter.Mode) throws {
        let records = StoreFixture.records(count: 600, seed: 29)
        // Half of them again, changed: each is saved over its first version.
        let again = records.prefix(300).map { record -> Record in
            var changed = record
            changed.recordChangeTag = "again"
            changed.modified = RecordStamp(timestamp: 1_800_000_000_000, userRecordName: "_changer")
            return changed
        }
        let byRecord = StoreFixture.newPath()
        _ = try StoreFixture.importRecords(records + again, into: byRecord, mode: mode)
        let byLines = StoreFixture.newPath()
        let writer = try StoreWriter(path: byLines, configuration: .init(mode: mode, batchSize: 7))
        var lines = JSONOutput(capacity: 1 << 16)
        for record in records + again {
            RecordJSON.encode(record, into: &lines)
            lines.append(0x0A)
        }
        try writer.write(encodedLines: lines.bytes, records: records.count + again.count)
        try writer.finish()
        #expect(writer.statistics.created == records.count && writer.statistics.modified == again.count)
        #expect(try StoreFixture.readAll(byLines).map(StoreFixture.json) == StoreFixture.readAll(byRecord).map(StoreFixture.json))
        let verification = try RecordStore(path: byLines).verify(deep: true)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
    }

    @Test("Upsert: a known key given as null replaces the stored value, and a value replaces a stored null (one key each)",
          arguments: [StoreWriter.Mode.upsert, .replace])
    func upsertNullUnderKnownKey(mode: StoreWriter.Mode) throws {
        let withParent = #"{"recordName":"u","recordType":"T","parent":{"recordName":"P"},"recordChangeTag":"1"}"#
        let nullParent = #"{"recordName":"u","recordType":"T","parent":null,"recordChangeTag":null}"#
        for (first, second) in [(withParent, nullParent), (nullParent, withParent)] {
            for lines in [false, true] {
                let path = StoreFixture.newPath()
                try StoreFixture.importRecords([try RecordJSON.decodeRecord(first)], into: path)
                let updated = try RecordJSON.decodeRecord(second)
                if lines {
                    let writer = try StoreWriter(path: path, configuration: .init(mode: mode))
                    var out = JSONOutput(capacity: 256)
                    RecordJSON.encode(updated, into: &out)
                    out.append(0x0A)
                    try writer.write(encodedLines: out.bytes, records: 1)
                    try writer.finish()
                } else {
                    try StoreFixture.importRecords([updated], into: path, mode: mode)
                }
                let verification = try RecordStore(path: path).verify(deep: true)
                #expect(verification.problems.isEmpty, "\(verification.problems)")
                let stored = try StoreFixture.readAll(path)
                #expect(stored.map { String(decoding: StoreFixture.json($0), as: UTF8.self) } == [String(decoding: StoreFixture.json(updated), as: UTF8.self)],
                        "\(first) then \(second), lines: \(lines)")
            }
        }
    }

    @Test("Encoded lines that are not compact, or not records, are stored as their records, or refused")
    func encodedLinesNotCompact() throws {
        let records = StoreFixture.records(count: 30, seed: 43)
        let path = StoreFixture.newPath()
        let writer = try StoreWriter(path: path)
        var text = ""
        for (index, record) in records.enumerated() {
            let json = String(decoding: StoreFixture.json(record), as: UTF8.self)
            switch index % 3 {
            case 0: text += json + "\r\n"
            case 1: text += json.replacingOccurrences(of: "\":", with: "\" : ") + "\n"
            default: text += json + "\n"
            }
        }
        try Array(text.utf8).withUnsafeBytes { try writer.write(encodedLines: $0, records: records.count) }
        try writer.finish()
        // The stored bytes themselves are the compact encoding (read raw, in stored order).
        var stored: [[UInt8]] = []
        _ = try RecordStore(path: path).forEachMatch(StoreQuery()) { body in
            stored.append(Array(body))
            return true
        }
        #expect(stored == records.map(StoreFixture.json))
        let verification = try RecordStore(path: path).verify(deep: true)
        #expect(verification.problems.isEmpty, "\(verification.problems)")

        // A string that is not UTF-8 inside a field, and a cut line: refused, not stored.
        let invalid = Array("{\"recordName\":\"a\",\"fields\":{\"t\":{\"value\":\"x".utf8) + [0xFF]
            + Array("\",\"type\":\"STRING\"}}}\n".utf8)
        for line in [invalid, Array("{\"recordName\":\"a\",\"fields\":{\n".utf8)] {
            let bad = try StoreWriter(path: StoreFixture.newPath())
            #expect(throws: (any Error).self) {
                try line.withUnsafeBytes { try bad.write(encodedLines: $0, records: 1) }
            }
            bad.abandon()
        }
    }

    @Test("A new store's journal, written after its rows, is the journal an existing store writes record by record")
    func newStoreJournal() throws {
        let records = StoreFixture.records(count: 500, seed: 41)
        let new = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: new)
        let existing = StoreFixture.newPath()
        _ = try RecordStore.create(at: existing)
        try StoreFixture.importRecords(records, into: existing)
        func journal(_ path: String) throws -> [String] {
            var lines: [String] = []
            let store = try RecordStore(path: path)
            try store.changes(since: nil) { change in
                var line = "\(change.sequence) \(change.database) \(change.zoneID.zoneName) "
                switch change.event {
                case .recordSaved(let record): line += "saved " + String(decoding: StoreFixture.json(record), as: UTF8.self)
                default: line += "\(change.event)"
                }
                lines.append(line)
            }
            #expect(try store.journalCount() == lines.count)
            #expect(try store.verify(deep: true).problems.isEmpty)
            return lines
        }
        let a = try journal(new), b = try journal(existing)
        #expect(a.count >= records.count)
        #expect(a == b)
    }

    @Test("The deep check finds a column that disagrees with the record's JSON",
          arguments: ["change_tag = 'x'", "created_at = 1", "created_by = 'x'", "modified_at = 1", "modified_by = 'x'",
                      "parent_name = 'x'", "share_name = 'x'", "record_type = 'x'"])
    func deepCheckCatchesColumns(change: String) throws {
        let path = StoreFixture.newPath()
        let records = StoreFixture.records(count: 40, seed: 31).filter { $0.recordChangeTag != nil }
        try StoreFixture.importRecords(records, into: path)
        let store = try RecordStore(path: path, access: .readWrite)
        #expect(try store.verify(deep: true).problems.isEmpty)
        try store.execute(sql: "UPDATE records SET \(change) WHERE id = (SELECT min(id) FROM records)")
        #expect(try store.verify(deep: true).problems.contains { $0.contains("agree with its columns") })
        #expect(try store.verify().problems.isEmpty)
    }

    @Test("A body damaged outside Ferry is refused by every reader, naming the record, not handed on",
          arguments: ["substr(body, 1, 30)", "''", "CAST(X'7B22FF227D' AS TEXT)", "'[]'", "'{\"records\":[]}'"])
    func damagedBody(damage: String) throws {
        let path = StoreFixture.newPath()
        let records = StoreFixture.records(count: 30, seed: 41)
        try StoreFixture.importRecords(records, into: path)
        let store = try RecordStore(path: path, access: .readWrite)
        let victim = records[7]
        try store.execute(sql: "UPDATE records SET body = \(damage) WHERE id = 8")
        func expectRefused(_ what: String, _ read: () throws -> Void) {
            do {
                try read()
                Issue.record("\(what) handed on a damaged body")
            } catch let error as StoreError {
                #expect(error.code == .corrupt, "\(what)")
                #expect(error.recordName == victim.recordName, "\(what)")
                #expect(error.path == path, "\(what)")
                #expect(error.description.contains("zone \"\((victim.zoneID ?? .default).zoneName)\""), "\(what)")
            } catch {
                Issue.record("\(what): \(error)")
            }
        }
        expectRefused("query") { _ = try store.query(StoreQuery()) }
        expectRefused("query with keys") { _ = try store.query(StoreQuery(desiredKeys: ["a"])) }
        expectRefused("forEachMatch") { try store.forEachMatch(StoreQuery()) { _ in true } }
        expectRefused("fetch") {
            _ = try store.fetch(names: [victim.recordName], zone: (victim.zoneID ?? .default).zoneName)
        }
        expectRefused("the reader") { _ = try StoreFixture.readAll(path) }
    }

    @Test("Importing into an existing store adds records in one transaction and journals each")
    func importIntoExistingStore() throws {
        let first = StoreFixture.records(count: 50, seed: 1)
        let second = StoreFixture.records(count: 40, seed: 2).map { record -> Record in
            var copy = record
            copy.recordName = "second-" + record.recordName
            return copy
        }
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(first, into: path)
        try StoreFixture.importRecords(second, into: path)
        let store = try RecordStore(path: path)
        #expect(try store.recordCount() == 90)
        let zoneEvents = try store.zones().count
        #expect(try store.journalCount() == 90 + zoneEvents)
        #expect(try store.currentToken().sequence == Int64(90 + zoneEvents))
    }

    @Test("Insert mode refuses a record that exists and leaves the store as it was")
    func insertConflict() throws {
        let records = StoreFixture.records(count: 20, seed: 3)
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: path)
        let before = try StoreFixture.readAll(path)
        #expect {
            try StoreFixture.importRecords([records[5]], into: path)
        } throws: { error in
            (error as? StoreError)?.code == .conflict && "\(error)".contains(records[5].recordName)
        }
        #expect(try StoreFixture.readAll(path) == before)
    }

    @Test("A conflict's message quotes the name escaped, and cuts a long one")
    func conflictMessageQuotesName() throws {
        var quoted = StoreFixture.records(count: 1, seed: 5)[0]
        quoted.recordName = "a\"b\nc"
        var long = StoreFixture.records(count: 1, seed: 6)[0]
        long.recordName = String(repeating: "é", count: 50_000)
        for (record, expected) in [(quoted, #""a\"b\nc""#), (long, "…\" (100000 bytes)")] {
            let path = StoreFixture.newPath()
            try StoreFixture.importRecords([record], into: path)
            #expect {
                try StoreFixture.importRecords([record], into: path)
            } throws: { error in
                let message = "\(error)"
                return message.contains(expected) && message.utf8.count < 1_000
            }
            // Twice in the input of a new store: the other message.
            let fresh = StoreFixture.newPath()
            #expect {
                try StoreFixture.importRecords([record, record], into: fresh)
            } throws: { error in
                let message = "\(error)"
                return message.contains(expected) && message.utf8.count < 1_000
            }
        }
    }

    @Test("A record twice in the input of a new store is a conflict, and no store is left")
    func duplicateInNewStore() throws {
        let records = StoreFixture.records(count: 10, seed: 4)
        let path = StoreFixture.newPath()
        #expect(throws: StoreError.self) {
            try StoreFixture.importRecords(records + [records[2]], into: path)
        }
        #expect(!FileSystem.exists(path))
        let leftovers = FileSystem.entries(in: String(path[..<path.lastIndex(of: "/")!]))
        #expect(leftovers.isEmpty)
    }

    @Test("Replace mode replaces whole records; upsert keeps the fields a new version lacks",
          arguments: [StoreWriter.Mode.replace, .upsert])
    func replaceAndUpsert(mode: StoreWriter.Mode) throws {
        var original = Record(recordName: "r1", recordType: "Note", zoneID: ZoneID(zoneName: "Z"))
        original.fields = ["a": RecordField(.string("one"), type: .string), "b": RecordField(.int64(2), type: .int64)]
        var update = Record(recordName: "r1", recordType: "Note", zoneID: ZoneID(zoneName: "Z"))
        update.fields = ["b": RecordField(.int64(3), type: .int64)]
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords([original], into: path)
        let statistics = try StoreFixture.importRecords([update], into: path, mode: mode)
        #expect(statistics.modified == 1)
        let stored = try StoreFixture.readAll(path)
        #expect(stored.count == 1)
        #expect(stored[0][field: "b"] == .int64(3))
        #expect(stored[0][field: "a"] == (mode == .upsert ? .string("one") : nil))
        // Saving the same record again changes nothing and journals nothing.
        let journal = try RecordStore(path: path).journalCount()
        let again = try StoreFixture.importRecords(stored, into: path, mode: mode)
        #expect(again.unchanged == 1)
        #expect(try RecordStore(path: path).journalCount() == journal)
    }

    @Test("Records keep the database they were written to")
    func databases() throws {
        let path = StoreFixture.newPath()
        let record = Record(recordName: "p", recordType: "T")
        let writer = try StoreWriter(path: path)
        try writer.write(record, database: "public")
        try writer.write(record, database: "shared")
        try writer.finish()
        let zones = try RecordStore(path: path).zones()
        #expect(zones.map(\.database) == ["public", "shared"])
        #expect(try RecordStore(path: path).fetch(names: ["p"], database: "public").recordsJSON.count == 1)
    }
}
