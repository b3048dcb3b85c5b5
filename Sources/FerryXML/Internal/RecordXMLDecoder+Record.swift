import FerryRecords

// Records and their system structures.

extension RecordXMLDecoder {
    /// Decodes a `<record>` element (depth 1).
    func decodeRecord(_ node: XMLNodeRef) throws(XMLDecodeError) -> Record {
        let escaped = try isEscaped(node)
        var record = Record(recordName: "")
        var hasName = false
        try forEachAttribute(of: node, "record") { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .recordName: record.recordName = try string(a, "recordName", escaped, node); hasName = true
            case .recordType: record.recordType = try string(a, "recordType", escaped, node)
            case .recordChangeTag: record.recordChangeTag = try string(a, "recordChangeTag", escaped, node)
            case .shortGUID: record.shortGUID = try string(a, "shortGUID", escaped, node)
            case .deleted: record.deleted = try boolean(a, "deleted", node)
            case .escaped: break
            default: return false
            }
            return true
        }
        guard hasName else { throw error(.unexpectedContent, "expected recordName=\"…\" on <record>, found none", node) }
        var seen: UInt32 = 0
        let expected = "<zoneID>, <created>, <modified>, <parent>, <share>, <fields>, <pluginFields> or <unknown>"
        var none = FieldHeader(mode: .item)
        try forEachChild(of: node, depth: 2, in: "record", expected: expected) { (decoder, c, name) throws(XMLDecodeError) in
            let bit: UInt32 = 1 << UInt32(name.rawValue)
            if name != .unknown && seen & bit != 0 {
                throw decoder.error(.unexpectedContent, "expected at most one <\(name.text)> in <record>, found another", c)
            }
            seen |= bit
            switch name {
            case .zoneID: record.zoneID = try decoder.decodeZone(c, depth: 2)
            case .created: record.created = try decoder.decodeStamp(c, "created")
            case .modified: record.modified = try decoder.decodeStamp(c, "modified")
            case .parent: record.parent = try decoder.decodeReference(c, "parent", depth: 2, header: &none)
            case .share: record.share = try decoder.decodeReference(c, "share", depth: 2, header: &none)
            case .fields: record.fields = try decoder.decodeFields(c)
            case .pluginFields:
                try decoder.checkOnlyEscaped(c, "pluginFields")
                record.pluginFields = try decoder.json(try decoder.text(of: c, try decoder.isEscaped(c)), c)
            case .unknown:
                try decoder.addUnknown(c, to: &record.unknownKeys, reserved: Self.presentKeys(of: record))
            default:
                throw decoder.error(.unexpectedContent, "expected \(expected) in <record>, found <\(name.text)>", c)
            }
        }
        return record
    }

    /// The record dictionary keys the record already has (an `<unknown>` may not repeat them).
    static func presentKeys(of record: Record) -> [String] {
        var present = ["recordName"]
        if record.recordType != nil { present.append("recordType") }
        if record.zoneID != nil { present.append("zoneID") }
        if record.recordChangeTag != nil { present.append("recordChangeTag") }
        if record.created != nil { present.append("created") }
        if record.modified != nil { present.append("modified") }
        if record.deleted != nil { present.append("deleted") }
        if record.parent != nil { present.append("parent") }
        if record.share != nil { present.append("share") }
        if record.shortGUID != nil { present.append("shortGUID") }
        if record.fields != nil { present.append("fields") }
        if record.pluginFields != nil { present.append("pluginFields") }
        return present
    }

    /// Checks that an element has no attribute but `escaped`.
    func checkOnlyEscaped(_ node: XMLNodeRef, _ element: StaticString) throws(XMLDecodeError) {
        try forEachAttribute(of: node, element) { (name, _) throws(XMLDecodeError) -> Bool in name == .escaped }
    }

    /// `<zoneID zoneName ownerRecordName zoneType>` with `<unknown>` children.
    func decodeZone(_ node: XMLNodeRef, depth: Int) throws(XMLDecodeError) -> ZoneID {
        let escaped = try isEscaped(node)
        var zone = ZoneID()
        var hasName = false
        try forEachAttribute(of: node, "zoneID") { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .zoneName: zone.zoneName = try string(a, "zoneName", escaped, node); hasName = true
            case .ownerRecordName: zone.ownerRecordName = try string(a, "ownerRecordName", escaped, node)
            case .zoneType: zone.zoneType = try string(a, "zoneType", escaped, node)
            case .escaped: break
            default: return false
            }
            return true
        }
        guard hasName else { throw error(.unexpectedContent, "expected zoneName=\"…\" on <zoneID>, found none", node) }
        if node.firstChild != nil {
            var present = ["zoneName"]
            if zone.ownerRecordName != nil { present.append("ownerRecordName") }
            if zone.zoneType != nil { present.append("zoneType") }
            try decodeUnknownChildren(node, "zoneID", depth: depth + 1, into: &zone.unknownKeys, reserved: present)
        }
        return zone
    }

    /// `<created|modified timestamp date userRecordName deviceID>`.
    func decodeStamp(_ node: XMLNodeRef, _ element: StaticString) throws(XMLDecodeError) -> RecordStamp {
        let escaped = try isEscaped(node)
        var stamp = RecordStamp()
        var date: XMLAttributeRef?
        try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .timestamp: stamp.timestamp = try int64(a, "timestamp", node)
            case .userRecordName: stamp.userRecordName = try string(a, "userRecordName", escaped, node)
            case .deviceID: stamp.deviceID = try string(a, "deviceID", escaped, node)
            case .date: date = a
            case .escaped: break
            default: return false
            }
            return true
        }
        if let date {
            guard let t = stamp.timestamp else {
                throw error(.unexpectedContent, "expected timestamp=\"…\" beside date=\"…\" on <\(element)> (the timestamp is the value), found none", node, attribute: "date")
            }
            try checkDate(date, t, node)
        }
        if node.firstChild != nil {
            var present: [String] = []
            if stamp.timestamp != nil { present.append("timestamp") }
            if stamp.userRecordName != nil { present.append("userRecordName") }
            if stamp.deviceID != nil { present.append("deviceID") }
            try decodeUnknownChildren(node, element, depth: 3, into: &stamp.unknownKeys, reserved: present)
        }
        return stamp
    }

    /// `<reference|parent|share recordName action>` with optional `<zoneID>` and `<unknown>`
    /// children; for a field, also its `name`, `type` and `untyped` (into `field`).
    func decodeReference(_ node: XMLNodeRef, _ element: StaticString, depth: Int,
                                  header: inout FieldHeader) throws(XMLDecodeError) -> Reference {
        let escaped = try isEscaped(node)
        var reference = Reference(recordName: "")
        var hasName = false
        try forEachAttribute(of: node, element) { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .recordName: reference.recordName = try string(a, "recordName", escaped, node); hasName = true
            case .action: reference.action = Reference.Action(rawValue: try string(a, "action", escaped, node))
            case .escaped: break
            default: return try header.take(name, a, escaped, node, self)
            }
            return true
        }
        guard hasName else { throw error(.unexpectedContent, "expected recordName=\"…\" on <\(element)>, found none", node) }
        guard node.firstChild != nil else { return reference }
        try forEachChild(of: node, depth: depth + 1, in: element, expected: "<zoneID> or <unknown>") { (decoder, c, name) throws(XMLDecodeError) in
            switch name {
            case .zoneID where reference.zoneID == nil && reference.unknownKeys.isEmpty:
                reference.zoneID = try decoder.decodeZone(c, depth: depth + 1)
            case .unknown:
                var present = ["recordName"]
                if reference.zoneID != nil { present.append("zoneID") }
                if reference.action != nil { present.append("action") }
                try decoder.addUnknown(c, to: &reference.unknownKeys, reserved: present)
            default:
                throw decoder.error(.unexpectedContent, "expected an optional <zoneID>, then any <unknown>, in <\(element)>, found <\(Self.describe(c.name))>", c)
            }
        }
        return reference
    }

    /// Children that may only be `<unknown>` members.
    func decodeUnknownChildren(_ node: XMLNodeRef, _ element: StaticString, depth: Int, into object: inout JSONObject,
                                        reserved: [String]) throws(XMLDecodeError) {
        try forEachChild(of: node, depth: depth, in: element, expected: "<unknown>") { (decoder, c, name) throws(XMLDecodeError) in
            guard name == .unknown else {
                throw decoder.error(.unexpectedContent, "expected only <unknown> in <\(element)>, found <\(name.text)>", c)
            }
            try decoder.addUnknown(c, to: &object, reserved: reserved)
        }
    }
}
