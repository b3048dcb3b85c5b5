import FerryRecords

// Fields and their values: the short form `<kind name="…">`, the long form `<field name="…">`,
// list items, and values kept as JSON.

extension RecordXMLDecoder {
    /// `<fields>`: the fields in order, names unique.
    func decodeFields(_ node: XMLNodeRef) throws(XMLDecodeError) -> RecordFields {
        try checkOnlyEscaped(node, "fields")
        var fields = RecordFields()
        var children = 0
        var child = node.firstChild
        while let c = child {
            if c.isElement { children += 1 }
            child = c.nextSibling
        }
        fields.entries.reserveCapacity(children)
        let expected = "a field (<string>, <int64>, <double>, <timestamp>, <bytes>, <encryptedBytes>, <reference>, <asset>, <location>, <list>, <json>, <null> or <field>)"
        try forEachChild(of: node, depth: 3, in: "fields", expected: expected) { (decoder, c, name) throws(XMLDecodeError) in
            let entry: RecordFields.Entry
            if name == .field {
                entry = try decoder.decodeLongField(c)
            } else if let kind = name.valueKind {
                var header = FieldHeader(mode: .field)
                let (value, type) = try decoder.decodeValue(c, kind, depth: 3, header: &header)
                guard let fieldName = header.name else {
                    throw decoder.error(.unexpectedContent, "expected name=\"…\" on <\(name.text)> in <fields>, found none", c)
                }
                entry = RecordFields.Entry(name: fieldName, field: RecordField(value, type: type))
            } else {
                throw decoder.error(.unexpectedContent, "expected \(expected) in <fields>, found <\(name.text)>", c)
            }
            // Names are unique, as in JSON (a record has a handful of fields).
            if fields.index(of: entry.name) != nil {
                throw decoder.error(.unexpectedContent, "expected each field name once, found \"\(entry.name)\" twice", c, attribute: "name")
            }
            fields.entries.append(entry)
        }
        return fields
    }

    /// The long form: `<field name="…">` holding one value element, then `<unknown>` members of the
    /// field dictionary.
    func decodeLongField(_ node: XMLNodeRef) throws(XMLDecodeError) -> RecordFields.Entry {
        let escaped = try isEscaped(node)
        var name: String?
        try forEachAttribute(of: node, "field") { (attribute, a) throws(XMLDecodeError) -> Bool in
            switch attribute {
            case .name: name = try string(a, "name", escaped, node)
            case .escaped: break
            default: return false
            }
            return true
        }
        guard let name else { throw error(.unexpectedContent, "expected name=\"…\" on <field>, found none", node) }
        var field: RecordField?
        let expected = "one value element (<string>, <int64>, …, <list>, <json>, <null>), then any <unknown>"
        try forEachChild(of: node, depth: 4, in: "field", expected: expected) { (decoder, c, element) throws(XMLDecodeError) in
            if element == .unknown, field != nil {
                try decoder.addUnknown(c, to: &field!.unknownKeys, reserved: ["value", "type"])
            } else if field == nil, let kind = element.valueKind {
                var header = FieldHeader(mode: .value)
                let (value, type) = try decoder.decodeValue(c, kind, depth: 4, header: &header)
                field = RecordField(value, type: type)
            } else {
                throw decoder.error(.unexpectedContent, "expected \(expected) in <field>, found <\(element.text)>", c)
            }
        }
        guard let field else { throw error(.unexpectedContent, "expected a value element in <field name=\"\(name)\">, found none", node) }
        return RecordFields.Entry(name: name, field: field)
    }

    /// A value element of `kind`; returns the value and the field's type tag (for items, `nil`).
    func decodeValue(_ node: XMLNodeRef, _ kind: XMLValueKind, depth: Int,
                              header: inout FieldHeader) throws(XMLDecodeError) -> (FieldValue, FieldType?) {
        let element = kind.elementName
        let escaped = try isEscaped(node)
        let value: FieldValue
        switch kind {
        case .string, .bytes, .encryptedBytes:
            try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
                if name == .escaped { return true }
                return try header.take(name, a, escaped, node, self)
            }
            let text = try text(of: node, escaped)
            value = kind == .string ? .string(text) : .bytes(text)
        case .int64, .double:
            try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
                if name == .escaped { return true }
                return try header.take(name, a, escaped, node, self)
            }
            value = try withText(of: node) { (bytes) throws(XMLDecodeError) -> FieldValue in
                kind == .int64 ? .int64(try int64(bytes, "<int64>", node)) : .double(try double(bytes, "<double>", node))
            }
        case .timestamp:
            var date: XMLAttributeRef?
            try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
                if name == .date { date = a; return true }
                if name == .escaped { return true }
                return try header.take(name, a, escaped, node, self)
            }
            let milliseconds = try withText(of: node) { (bytes) throws(XMLDecodeError) -> Int64 in
                try int64(bytes, "<timestamp>", node)
            }
            try checkDate(date, milliseconds, node)
            value = .timestamp(milliseconds)
        case .reference:
            value = .reference(try decodeReference(node, "reference", depth: depth, header: &header))
        case .asset:
            value = .asset(try decodeAsset(node, depth: depth, header: &header))
        case .location:
            value = .location(try decodeLocation(node, depth: depth, header: &header))
        case .null:
            try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
                if name == .escaped { return true }
                return try header.take(name, a, escaped, node, self)
            }
            if try !text(of: node, false).allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" || $0 == "\r\n" }) {
                throw error(.unexpectedContent, "expected <null/> to be empty, found text in it", node)
            }
            value = .json(.null)
        case .list:
            try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
                if name == .escaped { return true }
                return try header.take(name, a, escaped, node, self)
            }
            return try decodeList(node, depth: depth, header: header)
        case .json:
            try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
                if name == .escaped { return true }
                return try header.take(name, a, escaped, node, self)
            }
            return try decodeJSONValue(node, text: try text(of: node, escaped), header: header)
        }
        guard header.mode != .item else { return (value, nil) }
        return (value, try resolveType(header, kind, node))
    }

    /// The field's type: `untyped="true"` → none; `type` → that tag, which must suit the element;
    /// neither → the element's standard tag (none for `<null>`).
    func resolveType(_ header: FieldHeader, _ kind: XMLValueKind, _ node: XMLNodeRef) throws(XMLDecodeError) -> FieldType? {
        if header.untyped {
            if header.type != nil {
                throw error(.unexpectedContent, "expected either type=\"…\" or untyped=\"true\" on <\(kind.elementName)>, found both", node, attribute: "untyped")
            }
            return nil
        }
        guard let type = header.type else { return kind.standardType }
        switch kind {
        case .null, .json:
            return type
        case .list:
            return type
        default:
            if type.isList || XMLValueKind(scalar: type.kind) != kind {
                throw error(.invalidValue, "expected a type tag for <\(kind.elementName)> (such as \(kind.standardType!.rawValue)), found type=\"\(type.rawValue)\"", node, attribute: "type")
            }
            return type
        }
    }

    /// `<list type="…_LIST">` with one element per item, all of the list's kind (or `<null/>`).
    func decodeList(_ node: XMLNodeRef, depth: Int, header: FieldHeader) throws(XMLDecodeError) -> (FieldValue, FieldType?) {
        let type = try resolveType(header, .list, node)
        var itemKind: XMLValueKind?
        var isUnknownList = false
        if let type {
            if type.isList, let kind = XMLValueKind(scalar: type.kind) {
                itemKind = kind
            } else if type.isList {
                isUnknownList = true // UNKNOWN_LIST: only ever empty
            } else {
                throw error(.invalidValue, "expected a list type tag (STRING_LIST, INT64_LIST, …, UNKNOWN_LIST) on <list>, found type=\"\(type.rawValue)\"", node, attribute: "type")
            }
        } else if !header.untyped && header.mode != .item {
            throw error(.unexpectedContent, "expected type=\"…_LIST\" (or untyped=\"true\") on <list>, found none", node)
        }
        var items: [FieldValue] = []
        func expected() -> String {
            itemKind.map { "<\($0.elementName)> or <null/> items" } ?? (isUnknownList ? "no items (UNKNOWN_LIST is empty)" : "items")
        }
        try forEachChild(of: node, depth: depth + 1, in: "list", expected: expected()) { (decoder, c, name) throws(XMLDecodeError) in
            guard let kind = name.valueKind, kind.isItem, !isUnknownList,
                  kind == .null || itemKind == nil || kind == itemKind else {
                throw decoder.error(.unexpectedContent, "expected \(expected()) in <list type=\"\(type?.rawValue ?? "")\">, found <\(name.text)>", c)
            }
            var itemHeader = FieldHeader(mode: .item)
            items.append(try decoder.decodeValue(c, kind, depth: depth + 1, header: &itemHeader).0)
        }
        if isUnknownList { return (.json(.array([])), type) }
        return (.list(items), type)
    }

    /// `<json>`: the JSON text means exactly what it means as the `value` of an NDJSON field
    /// with the same `type`, so XML and NDJSON read the same.
    func decodeJSONValue(_ node: XMLNodeRef, text: String, header: FieldHeader) throws(XMLDecodeError) -> (FieldValue, FieldType?) {
        let type: FieldType? = header.untyped ? nil : header.type
        if header.untyped && header.type != nil {
            throw error(.unexpectedContent, "expected either type=\"…\" or untyped=\"true\" on <json>, found both", node, attribute: "untyped")
        }
        let parsed = try json(text, node)
        var document = JSONOutput(capacity: text.utf8.count + 64)
        document.append("{\"recordName\":\"\",\"fields\":{\"f\":{\"value\":")
        document.appendValue(parsed)
        if let type {
            document.append(",\"type\":")
            document.appendString(type.rawValue)
        }
        document.append("}}}")
        do throws(RecordFormatError) {
            let record = try RecordJSON.decodeRecord(document.bytes, configuration: .init(maximumDepth: limits.maximumJSONDepth))
            guard let field = record.fields?.first?.field else { return (.json(parsed), type) }
            return (field.value, type)
        } catch {
            throw self.error(.invalidValue, "expected JSON that suits type \(type?.rawValue ?? "(none)") in <json>: \(error.message)", node)
        }
    }

    /// `<asset fileChecksum size referenceChecksum wrappingKey receipt downloadURL>`.
    func decodeAsset(_ node: XMLNodeRef, depth: Int, header: inout FieldHeader) throws(XMLDecodeError) -> Asset {
        let escaped = try isEscaped(node)
        var asset = Asset()
        try forEachAttribute(of: node, "asset") { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .fileChecksum: asset.fileChecksum = try string(a, "fileChecksum", escaped, node)
            case .size: asset.size = try int64(a, "size", node)
            case .referenceChecksum: asset.referenceChecksum = try string(a, "referenceChecksum", escaped, node)
            case .wrappingKey: asset.wrappingKey = try string(a, "wrappingKey", escaped, node)
            case .receipt: asset.receipt = try string(a, "receipt", escaped, node)
            case .downloadURL: asset.downloadURL = try string(a, "downloadURL", escaped, node)
            case .escaped: break
            default: return try header.take(name, a, escaped, node, self)
            }
            return true
        }
        if node.firstChild != nil {
            var present: [String] = []
            if asset.fileChecksum != nil { present.append("fileChecksum") }
            if asset.size != nil { present.append("size") }
            if asset.referenceChecksum != nil { present.append("referenceChecksum") }
            if asset.wrappingKey != nil { present.append("wrappingKey") }
            if asset.receipt != nil { present.append("receipt") }
            if asset.downloadURL != nil { present.append("downloadURL") }
            try decodeUnknownChildren(node, "asset", depth: depth + 1, into: &asset.unknownKeys, reserved: present)
        }
        return asset
    }

    /// `<location latitude longitude …>`; latitude and longitude are required.
    func decodeLocation(_ node: XMLNodeRef, depth: Int, header: inout FieldHeader) throws(XMLDecodeError) -> Location {
        let escaped = try isEscaped(node)
        var location = Location(latitude: 0, longitude: 0)
        var seen = (latitude: false, longitude: false)
        var date: XMLAttributeRef?
        try forEachAttribute(of: node, "location") { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .latitude: location.latitude = try double(a, "latitude", node); seen.latitude = true
            case .longitude: location.longitude = try double(a, "longitude", node); seen.longitude = true
            case .horizontalAccuracy: location.horizontalAccuracy = try double(a, "horizontalAccuracy", node)
            case .verticalAccuracy: location.verticalAccuracy = try double(a, "verticalAccuracy", node)
            case .altitude: location.altitude = try double(a, "altitude", node)
            case .speed: location.speed = try double(a, "speed", node)
            case .course: location.course = try double(a, "course", node)
            case .timestamp: location.timestamp = try int64(a, "timestamp", node)
            case .date: date = a
            case .escaped: break
            default: return try header.take(name, a, escaped, node, self)
            }
            return true
        }
        guard seen.latitude && seen.longitude else {
            throw error(.unexpectedContent, "expected latitude=\"…\" and longitude=\"…\" on <location>, found \(seen.latitude ? "no longitude" : "no latitude")", node)
        }
        if let date {
            guard let t = location.timestamp else {
                throw error(.unexpectedContent, "expected timestamp=\"…\" beside date=\"…\" on <location>, found none", node, attribute: "date")
            }
            try checkDate(date, t, node)
        }
        if node.firstChild != nil {
            var present = ["latitude", "longitude"]
            if location.horizontalAccuracy != nil { present.append("horizontalAccuracy") }
            if location.verticalAccuracy != nil { present.append("verticalAccuracy") }
            if location.altitude != nil { present.append("altitude") }
            if location.speed != nil { present.append("speed") }
            if location.course != nil { present.append("course") }
            if location.timestamp != nil { present.append("timestamp") }
            try decodeUnknownChildren(node, "location", depth: depth + 1, into: &location.unknownKeys, reserved: present)
        }
        return location
    }
}
