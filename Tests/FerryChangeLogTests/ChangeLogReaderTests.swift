@testable import FerryChangeLog
import FerryIO
import FerryRecords
import FerryTestSupport
import Testing

@Suite("Reading histories")
struct ChangeLogReaderTests {
    private func events(_ text: String, chunkSize: Int = .max) throws -> [ChangeEvent] {
        let reader = ChangeLogReader(source: MemorySource(text, name: "h.ndjson", chunkSize: chunkSize))
        var result: [ChangeEvent] = []
        while let event = try reader.next() { result.append(event) }
        return result
    }

    private let zone = ZoneID(zoneName: "Chats", ownerRecordName: "_o")

    @Test("Ferry's events read as the events they name")
    func ferryEvents() throws {
        let text = [#"{"event":"zoneSaved","zoneID":\#(chats)}"#, saved("a"), deleted("a"),
                    #"{"event":"recordDeleted","recordName":"b","zoneID":\#(chats),"recordType":"Item"}"#,
                    checkpoint("T1", moreComing: true), #"{"event":"checkpoint","syncToken":"DB1"}"#,
                    #"{"event":"zoneDeleted","zoneID":\#(chats)}"#, #"{"event":"zonePurged","zoneID":\#(chats)}"#].joined(separator: "\n")
        let read = try events(text)
        #expect(read.count == 8)
        #expect(read[0] == .zoneSaved(zone))
        guard case .recordSaved(let record) = read[1] else { Issue.record("expected a save"); return }
        #expect(record.recordName == "a" && record.zoneID == zone && record.recordChangeTag == "t1")
        #expect(read[2] == .recordDeleted(RecordID(recordName: "a", zoneID: zone), recordType: nil))
        #expect(read[3] == .recordDeleted(RecordID(recordName: "b", zoneID: zone), recordType: "Item"))
        #expect(read[4] == .checkpoint(.init(zoneID: zone, syncToken: "T1", moreComing: true)))
        #expect(read[5] == .checkpoint(.init(zoneID: nil, syncToken: "DB1")))
        #expect(read[6] == .zoneDeleted(zone))
        #expect(read[7] == .zonePurged(zone))
    }

    @Test("A records/changes page reads as its saves and deletes, then its token; tombstones may lack type and fields")
    func recordsChanges() throws {
        let page = #"{"records":[{"recordName":"a","recordType":"Item","zoneID":\#(chats),"fields":{}},{"recordName":"b","zoneID":\#(chats),"deleted":true},{"recordName":"c","recordType":"Item","deleted":true}],"syncToken":"S1","moreComing":true}"#
        let read = try events(page)
        #expect(read.count == 4)
        #expect(read[1] == .recordDeleted(RecordID(recordName: "b", zoneID: zone), recordType: nil))
        #expect(read[2] == .recordDeleted(RecordID(recordName: "c", zoneID: zone), recordType: "Item"))
        #expect(read[3] == .checkpoint(.init(zoneID: zone, syncToken: "S1", moreComing: true)))
    }

    @Test("Records that name no zone take the page's, or an earlier page's; empty pages too")
    func pageZones() throws {
        let text = [#"{"zoneID":\#(chats),"records":[{"recordName":"a","recordType":"Item"}],"syncToken":"S1"}"#,
                    #"{"records":[],"syncToken":"S2","moreComing":false}"#,
                    #"{"records":[{"recordName":"b","recordType":"Item"}],"syncToken":"S3"}"#].joined(separator: "\n")
        for threads in decodingModes {
            let replayer = try replay(Array(text.utf8), .init(decodingThreads: threads))
            #expect(try replayer.state.records().map { $0.zoneID } == [zone, zone])
            #expect(replayer.tokens.zones.map(\.syncToken) == ["S3"])
        }
        // Across blocks decoded on different threads: a block starting with a page without a zone.
        var lines = [#"{"zoneID":\#(chats),"records":[],"syncToken":"S0"}"#]
        for i in 0..<3000 { lines.append(#"{"records":[{"recordName":"r\#(i)","recordType":"Item","fields":{"pad":{"value":"\#(String(repeating: "x", count: 3000))","type":"STRING"}}}],"syncToken":"S\#(i + 1)"}"#) }
        let replayer = try replay(Array(lines.joined(separator: "\n").utf8), .init(decodingThreads: 2))
        #expect(replayer.state.zoneIDs == [zone])
        #expect(replayer.state.recordCount == 3000)
    }

    @Test("A page without a zone takes the previous page's across files too (a folder of saved pages)")
    func pageZonesAcrossFiles() throws {
        let pages = [#"{"records":[{"recordName":"a","recordType":"Item","zoneID":\#(chats)},{"recordName":"b","recordType":"Item"}],"syncToken":"S1","moreComing":true}"#,
                     #"{"records":[{"recordName":"a","deleted":true}],"syncToken":"S2","moreComing":false}"#,
                     #"{"records":[],"syncToken":"S3","moreComing":false}"#]
        for threads in decodingModes {
            let whole = try replay(Array(pages.joined(separator: "\n").utf8), .init(decodingThreads: threads))
            let replayer = Replayer(configuration: .init(decodingThreads: threads))
            var remaining = pages.enumerated().map { MemorySource($0.element, name: "page-\($0.offset).json") }
            try replayer.apply(sources: { remaining.isEmpty ? nil : remaining.removeFirst() })
            try replayer.finish()
            for result in [whole, replayer] {
                #expect(try result.state.records().map(\.recordName) == ["b"], "threads \(threads)")
                #expect(result.tokens.zones.map(\.zoneID) == [zone], "threads \(threads)")
                #expect(result.tokens.zones.map(\.syncToken) == ["S3"], "threads \(threads)")
                #expect(result.anomalies.total == 0, "threads \(threads)")
            }
        }
    }

    @Test("changes/zone responses read as each zone's changes then its token; error entries are skipped by the reader")
    func changesZone() throws {
        let text = #"{"zones":[{"zoneID":\#(chats),"records":[{"recordName":"a","recordType":"Item"}],"syncToken":"Z1","moreComing":false},{"zoneID":{"zoneName":"Gone"},"serverErrorCode":"ZONE_NOT_FOUND"}]}"#
        let read = try events(text)
        #expect(read.count == 2)
        guard case .recordSaved(let record) = read[0] else { Issue.record("expected a save"); return }
        #expect(record.zoneID == zone) // inserted from the entry
        #expect(read[1] == .checkpoint(.init(zoneID: zone, syncToken: "Z1")))
    }

    @Test("changes/database and legacy zones/changes read as zone changes then a database token")
    func zoneListings() throws {
        let database = #"{"zones":[{"zoneID":\#(chats)},{"zoneID":{"zoneName":"Old"},"deleted":true},{"zoneID":{"zoneName":"Purged"},"purged":true,"syncToken":"ignored"}],"syncToken":"D1","moreComing":true}"#
        let legacy = #"{"zones":[{"zoneID":{"zoneName":"Old"},"deleted":true}],"metaSyncToken":"M1","moreComing":false}"#
        let read = try events(database + "\n" + legacy)
        #expect(read == [.zoneSaved(zone), .zoneDeleted(ZoneID(zoneName: "Old")), .zonePurged(ZoneID(zoneName: "Purged")),
                         .checkpoint(.init(zoneID: nil, syncToken: "D1", moreComing: true)),
                         .zoneDeleted(ZoneID(zoneName: "Old")), .checkpoint(.init(zoneID: nil, syncToken: "M1"))])
    }

    @Test("Pretty-printed saved responses, several per file, and JSON arrays of documents read too")
    func prettyAndArrays() throws {
        let pretty = """
        {
          "records" : [
            { "recordName" : "a", "recordType" : "Item", "zoneID" : \(chats) }
          ],
          "syncToken" : "P1"
        }
        {
          "records" : [ ],
          "zoneID" : \(chats),
          "syncToken" : "P2"
        }
        """
        for threads in decodingModes {
            let replayer = try replay(Array(pretty.utf8), .init(decodingThreads: threads))
            #expect(replayer.state.recordCount == 1)
            let stored = try #require(try replayer.state.record(named: "a", in: zone))
            #expect(stored.recordType == "Item")
            #expect(replayer.tokens.zones.first?.syncToken == "P2")
        }
        let array = "[" + saved("a") + "," + checkpoint("A1") + "]\n" + saved("b")
        #expect(try events(array).count == 3)
    }

    @Test("A record of a zone entry with \"zoneID\": null is placed in the entry's zone, the null dropped")
    func nullZoneID() throws {
        let record = #"{"recordName":"a","recordType":"Item","zoneID":null,"fields":{"n":{"value":1,"type":"INT64"}}}"#
        for page in ["{\"zones\":[{\"zoneID\":\(chats),\"syncToken\":\"P1\",\"records\":[\(record)]}]}",
                     "{\n  \"zones\" : [ {\n    \"zoneID\" : \(chats),\n    \"syncToken\" : \"P1\",\n    \"records\" : [ \(record) ]\n  } ]\n}"] {
            for threads in decodingModes {
                let replayer = try replay(Array((page + "\n").utf8), .init(decodingThreads: threads))
                // The state's JSON decodes (a key written twice would not) and holds the zone once.
                let records = try replayer.state.records()
                #expect(canonical(records) == [#"{"recordName":"a","recordType":"Item","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"fields":{"n":{"value":1,"type":"INT64"}}}"#],
                        "\(threads) threads")
            }
        }
    }

    @Test("A last line without a newline is read, in every decoding mode")
    func lastLine() throws {
        for threads in decodingModes {
            let replayer = try replay(Array((saved("a") + "\n" + saved("b")).utf8), .init(decodingThreads: threads))
            #expect(replayer.state.recordCount == 2, "\(threads) threads")
        }
    }

    @Test("Blank lines, CRLF and a byte order mark are accepted")
    func lenientLines() throws {
        let text = "\u{FEFF}" + saved("a") + "\r\n\r\n   \n" + checkpoint("T1") + "\r\n"
        for threads in decodingModes {
            let replayer = try replay(Array(text.utf8), .init(decodingThreads: threads))
            #expect(replayer.state.recordCount == 1)
            #expect(replayer.tokens.lastCheckpoint?.syncToken == "T1")
        }
    }

    @Test("Bad input fails with the file, line and column and says what was expected", arguments: [
        (saved("a") + "\n" + #"{"event":"recordSaved","record":{"recordName":"b""#, 2, "expected"),
        (saved("a") + "\n" + #"{"event":"recordMoved","recordName":"b"}"#, 2, "recordMoved"),
        (saved("a") + "\n\n" + #"{"event":"checkpoint","zoneID":\#(chats)}"#, 3, "syncToken"),
        (#"{"records":[{"recordName":"a","fields":{"x":{"value":"\#u{01}"}}}]}"#, 1, "control character"),
        (saved("a") + "\n" + #"{"event":"recordSaved","record":{"recordName":"b","recordName":"c"}}"#, 2, "twice"),
        (#"{"hello":1}"#, 1, "\"hello\""),
        ("[1,2", 1, "expected"),
    ])
    func badInput(text: String, line: Int, mentions: String) {
        for threads in decodingModes {
            let error = #expect(throws: ChangeLogError.self) {
                try replay(Array(text.utf8), .init(decodingThreads: threads), name: "h.ndjson")
            }
            #expect(error?.source == "h.ndjson")
            #expect(error?.line == line, "\(threads) threads")
            #expect(error?.column != nil)
            #expect(error?.description.hasPrefix("h.ndjson:\(line):") == true, "\(error?.description ?? "")")
            #expect(error?.message.contains(mentions) == true, "\(error?.message ?? "")")
        }
    }

    @Test("A failure while blocks are still being cut and decoded ends cleanly, every time")
    func failureWhileReading() {
        // The reader goes while its cutting thread may still hold blocks: nothing may trap.
        var lines = (0..<2000).map { saved("r\($0)") }
        lines.insert(#"{"event":"recordSaved","record":{"recordName":"#, at: 3)
        let text = Array(lines.joined(separator: "\n").utf8)
        for _ in 0..<40 {
            let error = #expect(throws: ChangeLogError.self) {
                try replay(text, .init(decodingThreads: 2), chunkSize: 4096)
            }
            #expect(error?.line == 4)
        }
    }

    @Test("A line longer than the limit fails with its line number")
    func longLine() {
        let text = saved("a") + "\n" + saved("b", fields: #"{"pad":{"value":"\#(String(repeating: "y", count: 5000))"}}"#) + "\n" + saved("c")
        for threads in decodingModes {
            let error = #expect(throws: ChangeLogError.self) {
                try replay(Array(text.utf8), .init(reader: .init(maximumLineBytes: 1000), decodingThreads: threads))
            }
            #expect(error?.code == .tooLarge)
            #expect(error?.line == 2, "\(threads) threads")
        }
    }

    @Test("A token that is not in the history fails --until and --since")
    func missingTokens() throws {
        let text = [saved("a"), checkpoint("T1"), saved("b"), checkpoint("T2")].joined(separator: "\n")
        let until = #expect(throws: ChangeLogError.self) { try replay(text, .init(until: "T9")) }
        #expect(until?.code == .tokenNotFound)
        #expect(until?.message.contains("\"T9\"") == true)
        let since = #expect(throws: ChangeLogError.self) { try replay(text, .init(since: "T9")) }
        #expect(since?.code == .tokenNotFound)
        let order = #expect(throws: ChangeLogError.self) { try replay(text, .init(until: "T1", since: "T2")) }
        #expect(order?.message.contains("before the --since checkpoint") == true)
    }

    @Test("Tokens only: record bodies are not applied, tokens and zone changes are")
    func tokensOnly() throws {
        let history = HistoryGenerator.generate(seed: 21, configuration: .init(zoneChangeChance: 0.2))
        for lines in [history.ferryLines, history.cloudKitLines] {
            let full = try replay(lines)
            let tokens = try replay(lines, .init(tokensOnly: true))
            #expect(tokens.state.recordCount == 0)
            #expect(tokens.tokens.zones.map(\.syncToken) == full.tokens.zones.map(\.syncToken))
            #expect(tokens.tokens.zones.map(\.isDeleted) == full.tokens.zones.map(\.isDeleted))
            #expect(tokens.tokens.database == full.tokens.database)
        }
    }
}
