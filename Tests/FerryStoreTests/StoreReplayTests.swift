import Testing
import FerryChangeLog
import FerryIO
import FerryRecords
@testable import FerryStore
import FerryTestSupport

@Suite("Replaying into a store")
struct StoreReplayTests {
    /// Replays `lines` (a history) into the store at `path`.
    @discardableResult
    static func replay(_ lines: [UInt8], into path: String, configuration: StoreReplayer.Configuration = .init()) throws -> StoreReplayer {
        let replayer = try StoreReplayer(path: path, configuration: configuration)
        try replayer.apply(MemorySource(lines, name: "history", chunkSize: 4096))
        try replayer.finish()
        return replayer
    }

    /// The store's records, keyed by zone and name, as compact JSON.
    static func state(_ path: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for record in try StoreFixture.readAll(path) { result[StoreFixture.key(record)] = StoreFixture.json(record) }
        return result
    }

    static func expected(_ records: [Record]) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for record in records { result[StoreFixture.key(record)] = StoreFixture.json(record) }
        return result
    }

    /// The lines of `history` up to and including the checkpoint carrying `token`, and the rest.
    static func split(_ history: [UInt8], at token: String) -> (before: [UInt8], after: [UInt8]) {
        let all = lines(of: history)
        let needle = Array("\"syncToken\":\"\(token)\"".utf8)
        let index = all.firstIndex { line in line.count >= needle.count && (0...(line.count - needle.count)).contains { Array(line[$0..<$0 + needle.count]) == needle } }!
        func join(_ part: ArraySlice<[UInt8]>) -> [UInt8] {
            var bytes: [UInt8] = []
            for line in part { bytes += line + [0x0A] }
            return bytes
        }
        return (join(all[...index]), join(all[(index + 1)...]))
    }

    @Test("Replaying a history into a new store gives the final state and every zone's token",
          arguments: [(UInt64(1), false), (2, true), (3, false)])
    func replayGivesFinalState(seed: UInt64, cloudKitForm: Bool) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 30, keepsSnapshots: false))
        let path = StoreFixture.newPath()
        let replayer = try Self.replay(cloudKitForm ? history.cloudKitLines : history.ferryLines, into: path)
        #expect(try Self.state(path) == Self.expected(history.finalSnapshot))
        let zones = try RecordStore(path: path).zones()
        for (name, expected) in history.zoneTokens {
            let zone = zones.first { $0.zoneID.zoneName == name }
            #expect(zone?.syncToken == expected.token, "zone \(name)")
            #expect(zone?.isDeleted == expected.isDeleted, "zone \(name)")
        }
        #expect(replayer.eventCount > 0)
        #expect(try RecordStore(path: path).verify().isIntact)
    }

    @Test("Replaying the same history again, or an earlier part of it, changes nothing: no record, no journal entry",
          arguments: [(UInt64(4), false), (UInt64(5), true), (UInt64(11), false), (UInt64(12), true), (UInt64(13), false)])
    func rerunIsIdempotent(seed: UInt64, cloudKitForm: Bool) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 30, zoneChangeChance: 0.15, keepsSnapshots: false))
        let lines = cloudKitForm ? history.cloudKitLines : history.ferryLines
        let path = StoreFixture.newPath()
        try Self.replay(lines, into: path)
        let before = try Self.state(path)
        let journal = try RecordStore(path: path).journalCount()
        let again = try Self.replay(lines, into: path)
        #expect(try Self.state(path) == before)
        #expect(try RecordStore(path: path).journalCount() == journal)
        #expect(again.skippedCount > 0)
        #expect(again.statistics.created == 0 && again.statistics.deleted == 0 && again.statistics.modified == 0)
        let earlier = Self.split(lines, at: history.checkpoints[history.checkpoints.count / 2].token).before
        try Self.replay(earlier, into: path)
        #expect(try Self.state(path) == before)
        #expect(try RecordStore(path: path).journalCount() == journal)
        #expect(try RecordStore(path: path).verify().isIntact)
    }

    @Test("A history replayed in two parts, or its first part and then the whole, gives the final state",
          arguments: [(UInt64(6), Ferry.parts), (UInt64(7), Ferry.prefixThenWhole), (UInt64(8), Ferry.parts)])
    func incrementalReplay(seed: UInt64, way: Ferry) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 30, keepsSnapshots: true))
        let middle = history.checkpoints[history.checkpoints.count / 2]
        let (before, after) = Self.split(history.ferryLines, at: middle.token)
        let path = StoreFixture.newPath()
        try Self.replay(before, into: path)
        #expect(try Self.state(path) == Self.expected(middle.snapshot))
        try Self.replay(way == .parts ? after : history.ferryLines, into: path)
        #expect(try Self.state(path) == Self.expected(history.finalSnapshot))
        #expect(try RecordStore(path: path).verify().isIntact)
    }

    enum Ferry: Sendable { case parts, prefixThenWhole }

    @Test("A zone save with no zone checkpoint after it, then a database-level deletion of the zone: replaying again brings nothing back")
    func saveThenDatabaseZoneDeletion() throws {
        let history = Array("""
            {"event":"checkpoint","zoneID":{"zoneName":"Z"},"syncToken":"z1","moreComing":false}
            {"event":"recordSaved","record":{"recordName":"r","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{}}}
            {"event":"zoneDeleted","zoneID":{"zoneName":"Z"}}
            {"event":"checkpoint","syncToken":"d1","moreComing":false}

            """.utf8)
        let path = StoreFixture.newPath()
        try Self.replay(history, into: path)
        #expect(try Self.state(path).isEmpty)
        let journal = try RecordStore(path: path).journalCount()
        let again = try Self.replay(history, into: path)
        #expect(try Self.state(path).isEmpty)
        #expect(try RecordStore(path: path).journalCount() == journal)
        #expect(again.statistics.created == 0 && again.statistics.deleted == 0)
        // A history that goes on after it, with the zone made again, applies what is new.
        let more = history + Array("""
            {"event":"zoneSaved","zoneID":{"zoneName":"Z"}}
            {"event":"recordSaved","record":{"recordName":"q","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{}}}
            {"event":"checkpoint","syncToken":"d2","moreComing":false}

            """.utf8)
        try Self.replay(more, into: path)
        #expect(try Self.state(path).count == 1)
        try Self.replay(more, into: path)
        #expect(try Self.state(path).count == 1)
    }

    @Test("With zone changes in the history, its first part and then the whole give the final state, and the whole again changes nothing",
          arguments: [UInt64(21), 22, 23, 24, 25, 26])
    func prefixThenWholeWithZoneChanges(seed: UInt64) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 30, zoneChangeChance: 0.2, keepsSnapshots: false))
        let lines = history.ferryLines
        for part in [history.checkpoints.count / 3, history.checkpoints.count / 2, history.checkpoints.count * 2 / 3] {
            let path = StoreFixture.newPath()
            try Self.replay(Self.split(lines, at: history.checkpoints[part].token).before, into: path)
            try Self.replay(lines, into: path)
            #expect(try Self.state(path) == Self.expected(history.finalSnapshot), "seed \(seed), checkpoint \(part)")
            try Self.replay(lines, into: path)
            #expect(try Self.state(path) == Self.expected(history.finalSnapshot), "seed \(seed), checkpoint \(part), again")
        }
    }

    @Test("Files decoded on several threads give the store one thread gives, journal included", arguments: [false, true])
    func parallelFiles(cloudKitForm: Bool) throws {
        let history = HistoryGenerator.generate(seed: 14, configuration: .init(batches: 40, keepsSnapshots: false))
        let all = lines(of: cloudKitForm ? history.cloudKitLines : history.ferryLines)
        let directory = TestScratch.directory()
        var files: [String] = []
        for (index, start) in stride(from: 0, to: all.count, by: 7).enumerated() {
            var bytes: [UInt8] = []
            for line in all[start..<min(start + 7, all.count)] { bytes += line + [0x0A] }
            let path = directory + "/part-\(index).ndjson"
            try write(bytes, to: path)
            files.append(path)
        }
        var stores: [String] = []
        for threads in [1, 3] {
            let path = directory + "/s\(threads).sqlite"
            let replayer = try StoreReplayer(path: path)
            try replayer.apply(files: files, threads: threads) { try InputFile(path: $0) }
            try replayer.finish()
            stores.append(path)
        }
        #expect(try Self.state(stores[0]) == Self.state(stores[1]))
        #expect(try Self.state(stores[0]) == Self.expected(history.finalSnapshot))
        var journals: [[String]] = []
        for path in stores {
            var entries: [String] = []
            try RecordStore(path: path).changes(since: nil) { entries.append("\($0.sequence) \($0.event)") }
            journals.append(entries)
        }
        #expect(journals[0] == journals[1])
    }

    @Test("A transaction per checkpoint gives the same state as one per run")
    func transactionPerCheckpoint() throws {
        let history = HistoryGenerator.generate(seed: 9, configuration: .init(batches: 25, keepsSnapshots: false))
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords([], into: path)
        try Self.replay(history.ferryLines, into: path, configuration: .init(transaction: .checkpoint))
        #expect(try Self.state(path) == Self.expected(history.finalSnapshot))
        #expect(try RecordStore(path: path).verify().isIntact)
    }

    @Test("The journal exported since any token and replayed on the state at that token gives the final state")
    func journalExport() throws {
        let history = HistoryGenerator.generate(seed: 10, configuration: .init(batches: 30, keepsSnapshots: true))
        let middle = history.checkpoints[history.checkpoints.count / 3]
        let (before, after) = Self.split(history.ferryLines, at: middle.token)
        let path = StoreFixture.newPath()
        try Self.replay(before, into: path)
        let token = try RecordStore(path: path).currentToken()
        let copy = StoreFixture.newPath()
        try Self.replay(before, into: copy)
        try Self.replay(after, into: path)
        // What changed in `path` after `token`, applied to a store at that token, gives `path`'s state.
        let sink = MemorySink()
        let writer = ChangeLogWriter(sink: sink)
        let end = try RecordStore(path: path).writeChanges(since: token, to: writer)
        try writer.finish()
        #expect(end == (try RecordStore(path: path).currentToken()))
        try Self.replay(sink.bytes, into: copy)
        #expect(try Self.state(copy) == Self.state(path))
        // Nothing after the end; a token of another store is refused.
        var count = 0
        try RecordStore(path: path).changes(since: end) { _ in count += 1 }
        #expect(count == 0)
        #expect(throws: StoreError.self) { try RecordStore(path: path).changes(since: StoreToken(storeID: "0000", sequence: 1)) { _ in } }
    }

    @Test("With cascade, deleting a record deletes what points at it with DELETE_SELF")
    func cascade() throws {
        var chat = Record(recordName: "chat", recordType: "Chat", zoneID: ZoneID(zoneName: "Z"))
        chat.fields = ["title": RecordField(.string("t"), type: .string)]
        var message = Record(recordName: "m", recordType: "Message", zoneID: ZoneID(zoneName: "Z"))
        message.fields = ["chat": RecordField(.reference(Reference(recordName: "chat", action: .deleteSelf)), type: .reference)]
        var reaction = Record(recordName: "r", recordType: "Reaction", zoneID: ZoneID(zoneName: "Z"))
        reaction.fields = ["message": RecordField(.reference(Reference(recordName: "m", action: .deleteSelf)), type: .reference)]
        var note = Record(recordName: "n", recordType: "Note", zoneID: ZoneID(zoneName: "Z"))
        note.fields = ["about": RecordField(.reference(Reference(recordName: "chat", action: Reference.Action.none)), type: .reference)]
        for cascade in [false, true] {
            let path = StoreFixture.newPath()
            let replayer = try StoreReplayer(path: path, configuration: .init(cascade: cascade))
            for record in [chat, message, reaction, note] { try replayer.apply(.recordSaved(record)) }
            try replayer.apply(.recordDeleted(RecordID(recordName: "chat", zoneID: ZoneID(zoneName: "Z")), recordType: nil))
            try replayer.finish()
            let names = Set(try StoreFixture.readAll(path).map(\.recordName))
            #expect(names == (cascade ? ["n"] : ["m", "r", "n"]))
            #expect(try RecordStore(path: path).verify().isIntact)
        }
    }

    /// Every row of a store's tables but `ferry_store` (the store's ID), as text, sorted.
    static func tables(_ path: String) throws -> [String: [String]] {
        let store = try RecordStore(path: path)
        var result: [String: [String]] = [:]
        for table in ["databases", "zones", "records", "journal", "checkpoints"] {
            let columns = try store.connection.text("""
                SELECT group_concat('quote(' || name || ')', '||'' | ''||') FROM pragma_table_info('\(table)')
                """ + (table == "records" ? " WHERE name <> 'id'" : ""))!
            let rows = try store.connection.prepare("SELECT \(columns) FROM \(table)")
            var lines: [String] = []
            while try rows.step() { lines.append(rows.text(at: 0) ?? "") }
            result[table] = lines.sorted()
        }
        return result
    }

    @Test("A new store built from the final state holds what applying each change to an empty store gives: rows, journal, zones, tokens, counts",
          arguments: [(UInt64(21), false, false), (22, true, false), (23, false, true), (24, true, true), (25, false, false)])
    func newStoreEqualsChangeByChange(seed: UInt64, cloudKitForm: Bool, cascade: Bool) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 40, zoneChangeChance: 0.12, keepsSnapshots: false))
        let lines = cloudKitForm ? history.cloudKitLines : history.ferryLines
        let fresh = StoreFixture.newPath()
        let built = try Self.replay(lines, into: fresh, configuration: .init(cascade: cascade))
        let existing = StoreFixture.newPath()
        try StoreFixture.importRecords([], into: existing)
        let applied = try Self.replay(lines, into: existing, configuration: .init(cascade: cascade))
        let (a, b) = (try Self.tables(fresh), try Self.tables(existing))
        for table in a.keys.sorted() {
            #expect(a[table] == b[table], "table \(table)")
            #expect(a[table]?.isEmpty == false || table == "databases", "table \(table) has rows")
        }
        #expect(built.statistics == applied.statistics)
        #expect(built.appliedCount == applied.appliedCount)
        #expect(built.token?.sequence == applied.token?.sequence)
        for kind in ReplayAnomaly.Kind.allCases {
            #expect(built.anomalies.count(of: kind) == applied.anomalies.count(of: kind), "\(kind)")
        }
        #expect(built.statistics.modified > 0 && built.statistics.deleted > 0)
        #expect(try RecordStore(path: fresh).verify(deep: true).isIntact)
    }

    /// Applies `events` to a new store, or to an existing empty one, at `path`.
    @discardableResult
    static func apply(_ events: [ChangeEvent], into path: String, existing: Bool) throws -> StoreReplayer {
        if existing { try StoreFixture.importRecords([], into: path) }
        let replayer = try StoreReplayer(path: path)
        for event in events { try replayer.apply(event) }
        try replayer.finish()
        return replayer
    }

    @Test("A checkpoint for a deleted zone stores its token and leaves the zone deleted", arguments: [false, true])
    func checkpointForDeletedZone(existing: Bool) throws {
        let zone = ZoneID(zoneName: "Z")
        let events: [ChangeEvent] = [
            .recordSaved(Record(recordName: "a", recordType: "T", zoneID: zone)),
            .zoneDeleted(zone),
            .checkpoint(.init(zoneID: zone, syncToken: "after-delete")),
        ]
        let path = StoreFixture.newPath()
        let replayer = try Self.apply(events, into: path, existing: existing)
        let stored = try RecordStore(path: path).zones().first { $0.zoneID.zoneName == "Z" }
        #expect(stored?.isDeleted == true)
        #expect(stored?.syncToken == "after-delete")
        var kinds: [String] = []
        try RecordStore(path: path).changes(since: nil) { change in
            switch change.event {
            case .zoneSaved: kinds.append("zoneSaved")
            case .zoneDeleted: kinds.append("zoneDeleted")
            default: kinds.append("other")
            }
        }
        #expect(kinds.last == "zoneDeleted", "no zone save after the deletion: \(kinds)")
        #expect(replayer.anomalies.count(of: .eventForDeletedZone) == 1)
        #expect(try RecordStore(path: path).verify().isIntact)
    }

    @Test("A re-save that differs from the record only in the order of its keys (not of its fields) or escapes changes nothing",
          arguments: [false, true])
    func resaveInAnotherForm(existing: Bool) throws {
        let lines = """
            {"event":"recordSaved","record":{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"x":{"value":1,"type":"INT64"},"s":{"value":"A","type":"STRING"}}}}
            {"event":"recordSaved","record":{"recordType":"T","zoneID":{"zoneName":"Z"},"recordName":"a","fields":{"x":{"type":"INT64","value":1},"s":{"type":"STRING","value":"\\u0041"}}}}
            {"event":"recordSaved","record":{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"x":{"value":2,"type":"INT64"},"s":{"value":"A","type":"STRING"}}}}

            """
        let path = StoreFixture.newPath()
        if existing { try StoreFixture.importRecords([], into: path) }
        let replayer = try Self.replay(Array(lines.utf8), into: path)
        #expect(replayer.statistics == .init(created: 1, modified: 1, unchanged: 1, deleted: 0))
        #expect(try RecordStore(path: path).journalCount() == 3) // the zone, the creation, the one modification
    }

    @Test("Two zones of a history that are one zone in a store are refused for a new store, taken as one by an existing store")
    func zonesEqualAsText() throws {
        let lines = """
            {"event":"recordSaved","record":{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z","ownerRecordName":""}}}
            {"event":"recordSaved","record":{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"x":{"value":2,"type":"INT64"}}}}

            """
        let fresh = StoreFixture.newPath()
        #expect { try Self.replay(Array(lines.utf8), into: fresh) } throws: { "\($0)".contains("one zone in a store") }
        #expect(!FileSystem.exists(fresh))
        let existing = StoreFixture.newPath()
        try StoreFixture.importRecords([], into: existing)
        let replayer = try Self.replay(Array(lines.utf8), into: existing)
        #expect(replayer.statistics.created == 1 && replayer.statistics.modified == 1)
    }

    @Test("A reference naming another zone must name a record of that zone", arguments: [false, true])
    func referencesToOtherZones(existing: Bool) throws {
        func record(_ name: String, in zone: String, pointingAt target: String? = nil, inZone targetZone: String? = nil) -> Record {
            var record = Record(recordName: name, recordType: "T", zoneID: ZoneID(zoneName: zone))
            if let target {
                let reference = Reference(recordName: target, zoneID: targetZone.map { ZoneID(zoneName: $0) })
                record.fields = ["to": RecordField(.reference(reference), type: .reference)]
            }
            return record
        }
        let events: [ChangeEvent] = [
            .recordSaved(record("c", in: "B")),
            .recordSaved(record("found", in: "A", pointingAt: "c", inZone: "B")),
            .recordSaved(record("missing", in: "A", pointingAt: "x", inZone: "B")),
            .recordSaved(record("noZone", in: "A", pointingAt: "y", inZone: "C")),
            .recordSaved(record("sameZone", in: "A", pointingAt: "found")),
        ]
        let path = StoreFixture.newPath()
        let replayer = try Self.apply(events, into: path, existing: existing)
        let names = replayer.anomalies.anomalies.filter { $0.kind == .danglingReference }.compactMap(\.recordName).sorted()
        #expect(names == ["missing", "noZone"])
    }

    @Test("Anomalies are counted as ferry replay counts them")
    func anomalies() throws {
        let zone = ZoneID(zoneName: "Z")
        var record = Record(recordName: "a", recordType: "T", zoneID: zone, recordChangeTag: "t1")
        record.parent = Reference(recordName: "missing")
        let path = StoreFixture.newPath()
        let replayer = try StoreReplayer(path: path)
        try replayer.apply(.recordSaved(record))
        record.fields = ["x": RecordField(.int64(1), type: .int64)]
        try replayer.apply(.recordSaved(record))
        try replayer.apply(.recordDeleted(RecordID(recordName: "ghost", zoneID: zone), recordType: nil))
        try replayer.finish()
        #expect(replayer.anomalies.count(of: .unchangedChangeTag) == 1)
        #expect(replayer.anomalies.count(of: .unknownRecordDeleted) == 1)
        #expect(replayer.anomalies.count(of: .danglingParent) == 1)
    }
}
