import FerryRecords

/// A JSON name quoted for a message (``JSONOutput/literal(_:)``).
func JSONOutputLiteral(_ text: String) -> String { JSONOutput.literal(text) }

/// The JSON helpers of the wire model: answers pretty-printed, request members read with typed
/// errors, record bodies with `numbersAsStrings`.
enum WireJSON {
    /// `out`'s compact JSON pretty-printed as CloudKit prints (``JSONOutput/appendPretty(_:)``).
    static func pretty(_ out: borrowing JSONOutput) -> [UInt8] {
        var pretty = JSONOutput(capacity: out.count * 2 + 16)
        pretty.appendPretty(out.bytes)
        return pretty.array
    }

    /// Parses a request body: an object (an empty body is `{}`).
    static func parseObject(_ body: [UInt8], maximumDepth: Int) throws(CloudKitError) -> JSONObject {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return JSONObject() }
        let parsed: Result<JSONValue, RecordFormatError> = body.withUnsafeBytes { raw in
            Result { () throws(RecordFormatError) -> JSONValue in
                try RecordJSON.parseValue(raw, configuration: .init(maximumDepth: maximumDepth))
            }
        }
        switch parsed {
        case .success(.object(let object)): return object
        case .success(let other): throw .badRequest("expected the request body to be a JSON object, found \(kind(other))")
        case .failure(let error): throw .badRequest("expected a JSON request body: \(error.message)")
        }
    }

    static func kind(_ value: JSONValue?) -> String {
        switch value {
        case nil: "none"
        case .null?: "null"
        case .bool?: "a boolean"
        case .number?: "a number"
        case .string?: "a string"
        case .array?: "an array"
        case .object?: "an object"
        }
    }

    static func string(_ object: JSONObject, _ key: String, in place: String) throws(CloudKitError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other: throw .badRequest("expected \(place)\(key) to be a string, found \(kind(other))")
        }
    }

    static func bool(_ object: JSONObject, _ key: String, in place: String) throws(CloudKitError) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other: throw .badRequest("expected \(place)\(key) to be a boolean, found \(kind(other))")
        }
    }

    static func integer(_ object: JSONObject, _ key: String, in place: String) throws(CloudKitError) -> Int? {
        switch object[key] {
        case nil, .null?: return nil
        case .number(let number)?:
            guard let value = number.int64Value, let int = Int(exactly: value) else {
                throw .badRequest("expected \(place)\(key) to be an integer, found \(number.text)")
            }
            return int
        case let other: throw .badRequest("expected \(place)\(key) to be an integer, found \(kind(other))")
        }
    }

    static func object(_ object: JSONObject, _ key: String, in place: String) throws(CloudKitError) -> JSONObject? {
        switch object[key] {
        case nil, .null?: return nil
        case .object(let value)?: return value
        case let other: throw .badRequest("expected \(place)\(key) to be an object, found \(kind(other))")
        }
    }

    static func array(_ object: JSONObject, _ key: String, in place: String) throws(CloudKitError) -> [JSONValue]? {
        switch object[key] {
        case nil, .null?: return nil
        case .array(let value)?: return value
        case let other: throw .badRequest("expected \(place)\(key) to be an array, found \(kind(other))")
        }
    }

    static func strings(_ object: JSONObject, _ key: String, in place: String) throws(CloudKitError) -> [String]? {
        guard let items = try array(object, key, in: place) else { return nil }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item else { throw .badRequest("expected \(place)\(key) to hold strings, found \(kind(item))") }
            strings.append(text)
        }
        return strings
    }

    /// A zone ID object (`{zoneName, ownerRecordName?, zoneType?}`).
    static func zoneID(_ value: JSONObject, in place: String) throws(CloudKitError) -> ZoneID {
        guard let name = try string(value, "zoneName", in: place), !name.isEmpty else {
            throw .badRequest("expected \(place)zoneName to be a non-empty string, found \(kind(value["zoneName"]))")
        }
        var zone = ZoneID(zoneName: name, ownerRecordName: try string(value, "ownerRecordName", in: place))
        zone.zoneType = try string(value, "zoneType", in: place)
        return zone
    }

    /// `zone` as a JSON object value.
    static func value(of zone: ZoneID) -> JSONValue {
        var object: JSONObject = ["zoneName": .string(zone.zoneName)]
        if let owner = zone.ownerRecordName { object["ownerRecordName"] = .string(owner) }
        if let type = zone.zoneType { object["zoneType"] = .string(type) }
        return .object(object)
    }

    /// A record dictionary of a request, decoded with the record model (every type, system field
    /// and unknown key kept); with `numbersAsStrings`, string values of INT64, DOUBLE and
    /// TIMESTAMP fields (and their lists) read as the numbers they spell.
    static func record(_ value: JSONObject, numbersAsStrings: Bool, in place: String) throws(CloudKitError) -> Record {
        var value = value
        if numbersAsStrings { value = convertingNumbers(value, toStrings: false) }
        var out = JSONOutput(capacity: 1024)
        out.appendValue(.object(value))
        let bytes = out.bytes
        let decoded = Result { () throws(RecordFormatError) -> Record in try RecordJSON.decodeRecord(bytes) }
        switch decoded {
        case .success(let record): return record
        case .failure(let error): throw .badRequest("expected \(place)record to be a record dictionary: \(error.message)")
        }
    }

    /// Field values of number types as strings (`toStrings`) or back to numbers.
    static func convertingNumbers(_ record: JSONObject, toStrings: Bool) -> JSONObject {
        guard case .object(var fields)? = record["fields"] else { return record }
        var record = record
        for index in fields.members.indices {
            guard case .object(var field) = fields.members[index].value, case .string(let type)? = field["type"],
                  ["INT64", "DOUBLE", "TIMESTAMP", "INT64_LIST", "DOUBLE_LIST", "TIMESTAMP_LIST"].contains(type),
                  let value = field["value"] else { continue }
            if toStrings && type.hasPrefix("TIMESTAMP") { continue }
            func convert(_ item: JSONValue) -> JSONValue {
                switch item {
                case .number(let number) where toStrings: .string(number.text)
                case .string(let text) where !toStrings && JSONValue.isNumberText(text): .number(JSONNumber(text: text))
                case .array(let items): .array(items.map(convert))
                default: item
                }
            }
            field["value"] = convert(value)
            fields.members[index].value = .object(field)
        }
        record["fields"] = .object(fields)
        return record
    }
}

extension JSONValue {
    /// Whether `text` is a JSON number (`-`? digits, fraction, exponent).
    static func isNumberText(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let count = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        guard digits() > 0 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
