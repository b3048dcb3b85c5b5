@testable import FerryChangeLog
import FerryIO
import FerryJSON
import FerryRecords
import FerryTestSupport
import Testing

@Suite("Comparing states")
struct StateDiffTests {
    private func diff(_ a: String, _ b: String) throws -> StateDiff {
        try StateDiff(comparing: NDJSONReader(source: MemorySource(a)), with: NDJSONReader(source: MemorySource(b)))
    }

    @Test("Identical sets compare identical whatever the key order, record order or number spelling")
    func identical() throws {
        let a = #"""
        {"recordName":"r1","recordType":"T","fields":{"x":{"value":1.5,"type":"DOUBLE"},"y":{"value":"s","type":"STRING"}},"extra":{"a":1,"b":[1,2]}}
        {"recordName":"r2","zoneID":{"zoneName":"Z"}}
        """#
        let b = #"""
        {"zoneID":{"zoneName":"Z"},"recordName":"r2"}
        {"extra":{"b":[1,2],"a":1},"fields":{"y":{"type":"STRING","value":"s"},"x":{"type":"DOUBLE","value":15e-1}},"recordType":"T","recordName":"r1"}
        """#
        let result = try diff(a, b)
        #expect(result.isIdentical)
        #expect(result.identicalCount == 2 && result.countA == 2 && result.countB == 2)
    }

    @Test("Records only in one input and changed records are found, naming the changed fields and keys")
    func differences() throws {
        let a = #"""
        {"recordName":"same","recordType":"T"}
        {"recordName":"gone","recordType":"T"}
        {"recordName":"edit","recordType":"T","recordChangeTag":"1","fields":{"a":{"value":1,"type":"INT64"},"b":{"value":"x","type":"STRING"},"c":{"value":2,"type":"INT64"}}}
        """#
        let b = #"""
        {"recordName":"same","recordType":"T"}
        {"recordName":"new","recordType":"T","zoneID":{"zoneName":"Z"}}
        {"recordName":"edit","recordType":"T","recordChangeTag":"2","fields":{"a":{"value":1,"type":"INT64"},"b":{"value":"y","type":"STRING"},"d":{"value":2,"type":"INT64"}}}
        """#
        let result = try diff(a, b)
        #expect(!result.isIdentical)
        #expect(result.onlyInA.map(\.recordName) == ["gone"])
        #expect(result.onlyInB.map(\.recordName) == ["new"])
        #expect(result.onlyInB.first?.zoneID.zoneName == "Z")
        #expect(result.changed.map(\.recordName) == ["edit"])
        #expect(result.changed.first?.fields == ["b", "c", "d"])
        #expect(result.changed.first?.keys == ["recordChangeTag"])
        #expect(result.identicalCount == 1)
    }

    @Test("A record given more than once in either input is refused, naming it, its zone and where it appears",
          arguments: [true, false])
    func duplicates(inFirst: Bool) throws {
        let once = #"""
        {"recordName":"r1","zoneID":{"zoneName":"Z","ownerRecordName":"_o"}}
        {"recordName":"r2"}
        {"recordName":"r3"}
        """#
        // r2 three times, r1 twice (once with another spelling of its zone), r3 once.
        let twice = #"""
        {"recordName":"r1","zoneID":{"zoneName":"Z","ownerRecordName":"_o"}}
        {"recordName":"r2"}
        {"recordName":"r3"}
        {"recordName":"r2","zoneID":{"zoneName":"_defaultZone"}}
        {"zoneID":{"ownerRecordName":"_o","zoneName":"Z"},"recordName":"r1"}
        {"recordName":"r2","recordType":"T"}
        """#
        do {
            let result = inFirst ? try diff(twice, once) : try diff(once, twice)
            Issue.record("compared: \(result)")
        } catch let error as ChangeLogError {
            #expect(error.code == .duplicateRecord)
            #expect(error.description == "<memory>: expected each record (zone and recordName) once, as a state holds it, found "
                    + #"record "r1" in zone "Z" (owner "_o") twice (records 1 and 5) and "#
                    + #"record "r2" in zone "_defaultZone" 3 times (records 2, 4 and 6)"#)
        }
    }

    @Test("The counts are the records read, and the same record under another name's normalization is not a duplicate")
    func countsAreRecordsRead() throws {
        let a = "{\"recordName\":\"caf\u{E9}\"}\n{\"recordName\":\"cafe\u{301}\"}\n{\"recordName\":\"x\"}"
        let result = try diff(a, a)
        #expect(result.isIdentical)
        #expect(result.countA == 3 && result.countB == 3 && result.identicalCount == 3)
    }

    @Test("Records match by zone and exact name: a name in another zone or another normalization is another record")
    func matching() throws {
        let a = "{\"recordName\":\"caf\u{E9}\",\"zoneID\":{\"zoneName\":\"A\"}}"
        let b = "{\"recordName\":\"cafe\u{301}\",\"zoneID\":{\"zoneName\":\"A\"}}\n{\"recordName\":\"caf\u{E9}\",\"zoneID\":{\"zoneName\":\"B\"}}"
        let result = try diff(a, b)
        #expect(result.onlyInA.count == 1 && result.onlyInB.count == 2 && result.identicalCount == 0)
    }

    @Test("A replay of a generated history and its snapshot compare identical; a changed snapshot does not")
    func replayAgainstSnapshot() throws {
        let history = HistoryGenerator.generate(seed: 41)
        let state = try replay(history.cloudKitLines).state
        var out = JSONOutput(capacity: 1 << 16)
        for record in history.finalSnapshot.reversed() {
            RecordJSON.encode(record, into: &out)
            out.append(0x0A)
        }
        let snapshot = out.array
        let sink = MemorySink()
        try state.write(to: NDJSONWriter(sink: sink))
        let same = try StateDiff(comparing: NDJSONReader(source: MemorySource(sink.bytes)), with: NDJSONReader(source: MemorySource(snapshot)))
        #expect(same.isIdentical)
        var changed = history.finalSnapshot
        changed[0].recordChangeTag = "changed"
        changed.removeLast()
        var other = JSONOutput(capacity: 1 << 16)
        for record in changed {
            RecordJSON.encode(record, into: &other)
            other.append(0x0A)
        }
        let different = try StateDiff(comparing: NDJSONReader(source: MemorySource(sink.bytes)), with: NDJSONReader(source: MemorySource(other.array)))
        #expect(different.changed.count == 1 && different.changed[0].keys == ["recordChangeTag"])
        #expect(different.onlyInA.count == 1)
    }
}

/// `ferry diff` compares numbers kept as JSON by their exact decimal value, never rounded to a
/// double, and tells an integer from a fraction (they read back as INT64 and DOUBLE).
@Suite("diff compares numbers exactly")
struct ExactNumberEqualityTests {
    static func equal(_ a: String, _ b: String) -> Bool {
        JSONEquality.equal(JSONNumber(text: a), JSONNumber(text: b))
    }

    @Test("The same value written differently is equal")
    func sameValue() {
        for (a, b) in [("1", "1"), ("10", "010"), ("-0", "0"), ("1.5", "1.50"), ("1.5", "15e-1"), ("0.1e1", "1.0"),
                       ("1e400", "10e399"), ("-2.5E+3", "-2500.0"), ("1.00000000000000000001", "100000000000000000001e-20"),
                       ("123456789012345678901234567890", "123456789012345678901234567890")] {
            #expect(Self.equal(a, b), "\(a) and \(b)")
            #expect(Self.equal(b, a), "\(b) and \(a)")
        }
    }

    @Test("Values a double cannot tell apart are different")
    func differentValues() {
        for (a, b) in [("1e400", "2e400"), ("1e-400", "0.0"), ("1e-400", "0"), ("1.00000000000000000001", "1.0"),
                       ("9007199254740993", "9007199254740992"), ("1e401", "1e400"), ("0.1", "0.10000000000000001"),
                       ("1", "1.0"), ("100", "1e2"), ("-0.0", "0.0"), ("1.5", "-1.5")] {
            #expect(!Self.equal(a, b), "\(a) and \(b)")
            #expect(!Self.equal(b, a), "\(b) and \(a)")
        }
    }
}
