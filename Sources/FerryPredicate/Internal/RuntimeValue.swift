import FerryRecords

/// A value during evaluation. Booleans are integers (`YES` is `1`), as in Apple's predicates.
enum RuntimeValue: Sendable {
    case null
    case integer(Int64)
    case double(Double)
    case string(String)
    /// Seconds since 1970.
    case date(Double)
    /// A record reference, by record name.
    case reference(String)
    case location(latitude: Double, longitude: Double)
    case array([RuntimeValue])
    /// A JSON object; its members are converted when read.
    case object(JSONObject)
    /// The record being evaluated (`SELF`).
    case record(Record)

    /// How the value's kind reads in an error message.
    var kindName: String {
        switch self {
        case .null: "nil"
        case .integer, .double: "a number"
        case .string: "a string"
        case .date: "a date"
        case .reference: "a reference"
        case .location: "a location"
        case .array: "a collection"
        case .object: "an object"
        case .record: "a record"
        }
    }

    var isNull: Bool { if case .null = self { true } else { false } }

    var numberValue: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }

    /// The elements when this is a collection: an array, or an object's values.
    var elements: [RuntimeValue]? {
        switch self {
        case .array(let items): items
        case .object(let object): object.members.map { RuntimeValue($0.value) }
        default: nil
        }
    }

    // MARK: - Conversions

    /// A JSON value, honouring the typed conventions `$date`, `$reference`, `$location`.
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let flag): self = .integer(flag ? 1 : 0)
        case .number(let number):
            if let exact = number.int64Value { self = .integer(exact) } else { self = .double(number.doubleValue) }
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map(RuntimeValue.init))
        case .object(let object):
            switch TypedJSON.decode(object) {
            case .date(let seconds)?: self = .date(seconds)
            case .reference(let name)?: self = .reference(name)
            case .location(let lat, let lon)?: self = .location(latitude: lat, longitude: lon)
            case .invalid?, nil: self = .object(object)
            }
        }
    }

    /// A record field value: timestamps become dates, references record names, lists arrays.
    init(_ field: FieldValue) {
        switch field {
        case .string(let text): self = .string(text)
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .double(value)
        case .timestamp(let ms): self = .date(Double(ms) / 1000)
        case .bytes(let base64): self = .string(base64)
        case .reference(let reference): self = .reference(reference.recordName)
        case .asset(let asset):
            var object = JSONObject()
            if let checksum = asset.fileChecksum { object["fileChecksum"] = .string(checksum) }
            if let size = asset.size { object["size"] = .number(JSONNumber(size)) }
            if let url = asset.downloadURL { object["downloadURL"] = .string(url) }
            self = .object(object)
        case .location(let location): self = .location(latitude: location.latitude, longitude: location.longitude)
        case .list(let items): self = .array(items.map(RuntimeValue.init))
        case .json(let json): self = RuntimeValue(json)
        }
    }

    /// A constant expression's value; `nil` when the expression is not a constant.
    init?(constant expression: PredicateExpression) {
        switch expression {
        case .string(let text): self = .string(text)
        case .integer(let value): self = .integer(value)
        case .double(let value): self = .double(value)
        case .null: self = .null
        case .date(let seconds): self = .date(seconds + PredicateExpression.referenceDateOffset)
        case .reference(let name): self = .reference(name)
        case .location(let lat, let lon): self = .location(latitude: lat, longitude: lon)
        case .aggregate(let items):
            var values: [RuntimeValue] = []
            for item in items {
                guard let value = RuntimeValue(constant: item) else { return nil }
                values.append(value)
            }
            self = .array(values)
        default: return nil
        }
    }

    // MARK: - Key-value coding

    /// The value for one key, as key-value coding reads it: object members, record fields and
    /// system keys, each element of an array, `recordName` of a reference, `latitude`/`longitude`
    /// of a location, `length` of a string. Reading a key of nil is nil.
    func value(forKey key: String) throws(PredicateError) -> RuntimeValue {
        switch self {
        case .null: return .null
        case .object(let object): return object[key].map(RuntimeValue.init) ?? .null
        case .record(let record): return RecordKey(key).value(in: record)
        case .array(let items):
            var out: [RuntimeValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try item.value(forKey: key)) }
            return .array(out)
        case .reference(let name) where key == "recordName": return .string(name)
        case .location(let lat, _) where key == "latitude": return .double(lat)
        case .location(_, let lon) where key == "longitude": return .double(lon)
        case .string(let text) where key == "length": return .integer(Int64(text.utf16.count))
        default:
            throw PredicateError.evaluation("cannot read the key '\(key)' of \(kindName)")
        }
    }
}

/// A key of a record: a system key resolved once, or a field name.
enum RecordKey: Sendable {
    case recordName, recordID, recordType, creationDate, modificationDate, creatorUserRecordID
    case lastModifiedUserRecordID, recordChangeTag, parent, share, zoneName
    case field(String)

    init(_ name: String) {
        switch name {
        case "recordName": self = .recordName
        case "recordID": self = .recordID
        case "recordType": self = .recordType
        case "creationDate": self = .creationDate
        case "modificationDate": self = .modificationDate
        case "creatorUserRecordID": self = .creatorUserRecordID
        case "lastModifiedUserRecordID": self = .lastModifiedUserRecordID
        case "recordChangeTag": self = .recordChangeTag
        case "parent": self = .parent
        case "share": self = .share
        case "zoneName": self = .zoneName
        default: self = .field(name)
        }
    }

    /// The system key names Ferry resolves on records.
    static let systemNames: Set<String> = [
        "recordName", "recordID", "recordType", "creationDate", "modificationDate", "creatorUserRecordID",
        "lastModifiedUserRecordID", "recordChangeTag", "parent", "share", "zoneName",
    ]

    func value(in record: Record) -> RuntimeValue {
        switch self {
        case .field(let name):
            guard let fields = record.fields else { return .null }
            for entry in fields.entries where entry.name == name { return RuntimeValue(entry.field.value) }
            return .null
        case .recordName: return .string(record.recordName)
        case .recordID: return .reference(record.recordName)
        case .recordType: return record.recordType.map(RuntimeValue.string) ?? .null
        case .creationDate: return record.created?.timestamp.map { .date(Double($0) / 1000) } ?? .null
        case .modificationDate: return record.modified?.timestamp.map { .date(Double($0) / 1000) } ?? .null
        case .creatorUserRecordID: return record.created?.userRecordName.map(RuntimeValue.reference) ?? .null
        case .lastModifiedUserRecordID: return record.modified?.userRecordName.map(RuntimeValue.reference) ?? .null
        case .recordChangeTag: return record.recordChangeTag.map(RuntimeValue.string) ?? .null
        case .parent: return record.parent.map { .reference($0.recordName) } ?? .null
        case .share: return record.share.map { .reference($0.recordName) } ?? .null
        case .zoneName: return .string(record.zoneName)
        }
    }
}
