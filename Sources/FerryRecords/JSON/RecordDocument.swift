/// What one JSON document (an NDJSON line, or a saved API response) holds.
public enum RecordDocument: Sendable {
    /// A record dictionary.
    case record(Record)
    /// A per-record error entry (`serverErrorCode`).
    case recordError(RecordServerError)
    /// A CKWS response with a `records` array: `records/query`, `records/lookup`,
    /// `records/modify`, `records/changes`.
    case response(RecordsResponse)
    /// A CKWS response with a `zones` array: `changes/zone` (records inside its zones),
    /// `zones/list`, `zones/lookup`, `zones/modify`, `changes/database`, legacy `zones/changes`.
    case zones(ZonesResponse)
}

/// Which parts of a record to decode when only some are needed (filtering before a full decode).
///
/// Skipped parts are checked for JSON structure only (brackets, string ends, literals), not decoded.
public struct FieldSelection: Sendable, Equatable {
    /// The field names to decode; other fields are skipped.
    public var fields: Set<String>
    /// Whether to decode `created` and `modified`.
    public var includesStamps: Bool

    /// The field names as UTF-8, for matching keys in place.
    package let utf8Fields: [[UInt8]]

    public init(fields: Set<String>, includesStamps: Bool) {
        self.fields = fields
        self.includesStamps = includesStamps
        utf8Fields = fields.map { Array($0.utf8) }
    }
}

/// The JSON mapping of records: decoding from bytes and encoding to bytes.
public enum RecordJSON {
    /// Decoding limits.
    public struct Configuration: Sendable {
        /// Deepest nesting of arrays and objects accepted (a guard against stack exhaustion).
        public var maximumDepth: Int = 512
        public init(maximumDepth: Int = 512) { self.maximumDepth = maximumDepth }
    }

    /// Decodes one record dictionary.
    public static func decodeRecord(_ bytes: UnsafeRawBufferPointer,
                                    configuration: Configuration = .init()) throws(RecordFormatError) -> Record {
        var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
        let start = scanner.position
        switch try scanner.decodeDocument() {
        case .record(let record):
            try scanner.expectEnd()
            return record
        case .recordError(let error):
            throw RecordFormatError(.serverError, error.description, byteOffset: start)
        case .response, .zones:
            throw RecordFormatError(.wrongType, "expected a record dictionary, found a response document", byteOffset: start)
        }
    }

    /// Decodes only the selected parts of a record dictionary (and every other system key).
    /// The result is for deciding whether a record is wanted; decode it fully to keep it.
    public static func decodeRecord(_ bytes: UnsafeRawBufferPointer, selecting selection: FieldSelection,
                                    configuration: Configuration = .init()) throws(RecordFormatError) -> Record {
        try withUnsafePointer(to: selection) { (pointer) throws(RecordFormatError) -> Record in
            var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
            scanner.selectionPointer = pointer
            let start = scanner.position
            switch try scanner.decodeDocument() {
            case .record(let record):
                try scanner.expectEnd()
                return record
            case .recordError(let error):
                throw RecordFormatError(.serverError, error.description, byteOffset: start)
            case .response, .zones:
                throw RecordFormatError(.wrongType, "expected a record dictionary, found a response document", byteOffset: start)
            }
        }
    }

    /// Decodes one record dictionary into `record`, replacing all of it, without building a new
    /// record: for readers that decode line after line into one value. Returns `false` when
    /// `bytes` hold anything else (a response, an error entry, an array) or are invalid; the
    /// caller then decodes them with ``decodeDocument(_:configuration:)``, which says what they
    /// are or what is wrong, and `record` holds a mix of parts.
    package static func decodeRecord(_ bytes: UnsafeRawBufferPointer, into record: inout Record,
                                     configuration: Configuration) -> Bool {
        var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
        do {
            guard try scanner.decodeRecord(into: &record) else { return false }
            try scanner.expectEnd()
            return true
        } catch {
            return false
        }
    }

    /// Decodes a record dictionary's system keys into `record` — its fields skipped, their
    /// structure and strings checked — replacing all of it: for stores that take the system
    /// columns of lines the encoder or the transcoder wrote and keep the bytes as they are.
    /// Returns `false` as ``decodeRecord(_:into:configuration:)`` does, and for bytes with
    /// whitespace between tokens (not compact, so not kept as they are).
    package static func decodeSystemKeys(_ bytes: UnsafeRawBufferPointer, into record: inout Record,
                                         configuration: Configuration = .init()) -> Bool {
        withUnsafePointer(to: systemKeysOnly) { pointer in
            var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
            scanner.selectionPointer = pointer
            scanner.checksSkippedStrings = true
            do {
                guard try scanner.decodeRecord(into: &record) else { return false }
                try scanner.expectEnd()
                return !scanner.sawWhitespace
            } catch {
                return false
            }
        }
    }

    /// The `recordType` of a record dictionary's JSON, read without decoding the rest (skipped
    /// values are only walked over); `nil` when it has none or is not a record dictionary.
    package static func recordType(in bytes: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(bytes)
        do {
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(&first) {
                if try scanner.readKey().equals("recordType") {
                    scanner.skipWhitespace()
                    return scanner.readNullIfPresent() ? nil : try scanner.readString()
                }
                try scanner.skipValueStructure()
            }
        } catch {}
        return nil
    }

    /// No fields, both stamps.
    private static let systemKeysOnly = FieldSelection(fields: [], includesStamps: true)

    /// Decodes one record dictionary from UTF-8 text.
    public static func decodeRecord(_ text: String, configuration: Configuration = .init()) throws(RecordFormatError) -> Record {
        let bytes = Array(text.utf8)
        var result: Result<Record, RecordFormatError> = .failure(RecordFormatError(.truncated, "", byteOffset: 0))
        bytes.withUnsafeBytes { buffer in
            result = Result { () throws(RecordFormatError) -> Record in try decodeRecord(buffer, configuration: configuration) }
        }
        return try result.get()
    }

    /// Decodes a document: a record, a per-record error entry, or a response with records.
    public static func decodeDocument(_ bytes: UnsafeRawBufferPointer,
                                      configuration: Configuration = .init()) throws(RecordFormatError) -> RecordDocument {
        var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
        let document = try scanner.decodeDocument()
        try scanner.expectEnd()
        return document
    }

    /// Decodes the document (an object) that starts at `offset` of `text`, which may go on with
    /// more documents: returns it and the offset just after it. Byte ranges and error offsets are
    /// offsets in `text`.
    package static func decodeDocument(in text: UnsafeRawBufferPointer, at offset: Int,
                                       configuration: Configuration = .init()) throws(RecordFormatError) -> (RecordDocument, end: Int) {
        var scanner = JSONScanner(text, maximumDepth: configuration.maximumDepth)
        scanner.position = offset
        let document = try scanner.decodeDocument()
        return (document, scanner.position)
    }

    /// Whether `line` opens a JSON object or array that it does not close: the first line of a
    /// pretty-printed document. Checks structure only.
    package static func opensIncompleteValue(_ line: UnsafeRawBufferPointer, configuration: Configuration = .init()) -> Bool {
        var scanner = JSONScanner(line, maximumDepth: configuration.maximumDepth)
        scanner.skipWhitespace()
        guard scanner.current == UInt8(ascii: "{") || scanner.current == UInt8(ascii: "[") else { return false }
        do throws(RecordFormatError) {
            try scanner.skipValueStructure()
            return false
        } catch {
            // A line that stops inside a string is a line cut short, not the start of a document:
            // a JSON string cannot go on past a line break.
            return error.code == .truncated && !endsInsideString(line)
        }
    }

    /// Whether `line` ends inside a string: it has an odd number of quotes not escaped.
    static func endsInsideString(_ line: UnsafeRawBufferPointer) -> Bool {
        var inside = false, escaped = false
        for byte in line {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = inside
            } else if byte == UInt8(ascii: "\"") {
                inside.toggle()
            }
        }
        return inside
    }

    /// Checks that `bytes` hold exactly one well-formed JSON value — structure, strings (escapes,
    /// surrogate pairs, UTF-8), numbers, literals, nesting depth — without decoding it. Duplicate
    /// keys and the record rules are not checked (that takes a decode).
    public static func validate(_ bytes: UnsafeRawBufferPointer,
                                configuration: Configuration = .init()) throws(RecordFormatError) {
        var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
        scanner.checksSkippedStrings = true
        try scanner.skipValueStructure()
        try scanner.expectEnd()
    }

    /// Parses any JSON text into a ``JSONValue``.
    public static func parseValue(_ bytes: UnsafeRawBufferPointer,
                                  configuration: Configuration = .init()) throws(RecordFormatError) -> JSONValue {
        var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
        let value = try scanner.readValue()
        try scanner.expectEnd()
        return value
    }
}

extension JSONValue {
    /// Parses JSON text (strict RFC 8259; numbers kept exactly; duplicate keys rejected).
    public init(parsing text: String, configuration: RecordJSON.Configuration = .init()) throws(RecordFormatError) {
        let bytes = Array(text.utf8)
        var result: Result<JSONValue, RecordFormatError> = .success(.null)
        bytes.withUnsafeBytes { buffer in
            result = Result { () throws(RecordFormatError) -> JSONValue in
                try RecordJSON.parseValue(buffer, configuration: configuration)
            }
        }
        self = try result.get()
    }
}

extension JSONScanner {
    /// Decodes the object at `position` as a record, an error entry or a response, in one pass:
    /// a response's entries are decoded where they stand (``ResponseWalker`` walks it).
    mutating func decodeDocument() throws(RecordFormatError) -> RecordDocument {
        skipWhitespace()
        let objectStart = position
        try beginObject("a record object")
        var record = Record(recordName: "")
        var members = RecordMembers()
        members.decodesResponses = true
        try decodeMembers(into: &record, &members)
        let hasName = members.hasName

        // A response: has a `records` (or else a `zones`) array and is not itself a record.
        // Entries are taken out of `members`, so the response holds the only reference to them
        // (its readers move them out in place).
        if !hasName, let entries = members.recordEntries.take() {
            try restoreAsJSON(&members, records: false, zones: true)
            var response = RecordsResponse(entries: entries, continuationMarker: nil, syncToken: nil, moreComing: nil,
                                           unknownKeys: JSONObject())
            for member in members.unknown {
                switch CloudKitKey.named(member.key) {
                case .continuationMarker? where member.value.stringValue != nil: response.continuationMarker = member.value.stringValue
                case .syncToken? where member.value.stringValue != nil: response.syncToken = member.value.stringValue
                case .moreComing?:
                    if case .bool(let b) = member.value { response.moreComing = b } else { response.unknownKeys.members.append(member) }
                default: response.unknownKeys.members.append(member)
                }
            }
            // A `records/changes` page of one zone names it beside its records; records that name no
            // zone of their own are in it, as those of a `changes/zone` entry are in the entry's.
            if members.seen == CloudKitKey.zoneID.bit, let zoneID = record.zoneID {
                response.zoneID = zoneID
                for index in response.entries.indices {
                    if case .record(var entry) = response.entries[index].content, entry.zoneID == nil {
                        entry.placeInZone(zoneID)
                        response.entries[index].content = .record(entry)
                    }
                }
            } else if members.seen != 0 {
                throw error(.wrongType, "expected either a record or a response with \"records\", found an object with both record keys and \"records\"", at: objectStart)
            }
            return .response(response)
        }
        if !hasName, let entries = members.zoneEntries.take() {
            var response = ZonesResponse(entries: entries, syncToken: nil, metaSyncToken: nil, moreComing: nil, unknownKeys: JSONObject())
            for member in members.unknown {
                switch CloudKitKey.named(member.key) {
                case .syncToken? where member.value.stringValue != nil: response.syncToken = member.value.stringValue
                case .metaSyncToken? where member.value.stringValue != nil: response.metaSyncToken = member.value.stringValue
                case .moreComing?:
                    if case .bool(let b) = member.value { response.moreComing = b } else { response.unknownKeys.members.append(member) }
                default: response.unknownKeys.members.append(member)
                }
            }
            if members.seen != 0 {
                throw error(.wrongType, "expected either a record or a response with \"zones\", found an object with both record keys and \"zones\"", at: objectStart)
            }
            return .zones(response)
        }
        // A record whose unknown members are named `records` or `zones`: kept as plain JSON.
        try restoreAsJSON(&members, records: true, zones: true)
        let unknown = members.unknown

        if members.isErrorEntry {
            let code = unknown["serverErrorCode"]!.stringValue!
            var entry = JSONObject()
            if hasName { entry.append(key: "recordName", value: .string(record.recordName)) }
            entry.members.append(contentsOf: unknown.members)
            return .recordError(RecordServerError(
                recordName: hasName ? record.recordName : nil, reason: unknown["reason"]?.stringValue,
                serverErrorCode: code, entry: entry))
        }
        if !hasName, let entries = members.nonArrayEntries {
            // A response whose entries are not an array, rather than a record without a name.
            throw error(.wrongType, "expected an array of \(entries.key) under \"\(entries.key)\", found \(entries.found)", at: entries.offset)
        }
        guard hasName else {
            throw error(.missingKey, "expected key \"recordName\" in the record, found none", at: objectStart)
        }
        record.unknownKeys = unknown
        return .record(record)
    }

    /// Puts the `records` and `zones` arrays that were decoded as entries back among the unknown
    /// members, as plain JSON in their places (for an object that turned out to be a record).
    private func restoreAsJSON(_ members: inout RecordMembers, records: Bool, zones: Bool) throws(RecordFormatError) {
        var restored: [(offset: Int, index: Int, key: String)] = []
        if records && members.recordsOffset >= 0 { restored.append((members.recordsOffset, members.recordsIndex, "records")) }
        if zones && members.zonesOffset >= 0 { restored.append((members.zonesOffset, members.zonesIndex, "zones")) }
        // In document order: each insertion shifts the places of those after it by one.
        for (shift, item) in restored.sorted(by: { $0.offset < $1.offset }).enumerated() {
            var sub = self
            sub.position = item.offset
            sub.depth = 0
            members.unknown.members.insert(JSONObject.Member(key: item.key, value: try sub.readValue()), at: item.index + shift)
        }
    }

    /// Decodes the record object at `position` into `record`, replacing all of it: for callers
    /// that decode record after record into one value, so that no record is built, moved and
    /// copied per line (a `Record` is several hundred bytes). Returns `false`, with `record`
    /// holding a mix of parts, when the object is not a plain record (a response, an error
    /// entry, no `recordName`, a `records` member): ``decodeDocument()`` reads those.
    package mutating func decodeRecord(into record: inout Record) throws(RecordFormatError) -> Bool {
        try beginObject("a record object")
        var members = RecordMembers()
        try decodeMembers(into: &record, &members)
        let decoded = members.decoded
        guard members.recordsOffset < 0, members.zonesOffset < 0, members.hasName, !members.isErrorEntry else { return false }
        // What this record does not have, the one before may have had.
        if decoded & CloudKitKey.recordType.bit == 0 { record.recordType = nil }
        if decoded & CloudKitKey.zoneID.bit == 0 { record.zoneID = nil }
        if decoded & CloudKitKey.fields.bit == 0 { record.fields = nil }
        if decoded & CloudKitKey.pluginFields.bit == 0 { record.pluginFields = nil }
        if decoded & CloudKitKey.recordChangeTag.bit == 0 { record.recordChangeTag = nil }
        if decoded & CloudKitKey.created.bit == 0 { record.created = nil }
        if decoded & CloudKitKey.modified.bit == 0 { record.modified = nil }
        if decoded & CloudKitKey.deleted.bit == 0 { record.deleted = nil }
        if decoded & CloudKitKey.parent.bit == 0 { record.parent = nil }
        if decoded & CloudKitKey.share.bit == 0 { record.share = nil }
        if decoded & CloudKitKey.shortGUID.bit == 0 { record.shortGUID = nil }
        record.unknownKeys = members.unknown
        return true
    }

    /// Reads the members of a record object (its `{` consumed) into `record` and `members`.
    private mutating func decodeMembers(into record: inout Record, _ members: inout RecordMembers) throws(RecordFormatError) {
        var first = true
        // Members in the order Ferry writes them (CloudKit's dictionaries mostly come so too)
        // are matched as literals, each key tried once in turn; whatever does not fit that
        // order (unknown keys, nulls, other orders) is left to the walk below.
        for known in CloudKitKey.recordMembers where matchMember(known, first: &first) {
            members.seen |= known.bit
            try decodeMember(known, into: &record, &members.decoded)
        }
        // The common record: every member matched above, in order, and the object ends.
        if !first && matchByte(UInt8(ascii: "}")) {
            depth -= 1
            return
        }
        try withUnsafeMutablePointer(to: &record) { (pointer) throws(RecordFormatError) in
            members.record = pointer
            defer { members.record = nil }
            _ = try ResponseWalker.walkMembers(&self, first: &first, &members)
        }
    }

    /// Consumes `"key":` (after a comma unless `first`) if it is next and its value is not
    /// `null` (nulls under known keys are kept as unknown members, by the general loop).
    @inline(__always)
    private mutating func matchMember(_ key: CloudKitKey, first: inout Bool) -> Bool {
        let start = position
        if !first {
            guard matchByte(UInt8(ascii: ",")) else {
                position = start
                return false
            }
        }
        let matched = switch key {
        case .recordName: matchKey(#""recordName""#)
        case .recordType: matchKey(#""recordType""#)
        case .zoneID: matchKey(#""zoneID""#)
        case .recordChangeTag: matchKey(#""recordChangeTag""#)
        case .created: matchKey(#""created""#)
        case .modified: matchKey(#""modified""#)
        case .deleted: matchKey(#""deleted""#)
        case .parent: matchKey(#""parent""#)
        case .share: matchKey(#""share""#)
        case .shortGUID: matchKey(#""shortGUID""#)
        case .fields: matchKey(#""fields""#)
        case .pluginFields: matchKey(#""pluginFields""#)
        default: false
        }
        guard matched, !nextIsNull() else {
            position = start
            return false
        }
        first = false
        return true
    }

    /// Decodes the value of the record member `key` into `record`, and marks it `decoded`.
    fileprivate mutating func decodeMember(_ key: CloudKitKey, into record: inout Record, _ decoded: inout UInt32) throws(RecordFormatError) {
        decoded |= key.bit
        switch key {
        case .recordName:
            record.recordName = try readString(for: "recordName")
        case .recordType: record.recordType = try readString(for: "recordType")
        case .zoneID: record.zoneID = try decodeZoneID()
        case .fields:
            var fields = record.fields.take() ?? RecordFields()
            try decodeFields(into: &fields)
            record.fields = fields
        case .pluginFields: record.pluginFields = try readValue()
        case .recordChangeTag: record.recordChangeTag = try readString(for: "recordChangeTag")
        case .created, .modified:
            if let selection, !selection.includesStamps {
                try skipValueStructure()
                decoded &= ~key.bit
            } else if key == .created {
                record.created = try decodeStamp()
            } else {
                record.modified = try decodeStamp()
            }
        case .deleted:
            skipWhitespace()
            guard current == UInt8(ascii: "t") || current == UInt8(ascii: "f") else {
                throw error(.wrongType, "expected true or false for \"deleted\", found \(describeCurrent())")
            }
            record.deleted = try readBool()
        case .parent: record.parent = try decodeReference()
        case .share: record.share = try decodeReference()
        case .shortGUID: record.shortGUID = try readString(for: "shortGUID")
        default: preconditionFailure("not a record member: \(key)")
        }
    }
}

/// What the members of a record object held besides the record's own values; the visitor of
/// their walk (``ResponseWalker/walkMembers(_:first:_:)``), which decodes record members into
/// ``record``, keeps others as unknown members, and notes (or decodes) `records` and `zones`.
private struct RecordMembers: ResponseVisitor {
    /// The known keys present, `null` or not (a second one is a duplicate).
    var seen: UInt32 = 0
    /// The known keys decoded into the record (present and not `null`).
    var decoded: UInt32 = 0
    /// Unknown members, and known ones given as `null`, in order.
    var unknown = JSONObject()
    /// Whether `records` and `zones` arrays are decoded as response entries; when not, reading
    /// stops at such an array (the object is not a plain record).
    var decodesResponses = false
    /// Where a `records` array starts (a response), or -1.
    var recordsOffset = -1
    /// How many unknown members came before `records`.
    var recordsIndex = 0
    /// The entries of the `records` array, decoded.
    var recordEntries: [RecordsResponse.Entry]?
    /// Where a `zones` array starts (a zones response), or -1.
    var zonesOffset = -1
    /// How many unknown members came before `zones`.
    var zonesIndex = 0
    /// The entries of the `zones` array, decoded.
    var zoneEntries: [ZonesResponse.Entry]?
    /// The first `records` or `zones` member whose value is not an array: its key, where its
    /// value starts and what it is (`null`, `an object`), for the error when there is no name.
    var nonArrayEntries: (key: String, offset: Int, found: String)?
    /// The record the members are decoded into, while they are walked.
    var record: UnsafeMutablePointer<Record>?

    /// Whether `recordName` was given (and not `null`).
    var hasName: Bool { decoded & CloudKitKey.recordName.bit != 0 }

    /// Whether the object is a per-record error entry (``ResponseWalker/entryKind(hasName:hasFields:hasErrorCode:isDeleted:)``).
    var isErrorEntry: Bool {
        @inline(__always) get {
            ResponseWalker.entryKind(hasName: hasName, hasFields: seen & CloudKitKey.fields.bit != 0,
                                     hasErrorCode: unknown["serverErrorCode"]?.stringValue != nil, isDeleted: false) == .error
        }
    }

    @inline(__always)
    mutating func visitMember(_ member: CloudKitKey?, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        guard let member, member.isRecordMember else {
            if member == .records || member == .zones { return try visitEntries(isRecords: member == .records, key: key, &s) }
            try s.readUnknown(key, into: &unknown)
            return true
        }
        if seen & member.bit != 0 { throw s.duplicate(key) }
        seen |= member.bit
        if s.nextIsNull() {
            try s.readUnknown(key, into: &unknown)
            return true
        }
        try s.decodeMember(member, into: &record!.pointee, &decoded)
        return true
    }

    /// A `records` or `zones` member: an array of entries is noted, and decoded when reading
    /// documents (a plain record's reading stops there); anything else is an unknown member.
    private mutating func visitEntries(isRecords: Bool, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        let offset = isRecords ? recordsOffset : zonesOffset
        if offset >= 0 { throw s.duplicate(key) }
        if s.current != UInt8(ascii: "["), nonArrayEntries == nil {
            nonArrayEntries = (isRecords ? "records" : "zones", s.position, s.describeCurrent())
        }
        guard s.current == UInt8(ascii: "[") else {
            try s.readUnknown(key, into: &unknown)
            return true
        }
        if unknown.contains(where: { $0.key == (isRecords ? "records" : "zones") }) { throw s.duplicate(key) }
        if isRecords {
            recordsOffset = s.position
            recordsIndex = unknown.count
        } else {
            zonesOffset = s.position
            zonesIndex = unknown.count
        }
        // Reading plain records only: such an object is read by decodeDocument().
        guard decodesResponses else { return false }
        if isRecords {
            recordEntries = try s.decodeRecordEntries()
        } else {
            zoneEntries = try s.decodeZoneEntries()
        }
        return true
    }
}

extension RecordJSON {
    /// The byte ranges, in `text`, of the elements of the JSON array `text` holds (only it,
    /// whitespace aside); the whole text is validated first, so a malformed array throws before
    /// any element is handed out.
    package static func elementRanges(ofArrayIn text: UnsafeRawBufferPointer,
                                      configuration: Configuration = .init()) throws(RecordFormatError) -> [Range<Int>] {
        try validate(text, configuration: configuration)
        var scanner = JSONScanner(text, maximumDepth: configuration.maximumDepth)
        try scanner.beginArray()
        var ranges: [Range<Int>] = []
        var first = true
        while try scanner.nextElement(&first) {
            let start = scanner.position
            try scanner.skipValue()
            ranges.append(start..<scanner.position)
        }
        return ranges
    }

    /// The end offset of the JSON value starting at `offset` (validated, not decoded).
    public static func extentOfValue(in bytes: UnsafeRawBufferPointer, from offset: Int,
                                     configuration: Configuration = .init()) throws(RecordFormatError) -> Int {
        var scanner = JSONScanner(bytes, maximumDepth: configuration.maximumDepth)
        scanner.position = offset
        try scanner.skipValue()
        return scanner.position
    }
}
