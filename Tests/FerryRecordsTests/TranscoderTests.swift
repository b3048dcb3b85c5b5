import FerryRecords
import FerryTestSupport
import Foundation
import Testing

/// A conversion that changes nothing in its records transcodes them (input bytes to Ferry's
/// NDJSON, no `Record` built). Whatever the transcoder takes, it must write exactly what decoding
/// and encoding again writes; what decoding rejects, it must decline. And it must take the shapes
/// CloudKit and Ferry write, or it would never run.
@Suite("Transcoding records without decoding them")
struct TranscoderTests {
    /// The transcoder's output for `text`, or `nil` when it declines.
    static func transcoded(_ text: String) -> String? {
        var out = JSONOutput(capacity: 256)
        var scratch = TranscodingScratch()
        let bytes = Array(text.utf8)
        let taken = bytes.withUnsafeBytes { RecordJSON.transcodeRecord($0, into: &out, scratch: &scratch, configuration: .init()) }
        return taken ? String(decoding: out.bytes, as: UTF8.self) : nil
    }

    /// The transcoder's output for the response `text` and the end offsets of its records, or
    /// `nil` when it declines.
    static func transcodedResponse(_ text: String) -> (output: [UInt8], ends: [Int])? {
        var out = JSONOutput(capacity: 4096)
        var ends: [Int] = []
        var scratch = TranscodingScratch()
        let bytes = Array(text.utf8)
        let end = bytes.withUnsafeBytes {
            RecordJSON.transcodeResponse(in: $0, at: 0, into: &out, recordEnds: &ends, scratch: &scratch, configuration: .init())
        }
        return end == nil ? nil : (out.array, ends)
    }

    /// What decoding then encoding gives, or `nil` when decoding fails.
    static func reencoded(_ text: String) -> String? {
        guard let record = try? RecordJSON.decodeRecord(text) else { return nil }
        return RecordJSON.encodedString(record)
    }

    /// Checks the rule on `text`; returns whether the transcoder took it.
    @discardableResult
    static func check(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let fast = transcoded(text) else { return false }
        let slow = reencoded(text)
        #expect(slow != nil, "transcoded what decoding rejects: \(text)", sourceLocation: sourceLocation)
        #expect(fast == slow, "\(text)\n  transcoded: \(fast)\n  re-encoded: \(slow ?? "nil")", sourceLocation: sourceLocation)
        return true
    }

    /// `value` pretty-printed as CloudKit answers: `"key" : value`, two-space indents.
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .object(let object) where !object.members.isEmpty:
            let members = object.members.map { member -> String in
                var key = JSONOutput(capacity: 64)
                key.appendString(member.key)
                return inner + String(decoding: key.bytes, as: UTF8.self) + " : " + pretty(member.value, indent: inner)
            }
            return "{\n" + members.joined(separator: ",\n") + "\n" + indent + "}"
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        default:
            var out = JSONOutput(capacity: 64)
            out.appendValue(value)
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    /// `record` without what the transcoder leaves to the decoder: `pluginFields`, unknown keys,
    /// fields without a standard type or with unknown keys.
    static func plain(_ record: Record) -> Record {
        var r = record
        r.pluginFields = nil
        r.unknownKeys = JSONObject()
        func plainZone(_ zone: ZoneID?) -> ZoneID? {
            guard var zone else { return nil }
            zone.unknownKeys = JSONObject()
            return zone
        }
        func plainStamp(_ stamp: RecordStamp?) -> RecordStamp? {
            guard var stamp else { return nil }
            stamp.unknownKeys = JSONObject()
            return stamp
        }
        func plainReference(_ reference: Reference?) -> Reference? {
            guard var reference else { return nil }
            reference.unknownKeys = JSONObject()
            reference.zoneID = plainZone(reference.zoneID)
            return reference
        }
        func plainValue(_ value: FieldValue) -> FieldValue {
            switch value {
            case .reference(let reference): .reference(plainReference(reference)!)
            case .asset(var asset):
                { asset.unknownKeys = JSONObject(); return .asset(asset) }()
            case .location(var location):
                { location.unknownKeys = JSONObject(); return .location(location) }()
            case .list(let items): .list(items.map(plainValue))
            default: value
            }
        }
        r.zoneID = plainZone(r.zoneID)
        r.created = plainStamp(r.created)
        r.modified = plainStamp(r.modified)
        r.parent = plainReference(r.parent)
        r.share = plainReference(r.share)
        if var fields = r.fields {
            fields.entries = fields.entries.compactMap { entry in
                guard let type = entry.field.type, FieldType.allStandard.contains(type), type.kind != .unknown,
                      entry.field.unknownKeys.members.isEmpty, entry.name.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x5C && $0 >= 0x20 && $0 != 0x22 })
                else { return nil }
                return RecordFields.Entry(name: entry.name, field: RecordField(plainValue(entry.field.value), type: type))
            }
            r.fields = fields
        }
        return r
    }

    @Test("Records in Ferry's and CloudKit's shapes are transcoded, compact and pretty-printed, to what encoding writes",
          arguments: [1, 2, 3, 4, 5])
    func plainRecordsPassThrough(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed) &* 7919)
        for _ in 0..<400 {
            let record = Self.plain(generator.record())
            let compact = RecordJSON.encodedString(record)
            #expect(Self.transcoded(compact) == compact, "declined or changed: \(compact)")
            let pretty = Self.pretty(try JSONValue(parsing: compact))
            #expect(Self.transcoded(pretty) == compact, "declined or changed: \(pretty)")
            #expect(Self.transcoded(DecoderPathTests.reshaped(try JSONValue(parsing: compact))) == compact)
        }
    }

    @Test("CloudKit's own key order (fields and pluginFields before the change tag and stamps) is transcoded: the samples")
    func samples() throws {
        var taken = 0, lines = 0
        for name in ["chat.ndjson", "shopping.ndjson", "edge-cases.ndjson"] {
            let text = try String(contentsOfFile: samplesDirectory() + "/" + name, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("{\"recordName\"") {
                lines += 1
                if Self.check(String(line)) { taken += 1 }
            }
        }
        // Every plain record of the Chat and Shopping samples; the edge cases hold shapes left to the decoder.
        #expect(lines > 10 && taken >= lines * 3 / 4, "took \(taken) of \(lines)")
        let pretty = try String(contentsOfFile: samplesDirectory() + "/query-response.json", encoding: .utf8)
        let transcoded = Self.transcodedResponse(pretty)
        #expect(transcoded != nil)
        let document = try Array(pretty.utf8).withUnsafeBytes { try RecordJSON.decodeDocument($0) }
        guard case .response(let response) = document else {
            Issue.record("the sample is not a records response")
            return
        }
        var expected = JSONOutput(capacity: 4096)
        for entry in response.entries {
            guard case .record(let record) = entry.content else { continue }
            RecordJSON.encode(record, into: &expected)
            expected.append(0x0A)
        }
        #expect(transcoded?.ends.count == response.entries.count)
        #expect(transcoded?.output == expected.array)
    }

    @Test("Any generated record, reshaped or cut, is transcoded as decoding and encoding would, or declined",
          arguments: [11, 12, 13])
    func agreesOrDeclines(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed))
        var taken = 0
        for _ in 0..<300 {
            let compact = RecordJSON.encodedString(generator.record())
            let value = try JSONValue(parsing: compact)
            for text in [compact, Self.pretty(value), DecoderPathTests.reshaped(value, reversing: true)] {
                if Self.check(text) { taken += 1 }
            }
            // Damaged copies: a byte dropped, doubled or replaced, at a few places.
            let bytes = Array(compact.utf8)
            for _ in 0..<6 {
                let at = generator.random.below(bytes.count)
                var damaged = bytes
                switch generator.random.below(3) {
                case 0: damaged.remove(at: at)
                case 1: damaged.insert(bytes[at], at: at)
                default:
                    let replacements = Array(#"{}[]",:0-.e\"nu"#.utf8)
                    damaged[at] = replacements[generator.random.below(replacements.count)]
                }
                Self.check(String(decoding: damaged, as: UTF8.self))
            }
        }
        #expect(taken > 30, "the transcoder took only \(taken) records")
    }

    @Test("Every field value with every type tag: transcoded as decoded and encoded, or declined")
    func valuesAndTags() {
        var taken = 0
        for value in SpeculativeDecodingTests.values {
            for type in SpeculativeDecodingTests.types {
                let tag = type.map { #","type":"\#($0)""# } ?? ""
                let text = #"{"recordName":"r","recordType":"T","fields":{"f":{"value":\#(value)\#(tag)}}}"#
                if Self.check(text) { taken += 1 }
                if let parsed = try? JSONValue(parsing: text) { Self.check(Self.pretty(parsed)) }
            }
        }
        #expect(taken > 40, "the transcoder took only \(taken) fields")
    }

    @Test("Strings: escapes are written as the encoder writes them, bad ones declined", arguments: [
        #""plain""#, #""é 🤔 こんにちは""#, #""a\nb\tc\"d\\e""#, #""\u00e9\u0041\/""#, #""\ud83e\udd14""#, #""\u0001\u001f""#,
        #""\ud800""#, #""\udc00x""#, #""\x""#, "\"\u{7F}\"", #""\u00""#, #""\u2028""#, "\"\u{1}\"",
    ])
    func strings(string: String) {
        for text in [#"{"recordName":\#(string)}"#, #"{"recordName":"r","fields":{"f":{"value":\#(string),"type":"STRING"}}}"#,
                     #"{"recordName":"r","fields":{"f":{"value":[\#(string),\#(string)],"type":"STRING_LIST"}}}"#,
                     #"{"recordName":"r","zoneID":{"zoneName":\#(string)}}"#] {
            Self.check(text)
        }
        #expect(Self.transcoded(#"{"recordName":"a\nb\u00e9"}"#) == #"{"recordName":"a\nbé"}"#)
    }

    @Test("Numbers: integers and doubles are written as the encoder writes them", arguments: [
        "0", "-0", "42", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "1.0", "1e3", "-0.0", "1.5e300",
        "1e400", "0.1", "5e-324", "123456789012345678",
    ])
    func numbers(number: String) {
        for text in [#"{"recordName":"r","created":{"timestamp":\#(number)}}"#,
                     #"{"recordName":"r","fields":{"i":{"value":\#(number),"type":"INT64"},"d":{"value":\#(number),"type":"DOUBLE"}}}"#,
                     #"{"recordName":"r","fields":{"l":{"value":{"latitude":\#(number),"longitude":\#(number),"timestamp":\#(number)},"type":"LOCATION"}}}"#] {
            Self.check(text)
        }
    }

    @Test("Shapes left to the decoder are declined", arguments: DecoderPathTests.nearCompactTexts + [
        #"{"recordName":"r","fields":{"f":{"value":1,"type":"INT64"},"f":{"value":2,"type":"INT64"}}}"#,
        #"{"recordName":"r","fields":{"f\u0031":{"value":1,"type":"INT64"}}}"#,
        #"{"recordName":"r","x":1}"#,
        #"{"recordName":"r","pluginFields":{}}"#,
        #"{"recordName":"r","serverErrorCode":"NOT_FOUND"}"#,
        #"{"recordName":"r","fields":{"f":{"value":1,"type":"NUMBER_INT64"}}}"#,
    ])
    func declined(text: String) {
        Self.check(text)
    }

    @Test("Responses: records/query pages and changes/zone pages, zones given to records that name none")
    func responses() throws {
        var generator = RecordGenerator(seed: 99)
        var records = (0..<20).map { _ in Self.plain(generator.record()) }
        for index in records.indices where index % 3 == 0 { records[index].zoneID = nil }
        let values = try records.map { try JSONValue(parsing: RecordJSON.encodedString($0)) }
        let zone = ZoneID(zoneName: "Inbox", ownerRecordName: "_owner")
        let zoneJSON = try JSONValue(parsing: #"{"zoneName":"Inbox","ownerRecordName":"_owner"}"#)

        let query = JSONValue.object(["records": .array(values), "continuationMarker": .string("m")])
        let changes = JSONValue.object(["zones": .array([.object([
            "zoneID": zoneJSON, "syncToken": .string("t"), "records": .array(values), "moreComing": .bool(false)])])])

        func lines(_ text: String) -> [String]? {
            guard let (output, ends) = Self.transcodedResponse(text) else { return nil }
            #expect(ends.count == output.filter { $0 == 0x0A }.count)
            return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        let expectedQuery = records.map { RecordJSON.encodedString($0) }
        let expectedChanges = records.map { record in
            var r = record
            if r.zoneID == nil { r.zoneID = zone }
            return RecordJSON.encodedString(r)
        }
        #expect(lines(Self.pretty(query)) == expectedQuery)
        #expect(lines(Self.pretty(changes)) == expectedChanges)
        // What decoding must handle: an error entry, a zone named after its records, a zone listing.
        let withError = JSONValue.object(["records": .array(values + [
            try JSONValue(parsing: #"{"recordName":"x","reason":"gone","serverErrorCode":"NOT_FOUND"}"#)])])
        #expect(lines(Self.pretty(withError)) == nil)
        let zoneAfter = JSONValue.object(["zones": .array([.object(["records": .array(values), "zoneID": zoneJSON])])])
        #expect(lines(Self.pretty(zoneAfter)) == nil)
        let listing = JSONValue.object(["zones": .array([.object(["zoneID": zoneJSON])])])
        #expect(lines(Self.pretty(listing)) == nil)
    }
}
