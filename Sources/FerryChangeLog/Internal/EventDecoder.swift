import FerryRecords

/// An event as replay sees it: saved records stay compact JSON with a summary beside them.
enum RawEvent {
    case zoneSaved(ZoneID)
    case zoneDeleted(ZoneID)
    case zonePurged(ZoneID)
    case recordSaved(RecordSummary)
    case recordDeleted(recordName: String, zoneID: ZoneID, recordType: String?)
    case checkpoint(ChangeEvent.Checkpoint)
    /// A `changes/zone` entry that is an error (`serverErrorCode`).
    case zoneError(zoneID: ZoneID?, code: String, reason: String?)
}

/// Turns one JSON document — a Ferry change event or a CloudKit change response — into events.
///
/// The kind is detected from the keys: `event` is Ferry's format; `records` is a `records/changes`
/// page; `zones` is `changes/zone` (entries with `records` or `syncToken`), `changes/database` or
/// legacy `zones/changes` (entries that are zone IDs, `deleted`/`purged` marking tombstones).
struct EventDecoder {
    var scanner = RecordScanner()
    /// Skip record bodies structurally; emit only zone events and checkpoints.
    var tokensOnly = false
    /// Collect references of saved records (cascade, ordering, dangling-reference checks).
    var collectReferences = true
    /// The zone of records that carry no `zoneID`, and of `records/changes` pages without records.
    var defaultZone: ZoneID?
    var maximumDepth = 512

    mutating func decode(_ text: UnsafeRawBufferPointer, into out: inout [RawEvent]) throws(RecordFormatError) {
        var c = JSONCursor(text, maximumDepth: maximumDepth)
        c.validates = !tokensOnly
        try c.beginObject("a change event or a CloudKit change response object")
        var event: String?
        var zoneID: ZoneID?
        var recordName: String?
        var recordType: String?
        var syncToken: String?
        var metaSyncToken: String?
        var moreComing = false
        var recordsAt = -1
        var zonesAt = -1
        var savedRecord: RecordSummary?
        var first = true
        var keys: [String] = []
        while try c.nextMember(&first) {
            let key = try c.readKey()
            c.skipWhitespace()
            if c.current == UInt8(ascii: "n") {
                try c.skipValue()
                continue
            }
            if c.equals(key, "event") {
                event = try c.readString("a string for \"event\"")
            } else if c.equals(key, "record") {
                if tokensOnly {
                    try c.skipValue()
                    savedRecord = RecordSummary(bytes: [], recordName: "", recordType: nil, zoneID: nil, changeTag: nil,
                                                modifiedTimestamp: nil, isDeleted: false, references: [])
                } else {
                    savedRecord = try scanner.scan(&c, collectReferences: collectReferences)
                }
            } else if c.equals(key, "zoneID") {
                zoneID = try scanner.readZone(&c)
            } else if c.equals(key, "recordName") {
                recordName = try c.readString("a string for \"recordName\"")
            } else if c.equals(key, "recordType") {
                recordType = try c.readString("a string for \"recordType\"")
            } else if c.equals(key, "syncToken") {
                syncToken = try c.readString("a string for \"syncToken\"")
            } else if c.equals(key, "metaSyncToken") {
                metaSyncToken = try c.readString("a string for \"metaSyncToken\"")
            } else if c.equals(key, "moreComing") {
                moreComing = try c.readBool()
            } else if c.equals(key, "records") {
                guard c.current == UInt8(ascii: "[") else { throw c.unexpected("an array for \"records\"") }
                recordsAt = c.position
                try c.skipValue()
            } else if c.equals(key, "zones") {
                guard c.current == UInt8(ascii: "[") else { throw c.unexpected("an array for \"zones\"") }
                zonesAt = c.position
                try c.skipValue()
            } else {
                if keys.count < 8 { keys.append(try c.string(key)) }
                try c.skipValue()
            }
        }
        try c.expectEnd()

        if let event {
            try emitFerryEvent(event, c: c, zoneID: zoneID, recordName: recordName, recordType: recordType,
                               syncToken: syncToken, moreComing: moreComing, record: savedRecord, into: &out)
            return
        }
        if recordsAt >= 0 {
            var sub = c
            sub.position = recordsAt
            sub.depth = 0
            let pageZone = try emitRecords(&sub, zone: zoneID ?? defaultZone, into: &out)
            if let syncToken {
                out.append(.checkpoint(.init(zoneID: pageZone ?? zoneID ?? defaultZone ?? .default, syncToken: syncToken, moreComing: moreComing)))
            }
            return
        }
        if zonesAt >= 0 {
            var sub = c
            sub.position = zonesAt
            sub.depth = 0
            try emitZones(&sub, into: &out)
            if let token = syncToken ?? metaSyncToken {
                out.append(.checkpoint(.init(zoneID: nil, syncToken: token, moreComing: moreComing)))
            }
            return
        }
        if let syncToken, recordName == nil {
            out.append(.checkpoint(.init(zoneID: zoneID ?? defaultZone ?? .default, syncToken: syncToken, moreComing: moreComing)))
            return
        }
        let found = recordName != nil ? "a record dictionary" : "an object with keys \(keys.map { "\"\($0)\"" }.joined(separator: ", "))"
        throw c.failure(.wrongType, "expected a change event (\"event\") or a CloudKit change response (\"records\", \"zones\"), found \(found)", at: 0)
    }

    private func emitFerryEvent(_ event: String, c: JSONCursor, zoneID: ZoneID?, recordName: String?, recordType: String?,
                                syncToken: String?, moreComing: Bool, record: RecordSummary?,
                                into out: inout [RawEvent]) throws(RecordFormatError) {
        func require<T>(_ value: T?, _ key: String) throws(RecordFormatError) -> T {
            guard let value else { throw c.failure(.missingKey, "expected key \"\(key)\" in a \(event) event, found none", at: 0) }
            return value
        }
        switch event {
        case "recordSaved":
            let summary = try require(record, "record")
            if tokensOnly { return }
            out.append(.recordSaved(summary))
        case "recordDeleted":
            let name = try require(recordName, "recordName")
            if tokensOnly { return }
            out.append(.recordDeleted(recordName: name, zoneID: zoneID ?? defaultZone ?? .default, recordType: recordType))
        case "checkpoint":
            out.append(.checkpoint(.init(zoneID: zoneID, syncToken: try require(syncToken, "syncToken"), moreComing: moreComing)))
        case "zoneSaved": out.append(.zoneSaved(try require(zoneID, "zoneID")))
        case "zoneDeleted": out.append(.zoneDeleted(try require(zoneID, "zoneID")))
        case "zonePurged": out.append(.zonePurged(try require(zoneID, "zoneID")))
        default:
            throw c.failure(.wrongType, "expected an event of recordSaved, recordDeleted, checkpoint, zoneSaved, zoneDeleted or zonePurged, found \"\(event)\"", at: 0)
        }
    }

    /// Emits the saves and deletes of a `records` array; returns the zone of its first record.
    private mutating func emitRecords(_ c: inout JSONCursor, zone: ZoneID?, into out: inout [RawEvent]) throws(RecordFormatError) -> ZoneID? {
        try c.beginArray()
        var pageZone: ZoneID? = nil
        var first = true
        while try c.nextElement(&first) {
            if tokensOnly {
                // Only the zone of the first record matters.
                if pageZone == nil { pageZone = try scanZoneOnly(&c) } else { try c.skipValue() }
                continue
            }
            var summary = try scanner.scan(&c, collectReferences: collectReferences)
            if summary.zoneID == nil, let zone {
                summary.zoneID = zone
                summary.bytes = Self.inserting(zone, into: summary.bytes)
            }
            if pageZone == nil { pageZone = summary.zoneID }
            if summary.isDeleted {
                out.append(.recordDeleted(recordName: summary.recordName, zoneID: summary.zoneID ?? .default, recordType: summary.recordType))
            } else {
                out.append(.recordSaved(summary))
            }
        }
        return pageZone
    }

    private mutating func scanZoneOnly(_ c: inout JSONCursor) throws(RecordFormatError) -> ZoneID? {
        try c.beginObject("a record object")
        var zone: ZoneID?
        var first = true
        while try c.nextMember(&first) {
            let key = try c.readKey()
            c.skipWhitespace()
            if c.equals(key, "zoneID") && c.current == UInt8(ascii: "{") { zone = try scanner.readZone(&c) } else { try c.skipValue() }
        }
        return zone
    }

    /// Emits the events of a `zones` array (any of the three zone-listing responses).
    private mutating func emitZones(_ c: inout JSONCursor, into out: inout [RawEvent]) throws(RecordFormatError) {
        try c.beginArray()
        var first = true
        while try c.nextElement(&first) {
            try c.beginObject("a zone entry object")
            var zoneID: ZoneID?
            var syncToken: String?
            var moreComing = false
            var recordsAt = -1
            var isDeleted = false
            var isPurged = false
            var errorCode: String?
            var reason: String?
            var firstMember = true
            while try c.nextMember(&firstMember) {
                let key = try c.readKey()
                c.skipWhitespace()
                if c.current == UInt8(ascii: "n") {
                    try c.skipValue()
                } else if c.equals(key, "zoneID") {
                    zoneID = try scanner.readZone(&c)
                } else if c.equals(key, "syncToken") {
                    syncToken = try c.readString("a string for \"syncToken\"")
                } else if c.equals(key, "moreComing") {
                    moreComing = try c.readBool()
                } else if c.equals(key, "records") {
                    guard c.current == UInt8(ascii: "[") else { throw c.unexpected("an array for \"records\"") }
                    recordsAt = c.position
                    try c.skipValue()
                } else if c.equals(key, "deleted") {
                    isDeleted = try c.readBool()
                } else if c.equals(key, "purged") {
                    isPurged = try c.readBool()
                } else if c.equals(key, "serverErrorCode") {
                    errorCode = try c.readString()
                } else if c.equals(key, "reason") {
                    reason = try c.readString()
                } else {
                    try c.skipValue()
                }
            }
            if let errorCode {
                out.append(.zoneError(zoneID: zoneID, code: errorCode, reason: reason))
                continue
            }
            guard let zoneID else { throw c.failure(.missingKey, "expected key \"zoneID\" in a zone entry, found none") }
            if recordsAt >= 0 || syncToken != nil {
                // changes/zone: the zone's records, then its token.
                if recordsAt >= 0 {
                    var sub = c
                    sub.position = recordsAt
                    sub.depth = 0
                    _ = try emitRecords(&sub, zone: zoneID, into: &out)
                }
                if let syncToken { out.append(.checkpoint(.init(zoneID: zoneID, syncToken: syncToken, moreComing: moreComing))) }
            } else if isPurged {
                out.append(.zonePurged(zoneID))
            } else if isDeleted {
                out.append(.zoneDeleted(zoneID))
            } else {
                out.append(.zoneSaved(zoneID))
            }
        }
    }

    /// The record JSON with `"zoneID":{…}` inserted as its first member.
    static func inserting(_ zone: ZoneID, into bytes: [UInt8]) -> [UInt8] {
        var out = JSONOutput(capacity: bytes.count + 128)
        out.append("{\"zoneID\":")
        RecordJSON.encode(zone, into: &out)
        let rest = bytes.dropFirst()
        if rest.first != UInt8(ascii: "}") { out.append(UInt8(ascii: ",")) }
        rest.withUnsafeBytes { out.append($0) }
        return out.array
    }
}
