import FerryChangeLog
import FerryIO
import FerryRecords
import FerryTestSupport
import Testing

/// Every response shape that carries changes through the change decoder, compact and
/// pretty-printed: its saves and deletes are the records and tombstones the record model reads,
/// its error entries are those the model rejects.
@Suite("Every change response shape through the change decoder")
struct ResponseShapeChangeTests {
    static let shapes = ResponseShapes.all.map(\.name).filter { $0.hasPrefix("records/") || $0.hasPrefix("changes/") || $0.hasPrefix("zones/") }

    static func events(_ text: String) throws -> [ChangeEvent] {
        let reader = ChangeLogReader(source: MemorySource(Array(text.utf8), name: "h.json", chunkSize: 97))
        var events: [ChangeEvent] = []
        while let event = try reader.next() { events.append(event) }
        return events
    }

    @Test("Saves, deletes and tokens agree with the record model, compact or pretty-printed", arguments: shapes)
    func agree(shape: String) throws {
        let text = ResponseShapes.all.first { $0.name == shape }!.text
        let compact = try Self.events(text + "\n")
        let pretty = try Self.events(ResponseShapes.pretty(text) + "\n")
        #expect(compact == pretty, "\(shape)")
        let model = ResponseShapes.model(text)
        var saved: [String] = [], deleted: [String] = []
        for event in compact {
            switch event {
            case .recordSaved(let record): saved.append(RecordJSON.encodedString(record))
            case .recordDeleted(let id, _): deleted.append(id.recordName)
            default: break
            }
        }
        let records = model.records.compactMap { try? RecordJSON.decodeRecord($0) }
        #expect(saved == records.filter { !$0.isDeleted }.map(RecordJSON.encodedString), "\(shape)")
        #expect(deleted == records.filter(\.isDeleted).map(\.recordName), "\(shape)")
        if model.listsZones {
            #expect(compact.contains { if case .checkpoint(let c) = $0 { c.zoneID == nil } else { false } } == !shape.hasPrefix("zones/list"),
                    "\(shape): a listing of zone changes ends with the database token")
        }
    }

    @Test("An entry is an error entry to replay exactly when it is one to the record model",
          arguments: ["an error entry alone", "an error entry with fields but no name", "a record with null fields and an error code",
                      "a record", "a tombstone"])
    func entryKinds(shape: String) throws {
        let entry = ResponseShapes.all.first { $0.name == shape }!.text
        let page = #"{"records":[\#(entry)],"syncToken":"T"}"#
        let model = ResponseShapes.model(page)
        let events = try Self.events(page)
        let changes = events.filter { if case .checkpoint = $0 { false } else { true } }
        #expect(changes.count == model.records.count, "\(shape): \(events)")
        #expect(model.records.count + model.rejects == 1, "\(shape)")
    }
}
