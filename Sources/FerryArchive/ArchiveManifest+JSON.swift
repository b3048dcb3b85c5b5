import FerryInternals
import FerryRecords

extension ArchiveManifest {
    /// The manifest as JSON, keys in a fixed order and maps sorted by key (names by their bytes),
    /// so the same contents always give the same bytes.
    public var jsonValue: JSONValue {
        var root = JSONObject()
        root.append(key: "format", value: .string(Self.formatName))
        root.append(key: "formatVersion", value: .number(JSONNumber(Int64(formatVersion))))
        root.append(key: "createdAt", value: .string(ISO8601.format(milliseconds: createdAt)))
        root.append(key: "ferryVersion", value: .string(ferryVersion))
        root.append(key: "recordCount", value: count(recordCount))
        root.append(key: "zones", value: .array(zones.map(Self.encode)))
        var schemaObject = JSONObject()
        for (type, entry) in schema.sorted(by: { $0.key < $1.key }) {
            var fields = JSONObject()
            for (name, types) in entry.fields.sorted(by: { $0.key < $1.key }) {
                fields.append(key: name.string, value: Self.counts(types))
            }
            schemaObject.append(key: type.string, value: .object(["recordCount": count(entry.recordCount), "fields": .object(fields)]))
        }
        root.append(key: "schema", value: .object(schemaObject))
        root.append(key: "members", value: .array(members.map(Self.encode)))
        return .object(root)
    }

    /// `manifest.json` as written into archives: ``jsonValue`` indented, with a final newline.
    public func jsonBytes() -> [UInt8] {
        PrettyJSON.bytes(jsonValue)
    }

    private func count(_ value: Int) -> JSONValue { .number(JSONNumber(Int64(value))) }

    private static func counts(_ map: [String: Int]) -> JSONValue {
        counts(Dictionary(uniqueKeysWithValues: map.map { (ExactName($0.key), $0.value) }))
    }

    private static func counts(_ map: [ExactName: Int]) -> JSONValue {
        var object = JSONObject()
        for (key, value) in map.sorted(by: { $0.key < $1.key }) {
            object.append(key: key.string, value: .number(JSONNumber(Int64(value))))
        }
        return .object(object)
    }

    private static func encode(_ zone: Zone) -> JSONValue {
        var object = JSONObject()
        object.append(key: "database", value: .string(zone.database))
        var out = JSONOutput(capacity: 256)
        RecordJSON.encode(zone.zoneID, into: &out)
        let zoneJSON = (try? RecordJSON.parseValue(out.bytes)) ?? .object([:])
        object.append(key: "zoneID", value: zoneJSON)
        object.append(key: "path", value: .string(zone.path))
        object.append(key: "recordCount", value: .number(JSONNumber(Int64(zone.recordCount))))
        object.append(key: "recordTypes", value: counts(zone.recordTypeCounts))
        if let token = zone.changeToken { object.append(key: "changeToken", value: .string(token)) }
        return .object(object)
    }

    private static func encode(_ member: Member) -> JSONValue {
        var object = JSONObject()
        object.append(key: "path", value: .string(member.path))
        object.append(key: "kind", value: .string(member.kind.rawValue))
        object.append(key: "size", value: .number(JSONNumber(Int64(member.size))))
        object.append(key: "sha256", value: .string(member.sha256))
        if let checksum = member.fileChecksum { object.append(key: "fileChecksum", value: .string(checksum)) }
        return .object(object)
    }

    // MARK: - Reading

    /// Parses `manifest.json`, checking every key the reader relies on.
    package init(parsing bytes: [UInt8], archive: String) throws(ArchiveError) {
        func invalid(_ message: String, underlying: (any Error)? = nil) -> ArchiveError {
            ArchiveError(.invalidManifest, message, archive: archive, member: ArchivePath.manifest, underlying: underlying)
        }
        let root: JSONValue
        do {
            root = try bytes.withUnsafeBytes { (raw) throws(RecordFormatError) -> JSONValue in try RecordJSON.parseValue(raw) }
        } catch {
            throw invalid("expected a JSON object", underlying: error)
        }
        guard case .object(let object) = root else { throw invalid("expected a JSON object at the top level") }
        func string(_ value: JSONValue?, _ what: String) throws(ArchiveError) -> String {
            guard let text = value?.stringValue else { throw invalid("expected a string for \(what)") }
            return text
        }
        func integer(_ value: JSONValue?, _ what: String) throws(ArchiveError) -> Int {
            guard let number = value?.numberValue?.int64Value, number >= 0, let result = Int(exactly: number) else {
                throw invalid("expected a non-negative integer for \(what)")
            }
            return result
        }
        // Record types and field names are told apart by their bytes (the parser refuses two keys
        // with the same bytes); type tags are ASCII.
        func countMap<Key: Hashable>(_ value: JSONValue?, _ what: String, key: (String) -> Key) throws(ArchiveError) -> [Key: Int] {
            guard let map = value?.objectValue else { throw invalid("expected an object of counts for \(what)") }
            var result: [Key: Int] = [:]
            for member in map.members { result[key(member.key)] = try integer(member.value, "\(what).\(member.key)") }
            return result
        }
        guard try string(object["format"], "`format`") == Self.formatName else {
            throw invalid("expected `format` to be `\(Self.formatName)`")
        }
        formatVersion = try integer(object["formatVersion"], "`formatVersion`")
        guard formatVersion <= Self.currentFormatVersion else {
            throw invalid("expected format version \(Self.currentFormatVersion) or older, found \(formatVersion)")
        }
        let created = try string(object["createdAt"], "`createdAt`")
        guard let createdMs = ISO8601.parse(created) else {
            throw invalid("expected `createdAt` as YYYY-MM-DDTHH:MM:SS.sssZ, found `\(created)`")
        }
        createdAt = createdMs
        ferryVersion = try string(object["ferryVersion"], "`ferryVersion`")
        guard let zoneList = object["zones"]?.arrayValue, let memberList = object["members"]?.arrayValue else {
            throw invalid("expected arrays `zones` and `members`")
        }
        zones = []
        for (i, item) in zoneList.enumerated() {
            let what = "zones[\(i)]"
            guard let zoneJSON = item["zoneID"], case .object = zoneJSON else { throw invalid("expected an object for \(what).zoneID") }
            var wrapper = JSONOutput(capacity: 256)
            wrapper.append("{\"recordName\":\"_\",\"zoneID\":")
            wrapper.appendValue(zoneJSON)
            wrapper.append(UInt8(ascii: "}"))
            let zoneID: ZoneID
            do {
                guard let decoded = try RecordJSON.decodeRecord(wrapper.bytes).zoneID else { throw invalid("expected \(what).zoneID") }
                zoneID = decoded
            } catch {
                throw invalid("expected a CloudKit zone ID for \(what).zoneID", underlying: error)
            }
            var zone = Zone(database: try string(item["database"], "\(what).database"), zoneID: zoneID,
                            path: try string(item["path"], "\(what).path"),
                            recordCount: try integer(item["recordCount"], "\(what).recordCount"),
                            recordTypeCounts: try countMap(item["recordTypes"], "\(what).recordTypes", key: { ExactName($0) }))
            if let token = item["changeToken"] { zone.changeToken = try string(token, "\(what).changeToken") }
            zones.append(zone)
        }
        // The top-level count is derived from the zones' (``recordCount``); one that disagrees
        // says the manifest is not what its writer meant, and nothing else would check it.
        if let stated = object["recordCount"] {
            let total = try integer(stated, "`recordCount`")
            let sum = zones.reduce(0) { $0 + $1.recordCount }
            guard total == sum else {
                throw invalid("expected `recordCount` to be the sum of the zones' record counts, \(sum), found \(total)")
            }
        }
        schema = [:]
        if let schemaObject = object["schema"] {
            guard let map = schemaObject.objectValue else { throw invalid("expected an object for `schema`") }
            for entry in map.members {
                var typeSchema = RecordTypeSchema(recordCount: try integer(entry.value["recordCount"], "schema.\(entry.key).recordCount"))
                guard let fields = entry.value["fields"]?.objectValue else { throw invalid("expected schema.\(entry.key).fields") }
                for field in fields.members {
                    typeSchema.fields[ExactName(field.key)] = try countMap(field.value, "schema.\(entry.key).fields.\(field.key)") { $0 }
                }
                schema[ExactName(entry.key)] = typeSchema
            }
        }
        members = []
        for (i, item) in memberList.enumerated() {
            let what = "members[\(i)]"
            let kindText = try string(item["kind"], "\(what).kind")
            guard let kind = Member.Kind(rawValue: kindText) else {
                throw invalid("expected \(what).kind to be records, asset or changes, found `\(kindText)`")
            }
            let sha = try string(item["sha256"], "\(what).sha256")
            guard sha.utf8.count == 64, sha.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
                throw invalid("expected \(what).sha256 as 64 lowercase hexadecimal digits, found `\(sha)`")
            }
            var member = Member(path: try string(item["path"], "\(what).path"), kind: kind,
                                size: try integer(item["size"], "\(what).size"), sha256: sha)
            if let checksum = item["fileChecksum"] { member.fileChecksum = try string(checksum, "\(what).fileChecksum") }
            members.append(member)
        }
    }
}
