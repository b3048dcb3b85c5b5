import FerryRecords

/// Every shape of a saved CloudKit Web Services response (and the objects a reader may meet in
/// their place), compact, for tests that feed each through every reader and check they agree
/// (`ResponseShapeAgreementTests` in FerryRecordsTests, FerryJSONTests and FerryChangeLogTests).
public enum ResponseShapes {
    /// A zone ID as CloudKit answers it.
    public static let zone = #"{"zoneName":"Chats","ownerRecordName":"_9f4c2a7e1b3d5f60","zoneType":"REGULAR_CUSTOM_ZONE"}"#
    /// Another zone.
    public static let otherZone = #"{"zoneName":"Archive","ownerRecordName":"_9f4c2a7e1b3d5f60"}"#

    /// A record dictionary named `name`, in `zone` when given, with a field of each common type.
    public static func record(_ name: String, zone: String? = ResponseShapes.zone, extra: String = "") -> String {
        #"{"recordName":"\#(name)","recordType":"Message","# + (zone.map { #""zoneID":\#($0),"# } ?? "")
            + #""recordChangeTag":"t-\#(name)","created":{"timestamp":1505270195464,"userRecordName":"_u","deviceID":"2"},"#
            + #""modified":{"timestamp":1638605897637,"userRecordName":"_u","deviceID":"2"},"#
            + #""fields":{"text":{"value":"hello \#(name) \u00e9\"","type":"STRING"},"count":{"value":\#(name.utf8.count * 11),"type":"INT64"},"#
            + #""ratio":{"value":0.25,"type":"DOUBLE"},"owner":{"value":{"recordName":"u-\#(name)","action":"NONE"},"type":"REFERENCE"},"#
            + #""tags":{"value":["a","b"],"type":"STRING_LIST"}}\#(extra)}"#
    }

    /// A tombstone of `name`.
    public static func tombstone(_ name: String) -> String { #"{"recordName":"\#(name)","deleted":true}"# }

    /// A per-record error entry for `name`.
    public static func errorEntry(_ name: String, code: String = "NOT_FOUND") -> String {
        #"{"recordName":"\#(name)","reason":"Record not found","serverErrorCode":"\#(code)"}"#
    }

    /// Name and compact text of each shape.
    public static let all: [(name: String, text: String)] = [
        ("records/query", #"{"records":[\#(record("q1")),\#(record("q2"))],"continuationMarker":"AAAA"}"#),
        ("records/query, last page", #"{"records":[\#(record("q3"))]}"#),
        ("records/query, empty page", #"{"records":[]}"#),
        ("records/lookup with error entries", #"{"records":[\#(record("l1")),\#(errorEntry("l2")),{"recordName":"l3","recordType":"Message","reason":"Changed","serverErrorCode":"CONFLICT"}]}"#),
        ("records/modify with a tombstone", #"{"records":[\#(record("m1")),\#(tombstone("m2"))]}"#),
        ("records/changes", #"{"records":[\#(record("c1")),\#(tombstone("c2"))],"syncToken":"T1","moreComing":false}"#),
        ("records/changes of one zone", #"{"zoneID":\#(zone),"records":[\#(record("c3", zone: nil)),\#(tombstone("c4"))],"syncToken":"T2","moreComing":true}"#),
        ("changes/zone", #"{"zones":[{"zoneID":\#(zone),"syncToken":"Z1","records":[\#(record("z1", zone: nil)),\#(tombstone("z2")),\#(record("z3", zone: otherZone))],"moreComing":false}]}"#),
        ("changes/zone with a zone's error entry", #"{"zones":[{"zoneID":\#(zone),"records":[\#(record("z4", zone: nil))],"syncToken":"Z2","moreComing":false},{"zoneID":\#(otherZone),"reason":"gone","serverErrorCode":"ZONE_NOT_FOUND"}]}"#),
        ("changes/zone with a record's error entry", #"{"zones":[{"zoneID":\#(zone),"records":[\#(errorEntry("z5", code: "ACCESS_DENIED")),\#(record("z6", zone: nil))],"syncToken":"Z3","moreComing":false}]}"#),
        ("changes/database", #"{"zones":[{"zoneID":\#(zone)},{"zoneID":\#(otherZone),"deleted":true},{"zoneID":{"zoneName":"Gone"},"purged":true}],"syncToken":"D1","moreComing":false}"#),
        ("zones/list", #"{"zones":[{"zoneID":\#(zone),"syncToken":"S1","atomic":true},{"zoneID":\#(otherZone),"syncToken":"S2","atomic":true}]}"#),
        ("zones/changes (legacy)", #"{"zones":[{"zoneID":\#(otherZone),"deleted":true}],"metaSyncToken":"M1","moreComing":false}"#),
        ("unknown keys everywhere", #"{"records":[\#(record("u1", extra: #","publicPermission":"READ_ONLY","participants":[]"#))],"continuationMarker":"m","serverTime":{"a":[1,2,null]},"moreComing":"no"}"#),
        ("zones first, then records", #"{"zones":[{"zoneID":\#(zone)}],"records":[\#(record("b1"))]}"#),
        ("a record with a member named records", #"{"recordName":"r1","records":[1,2],"zones":{"a":1}}"#),
        ("a record", record("p1")),
        ("a record in no zone", record("p2", zone: nil)),
        ("a tombstone", tombstone("p3")),
        ("an error entry alone", errorEntry("p4")),
        ("a failed request", #"{"uuid":"0f1e","serverErrorCode":"AUTHENTICATION_FAILED","reason":"no token"}"#),
        ("an error entry with fields but no name", #"{"fields":{},"serverErrorCode":"NOT_FOUND"}"#),
        ("a record with null fields and an error code", #"{"recordName":"n1","fields":null,"serverErrorCode":"NOT_FOUND"}"#),
        ("a bad entry among good ones", #"{"records":[\#(record("e1")),{"recordName":"e2","fields":{"x":{"value":"s","type":"INT64"}}},\#(record("e3"))]}"#),
        ("keys with escapes", #"{"rec\u006frds":[{"recordN\u0061me":"k1","z\u006feneID":null}],"sync\u0054oken":"K1"}"#),
    ]

    /// `compact` (any JSON) pretty-printed as CloudKit prints it: `"key" : value`, two-space
    /// indent, empty objects and arrays on one line.
    public static func pretty(_ compact: String, indent: Int = 0) -> String {
        let value = try! JSONValue(parsing: compact)
        var out = ""
        func write(_ value: JSONValue, _ level: Int) {
            let pad = String(repeating: "  ", count: level)
            switch value {
            case .object(let object) where !object.members.isEmpty:
                out += "{\n"
                for (i, member) in object.members.enumerated() {
                    var key = JSONOutput()
                    key.appendString(member.key)
                    out += pad + "  " + String(decoding: key.bytes, as: UTF8.self) + " : "
                    write(member.value, level + 1)
                    out += i + 1 < object.members.count ? ",\n" : "\n"
                }
                out += pad + "}"
            case .array(let items) where !items.isEmpty:
                out += "[\n"
                for (i, item) in items.enumerated() {
                    out += pad + "  "
                    write(item, level + 1)
                    out += i + 1 < items.count ? ",\n" : "\n"
                }
                out += pad + "]"
            default:
                var o = JSONOutput()
                o.appendValue(value)
                out += String(decoding: o.bytes, as: UTF8.self)
            }
        }
        write(value, indent)
        return out
    }

    /// What the record model (``RecordJSON/decodeDocument(_:configuration:)``) makes of `text`:
    /// the records it holds, encoded, in order (placed in their zones); how many entries are
    /// errors (per-record or per-zone error entries, or invalid entries, or the document itself);
    /// and whether it is a response that lists zones only.
    public static func model(_ text: String) -> (records: [String], rejects: Int, listsZones: Bool) {
        let bytes = Array(text.utf8)
        let document: RecordDocument
        do {
            document = try bytes.withUnsafeBytes { buffer throws(RecordFormatError) in try RecordJSON.decodeDocument(buffer) }
        } catch {
            return ([], 1, false)
        }
        var records: [String] = []
        var rejects = 0
        func take(_ entries: [RecordsResponse.Entry], zone: ZoneID?) {
            for entry in entries {
                switch entry.content {
                case .record(var record):
                    if let zone { record.placeInZone(zone) }
                    records.append(RecordJSON.encodedString(record))
                case .error, .invalid: rejects += 1
                }
            }
        }
        switch document {
        case .record(let record): records.append(RecordJSON.encodedString(record))
        case .recordError: rejects += 1
        case .response(let response): take(response.entries, zone: nil)
        case .zones(let response):
            guard response.carriesRecords else { return ([], 0, true) }
            for entry in response.entries {
                if entry.serverError != nil { rejects += 1 }
                take(entry.records ?? [], zone: entry.zoneID)
            }
        }
        return (records, rejects, false)
    }
}
