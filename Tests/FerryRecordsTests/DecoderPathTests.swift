import FerryRecords
import Foundation
import FerryTestSupport
import Testing

/// The decoder reads the compact shape CloudKit and Ferry write through fast paths that match
/// keys as literals, and every other shape through the general path. Both must give the same
/// records and reject the same inputs.
@Suite("Compact and general decoding paths")
struct DecoderPathTests {
    /// `value` written with spaces around separators (and, with `reversing`, every object's keys
    /// in reverse order): nothing of the compact shape is left, so only the general path reads it.
    static func reshaped(_ value: JSONValue, reversing: Bool = false) -> String {
        switch value {
        case .object(let object):
            let ordered = reversing ? Array(object.members.reversed()) : object.members
            let members = ordered.map { member -> String in
                var out = JSONOutput(capacity: 64)
                out.appendString(member.key)
                return String(decoding: out.bytes, as: UTF8.self) + " : " + reshaped(member.value, reversing: reversing)
            }
            return "{ " + members.joined(separator: " , ") + " }"
        case .array(let items):
            return "[ " + items.map { reshaped($0, reversing: reversing) }.joined(separator: " , ") + " ]"
        default:
            var out = JSONOutput(capacity: 64)
            out.appendValue(value)
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    @Test("Generated records decode the same from the compact form and from reordered, spaced JSON",
          arguments: [1, 2, 3, 4])
    func pathsAgree(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed))
        for _ in 0..<300 {
            let record = generator.record()
            let compact = RecordJSON.encodedString(record)
            let fromCompact = try RecordJSON.decodeRecord(compact)
            let spaced = Self.reshaped(try JSONValue(parsing: compact))
            #expect(fromCompact == record, "\(compact)")
            #expect(try RecordJSON.decodeRecord(spaced) == record, "\(spaced)")
            // Reversed key order: the same values (fields and unknown keys then come in reverse).
            let reversed = try RecordJSON.decodeRecord(Self.reshaped(try JSONValue(parsing: compact), reversing: true))
            #expect(reversed.recordName == record.recordName && reversed.created?.timestamp == record.created?.timestamp
                    && reversed.modified?.userRecordName == record.modified?.userRecordName
                    && reversed.zoneID?.zoneName == record.zoneID?.zoneName && reversed.parent?.recordName == record.parent?.recordName
                    && Set((reversed.fields ?? [:]).map(\.name)) == Set((record.fields ?? [:]).map(\.name)))
        }
    }

    @Test("Near-compact shapes fall back to the general path and decode or fail alike", arguments: [
        #"{"recordName":"r","fields":{"f":{"value":1,"type":"INT64","extra":true}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":null,"type":"STRING"}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":"x"}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":[1,2],"type":"INT64_LIST"},"g":{"type":"STRING","value":"y"}}}"#,
        #"{"recordName":"r","created":{"timestamp":1,"userRecordName":"u","deviceID":"d","x":1}}"#,
        #"{"recordName":"r","created":{"timestamp":null,"userRecordName":"u"}}"#,
        #"{"recordName":"r","created":{"timestamp":1.5,"userRecordName":"u"}}"#,
        #"{"recordName":"r","created":{"timestamp":1,"userRecordName":"u","timestamp":2}}"#,
        #"{"recordName":"r","zoneID":{"zoneName":"z","ownerRecordName":"o","zoneType":"REGULAR_CUSTOM_ZONE","q":[]}}"#,
        #"{"recordName":"r","zoneID":{"zoneName":"z","zoneName":"y"}}"#,
        #"{"recordName":"r","parent":{"recordName":"p","zoneID":{"zoneName":"z","extra":1},"action":"NONE"}}"#,
        #"{"recordName":"r","parent":{"recordName":"p","action":"NONE","recordName":"q"}}"#,
        #"{"recordName":"r","parent":{"recordName":"p","zoneID":{"zoneName":"z"},"action":"NONE","x":null}}"#,
        #"{"recordName":"r","fields":{"f":{"value":"unterminated,"type":"STRING"}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":12345678901234567890,"type":"INT64"}}}"#,
    ])
    func nearCompact(text: String) throws {
        // The same document, reshaped so that only the general path can read it.
        let general: String
        if let value = try? JSONValue(parsing: text) { general = Self.reshaped(value) } else { general = text.replacingOccurrences(of: ",", with: " , ") }
        let compactResult = Result { try RecordJSON.decodeRecord(text) }
        let generalResult = Result { try RecordJSON.decodeRecord(general) }
        switch (compactResult, generalResult) {
        case (.success(let a), .success(let b)):
            #expect(a == b)
        case (.failure(let a), .failure(let b)):
            #expect((a as? RecordFormatError)?.code == (b as? RecordFormatError)?.code, "\(a) | \(b)")
        default:
            Issue.record("paths disagree: \(compactResult) | \(generalResult)")
        }
    }
}
