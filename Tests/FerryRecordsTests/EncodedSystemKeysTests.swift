import FerryRecords
import FerryTestSupport
import Testing

/// A store reads the columns of encoded lines from their start (`readEncodedSystemKeys`): what
/// it finds must be the record's own system keys, and it must find them in the lines Ferry
/// writes, or the store would decode every line again.
@Suite("System keys read from the start of encoded lines")
struct EncodedSystemKeysTests {
    /// What the reader finds in the encoding of `record`, as text, or `nil` when it declines.
    static func read(_ record: Record) -> [String: String]? {
        var out = JSONOutput(capacity: 1024)
        RecordJSON.encode(record, into: &out)
        var keys = EncodedSystemKeys()
        return out.bytes.withUnsafeBytes { (line: UnsafeRawBufferPointer) -> [String: String]? in
            guard RecordJSON.readEncodedSystemKeys(line, into: &keys) else { return nil }
            var found: [String: String] = [:]
            func put(_ name: String, _ range: Range<Int>?) {
                if let range { found[name] = String(decoding: line[range], as: UTF8.self) }
            }
            put("recordName", keys.recordName)
            put("recordType", keys.recordType)
            put("zoneID", keys.zoneID)
            put("recordChangeTag", keys.recordChangeTag)
            put("createdBy", keys.createdBy)
            put("modifiedBy", keys.modifiedBy)
            put("parentName", keys.parentName)
            put("shareName", keys.shareName)
            if let t = keys.createdAt { found["createdAt"] = String(t) }
            if let t = keys.modifiedAt { found["modifiedAt"] = String(t) }
            return found
        }
    }

    /// The system keys of `record` as the reader gives them.
    static func expected(_ record: Record) -> [String: String] {
        var found: [String: String] = ["recordName": record.recordName]
        found["recordType"] = record.recordType
        if let zone = record.zoneID {
            var out = JSONOutput(capacity: 128)
            RecordJSON.encode(zone, into: &out)
            found["zoneID"] = String(decoding: out.bytes, as: UTF8.self)
        }
        found["recordChangeTag"] = record.recordChangeTag
        found["createdBy"] = record.created?.userRecordName
        found["modifiedBy"] = record.modified?.userRecordName
        found["parentName"] = record.parent?.recordName
        found["shareName"] = record.share?.recordName
        if let t = record.created?.timestamp { found["createdAt"] = String(t) }
        if let t = record.modified?.timestamp { found["modifiedAt"] = String(t) }
        return found
    }

    @Test("Every system key of a record with all of them, as written")
    func everyKey() throws {
        let zone = ZoneID(zoneName: "Work", ownerRecordName: "_owner", zoneType: "REGULAR_CUSTOM_ZONE")
        let record = Record(recordName: "r-1", recordType: "Message", zoneID: zone,
                            fields: RecordFields(), pluginFields: .object(JSONObject()), recordChangeTag: "tag",
                            created: RecordStamp(timestamp: .min, userRecordName: "_a", deviceID: "d"),
                            modified: RecordStamp(timestamp: .max, userRecordName: "_b"), deleted: false,
                            parent: Reference(recordName: "p", zoneID: zone, action: Reference.Action.none),
                            share: Reference(recordName: "s", action: .deleteSelf), shortGUID: "g")
        let found = try #require(Self.read(record))
        #expect(found == Self.expected(record))
        #expect(found["createdAt"] == String(Int64.min) && found["modifiedAt"] == String(Int64.max))
        // Only the name; a stamp with no members; a zone with only its name.
        let bare = Record(recordName: "only")
        #expect(Self.read(bare) == ["recordName": "only"])
        let sparse = Record(recordName: "x", zoneID: ZoneID(zoneName: "Z"), created: RecordStamp(), modified: RecordStamp(userRecordName: "_u"))
        #expect(Self.read(sparse) == Self.expected(sparse))
    }

    @Test("Generated records: what the reader takes, it reads right; it takes most of them")
    func generated() throws {
        var generator = RecordGenerator(seed: 0xC01_0075)
        var taken = 0, plain = 0
        for _ in 0..<3000 {
            let record = generator.record()
            let found = Self.read(record)
            if let found {
                taken += 1
                #expect(found == Self.expected(record), "\(record.recordName)")
            }
            // A record whose system strings need no escapes and whose objects have only the
            // members Ferry models is always taken.
            let strings = [record.recordName, record.recordType, record.recordChangeTag, record.created?.userRecordName,
                           record.created?.deviceID, record.modified?.userRecordName, record.modified?.deviceID,
                           record.zoneID?.zoneName, record.zoneID?.ownerRecordName, record.zoneID?.zoneType,
                           record.parent?.recordName, record.share?.recordName, record.shortGUID,
                           record.parent?.zoneID?.zoneName, record.parent?.zoneID?.ownerRecordName, record.parent?.zoneID?.zoneType,
                           record.share?.zoneID?.zoneName, record.share?.zoneID?.ownerRecordName, record.share?.zoneID?.zoneType,
                           record.parent?.action?.rawValue, record.share?.action?.rawValue].compactMap { $0 }
            let unknown = [record.created?.unknownKeys, record.modified?.unknownKeys, record.zoneID?.unknownKeys,
                           record.parent?.unknownKeys, record.share?.unknownKeys, record.parent?.zoneID?.unknownKeys,
                           record.share?.zoneID?.unknownKeys].compactMap { $0 }
            let needsEscapes = strings.contains { $0.unicodeScalars.contains { $0 == "\"" || $0 == "\\" || $0.value < 0x20 } }
            if !needsEscapes && unknown.allSatisfy({ $0.members.isEmpty }) {
                plain += 1
                #expect(found != nil, "\(record.recordName)")
            }
        }
        #expect(plain > 1000 && taken >= plain)
    }

    @Test("Lines not as the encoder writes them are declined", arguments: [
        "", "{", "{\"recordName\":\"a\"", "{\"recordName\":\"a\\\"b\"}", "{\"recordType\":\"T\",\"recordName\":\"a\"}",
        "{\"recordName\":\"a\",\"zoneID\":{\"zoneName\":\"Z\"},\"recordType\":\"T\"}",
        "{\"recordName\":\"a\",\"created\":{\"timestamp\":01}}", "{\"recordName\":\"a\",\"created\":{\"timestamp\":9223372036854775808}}",
        "{\"recordName\":\"a\",\"created\":{\"x\":1}}", "{\"recordName\":\"a\",\"zoneID\":{\"zoneName\":\"Z\",\"x\":1}}",
        "{\"recordName\":\"a\" ,\"recordType\":\"T\"}", "{ \"recordName\":\"a\"}", "{\"recordName\":\"a\",\"deleted\":null}",
        "{\"recordName\":\"a\"},\"x\":1}", "{\"recordName\":\"a\",\"fields\":{}}\r", "{\"recordName\":\"a\",\"fields\":{",
        "{\"recordName\":\"a\",\"created\":{\"timestamp\":1.5}}", "{\"recordName\":\"a\",\"recordType\":\"T\",\"recordType\":\"U\"}",
    ])
    func declined(_ text: String) {
        var keys = EncodedSystemKeys()
        let taken = Array(text.utf8).withUnsafeBytes { RecordJSON.readEncodedSystemKeys($0, into: &keys) }
        #expect(!taken)
    }
}
