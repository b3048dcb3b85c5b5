@testable import FerryChangeLog
import FerryIO
import FerryJSON
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

@Suite("Replay state")
struct ReplayStateTests {
    private let zone = ZoneID(zoneName: "Chats", ownerRecordName: "_o")

    @Test("Names are bytes: a composed and a decomposed é name two records, and a delete removes only its own")
    func exactNames() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed) // Swift's String equality would merge them
        let replayer = try replay([saved(composed), saved(decomposed), deleted(decomposed)].joined(separator: "\n"))
        #expect(try replayer.state.records().map { Array($0.recordName.utf8) } == [Array(composed.utf8)])
        #expect(try replayer.state.record(named: composed, in: zone) != nil)
        #expect(try replayer.state.record(named: decomposed, in: zone) == nil)
        #expect(replayer.anomalies.total == 0)
    }

    @Test("Output is in a stable order: zones by name then owner, records by name bytes")
    func outputOrder() throws {
        let other = #"{"zoneName":"A","ownerRecordName":"_o"}"#
        let text = [saved("b"), saved("a"), saved("B"),
                    #"{"event":"recordSaved","record":{"recordName":"z","zoneID":\#(other)}}"#].joined(separator: "\n")
        let names = try replay(text).state.records().map(\.recordName)
        #expect(names == ["z", "B", "a", "b"])
    }

    @Test("Dependency order puts parents and referenced records first, cycles after, by name")
    func dependencyOrder() throws {
        let text = [saved("a", parent: "c"), saved("b"), saved("c", fields: referenceField("d")), saved("d"),
                    saved("x", fields: referenceField("y")), saved("y", fields: referenceField("x"))].joined(separator: "\n")
        let state = try replay(text).state
        #expect(try state.records(order: .dependencies).map(\.recordName) == ["b", "d", "c", "a", "x", "y"])
        #expect(try state.records().map(\.recordName) == ["a", "b", "c", "d", "x", "y"])
    }

    @Test("The order of a batch: hand-picked graphs, one key saved twice, self references")
    func orderGraphs() {
        let (order, cyclic) = DependencyOrder.order(keys: ["c", "p", "c", "s", "q", "r"],
                                                    targets: [["p"], [], ["x"], ["s"], ["r"], ["q"]])
        #expect(order == [1, 0, 2, 3, 4, 5])
        #expect(cyclic == [4, 5])
        let chain = DependencyOrder.order(keys: [3, 2, 1], targets: [[2], [1], []])
        #expect(chain.order == [2, 1, 0] && chain.cyclic.isEmpty)
        let behind = DependencyOrder.order(keys: ["a", "b", "c"], targets: [["b"], ["a"], ["a"]])
        #expect(behind.order == [0, 1, 2])
        #expect(behind.cyclic == [0, 1]) // c depends on the cycle but is not on it
    }

    @Test("A state writes and loads back with its tokens; the tokens name the state's record count")
    func writeAndLoad() throws {
        let directory = TestScratch.directory()
        let history = HistoryGenerator.generate(seed: 31)
        let replayer = try replay(history.ferryLines)
        let path = directory + "/state.ndjson"
        try replayer.state.write(toPath: path)
        let loaded = try ReplayState(contentsOfFile: path)
        #expect(try contents(loaded) == contents(replayer.state))
        #expect(loaded.tokens == replayer.tokens)
        #expect(replayer.tokens.recordCount == replayer.state.recordCount)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["state.ndjson", "state.ndjson.tokens.json"])
        // Tokens of another state are refused.
        var stale = replayer.tokens
        stale.recordCount = (stale.recordCount ?? 0) + 1
        try stale.write(toPath: ReplayTokens.sidecarPath(for: path))
        let error = #expect(throws: ChangeLogError.self) { try ReplayState(contentsOfFile: path) }
        #expect(error?.code == .invalidTokens)
    }

    @Test("Tokens round-trip through their JSON, and bad tokens files are refused", arguments: [
        #"{"format":"other"}"#, "not json", #"{"format":"ferry-replay-tokens","zones":[{"syncToken":"x"}]}"#,
        #"{"format":"ferry-replay-tokens","recordCount":-1}"#,
    ])
    func tokensJSON(bad: String) throws {
        let tokens = ReplayTokens(zones: [.init(zoneID: zone, syncToken: "T\"1", moreComing: true, isDeleted: false),
                                          .init(zoneID: ZoneID(zoneName: "Gone"), syncToken: nil, isDeleted: true)],
                                  database: .init(zoneID: nil, syncToken: "D1"), lastCheckpoint: .init(zoneID: zone, syncToken: "T\"1", moreComing: true),
                                  recordCount: 7)
        #expect(try ReplayTokens(parsing: tokens.json()) == tokens)
        let error = #expect(throws: ChangeLogError.self) { try ReplayTokens(parsing: bad) }
        #expect(error?.code == .invalidTokens)
    }

    @Test("A state is a value: a copy does not see later changes")
    func valueSemantics() throws {
        let replayer = Replayer()
        try replayer.apply(MemorySource(saved("a")))
        let before = replayer.state
        try replayer.apply(MemorySource(saved("b")))
        #expect(before.recordCount == 1)
        #expect(replayer.state.recordCount == 2)
        var copy = replayer.state
        try copy.save(Record(recordName: "c", zoneID: zone))
        #expect(replayer.state.recordCount == 2 && copy.recordCount == 3)
    }

    @Test("A state loads from any record reader, tombstones removing records")
    func loading() throws {
        var generator = RecordGenerator(seed: 5)
        let bytes = generator.ndjson(count: 200)
        let state = try ReplayState(loading: NDJSONReader(source: MemorySource(bytes)))
        let records = try NDJSONReader(source: MemorySource(bytes)).readAllRecords()
        var live: [String: Record] = [:]
        for record in records {
            let key = (record.zoneID.map { $0.zoneName + "\u{0}" + ($0.ownerRecordName ?? "") } ?? "_defaultZone\u{0}") + "\u{0}" + record.recordName
            if record.isDeleted { live[key] = nil } else { live[key] = record }
        }
        #expect(state.recordCount == live.count)
        #expect(Set(try contents(state)) == Set(canonical(Array(live.values))))
    }
}

extension NDJSONReader {
    func readAllRecords() throws -> [Record] {
        var result: [Record] = []
        while let record = try next() { result.append(record) }
        return result
    }
}
