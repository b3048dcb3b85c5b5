import FerryRecords

// The system structures and field values of a record, as XML elements (Docs/XMLFormat.md).

/// The attributes a value element carries when it is a field rather than a list item: the field's
/// `name` (short form only), its `type` when it is not the element's standard tag, and
/// `untyped="true"` when the field had no type tag.
struct FieldAttributes {
    var name: String?
    var type: String?
    var untyped = false

    var needsEscape: Bool {
        (name.map(XMLTextEscaping.needsEscape) ?? false) || (type.map(XMLTextEscaping.needsEscape) ?? false)
    }
}

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
    func write(_ reference: Reference, element: StaticString, _ field: FieldAttributes) throws {
        let escaped = XMLTextEscaping.needsEscape(reference.recordName)
            || (reference.action.map { XMLTextEscaping.needsEscape($0.rawValue) } ?? false)
            || field.needsEscape
        try writerStart(element)
        try writeFieldAttributes(field, escaped)
        try attribute("recordName", reference.recordName, escaped)
        if let v = reference.action { try attribute("action", v.rawValue, escaped) }
        if escaped { try writerEscapedFlag() }
        if let zone = reference.zoneID { try write(zone) }
        try writeUnknownKeys(reference.unknownKeys)
        try writerEnd()
    }

    /// `<asset fileChecksum size referenceChecksum wrappingKey receipt downloadURL/>`.
    func write(_ asset: Asset, _ field: FieldAttributes) throws {
        var escaped = field.needsEscape
        for v in [asset.fileChecksum, asset.referenceChecksum, asset.wrappingKey, asset.receipt, asset.downloadURL] {
            if let v, XMLTextEscaping.needsEscape(v) { escaped = true }
        }
        try writerStart("asset")
        try writeFieldAttributes(field, escaped)
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
    func write(_ location: Location, _ field: FieldAttributes) throws {
        let escaped = field.needsEscape
        try writerStart("location")
        try writeFieldAttributes(field, escaped)
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
        if escaped { try writerEscapedFlag() }
        try writeUnknownKeys(location.unknownKeys)
        try writerEnd()
    }

    /// `name`, `type` and `untyped`, in that order, before the element's own attributes.
    @inline(__always)
    func writeFieldAttributes(_ field: FieldAttributes, _ escaped: Bool) throws {
        if let name = field.name { try attribute("name", name, escaped) }
        if let type = field.type { try attribute("type", type, escaped) }
        if field.untyped { try writerUntypedFlag() }
    }

    // MARK: Fields

    /// The element a field's value is written as, and whether the element's standard tag, a
    /// `type` attribute or `untyped` gives the field's tag. Values the typed elements cannot
    /// carry exactly are written as `<json>` with the value's JSON encoding.
    /// For a typed list, `items` is the element of its items.
    static func form(of value: FieldValue, type: FieldType?)
        -> (kind: XMLValueKind, items: XMLValueKind?, type: String?, untyped: Bool) {
        if case .json(.null) = value { return (.null, nil, type?.rawValue, false) }
        guard let type else {
            if let kind = XMLValueKind(natural: value) { return (kind, nil, nil, true) }
            if case .list(let items) = value, items.allSatisfy({ XMLValueKind(natural: $0) != nil }) {
                return (.list, nil, nil, true)
            }
            return (.json, nil, nil, false)
        }
        if type.kind == .unknown {
            if type.isList, case .json(.array(let items)) = value, items.isEmpty { return (.list, nil, type.rawValue, false) }
            return (.json, nil, type.rawValue, false)
        }
        let element = XMLValueKind(scalar: type.kind)!
        if type.isList {
            if case .list(let items) = value, items.allSatisfy({ element.holds($0) || XMLValueKind.null.holds($0) }) {
                return (.list, element, type.rawValue, false)
            }
            return (.json, nil, type.rawValue, false)
        }
        guard element.holds(value) else { return (.json, nil, type.rawValue, false) }
        return (element, nil, type == element.standardType ? nil : type.rawValue, false)
    }

    /// A field: the short form `<kind name="…">` or, when the field dictionary has unknown
    /// members, the long form `<field name="…"><kind>…</kind><unknown …/></field>`.
    func writeField(_ name: String, _ field: RecordField) throws {
        let (kind, items, type, untyped) = Self.form(of: field.value, type: field.type)
        if field.unknownKeys.isEmpty {
            try writeValue(field.value, as: kind, items: items, FieldAttributes(name: name, type: type, untyped: untyped))
            return
        }
        let escaped = XMLTextEscaping.needsEscape(name)
        try writerStart("field")
        try attribute("name", name, escaped)
        if escaped { try writerEscapedFlag() }
        try writeValue(field.value, as: kind, items: items, FieldAttributes(name: nil, type: type, untyped: untyped))
        try writeUnknownKeys(field.unknownKeys)
        try writerEnd()
    }

    /// A value element of `kind`, with the field attributes when it is a field; a list's items are
    /// `items` elements (or `<null/>`), or, in an untyped list, each item's own element.
    func writeValue(_ value: FieldValue, as kind: XMLValueKind, items itemKind: XMLValueKind? = nil,
                    _ field: FieldAttributes) throws {
        switch (kind, value) {
        case (.string, .string(let s)), (.bytes, .bytes(let s)), (.encryptedBytes, .bytes(let s)):
            let escaped = XMLTextEscaping.needsEscape(s) || field.needsEscape
            try writerStart(kind.elementName)
            try writeFieldAttributes(field, escaped)
            if escaped { try writerEscapedFlag() }
            try text(s, escaped)
            try writerEnd()
        case (.int64, .int64(let v)):
            let escaped = field.needsEscape
            try writerStart("int64")
            try writeFieldAttributes(field, escaped)
            if escaped { try writerEscapedFlag() }
            try text(integer: v)
            try writerEnd()
        case (.timestamp, .timestamp(let v)):
            let escaped = field.needsEscape
            try writerStart("timestamp")
            try writeFieldAttributes(field, escaped)
            try dateAttribute(v)
            if escaped { try writerEscapedFlag() }
            try text(integer: v)
            try writerEnd()
        case (.double, .double(let d)):
            let escaped = field.needsEscape
            try writerStart("double")
            try writeFieldAttributes(field, escaped)
            if escaped { try writerEscapedFlag() }
            try text(double: d)
            try writerEnd()
        case (.reference, .reference(let r)):
            try write(r, element: "reference", field)
        case (.asset, .asset(let a)):
            try write(a, field)
        case (.location, .location(let l)):
            try write(l, field)
        case (.null, _):
            let escaped = field.needsEscape
            try writerStart("null")
            try writeFieldAttributes(field, escaped)
            if escaped { try writerEscapedFlag() }
            try writerEnd()
        case (.list, .list(let items)):
            let escaped = field.needsEscape
            try writerStart("list")
            try writeFieldAttributes(field, escaped)
            if escaped { try writerEscapedFlag() }
            for item in items {
                let kind = itemKind.flatMap { $0.holds(item) ? $0 : nil } ?? XMLValueKind(natural: item)!
                try writeValue(item, as: kind, FieldAttributes())
            }
            try writerEnd()
        case (.list, _):
            // UNKNOWN_LIST `[]`.
            let escaped = field.needsEscape
            try writerStart("list")
            try writeFieldAttributes(field, escaped)
            if escaped { try writerEscapedFlag() }
            try writerEnd()
        default:
            encodeJSON(value)
            try writeJSONText(element: "json", key: nil, field)
        }
    }
}
