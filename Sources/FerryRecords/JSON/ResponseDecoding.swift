// Decoding of the arrays of CKWS responses — `records` and `zones` — where they stand in the
// document, so a response is read in one pass (``ResponseWalker`` walks them).

extension JSONScanner {
    /// Decodes a `records` array (at `position`): every entry a record, a per-record error, or,
    /// when it is well-formed JSON but not a record, an invalid entry that says why. Malformed
    /// JSON fails the whole array.
    mutating func decodeRecordEntries() throws(RecordFormatError) -> [RecordsResponse.Entry] {
        var entries: [RecordsResponse.Entry] = []
        // Room for a query page (100 records) at once, where growing would move every entry
        // several times.
        entries.reserveCapacity(128)
        var walk = try ResponseWalker.RecordEntries(&self)
        let arrayDepth = depth
        while try walk.next(&self) {
            let entryStart = position
            let content: RecordsResponse.Entry.Content
            do throws(RecordFormatError) {
                switch try decodeDocument() {
                case .record(let record): content = .record(record)
                case .recordError(let serverError): content = .error(serverError)
                case .response, .zones:
                    throw error(.wrongType, "expected a record in \"records\", found a nested response", at: entryStart)
                }
            } catch let failure {
                // Keep going past a bad entry if it is at least well-formed JSON.
                position = entryStart
                depth = arrayDepth
                try skipValue()
                content = .invalid(failure)
            }
            entries.append(.init(content: content, byteRange: entryStart..<position))
        }
        return entries
    }

    /// Decodes a `zones` array (at `position`): zone entries with their tokens, flags, errors
    /// and, in `changes/zone` responses, their records.
    mutating func decodeZoneEntries() throws(RecordFormatError) -> [ZonesResponse.Entry] {
        var reader = ZoneEntriesDecoder()
        _ = try ResponseWalker.walkZoneEntries(&self, &reader)
        return reader.entries
    }

    /// Reads `true` or `false` for `key`, saying what was found otherwise.
    package mutating func readBool(for key: StaticString) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        guard current == UInt8(ascii: "t") || current == UInt8(ascii: "f") else {
            throw error(.wrongType, "expected true or false for \"\(key)\", found \(describeCurrent())")
        }
        return try readBool()
    }

    /// A zone ID as a JSON value (for error entries, which keep their members as sent).
    static func json(of zone: ZoneID) -> JSONValue {
        var object = JSONObject()
        object.append(key: "zoneName", value: .string(zone.zoneName))
        if let owner = zone.ownerRecordName { object.append(key: "ownerRecordName", value: .string(owner)) }
        if let type = zone.zoneType { object.append(key: "zoneType", value: .string(type)) }
        object.members.append(contentsOf: zone.unknownKeys.members)
        return .object(object)
    }
}

/// Decodes the entries of a `zones` array as they are walked.
private struct ZoneEntriesDecoder: ZoneEntryVisitor {
    var entries: [ZonesResponse.Entry] = []
    /// The entry being read.
    private var entry = Self.empty(at: 0)
    /// The zone entry members seen in it (a second one is a duplicate).
    private var seen: UInt32 = 0

    private static func empty(at start: Int) -> ZonesResponse.Entry {
        ZonesResponse.Entry(zoneID: nil, syncToken: nil, moreComing: nil, records: nil, isDeleted: false, isPurged: false,
                            serverError: nil, unknownKeys: JSONObject(), byteRange: start..<start)
    }

    mutating func beginZoneEntry(at start: Int) {
        entry = Self.empty(at: start)
        seen = 0
    }

    mutating func visitZoneEntryMember(_ member: CloudKitKey?, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        // Members the model holds; others (`serverErrorCode`, `reason`, `atomic`, …) are kept as sent.
        let held: CloudKitKey? = switch member {
        case .zoneID?, .syncToken?, .moreComing?, .records?, .deleted?, .purged?: member
        default: nil
        }
        if let held {
            if seen & held.bit != 0 { throw s.duplicate(key) }
            seen |= held.bit
        }
        guard let held, !s.nextIsNull() else {
            try s.readUnknown(key, into: &entry.unknownKeys)
            return true
        }
        switch held {
        case .zoneID:
            guard s.current == UInt8(ascii: "{") else {
                throw s.error(.wrongType, "expected a zone ID object for \"zoneID\", found \(s.describeCurrent())")
            }
            entry.zoneID = try s.decodeZoneID()
        case .syncToken: entry.syncToken = try s.readString(for: "syncToken")
        case .moreComing: entry.moreComing = try s.readBool(for: "moreComing")
        case .records:
            guard s.current == UInt8(ascii: "[") else {
                throw s.error(.wrongType, "expected an array for \"records\", found \(s.describeCurrent())")
            }
            entry.records = try s.decodeRecordEntries()
        case .deleted: entry.isDeleted = try s.readBool(for: "deleted")
        default: entry.isPurged = try s.readBool(for: "purged")
        }
        return true
    }

    mutating func endZoneEntry(_ range: Range<Int>, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        entry.byteRange = range
        if let code = entry.unknownKeys["serverErrorCode"]?.stringValue {
            var whole = JSONObject()
            if let zoneID = entry.zoneID { whole.append(key: "zoneID", value: JSONScanner.json(of: zoneID)) }
            whole.members.append(contentsOf: entry.unknownKeys.members)
            entry.serverError = RecordServerError(recordName: nil, reason: entry.unknownKeys["reason"]?.stringValue,
                                                  serverErrorCode: code, entry: whole)
        }
        entries.append(entry)
        return true
    }
}
