import FerryRecords
import FerryTestSupport
import Testing

/// The one walker of response wrappers (``ResponseWalker``, ``CloudKitKey``) and the readers in
/// FerryRecords that walk with it: every shape, compact and pretty-printed, read alike.
@Suite("One walker of response wrappers")
struct ResponseWalkerTests {
    static let shapes = ResponseShapes.all.map(\.name)

    static func text(_ name: String) -> String { ResponseShapes.all.first { $0.name == name }!.text }

    /// The compact and the pretty-printed form of a shape.
    static func forms(_ name: String) -> [String] { [text(name), ResponseShapes.pretty(text(name))] }

    @Test("Every CloudKit key is named by its spelling, and no other key is")
    func keys() {
        for key in CloudKitKey.allCases {
            let name = "\(key.name)"
            #expect(CloudKitKey.named(name) == key, "\(name)")
            #expect(key.isRecordMember == CloudKitKey.recordMembers.contains(key))
            var bytes = Array(name.utf8)
            let marks = bytes.withUnsafeBufferPointer { CloudKitKey.marksNonRecord($0.baseAddress!, count: $0.count) }
            #expect(marks == [.records, .zones, .serverErrorCode].contains(key), "\(name)")
            // One byte off is another key, or none.
            bytes[bytes.count - 1] ^= 0x20
            #expect(CloudKitKey.named(String(decoding: bytes, as: UTF8.self)) == nil, "\(name)")
        }
        for other in ["", "record", "Records", "recordNames", "zone", "syncTokens", "event", "uuid"] {
            #expect(CloudKitKey.named(other) == nil, "\(other)")
        }
        // The record members' raw values are their places in the order Ferry writes them.
        #expect(CloudKitKey.recordMembers.map(\.rawValue) == Array(0..<UInt8(CloudKitKey.recordMembers.count)))
    }

    @Test("An entry is an error entry, a tombstone or a record by one rule")
    func entryKinds() {
        typealias Kind = ResponseWalker.EntryKind
        let cases: [(name: Bool, fields: Bool, code: Bool, deleted: Bool, kind: Kind)] = [
            (true, true, false, false, .record), (true, true, false, true, .tombstone), (true, false, false, true, .tombstone),
            (true, false, true, false, .error), (false, false, true, false, .error), (false, true, true, false, .error),
            (true, true, true, false, .record), (true, true, true, true, .tombstone), (false, false, false, false, .record),
        ]
        for c in cases {
            #expect(ResponseWalker.entryKind(hasName: c.name, hasFields: c.fields, hasErrorCode: c.code, isDeleted: c.deleted) == c.kind,
                    "\(c)")
        }
    }

    @Test("What a zones response is, as its shape tells")
    func zonesShapes() {
        #expect(ResponseWalker.zonesShape(carriesRecords: true, hasMetaSyncToken: true, hasSyncToken: true) == .changesZone)
        #expect(ResponseWalker.zonesShape(carriesRecords: false, hasMetaSyncToken: true, hasSyncToken: true) == .zonesChanges)
        #expect(ResponseWalker.zonesShape(carriesRecords: false, hasMetaSyncToken: false, hasSyncToken: true) == .changesDatabase)
        #expect(ResponseWalker.zonesShape(carriesRecords: false, hasMetaSyncToken: false, hasSyncToken: false) == .zonesList)
        for name in ["changes/database", "zones/list", "zones/changes (legacy)"] {
            let bytes = Array(Self.text(name).utf8)
            guard case .zones(let response) = try? bytes.withUnsafeBytes({ buffer throws(RecordFormatError) in
                try RecordJSON.decodeDocument(buffer)
            }) else {
                Issue.record("\(name) is not a zones response")
                continue
            }
            #expect(response.shape == String(name.prefix { $0 != " " }), "\(name)")
        }
    }

    @Test("The model reads each shape as its documentation says")
    func model() {
        let expected: [String: (records: Int, rejects: Int, listsZones: Bool)] = [
            "records/query": (2, 0, false), "records/query, empty page": (0, 0, false),
            "records/lookup with error entries": (1, 2, false), "records/modify with a tombstone": (2, 0, false),
            "records/changes of one zone": (2, 0, false), "changes/zone": (3, 0, false),
            "changes/zone with a zone's error entry": (1, 1, false), "changes/zone with a record's error entry": (1, 1, false),
            "changes/database": (0, 0, true), "zones/list": (0, 0, true), "zones/changes (legacy)": (0, 0, true),
            "zones first, then records": (1, 0, false), "a record with a member named records": (1, 0, false),
            "a failed request": (0, 1, false), "an error entry with fields but no name": (0, 1, false),
            "a record with null fields and an error code": (1, 0, false), "a bad entry among good ones": (2, 1, false),
            "keys with escapes": (1, 0, false),
        ]
        for (name, counts) in expected {
            let model = ResponseShapes.model(Self.text(name))
            #expect(model.records.count == counts.records && model.rejects == counts.rejects && model.listsZones == counts.listsZones,
                    "\(name): \(model)")
        }
        // Records of a page of one zone, or of a zone entry, that name no zone are in it.
        for name in ["records/changes of one zone", "changes/zone"] {
            #expect(ResponseShapes.model(Self.text(name)).records.allSatisfy { $0.contains(#""zoneID":"#) }, "\(name)")
        }
    }

    @Test("The validator takes for a record only what the model reads as one", arguments: shapes)
    func validator(shape: String) {
        for text in Self.forms(shape) {
            let bytes = Array(text.utf8)
            let check = bytes.withUnsafeBytes { JSONValidator.check($0) }
            #expect(check.isWellFormed, "\(shape)")
            let isRecord = bytes.withUnsafeBytes { buffer in
                if case .record = try? RecordJSON.decodeDocument(buffer) { return true }
                return false
            }
            // Keys spelled with escapes are not recognized by the validator (its callers treat any
            // text with `\u` as possibly anything).
            if check.isRecordObject && shape != "keys with escapes" { #expect(isRecord, "\(shape)") }
            if ["a record", "a record in no zone", "a tombstone"].contains(shape) { #expect(check.isRecordObject, "\(shape)") }
        }
    }

    @Test("The transcoder writes exactly the records the model encodes, or leaves the response to the decoder", arguments: shapes)
    func transcoder(shape: String) {
        for text in Self.forms(shape) {
            let bytes = Array(text.utf8)
            let model = ResponseShapes.model(text)
            var out = JSONOutput(capacity: 1 << 12)
            var ends: [Int] = []
            var scratch = TranscodingScratch()
            let end = bytes.withUnsafeBytes { buffer in
                RecordJSON.transcodeResponse(in: buffer, at: 0, into: &out, recordEnds: &ends, scratch: &scratch, configuration: .init())
            }
            guard let end else {
                #expect(out.count == 0 && ends.isEmpty, "\(shape)")
                continue
            }
            #expect(end == bytes.count, "\(shape)")
            #expect(model.rejects == 0 && !model.listsZones, "\(shape): transcoded what holds errors or lists zones")
            let lines = String(decoding: out.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines == model.records, "\(shape)")
            #expect(ends.count == model.records.count, "\(shape)")
        }
        // The common shapes are transcoded, not decoded.
        if ["records/query", "records/changes", "changes/zone", "keys with escapes"].contains(shape) {
            let bytes = Array(Self.text(shape).utf8)
            var out = JSONOutput(capacity: 1 << 12)
            var ends: [Int] = []
            var scratch = TranscodingScratch()
            let end = bytes.withUnsafeBytes { buffer in
                RecordJSON.transcodeResponse(in: buffer, at: 0, into: &out, recordEnds: &ends, scratch: &scratch, configuration: .init())
            }
            #expect(end != nil || shape == "keys with escapes", "\(shape) was not transcoded")
        }
    }

    @Test("The summary scanner tells each entry apart as the decoder does", arguments: shapes)
    func summaries(shape: String) {
        for text in Self.forms(shape) {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBytes { buffer in
                // The entries the model read, each scanned where it lies; or the object itself.
                var entries: [(range: Range<Int>, content: RecordsResponse.Entry.Content)] = []
                switch try? RecordJSON.decodeDocument(buffer) {
                case .response(let response)?: entries = response.entries.map { ($0.byteRange, $0.content) }
                case .zones(let response)?:
                    for entry in response.entries { entries += (entry.records ?? []).map { ($0.byteRange, $0.content) } }
                case .record(let record)?: entries = [(0..<buffer.count, .record(record))]
                case .recordError(let error)?: entries = [(0..<buffer.count, .error(error))]
                case nil: return
                }
                for (range, content) in entries {
                    var scanner = RecordSummaryScanner()
                    var s = JSONScanner(UnsafeRawBufferPointer(rebasing: buffer[..<range.upperBound]))
                    s.position = range.lowerBound
                    let summary = try? scanner.scan(&s, in: buffer)
                    switch content {
                    case .error(let error):
                        guard case .error(let code, let reason)? = summary?.kind else {
                            Issue.record("\(shape): an error entry scanned as \(String(describing: summary?.kind))")
                            continue
                        }
                        #expect(code == error.serverErrorCode && reason == error.reason, "\(shape)")
                    case .record(let record):
                        switch summary?.kind {
                        case .deleted?: #expect(record.isDeleted, "\(shape): \(record.recordName) scanned as a tombstone")
                        case .saved?: #expect(!record.isDeleted, "\(shape): \(record.recordName) scanned as a record")
                        default: Issue.record("\(shape): record \(record.recordName) scanned as \(String(describing: summary?.kind))")
                        }
                    case .invalid:
                        break // the scanner checks JSON, not values: it may take what the decoder refuses
                    }
                }
            }
        }
    }
}
