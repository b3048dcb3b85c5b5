import FerryRecords

// The system structures and field values of a record, as XML elements.

extension XMLRecordWriter {
    /// `<zoneID zoneName ownerRecordName zoneType/>`.
    func write(_ zone: ZoneID) throws {
        let escaped = XMLTextEscaping.needsEscape(zone.zoneName)
            || (zone.ownerRecordName.map(XMLTextEscaping.needsEscape) ?? false)
            || (zone.zoneType.map(XMLTextEscaping.needsEscape) ?? false)
        try writerStart("zoneID")
        try attribute("zoneName", zone.zoneName, escaped)
        if let v = zone.ownerRecordName { try attribute("ownerRecordName", v, escaped) }
        if let v = zone.zoneType { try attribute("zoneType", v, escaped) }
        if escaped { try writerEscapedFlag() }
        try writeUnknownKeys(zone.unknownKeys)
        try writerEnd()
    }

    /// `<created|modified timestamp date userRecordName deviceID/>`.
    func write(_ stamp: RecordStamp, element: StaticString) throws {
        let escaped = (stamp.userRecordName.map(XMLTextEscaping.needsEscape) ?? false)
            || (stamp.deviceID.map(XMLTextEscaping.needsEscape) ?? false)
        try writerStart(element)
        if let t = stamp.timestamp {
            try attribute("timestamp", integer: t)
            try dateAttribute(t)
        }
        if let v = stamp.userRecordName { try attribute("userRecordName", v, escaped) }
        if let v = stamp.deviceID { try attribute("deviceID", v, escaped) }
        if escaped { try writerEscapedFlag() }
        try writeUnknownKeys(stamp.unknownKeys)
        try writerEnd()
    }

    /// `<reference|parent|share recordName action>` with an optional `<zoneID>` inside.
    func write(_ reference: Reference, element: StaticString) throws {
        let escaped = XMLTextEscaping.needsEscape(reference.recordName)
            || (reference.action.map { XMLTextEscaping.needsEscape($0.rawValue) } ?? false)
        try writerStart(element)
        try attribute("recordName", reference.recordName, escaped)
        if let v = reference.action { try attribute("action", v.rawValue, escaped) }
        if escaped { try writerEscapedFlag() }
        if let zone = reference.zoneID { try write(zone) }
        try writeUnknownKeys(reference.unknownKeys)
        try writerEnd()
    }

    /// `<asset fileChecksum size referenceChecksum wrappingKey receipt downloadURL/>`.
    func write(_ asset: Asset) throws {
        var escaped = false
        for v in [asset.fileChecksum, asset.referenceChecksum, asset.wrappingKey, asset.receipt, asset.downloadURL] {
            if let v, XMLTextEscaping.needsEscape(v) { escaped = true }
        }
        try writerStart("asset")
        if let v = asset.fileChecksum { try attribute("fileChecksum", v, escaped) }
        if let v = asset.size { try attribute("size", integer: v) }
        if let v = asset.referenceChecksum { try attribute("referenceChecksum", v, escaped) }
        if let v = asset.wrappingKey { try attribute("wrappingKey", v, escaped) }
        if let v = asset.receipt { try attribute("receipt", v, escaped) }
        if let v = asset.downloadURL { try attribute("downloadURL", v, escaped) }
        if escaped { try writerEscapedFlag() }
        try writeUnknownKeys(asset.unknownKeys)
        try writerEnd()
    }

    /// `<location latitude longitude horizontalAccuracy verticalAccuracy altitude speed course timestamp date/>`.
    func write(_ location: Location) throws {
        try writerStart("location")
        try attribute("latitude", double: location.latitude)
        try attribute("longitude", double: location.longitude)
        if let v = location.horizontalAccuracy { try attribute("horizontalAccuracy", double: v) }
        if let v = location.verticalAccuracy { try attribute("verticalAccuracy", double: v) }
        if let v = location.altitude { try attribute("altitude", double: v) }
        if let v = location.speed { try attribute("speed", double: v) }
        if let v = location.course { try attribute("course", double: v) }
        if let v = location.timestamp {
            try attribute("timestamp", integer: v)
            try dateAttribute(v)
        }
        try writeUnknownKeys(location.unknownKeys)
        try writerEnd()
    }

    // MARK: Fields

    /// Whether `value` is written natively for `type` (else it is written as `<json>`).
    static func isNative(_ value: FieldValue, kind: FieldType.Kind) -> Bool {
        switch (value, kind) {
        case (.string, .string), (.int64, .int64), (.double, .double), (.timestamp, .timestamp),
             (.bytes, .bytes), (.bytes, .encryptedBytes), (.reference, .reference), (.asset, .asset),
             (.location, .location): true
        default: false
        }
    }

    /// `<field name type>VALUE<unknown…/>*</field>`.
    func writeField(_ name: String, _ field: RecordField) throws {
        let value = field.value
        let type = field.type
        enum Form { case null, json, empty, scalar, list }
        let form: Form
        if case .json(.null) = value {
            form = .null
        } else if let type, type.kind != .unknown {
            if type.isList {
                if case .list(let items) = value, items.allSatisfy({ item in
                    if case .json(.null) = item { return true }
                    return Self.isNative(item, kind: type.kind)
                }) { form = .list } else { form = .json }
            } else {
                form = Self.isNative(value, kind: type.kind) ? .scalar : .json
            }
        } else if let type, type.isList, case .json(.array(let a)) = value, a.isEmpty {
            form = .empty // UNKNOWN_LIST []
        } else {
            form = .json
        }
        var escaped = XMLTextEscaping.needsEscape(name) || (type.map { XMLTextEscaping.needsEscape($0.rawValue) } ?? false)
        if form == .scalar, !escaped {
            switch value {
            case .string(let s), .bytes(let s): escaped = XMLTextEscaping.needsEscape(s)
            default: break
            }
        }
        try writerStart("field")
        try attribute("name", name, escaped)
        if let type { try attribute("type", type.rawValue, escaped) }
        if form == .scalar, case .timestamp(let t) = value { try dateAttribute(t) }
        if escaped { try writerEscapedFlag() }
        switch form {
        case .null: try writeNull()
        case .json: try writeJSON(valueJSON(value), element: "json")
        case .empty: break
        case .scalar: try writeScalar(value, escaped: escaped)
        case .list:
            if case .list(let items) = value {
                for item in items { try writeItem(item) }
            }
        }
        try writeUnknownKeys(field.unknownKeys)
        try writerEnd()
    }

    private func writeNull() throws {
        try writerStart("null")
        try writerEnd()
    }

    /// The value in its JSON encoding, for `<json>`.
    private func valueJSON(_ value: FieldValue) -> JSONValue {
        if case .json(let j) = value { return j }
        var out = JSONOutput(capacity: 256)
        RecordJSON.encode(value, into: &out)
        return (try? RecordJSON.parseValue(out.bytes)) ?? .null
    }

    /// The content of a field or item holding a native value.
    private func writeScalar(_ value: FieldValue, escaped: Bool) throws {
        switch value {
        case .string(let s), .bytes(let s): try text(s, escaped)
        case .int64(let v), .timestamp(let v): try text(integer: v)
        case .double(let d): try text(Self.text(of: d), false)
        case .reference(let r): try write(r, element: "reference")
        case .asset(let a): try write(a)
        case .location(let l): try write(l)
        case .list, .json: break
        }
    }

    /// `<item>VALUE</item>` (with `date` for timestamps, `escaped` when needed, `<null/>` for null).
    private func writeItem(_ item: FieldValue) throws {
        var escaped = false
        switch item {
        case .string(let s), .bytes(let s): escaped = XMLTextEscaping.needsEscape(s)
        default: break
        }
        try writerStart("item")
        if case .timestamp(let t) = item { try dateAttribute(t) }
        if escaped { try writerEscapedFlag() }
        if case .json(.null) = item { try writeNull() } else { try writeScalar(item, escaped: escaped) }
        try writerEnd()
    }
}
