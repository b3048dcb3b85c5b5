import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns one JSON document — a Ferry change event or a CloudKit change response — into events.
///
/// The kind is detected from the keys (see `Docs/ChangeLogFormat.md`): `event` is Ferry's format;
/// `records` a `records/changes` page; `zones` a `changes/zone` response (entries with `records`)
/// or a zone listing — `changes/database` (`syncToken`) or legacy `zones/changes`
/// (`metaSyncToken`) — whose entries are zones, `deleted`/`purged` marking tombstones.
struct EventDecoder {
    var scanner = RecordScanner()

    /// A copy that may run on another thread than this decoder: it shares no storage with it.
    func forAnotherThread() -> EventDecoder {
        var copy = self
        copy.scanner.scratch.separate()
        copy.scanner.summaries.scratch.separate()
        return copy
    }
    /// Numbers the zones of saved records. Set before decoding; setting it forgets the numbers
    /// taken from the registry before.
    var zones = ZoneRegistry() {
        didSet {
            recentZones = []
            numbersByZoneIndex = []
        }
    }
    /// The zones numbered last (histories touch few zones).
    private var recentZones: [(zone: ZoneID, number: Int)] = []
    /// The number of the zone of each ``ZoneCache`` entry of ``scanner`` (`-1` not yet known).
    private var numbersByZoneIndex: [Int] = []
    /// Skip record bodies without validating them; emit only zone events and checkpoints.
    var tokensOnly = false
    /// The zone of pages and records that name none (before any page named one).
    var defaultZone: ZoneID?
    /// Deepest nesting accepted.
    var maximumDepth: Int {
        get { scanner.maximumDepth }
        set { scanner.maximumDepth = newValue }
    }
    /// The zone of the latest `records/changes` page, for later pages that name none.
    var lastPageZone: ZoneID?
    /// Whether a page of this decoder's set ``lastPageZone`` (rather than whoever set it before).
    private var pageZoneIsOwn = false
    /// Whether a page that names no zone took the zone of a page this decoder did not read
    /// (``lastPageZone`` as it was given): decoding in parallel, such input is decoded again
    /// once the earlier pages are known.
    private(set) var usedGivenPageZone = false

    /// What the members of a document said, as its walk found them.
    private struct Members {
        var event: JSONStringToken?
        var zoneID: ZoneID?
        var recordName: String?
        var recordType: String?
        var syncToken: String?
        var metaSyncToken: String?
        var moreComing = false
        var record: ScannedRecord?
        /// The zone cache index of the record's zone (see ``RecordScanner/lastZoneIndex``).
        var recordZoneIndex: Int?
        /// Whether `record` was skipped (tokens only).
        var hasRecord = false
        var records: JSONScanner?
        /// Where the events of a `zones` array read in place start, once it was read.
        var zonesMark: Int?
        /// Events of zone entries that mean something else in a zone listing, with what they mean there.
        var listingPatches: [(index: Int, event: RawEvent)] = []
        /// Events of zone entries that mean something only in a zone listing with a database token
        /// (`changes/database`): dropped from any other response (`zones/list`, `zones/lookup`,
        /// `zones/modify`, which are not changes).
        var listingOnly: [Int] = []
        /// The first keys that are neither an event's nor a response's (for the message when the
        /// document is neither).
        var otherKeys: [String] = []
        /// A failed request's `serverErrorCode` and `reason`, when strings.
        var serverError: (code: String?, reason: String?) = (nil, nil)
    }

    /// Starts a block of lines decoded on its own: `pageZone` is the zone of the page before it,
    /// when known.
    mutating func startBlock(pageZone: ZoneID?) {
        lastPageZone = pageZone
        pageZoneIsOwn = false
        usedGivenPageZone = false
    }

    /// Goes on with the next block of the same input on this decoder: the zone of the latest
    /// page stays.
    mutating func continueBlock() {
        usedGivenPageZone = false
    }

    /// The zone of the latest page of this block, if it had one.
    var ownPageZone: ZoneID? { pageZoneIsOwn ? lastPageZone : nil }

    /// Decodes one line: a document, or a JSON array of documents, appending their events to `out`.
    /// Error offsets are within `text`.
    mutating func decodeLine(_ text: UnsafeRawBufferPointer, into out: EventBuffer) throws(RecordFormatError) {
        var s = JSONScanner(text, maximumDepth: maximumDepth)
        s.skipWhitespace()
        guard s.current == UInt8(ascii: "[") else {
            try decode(text, into: out)
            return
        }
        try s.beginArray()
        var ranges: [Range<Int>] = []
        var first = true
        while try s.nextElement(&first) {
            s.skipWhitespace()
            let start = s.position
            try s.skipValueStructure()
            ranges.append(start..<s.position)
        }
        try s.expectEnd()
        for range in ranges {
            do throws(RecordFormatError) {
                try decode(UnsafeRawBufferPointer(rebasing: text[range]), into: out)
            } catch {
                var shifted = error
                shifted.byteOffset += range.lowerBound
                throw shifted
            }
        }
    }

    /// Decodes every whitespace-separated document of `text` — pretty-printed responses, or
    /// any documents at all — appending their events to `out`. Error offsets are within `text`.
    mutating func decodeDocuments(_ text: UnsafeRawBufferPointer, into out: EventBuffer) throws(RecordFormatError) {
        var scanner = JSONScanner(text, maximumDepth: maximumDepth)
        while true {
            scanner.skipWhitespace()
            if scanner.isAtEnd { return }
            let start = scanner.position
            if scanner.current == UInt8(ascii: "[") {
                try scanner.skipValueStructure()
                let end = scanner.position
                do throws(RecordFormatError) {
                    try decodeLine(UnsafeRawBufferPointer(rebasing: text[start..<end]), into: out)
                } catch {
                    var shifted = error
                    shifted.byteOffset += start
                    throw shifted
                }
            } else {
                scanner.position = try decodeObject(text, at: start, into: out)
            }
        }
    }

    /// Decodes the document `text` (one JSON object) and appends its events to `out`.
    mutating func decode(_ text: UnsafeRawBufferPointer, into out: EventBuffer) throws(RecordFormatError) {
        if tokensOnly && Self.isRecordEvent(text) { return }
        if !tokensOnly && decodeSavedRecordEvent(text, into: out) { return }
        let end = try decodeObject(text, at: 0, into: out)
        var s = JSONScanner(text, maximumDepth: maximumDepth)
        s.position = end
        try s.expectEnd()
    }

    /// Decodes the object at `start` of `text` and appends its events to `out`; returns where it
    /// ends.
    private mutating func decodeObject(_ text: UnsafeRawBufferPointer, at start: Int, into out: EventBuffer) throws(RecordFormatError) -> Int {
        var s = JSONScanner(text, maximumDepth: maximumDepth)
        s.position = start
        try s.beginObject("a change event or a CloudKit change response (an object)")
        var m = Members()
        let mark = scanner.scratch.mark
        defer { scanner.scratch.forget(from: mark) }
        // The members, walked as a response's (``ResponseWalker``): an event's are among them.
        var members = ResponseWalker.Members()
        while let (member, key) = try members.next(&s, recordingIn: &scanner.scratch, from: mark) {
            if s.current == UInt8(ascii: "n") {
                try s.skipValue(scratch: &scanner.scratch)
                continue
            }
            switch member {
            case .zoneID?: m.zoneID = try scanner.readZone(&s, in: text)
            case .recordName?: m.recordName = try s.readString(for: "recordName")
            case .recordType?: m.recordType = try s.readString(for: "recordType")
            case .syncToken?: m.syncToken = try s.readString(for: "syncToken")
            case .metaSyncToken?: m.metaSyncToken = try s.readString(for: "metaSyncToken")
            case .moreComing?: m.moreComing = try s.readBool(for: "moreComing")
            case .records?:
                guard s.current == UInt8(ascii: "[") else { throw s.unexpected("an array for \"records\"") }
                m.records = s
                try s.skipValueStructure() // validated when its entries are read below
            case .zones?:
                guard s.current == UInt8(ascii: "[") else { throw s.unexpected("an array for \"zones\"") }
                // Read in place, as a `changes/zone` response; a listing's meaning is settled
                // once its token is seen (below).
                m.zonesMark = out.count
                try emitZones(&s, text, into: out, listingPatches: &m.listingPatches, listingOnly: &m.listingOnly)
            case nil where s.equals(key, "event"):
                guard s.current == UInt8(ascii: "\"") else { throw s.unexpected("a string for \"event\"") }
                m.event = try s.readStringToken()
            case nil where s.equals(key, "record"):
                m.hasRecord = true
                if tokensOnly {
                    try s.skipValueStructure()
                } else {
                    m.record = try scanner.scan(&s, in: text, insertingZone: defaultZone)
                    m.recordZoneIndex = scanner.lastZoneIndex
                }
            default:
                if m.otherKeys.count < 6 { m.otherKeys.append(try s.string(key)) }
                if member == .serverErrorCode && s.current == UInt8(ascii: "\"") {
                    m.serverError.code = try s.readString(for: "serverErrorCode")
                } else if member == .reason && s.current == UInt8(ascii: "\"") {
                    m.serverError.reason = try s.readString(for: "reason")
                } else {
                    try s.skipValue(scratch: &scanner.scratch)
                }
            }
        }
        let end = s.position

        if let zonesMark = m.zonesMark, m.event != nil || m.records != nil {
            out.truncate(to: zonesMark) // an event or a page whose `zones` means nothing to replay
        }
        if let event = m.event {
            try emitFerryEvent(event, &m, s, into: out)
        } else if var records = m.records {
            try emitPage(&records, m, text, into: out)
        } else if m.zonesMark != nil {
            if let token = ResponseWalker.databaseToken(syncToken: m.syncToken, metaSyncToken: m.metaSyncToken) {
                // A zone listing (`changes/database`, `zones/changes`): its entries are zone changes.
                for patch in m.listingPatches { out.replace(at: patch.index, with: patch.event) }
                out.append(.checkpoint(.init(zoneID: nil, syncToken: token, moreComing: m.moreComing)))
            } else {
                out.remove(at: m.listingOnly)
            }
        } else if let code = m.serverError.code, m.recordName == nil {
            // A request that failed as a whole (`{"serverErrorCode", "reason", "uuid", …}`) was saved
            // in place of its response: the history misses that page.
            throw s.error(.serverError, "expected a change event or a CloudKit change response, found a failed request's "
                          + "error, server error \(code)" + (m.serverError.reason.map { ": \($0)" } ?? "")
                          + " (the page it stands for is missing from the history)", at: start)
        } else {
            let otherKeys = m.otherKeys
            let found = m.recordName != nil ? "a record dictionary"
                : otherKeys.isEmpty ? "an object without those keys" : "an object with keys " + otherKeys.map { "\"\($0)\"" }.joined(separator: ", ")
            throw s.error(.wrongType, "expected a change event (\"event\") or a CloudKit change response (\"records\" or \"zones\"), found \(found)", at: start)
        }
        return end
    }

    /// The number of a zone in ``zones``.
    private mutating func number(of zone: ZoneID) -> Int {
        for entry in recentZones where ExactName.same(entry.zone.zoneName, zone.zoneName)
            && (entry.zone.ownerRecordName == nil) == (zone.ownerRecordName == nil)
            && ExactName.same(entry.zone.ownerRecordName ?? "", zone.ownerRecordName ?? "") {
            return entry.number
        }
        let number = zones.number(of: zone)
        if recentZones.count >= 8 { recentZones.removeFirst() }
        recentZones.append((zone, number))
        return number
    }

    /// Whether a line starts as Ferry's writer starts record events: read without a look at the
    /// record when only tokens matter.
    /// A save as Ferry's writer writes it, `{"event":"recordSaved","record":{…}}`: the record read
    /// straight after the literal prefix, without the general walk of the event. `false`, with
    /// nothing appended, for anything else (and for a bad record: the general walk words the error).
    private mutating func decodeSavedRecordEvent(_ text: UnsafeRawBufferPointer, into out: EventBuffer) -> Bool {
        let prefix: StaticString = "{\"event\":\"recordSaved\",\"record\":"
        let n = prefix.utf8CodeUnitCount
        guard text.count > n, memcmp(text.baseAddress!, prefix.utf8Start, n) == 0 else { return false }
        var s = JSONScanner(text, maximumDepth: maximumDepth)
        s.position = n
        guard let record = try? scanner.scan(&s, in: text, insertingZone: defaultZone) else { return false }
        let zoneIndex = scanner.lastZoneIndex
        s.skipWhitespace()
        guard s.matchByte(UInt8(ascii: "}")), ({ s.skipWhitespace(); return s.isAtEnd })() else {
            // Not the whole line: the general walk reads it. A blob made in a block's arena goes
            // with the arena; one of its own is freed here.
            if case .saved(let blob, _) = record, scanner.arena == nil { blob.free() }
            return false
        }
        emit(record, zone: defaultZone ?? .default, zoneIndex: zoneIndex, into: out)
        return true
    }

    private static func isRecordEvent(_ text: UnsafeRawBufferPointer) -> Bool {
        let saved: StaticString = "{\"event\":\"recordSaved\","
        let deleted: StaticString = "{\"event\":\"recordDeleted\","
        for prefix in [saved, deleted] where text.count >= prefix.utf8CodeUnitCount
            && memcmp(text.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0 {
            return true
        }
        return false
    }

    private mutating func emitFerryEvent(_ token: JSONStringToken, _ m: inout Members, _ s: JSONScanner,
                                into out: EventBuffer) throws(RecordFormatError) {
        let event = try s.string(token)
        func require<T>(_ value: T?, _ key: String) throws(RecordFormatError) -> T {
            guard let value else { throw s.error(.missingKey, "expected key \"\(key)\" in a \(event) event, found none", at: 0) }
            return value
        }
        switch event {
        case "recordSaved":
            guard m.hasRecord else { throw s.error(.missingKey, "expected key \"record\" in a recordSaved event, found none", at: 0) }
            guard let record = m.record else { return } // tokens only
            m.record = nil
            emit(record, zone: defaultZone ?? .default, zoneIndex: m.recordZoneIndex, into: out)
        case "recordDeleted":
            let name = try require(m.recordName, "recordName")
            if !tokensOnly {
                out.append(.recordDeleted(recordName: name, zoneID: m.zoneID ?? defaultZone ?? .default, recordType: m.recordType))
            }
        case "checkpoint":
            out.append(.checkpoint(.init(zoneID: m.zoneID, syncToken: try require(m.syncToken, "syncToken"), moreComing: m.moreComing)))
        case "zoneSaved": out.append(.zoneSaved(try require(m.zoneID, "zoneID")))
        case "zoneDeleted": out.append(.zoneDeleted(try require(m.zoneID, "zoneID")))
        case "zonePurged": out.append(.zonePurged(try require(m.zoneID, "zoneID")))
        default:
            throw s.error(.wrongType, "expected an event of recordSaved, recordDeleted, checkpoint, zoneSaved, zoneDeleted or zonePurged, found \"\(event)\"", at: token.start - 1)
        }
    }

    /// Emits a scanned record: a save, a delete, or an error entry; `zone` for records naming none.
    /// `zoneIndex` is the scanner's ``RecordScanner/lastZoneIndex`` for the record, when known.
    private mutating func emit(_ record: ScannedRecord, zone: ZoneID, zoneIndex: Int? = nil, into out: EventBuffer) {
        switch record {
        case .saved(let blob, let zoneID):
            guard let zoneIndex, let zoneID else {
                out.append(.recordSaved(blob, zone: number(of: zoneID ?? zone)))
                return
            }
            while numbersByZoneIndex.count <= zoneIndex { numbersByZoneIndex.append(-1) }
            if numbersByZoneIndex[zoneIndex] < 0 { numbersByZoneIndex[zoneIndex] = number(of: zoneID) }
            out.append(.recordSaved(blob, zone: numbersByZoneIndex[zoneIndex]))
        case .deleted(let name, let zoneID, let type): out.append(.recordDeleted(recordName: name, zoneID: zoneID ?? zone, recordType: type))
        case .error(let name, let zoneID, let code, let reason):
            out.append(.serverError(zoneID: zoneID ?? zone, recordName: name, code: code, reason: reason))
        }
    }

    /// A `records/changes` page: its records, then a checkpoint for its zone.
    private mutating func emitPage(_ records: inout JSONScanner, _ m: Members, _ text: UnsafeRawBufferPointer,
                                   into out: EventBuffer) throws(RecordFormatError) {
        let zone = try emitRecords(&records, text, zone: m.zoneID, into: out)
        lastPageZone = zone
        pageZoneIsOwn = true
        if let token = m.syncToken {
            out.append(.checkpoint(.init(zoneID: zone ?? .default, syncToken: token, moreComing: m.moreComing)))
        }
    }

    /// Emits the saves and deletes of a `records` array; returns the zone they belong to: `zone`
    /// when given, else the first record's, else the previous page's, else the configured default.
    /// Records that name no zone get that zone.
    private mutating func emitRecords(_ s: inout JSONScanner, _ text: UnsafeRawBufferPointer, zone given: ZoneID?,
                                      into out: EventBuffer) throws(RecordFormatError) -> ZoneID? {
        var zone = given
        var entries = try ResponseWalker.RecordEntries(&s)
        while try entries.next(&s) {
            if tokensOnly {
                if zone == nil { zone = try scanZoneOnly(&s, text) } else { try s.skipValueStructure() }
                continue
            }
            if zone == nil && !pageZoneIsOwn { usedGivenPageZone = true }
            let fallback = zone ?? lastPageZone ?? defaultZone
            let record = try scanner.scan(&s, in: text, insertingZone: fallback)
            if zone == nil {
                switch record {
                case .saved(_, let zoneID), .deleted(_, let zoneID, _), .error(_, let zoneID, _, _): zone = zoneID
                }
            }
            emit(record, zone: fallback ?? .default, zoneIndex: scanner.lastZoneIndex, into: out)
        }
        if zone == nil && !pageZoneIsOwn { usedGivenPageZone = true }
        return zone ?? lastPageZone ?? defaultZone
    }

    /// The zone a record entry names, its other members only walked over (tokens only).
    private mutating func scanZoneOnly(_ s: inout JSONScanner, _ text: UnsafeRawBufferPointer) throws(RecordFormatError) -> ZoneID? {
        try s.beginObject("a record object")
        var zone: ZoneID?
        var members = ResponseWalker.Members()
        while let (member, _) = try members.next(&s) {
            if member == .zoneID && s.current == UInt8(ascii: "{") {
                zone = try scanner.readZone(&s, in: text)
            } else {
                try s.skipValueStructure()
            }
        }
        return zone
    }

    /// The entries of a `zones` array: zones with their record changes (`changes/zone`), or zone
    /// changes (a listing: `changes/database`, `zones/changes`, whose meaning the document's
    /// token settles), or a zone's error entry.
    private mutating func emitZones(_ s: inout JSONScanner, _ text: UnsafeRawBufferPointer, into out: EventBuffer,
                                    listingPatches: inout [(index: Int, event: RawEvent)],
                                    listingOnly: inout [Int]) throws(RecordFormatError) {
        var entries = try ResponseWalker.ZoneEntries(&s)
        while try entries.next(&s) != nil {
            let mark = scanner.scratch.mark
            defer { scanner.scratch.forget(from: mark) }
            var zoneID: ZoneID?
            var syncToken: String?
            var moreComing = false
            var hasMoreComing = false
            var records: JSONScanner?
            /// Where the events of records read in place start.
            var recordsMark: Int?
            var isDeleted = false
            var isPurged = false
            var errorCode: String?
            var reason: String?
            var members = ResponseWalker.Members()
            while let (member, _) = try members.next(&s, recordingIn: &scanner.scratch, from: mark) {
                if s.current == UInt8(ascii: "n") {
                    try s.skipValue(scratch: &scanner.scratch)
                    continue
                }
                switch member {
                case .zoneID?: zoneID = try scanner.readZone(&s, in: text)
                case .syncToken?: syncToken = try s.readString(for: "syncToken")
                case .moreComing?:
                    moreComing = try s.readBool(for: "moreComing")
                    hasMoreComing = true
                case .records?:
                    guard s.current == UInt8(ascii: "[") else { throw s.unexpected("an array for \"records\"") }
                    if let zoneID {
                        // The zone is known (CloudKit gives it first): the records are read in place.
                        recordsMark = out.count
                        _ = try emitRecords(&s, text, zone: zoneID, into: out)
                    } else {
                        records = s
                        try s.skipValueStructure()
                    }
                case .deleted?: isDeleted = try s.readBool(for: "deleted")
                case .purged?: isPurged = try s.readBool(for: "purged")
                case .serverErrorCode?: errorCode = try s.readString(for: "serverErrorCode")
                case .reason?: reason = try s.readString(for: "reason")
                default: try s.skipValue(scratch: &scanner.scratch)
                }
            }
            if let errorCode {
                if let recordsMark { out.truncate(to: recordsMark) }
                out.append(.serverError(zoneID: zoneID, recordName: nil, code: errorCode, reason: reason))
                continue
            }
            guard let zoneID else { throw s.error(.missingKey, "expected key \"zoneID\" in a zone entry, found none") }
            if recordsMark != nil || records != nil {
                if var records { _ = try emitRecords(&records, text, zone: zoneID, into: out) }
                if let syncToken { out.append(.checkpoint(.init(zoneID: zoneID, syncToken: syncToken, moreComing: moreComing))) }
                continue
            }
            // A zone change of a listing with a database token (`changes/database`). An entry with
            // a token and `moreComing` but no records is a `changes/zone` page that changed
            // nothing: a checkpoint, unless the response turns out to be a listing after all. Any
            // other entry (`zones/list`, `zones/lookup`, `zones/modify`: zones, not changes) means
            // nothing without a database token.
            let change: RawEvent = isPurged ? .zonePurged(zoneID) : isDeleted ? .zoneDeleted(zoneID) : .zoneSaved(zoneID)
            if let syncToken, hasMoreComing {
                listingPatches.append((out.count, change))
                out.append(.checkpoint(.init(zoneID: zoneID, syncToken: syncToken, moreComing: moreComing)))
            } else {
                listingOnly.append(out.count)
                out.append(change)
            }
        }
    }
}
