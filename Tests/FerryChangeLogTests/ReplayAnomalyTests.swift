@testable import FerryChangeLog
import FerryIO
import FerryRecords
import FerryTestSupport
import Testing

@Suite("Replay anomalies")
struct ReplayAnomalyTests {
    private func anomalies(_ lines: [String], _ configuration: Replayer.Configuration = .init()) throws -> AnomalyReport {
        try replay(lines.joined(separator: "\n"), configuration).anomalies
    }

    @Test("A delete of a record the state does not hold is counted and listed")
    func unknownDelete() throws {
        let report = try anomalies([saved("a"), deleted("b"), checkpoint("T1")])
        #expect(report.count(of: .unknownRecordDeleted) == 1)
        #expect(report.anomalies.first { $0.kind == .unknownRecordDeleted }?.recordName == "b")
        #expect(report.anomalies.first { $0.kind == .unknownRecordDeleted }?.eventIndex == 2)
        #expect(report.total == 1)
    }

    @Test("A re-save with the change tag the state already holds is an anomaly; a new tag is not")
    func unchangedTag() throws {
        let report = try anomalies([saved("a", tag: "x"), saved("a", tag: "x", modified: 2), saved("a", tag: "y", modified: 3)])
        #expect(report.count(of: .unchangedChangeTag) == 1)
        #expect(report.total == 1)
    }

    @Test("A modification time going backwards is an anomaly")
    func timeBackwards() throws {
        let report = try anomalies([saved("a", tag: "1", modified: 100), saved("a", tag: "2", modified: 50)])
        #expect(report.count(of: .modificationTimeWentBackwards) == 1)
        #expect(report.anomalies.first?.detail.contains("100") == true)
    }

    @Test("Parents and references pointing at nothing in the final state are anomalies; live targets are not")
    func dangling() throws {
        let report = try anomalies([saved("p"), saved("child", parent: "gone"), saved("ref", fields: referenceField("gone2", field: "owner")),
                                    saved("ok", fields: referenceField("p"), parent: "p")])
        #expect(report.count(of: .danglingParent) == 1)
        #expect(report.count(of: .danglingReference) == 1)
        let reference = report.anomalies.first { $0.kind == .danglingReference }
        #expect(reference?.recordName == "ref")
        #expect(reference?.detail.contains("field \"owner\"") == true)
        #expect(reference?.detail.contains("gone2") == true)
        // The target deleted later: dangling at the end.
        let later = try anomalies([saved("p"), saved("c", parent: "p"), deleted("p")])
        #expect(later.count(of: .danglingParent) == 1)
    }

    @Test("A token seen twice for one zone is an anomaly")
    func tokenTwice() throws {
        let report = try anomalies([saved("a"), checkpoint("T1"), saved("b"), checkpoint("T1")])
        #expect(report.count(of: .tokenSeenTwice) == 1)
        #expect(report.anomalies.first?.syncToken == "T1")
    }

    @Test("Events for a deleted zone are anomalies; a save re-creates the zone")
    func deletedZone() throws {
        let zoneDeleted = #"{"event":"zoneDeleted","zoneID":\#(chats)}"#
        let replayer = try replay([saved("a"), zoneDeleted, deleted("a"), checkpoint("T1"), saved("b")].joined(separator: "\n"))
        #expect(replayer.anomalies.count(of: .eventForDeletedZone) == 3)
        #expect(try replayer.state.records().map(\.recordName) == ["b"])
        #expect(replayer.state.zoneIDs.map(\.zoneName) == ["Chats"])
    }

    @Test("Records of one batch that reference each other in a cycle are reported with --order, and applied")
    func cycles() throws {
        let lines = [saved("a", fields: referenceField("b")), saved("b", fields: referenceField("a")), saved("c", fields: referenceField("a")),
                     checkpoint("T1")]
        let ordered = try anomalies(lines, .init(ordersBatches: true))
        #expect(ordered.count(of: .referenceCycle) == 2)
        #expect(Set(ordered.anomalies.filter { $0.kind == .referenceCycle }.compactMap(\.recordName)) == ["a", "b"])
        #expect(try anomalies(lines).count(of: .referenceCycle) == 0)
    }

    @Test("Error entries of change responses are anomalies")
    func serverErrors() throws {
        let zoneError = #"{"zones":[{"zoneID":\#(chats),"serverErrorCode":"ZONE_NOT_FOUND","reason":"gone"}]}"#
        let recordError = #"{"records":[{"recordName":"x","serverErrorCode":"ACCESS_DENIED"}],"zoneID":\#(chats),"syncToken":"T"}"#
        let report = try anomalies([zoneError, recordError])
        #expect(report.count(of: .serverError) == 2)
        #expect(report.anomalies.first?.detail.contains("ZONE_NOT_FOUND: gone") == true)
    }

    @Test("Every kind has a test above, and the report counts past its list")
    func everyKindAndLimit() throws {
        let lines = (0..<30).map { deleted("n\($0)") }
        let replayer = try replay(lines.joined(separator: "\n"), .init(maximumListedAnomalies: 10))
        #expect(replayer.anomalies.count(of: .unknownRecordDeleted) == 30)
        #expect(replayer.anomalies.anomalies.count == 10)
        #expect(replayer.anomalies.isTruncated)
        let json = try JSONValue(parsing: replayer.anomalies.json())
        #expect(json["total"] == .number(JSONNumber(Int64(30))))
        #expect(json["truncated"] == .bool(true))
        #expect(json["anomalies"]?.arrayValue?.count == 10)
        #expect(ReplayAnomaly.Kind.allCases.count == 9)
    }

    @Test("Cascade deletes what points at a deleted record with DELETE_SELF, recursively, and not parents or NONE references")
    func cascade() throws {
        let lines = [saved("chat"), saved("message", fields: referenceField("chat")), saved("reaction", fields: referenceField("message")),
                     saved("link", fields: referenceField("chat", action: "NONE")), saved("child", parent: "chat"),
                     saved("moved", fields: referenceField("chat")), saved("moved", tag: "t2", fields: referenceField("other")),
                     deleted("chat")]
        let plain = try replay(lines.joined(separator: "\n"))
        #expect(try plain.state.records().map(\.recordName).sorted() == ["child", "link", "message", "moved", "reaction"])
        var applied: [String] = []
        let replayer = Replayer(configuration: .init(cascade: true))
        replayer.onApply = { event in
            if case .recordDeleted(let id, _) = event { applied.append(id.recordName) }
        }
        try replayer.apply(MemorySource(lines.joined(separator: "\n")))
        try replayer.finish()
        #expect(try replayer.state.records().map(\.recordName).sorted() == ["child", "link", "moved"])
        #expect(applied == ["chat", "message", "reaction"])
    }

    @Test("Cascade indexes the base's records")
    func cascadeFromBase() throws {
        let base = try replay([saved("chat"), saved("message", fields: referenceField("chat")), checkpoint("T1")].joined(separator: "\n")).state
        let replayer = try replay([deleted("chat"), checkpoint("T2")].joined(separator: "\n"), .init(cascade: true), base: base)
        #expect(replayer.state.recordCount == 0)
    }

    @Test("With --order, parents and referenced records of a batch are applied first; history order otherwise")
    func batchOrder() throws {
        let lines = [saved("child", parent: "parent"), saved("grandchild", fields: referenceField("child")), saved("parent"), checkpoint("T1"),
                     saved("x"), checkpoint("T2")]
        func order(_ configuration: Replayer.Configuration) throws -> [String] {
            var names: [String] = []
            let replayer = Replayer(configuration: configuration)
            replayer.onApply = { event in if case .recordSaved(let record) = event { names.append(record.recordName) } }
            try replayer.apply(MemorySource(lines.joined(separator: "\n")))
            try replayer.finish()
            return names
        }
        #expect(try order(.init(ordersBatches: true)) == ["parent", "child", "grandchild", "x"])
        #expect(try order(.init()) == ["child", "grandchild", "parent", "x"])
    }
}
