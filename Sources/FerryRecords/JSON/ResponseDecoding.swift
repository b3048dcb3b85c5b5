// Decoding of the arrays of CKWS responses — `records` and `zones` — where they stand in the
// document, so a response is read in one pass.

extension JSONScanner {
    /// Decodes a `records` array (at `position`): every entry a record, a per-record error, or,
    /// when it is well-formed JSON but not a record, an invalid entry that says why. Malformed
    /// JSON fails the whole array.
    mutating func decodeRecordEntries() throws(RecordFormatError) -> [RecordsResponse.Entry] {
        try beginArray()
        let arrayDepth = depth
        var entries: [RecordsResponse.Entry] = []
        // Room for a query page (100 records) at once, where growing would move every entry
        // several times.
        entries.reserveCapacity(128)
        var first = true
        while try nextElement(&first) {
            skipWhitespace()
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
        try beginArray()
        var entries: [ZonesResponse.Entry] = []
        var first = true
        while try nextElement(&first) {
            skipWhitespace()
            let start = position
            try beginObject("a zone entry (an object)")
            var entry = ZonesResponse.Entry(zoneID: nil, syncToken: nil, moreComing: nil, records: nil, isDeleted: false,
                                            isPurged: false, serverError: nil, unknownKeys: JSONObject(), byteRange: start..<start)
            var seen: UInt8 = 0
            var firstMember = true
            while try nextMember(&firstMember) {
                let key = try readKey()
                let bit = Self.zoneEntryBit(of: key)
                if bit != 0 {
                    if seen & bit != 0 { throw duplicate(key) }
                    seen |= bit
                }
                if bit == 0 || nextIsNull() {
                    try readUnknown(key, into: &entry.unknownKeys)
                    continue
                }
                switch bit {
                case 1:
                    guard current == UInt8(ascii: "{") else { throw error(.wrongType, "expected a zone ID object for \"zoneID\", found \(describeCurrent())") }
                    entry.zoneID = try decodeZoneID()
                case 2: entry.syncToken = try readString(for: "syncToken")
                case 4: entry.moreComing = try readBool(for: "moreComing")
                case 8:
                    guard current == UInt8(ascii: "[") else { throw error(.wrongType, "expected an array for \"records\", found \(describeCurrent())") }
                    entry.records = try decodeRecordEntries()
                case 16: entry.isDeleted = try readBool(for: "deleted")
                default: entry.isPurged = try readBool(for: "purged")
                }
            }
            entry.byteRange = start..<position
            if let code = entry.unknownKeys["serverErrorCode"]?.stringValue {
                var whole = JSONObject()
                if let zoneID = entry.zoneID { whole.append(key: "zoneID", value: Self.json(of: zoneID)) }
                whole.members.append(contentsOf: entry.unknownKeys.members)
                entry.serverError = RecordServerError(recordName: nil, reason: entry.unknownKeys["reason"]?.stringValue,
                                                      serverErrorCode: code, entry: whole)
            }
            entries.append(entry)
        }
        return entries
    }

    /// The known keys of a `zones` entry as bits (for duplicate detection): `zoneID` 1,
    /// `syncToken` 2, `moreComing` 4, `records` 8, `deleted` 16, `purged` 32; 0 for another key.
    @inline(__always)
    static func zoneEntryBit(of key: JSONKey) -> UInt8 {
        key.equals("zoneID") ? 1 : key.equals("syncToken") ? 2 : key.equals("moreComing") ? 4
            : key.equals("records") ? 8 : key.equals("deleted") ? 16 : key.equals("purged") ? 32 : 0
    }

    /// Reads `true` or `false` for `key`, saying what was found otherwise.
    mutating func readBool(for key: StaticString) throws(RecordFormatError) -> Bool {
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
