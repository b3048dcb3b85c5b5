import FerryRecords

// The system structures and field values of a record, as XML elements (Docs/XMLFormat.md).

extension XMLRecordWriter {
    /// Ends a leaf's start tag: `/>` when it has no children, else `>` and the children, then the
    /// end tag.
    @inline(__always)
    private func finishLeaf(_ element: StaticString, unknownKeys: JSONObject, children: () -> Void = {}) {
        markup.append(UInt8(ascii: ">"))
        children()
        writeUnknownKeys(unknownKeys)
        close(element)
    }

    /// `<zoneID zoneName ownerRecordName zoneType/>`.
    func write(_ zone: ZoneID) {
        let escaped = XMLTextEscaping.needsEscape(zone.zoneName)
            || (zone.ownerRecordName.map(XMLTextEscaping.needsEscape) ?? false)
            || (zone.zoneType.map(XMLTextEscaping.needsEscape) ?? false)
        open("zoneID")
        attribute("zoneName", zone.zoneName, escaped)
        if let v = zone.ownerRecordName { attribute("ownerRecordName", v, escaped) }
        if let v = zone.zoneType { attribute("zoneType", v, escaped) }
        if escaped { attribute("escaped", constant: "true") }
        if zone.unknownKeys.isEmpty { markup.append("/>") } else { finishLeaf("zoneID", unknownKeys: zone.unknownKeys) }
    }

    /// `<created|modified timestamp date userRecordName deviceID/>`.
    func write(_ stamp: RecordStamp, element: StaticString) {
        let escaped = (stamp.userRecordName.map(XMLTextEscaping.needsEscape) ?? false)
            || (stamp.deviceID.map(XMLTextEscaping.needsEscape) ?? false)
        open(element)
        if let t = stamp.timestamp {
            attribute("timestamp", integer: t)
            dateAttribute(t)
        }
        if let v = stamp.userRecordName { attribute("userRecordName", v, escaped) }
        if let v = stamp.deviceID { attribute("deviceID", v, escaped) }
        if escaped { attribute("escaped", constant: "true") }
        if stamp.unknownKeys.isEmpty { markup.append("/>") } else { finishLeaf(element, unknownKeys: stamp.unknownKeys) }
    }

    /// `<reference|parent|share recordName action>` with an optional `<zoneID>` inside.
    func write(_ reference: Reference, element: StaticString, _ field: FieldAttributes) {
        let escaped = XMLTextEscaping.needsEscape(reference.recordName)
            || (reference.action.map { XMLTextEscaping.needsEscape($0.rawValue) } ?? false)
            || field.needsEscape
        open(element)
        writeFieldAttributes(field, escaped)
        attribute("recordName", reference.recordName, escaped)
        if let v = reference.action { attribute("action", v.rawValue, escaped) }
        if escaped { attribute("escaped", constant: "true") }
        if reference.zoneID == nil && reference.unknownKeys.isEmpty {
            markup.append("/>")
        } else {
            finishLeaf(element, unknownKeys: reference.unknownKeys) {
                if let zone = reference.zoneID { write(zone) }
            }
        }
    }

    /// `<asset fileChecksum size referenceChecksum wrappingKey receipt downloadURL/>`.
    func write(_ asset: Asset, _ field: FieldAttributes) {
        var escaped = field.needsEscape
        for v in [asset.fileChecksum, asset.referenceChecksum, asset.wrappingKey, asset.receipt, asset.downloadURL] {
            if let v, XMLTextEscaping.needsEscape(v) { escaped = true }
        }
        open("asset")
        writeFieldAttributes(field, escaped)
        if let v = asset.fileChecksum { attribute("fileChecksum", v, escaped) }
        if let v = asset.size { attribute("size", integer: v) }
        if let v = asset.referenceChecksum { attribute("referenceChecksum", v, escaped) }
        if let v = asset.wrappingKey { attribute("wrappingKey", v, escaped) }
        if let v = asset.receipt { attribute("receipt", v, escaped) }
        if let v = asset.downloadURL { attribute("downloadURL", v, escaped) }
        if escaped { attribute("escaped", constant: "true") }
        if asset.unknownKeys.isEmpty { markup.append("/>") } else { finishLeaf("asset", unknownKeys: asset.unknownKeys) }
    }

    /// `<location latitude longitude horizontalAccuracy verticalAccuracy altitude speed course timestamp date/>`.
    func write(_ location: Location, _ field: FieldAttributes) {
        let escaped = field.needsEscape
        open("location")
        writeFieldAttributes(field, escaped)
        attribute("latitude", double: location.latitude)
        attribute("longitude", double: location.longitude)
        if let v = location.horizontalAccuracy { attribute("horizontalAccuracy", double: v) }
        if let v = location.verticalAccuracy { attribute("verticalAccuracy", double: v) }
        if let v = location.altitude { attribute("altitude", double: v) }
        if let v = location.speed { attribute("speed", double: v) }
        if let v = location.course { attribute("course", double: v) }
        if let v = location.timestamp {
            attribute("timestamp", integer: v)
            dateAttribute(v)
        }
        if escaped { attribute("escaped", constant: "true") }
        if location.unknownKeys.isEmpty { markup.append("/>") } else { finishLeaf("location", unknownKeys: location.unknownKeys) }
    }

    /// `name`, `type` and `untyped`, in that order, before the element's own attributes.
    @inline(__always)
    func writeFieldAttributes(_ field: FieldAttributes, _ escaped: Bool) {
        if let name = field.name { attribute("name", name, escaped) }
        if let type = field.type { attribute("type", type, escaped) }
        if field.untyped { attribute("untyped", constant: "true") }
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
        try startElement("field")
        try elementAttribute("name", name, escaped)
        if escaped { try elementAttribute("escaped", constant: "true") }
        try writeValue(field.value, as: kind, items: items, FieldAttributes(name: nil, type: type, untyped: untyped))
        writeUnknownKeys(field.unknownKeys)
        try endElement()
    }

    /// A value element of `kind`, with the field attributes when it is a field; a list's items are
    /// `items` elements (or `<null/>`), or, in an untyped list, each item's own element.
    func writeValue(_ value: FieldValue, as kind: XMLValueKind, items itemKind: XMLValueKind? = nil,
                    _ field: FieldAttributes) throws {
        switch (kind, value) {
        case (.string, .string(let s)), (.bytes, .bytes(let s)), (.encryptedBytes, .bytes(let s)):
            let escaped = XMLTextEscaping.needsEscape(s) || field.needsEscape
            open(kind.elementName)
            writeFieldAttributes(field, escaped)
            if escaped { attribute("escaped", constant: "true") }
            if s.isEmpty {
                markup.append("/>")
            } else {
                markup.append(UInt8(ascii: ">"))
                text(s, escaped)
                close(kind.elementName)
            }
        case (.int64, .int64(let v)):
            let escaped = field.needsEscape
            open("int64")
            writeFieldAttributes(field, escaped)
            if escaped { attribute("escaped", constant: "true") }
            markup.append(UInt8(ascii: ">"))
            markup.appendInteger(v)
            close("int64")
        case (.timestamp, .timestamp(let v)):
            let escaped = field.needsEscape
            open("timestamp")
            writeFieldAttributes(field, escaped)
            dateAttribute(v)
            if escaped { attribute("escaped", constant: "true") }
            markup.append(UInt8(ascii: ">"))
            markup.appendInteger(v)
            close("timestamp")
        case (.double, .double(let d)):
            checkFinite(d)
            let escaped = field.needsEscape
            open("double")
            writeFieldAttributes(field, escaped)
            if escaped { attribute("escaped", constant: "true") }
            markup.append(UInt8(ascii: ">"))
            Self.appendDouble(d, to: &markup)
            close("double")
        case (.reference, .reference(let r)):
            write(r, element: "reference", field)
        case (.asset, .asset(let a)):
            write(a, field)
        case (.location, .location(let l)):
            write(l, field)
        case (.null, _):
            let escaped = field.needsEscape
            open("null")
            writeFieldAttributes(field, escaped)
            if escaped { attribute("escaped", constant: "true") }
            markup.append("/>")
        case (.list, _):
            // A container: libxml2 writes the element, Ferry its items.
            let escaped = field.needsEscape
            try startElement("list")
            if let name = field.name { try elementAttribute("name", name, escaped) }
            if let type = field.type { try elementAttribute("type", type, escaped) }
            if field.untyped { try elementAttribute("untyped", constant: "true") }
            if escaped { try elementAttribute("escaped", constant: "true") }
            if case .list(let items) = value { // else UNKNOWN_LIST `[]`
                for item in items {
                    let kind = itemKind.flatMap { $0.holds(item) ? $0 : nil } ?? XMLValueKind(natural: item)!
                    try writeValue(item, as: kind, FieldAttributes())
                }
            }
            try endElement()
        default:
            encodeJSON(value)
            writeJSONText(element: "json", key: nil, field)
        }
    }
}
