// Encoding of records as CKWS record dictionaries, compact, keys in a canonical order:
// recordName, recordType, zoneID, recordChangeTag, created, modified, deleted, parent, share,
// shortGUID, fields, pluginFields, then unknown keys in their original order.

extension RecordJSON {
    /// Appends `record` as one compact JSON object (no newline).
    public static func encode(_ record: Record, into out: inout JSONOutput) {
        out.append("{\"recordName\":")
        out.appendString(record.recordName)
        if let type = record.recordType {
            out.append(",\"recordType\":")
            out.appendString(type)
        }
        if let zone = record.zoneID {
            out.append(",\"zoneID\":")
            encode(zone, into: &out)
        }
        if let tag = record.recordChangeTag {
            out.append(",\"recordChangeTag\":")
            out.appendString(tag)
        }
        if let created = record.created {
            out.append(",\"created\":")
            encode(created, into: &out)
        }
        if let modified = record.modified {
            out.append(",\"modified\":")
            encode(modified, into: &out)
        }
        if let deleted = record.deleted {
            out.append(deleted ? ",\"deleted\":true" : ",\"deleted\":false")
        }
        if let parent = record.parent {
            out.append(",\"parent\":")
            encode(parent, into: &out)
        }
        if let share = record.share {
            out.append(",\"share\":")
            encode(share, into: &out)
        }
        if let guid = record.shortGUID {
            out.append(",\"shortGUID\":")
            out.appendString(guid)
        }
        if let fields = record.fields {
            out.append(",\"fields\":{")
            // Read in place: iterating the array would copy each entry (retaining its strings).
            fields.entries.withUnsafeBufferPointer { entries in
                for index in entries.indices {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    out.appendString(entries[index].name)
                    out.append(UInt8(ascii: ":"))
                    encode(entries[index].field, into: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
        if let plugin = record.pluginFields {
            out.append(",\"pluginFields\":")
            out.appendValue(plugin)
        }
        appendMembers(record.unknownKeys, into: &out, leadingComma: true)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a field dictionary `{"value":…,"type":…}`.
    public static func encode(_ field: RecordField, into out: inout JSONOutput) {
        out.append("{\"value\":")
        encode(field.value, into: &out)
        if let type = field.type {
            out.append(",\"type\":")
            out.appendString(type.rawValue)
        }
        appendMembers(field.unknownKeys, into: &out, leadingComma: true)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a field value in its JSON encoding.
    public static func encode(_ value: FieldValue, into out: inout JSONOutput) {
        switch value {
        case .string(let s), .bytes(let s): out.appendString(s)
        case .int64(let v), .timestamp(let v): out.appendInteger(v)
        case .double(let d): out.appendDouble(d)
        case .reference(let r): encode(r, into: &out)
        case .asset(let a): encode(a, into: &out)
        case .location(let l): encode(l, into: &out)
        case .list(let items):
            out.append(UInt8(ascii: "["))
            items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    encode(items[index], into: &out)
                }
            }
            out.append(UInt8(ascii: "]"))
        case .json(let j): out.appendValue(j)
        }
    }

    /// Appends a zone ID object.
    public static func encode(_ zone: ZoneID, into out: inout JSONOutput) {
        out.append("{\"zoneName\":")
        out.appendString(zone.zoneName)
        if let owner = zone.ownerRecordName {
            out.append(",\"ownerRecordName\":")
            out.appendString(owner)
        }
        if let type = zone.zoneType {
            out.append(",\"zoneType\":")
            out.appendString(type)
        }
        appendMembers(zone.unknownKeys, into: &out, leadingComma: true)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a reference object.
    public static func encode(_ reference: Reference, into out: inout JSONOutput) {
        out.append("{\"recordName\":")
        out.appendString(reference.recordName)
        if let zone = reference.zoneID {
            out.append(",\"zoneID\":")
            encode(zone, into: &out)
        }
        if let action = reference.action {
            out.append(",\"action\":")
            out.appendString(action.rawValue)
        }
        appendMembers(reference.unknownKeys, into: &out, leadingComma: true)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a created/modified object.
    public static func encode(_ stamp: RecordStamp, into out: inout JSONOutput) {
        out.append(UInt8(ascii: "{"))
        var comma = false
        if let t = stamp.timestamp {
            out.append("\"timestamp\":")
            out.appendInteger(t)
            comma = true
        }
        if let u = stamp.userRecordName {
            out.append(comma ? ",\"userRecordName\":" : "\"userRecordName\":")
            out.appendString(u)
            comma = true
        }
        if let d = stamp.deviceID {
            out.append(comma ? ",\"deviceID\":" : "\"deviceID\":")
            out.appendString(d)
            comma = true
        }
        appendMembers(stamp.unknownKeys, into: &out, leadingComma: comma)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends an asset object.
    public static func encode(_ asset: Asset, into out: inout JSONOutput) {
        out.append(UInt8(ascii: "{"))
        var comma = false
        if let v = asset.fileChecksum { out.append("\"fileChecksum\":"); out.appendString(v); comma = true }
        if let v = asset.size { if comma { out.append(UInt8(ascii: ",")) }; out.append("\"size\":"); out.appendInteger(v); comma = true }
        if let v = asset.referenceChecksum { if comma { out.append(UInt8(ascii: ",")) }; out.append("\"referenceChecksum\":"); out.appendString(v); comma = true }
        if let v = asset.wrappingKey { if comma { out.append(UInt8(ascii: ",")) }; out.append("\"wrappingKey\":"); out.appendString(v); comma = true }
        if let v = asset.receipt { if comma { out.append(UInt8(ascii: ",")) }; out.append("\"receipt\":"); out.appendString(v); comma = true }
        if let v = asset.downloadURL { if comma { out.append(UInt8(ascii: ",")) }; out.append("\"downloadURL\":"); out.appendString(v); comma = true }
        appendMembers(asset.unknownKeys, into: &out, leadingComma: comma)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a location object.
    public static func encode(_ location: Location, into out: inout JSONOutput) {
        out.append("{\"latitude\":")
        out.appendDouble(location.latitude)
        out.append(",\"longitude\":")
        out.appendDouble(location.longitude)
        if let v = location.horizontalAccuracy { out.append(",\"horizontalAccuracy\":"); out.appendDouble(v) }
        if let v = location.verticalAccuracy { out.append(",\"verticalAccuracy\":"); out.appendDouble(v) }
        if let v = location.altitude { out.append(",\"altitude\":"); out.appendDouble(v) }
        if let v = location.speed { out.append(",\"speed\":"); out.appendDouble(v) }
        if let v = location.course { out.append(",\"course\":"); out.appendDouble(v) }
        if let v = location.timestamp { out.append(",\"timestamp\":"); out.appendInteger(v) }
        appendMembers(location.unknownKeys, into: &out, leadingComma: true)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends unknown members (most objects have none: only that test is inlined).
    @inline(__always)
    static func appendMembers(_ object: JSONObject, into out: inout JSONOutput, leadingComma: Bool) {
        if object.members.isEmpty { return }
        appendSomeMembers(object, into: &out, leadingComma: leadingComma)
    }

    @inline(never)
    static func appendSomeMembers(_ object: JSONObject, into out: inout JSONOutput, leadingComma: Bool) {
        var comma = leadingComma
        for member in object.members {
            if comma { out.append(UInt8(ascii: ",")) }
            comma = true
            out.appendString(member.key)
            out.append(UInt8(ascii: ":"))
            out.appendValue(member.value)
        }
    }

    /// The record as compact JSON text.
    public static func encodedString(_ record: Record) -> String {
        var out = JSONOutput(capacity: 1024)
        encode(record, into: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
