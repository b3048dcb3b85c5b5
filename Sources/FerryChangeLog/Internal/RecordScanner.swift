import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A record dictionary as replay reads it: a record to save, a tombstone, or an error entry.
enum ScannedRecord {
    case saved(RecordBlob, zoneID: ZoneID?)
    case deleted(name: String, zoneID: ZoneID?, recordType: String?)
    case error(name: String?, zoneID: ZoneID?, code: String, reason: String?)
}

/// Picks the members replay needs out of record dictionaries and checks the rest is valid JSON
/// (strings, escapes, UTF-8, numbers, duplicate keys) without decoding it.
struct RecordScanner {
    /// The keys of open objects (duplicate-key checks without allocating).
    var scratch = JSONKeyScratch()
    private var zoneCache = ZoneCache()
    /// The ``ZoneCache`` index of the zone named by the record the latest
    /// ``fastScan(_:at:insertingZone:)`` read to save (`nil` for a record naming no zone, a zone
    /// not cached, a tombstone or error entry, and when the scan gave up). It means something only
    /// to this scanner: each copy keeps its own cache.
    private(set) var lastZoneIndex: Int?
    private var encodedReferences: [UInt8] = []
    private var zonePrefix: [UInt8] = []
    /// With ``collectsFieldNames``: the field of each reference found by the latest scan (`nil`
    /// for `parent`), in order.
    private(set) var referenceFields: [String?] = []
    /// Whether scans note the field of each reference (for messages).
    var collectsFieldNames = false
    /// Where blobs are made; `nil` means each in its own `malloc`ed block.
    var arena: BlobArena?
    /// Whether blobs may point at the JSON they were read from instead of copying it: only when
    /// that text outlives them (blocks of history, whose blobs are copied when applied).
    var referencesText = false
    /// Deepest nesting accepted.
    var maximumDepth = 512

    /// Scans `record` as Ferry encodes it and passes the result to `body`, while the blob's
    /// memory lives (callers that keep the blob copy it).
    static func withScanned<R>(_ record: Record, _ body: (ScannedRecord) throws -> R) throws -> R {
        var out = JSONOutput(capacity: 1024)
        RecordJSON.encode(record, into: &out)
        let json = out.array
        var scanner = RecordScanner()
        let arena = BlobArena()
        scanner.arena = arena
        let scanned = try json.withUnsafeBytes { text throws(RecordFormatError) -> ScannedRecord in
            var s = JSONScanner(text)
            return try scanner.scan(&s, in: text)
        }
        return try withExtendedLifetime(arena) { try body(scanned) }
    }

    /// The zone to write into a record that names none (`nil` when it names one, or when none is
    /// to be inserted), with its `"zoneID":…` member prepared in `zonePrefix`.
    private mutating func zoneToInsert(recordZone: ZoneID?, insertingZone: ZoneID?) -> ZoneID? {
        guard recordZone == nil, let insertingZone else { return nil }
        var out = JSONOutput(capacity: 128)
        out.append("\"zoneID\":")
        RecordJSON.encode(insertingZone, into: &out)
        zonePrefix = out.array
        return insertingZone
    }

    /// Reads a zone ID object, reusing the value decoded for byte-identical zone objects.
    mutating func readZone(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> ZoneID {
        try readIndexedZone(&s, in: text).zone
    }

    /// Reads a zone ID object as ``readZone(_:in:)`` does, with its index in the zone cache
    /// (`nil` when the cache is full or the object too long to keep).
    mutating func readIndexedZone(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> (zone: ZoneID, index: Int?) {
        s.skipWhitespace()
        let start = s.position
        guard s.current == UInt8(ascii: "{") else { throw s.unexpected("a zone ID object") }
        var probe = s
        try s.skipValue(scratch: &scratch)
        if let index = zoneCache.index(of: text, start..<s.position) { return (zoneCache.zone(at: index), index) }
        let zone = try probe.decodeZoneID()
        return (zone, zoneCache.add(zone, from: text, start..<s.position))
    }

    /// The zone decoded earlier for the same bytes.
    func cachedZone(_ text: UnsafeRawBufferPointer, _ range: Range<Int>) -> ZoneID? {
        zoneCache.index(of: text, range).map { zoneCache.zone(at: $0) }
    }

    /// The record dictionary members replay reads.
    private enum Member {
        case fields, recordName, recordType, zoneID, recordChangeTag, modified, parent, deleted, serverErrorCode, reason
    }

    /// The member `key` names, if replay reads it: matched by length and bytes (or, for a key
    /// with escapes, by its value).
    @inline(__always)
    private func member(_ key: JSONStringToken, _ s: JSONScanner) -> Member? {
        if key.isEscaped {
            for (literal, member) in [("fields", Member.fields), ("recordName", .recordName), ("recordType", .recordType),
                                      ("zoneID", .zoneID), ("recordChangeTag", .recordChangeTag), ("modified", .modified),
                                      ("parent", .parent), ("deleted", .deleted), ("serverErrorCode", .serverErrorCode),
                                      ("reason", .reason)] where (try? s.string(key)) == literal {
                return member
            }
            return nil
        }
        switch key.end - key.start {
        case 6: return s.equals(key, "fields") ? .fields : s.equals(key, "zoneID") ? .zoneID : s.equals(key, "parent") ? .parent
            : s.equals(key, "reason") ? .reason : nil
        case 7: return s.equals(key, "deleted") ? .deleted : nil
        case 8: return s.equals(key, "modified") ? .modified : nil
        case 10: return s.equals(key, "recordName") ? .recordName : s.equals(key, "recordType") ? .recordType : nil
        case 15: return s.equals(key, "recordChangeTag") ? .recordChangeTag : s.equals(key, "serverErrorCode") ? .serverErrorCode : nil
        default: return nil
        }
    }

    /// Scans the record dictionary at the scanner, checking everything and wording the errors.
    ///
    /// A record to save becomes a ``RecordBlob`` holding its JSON (compacted when the text has
    /// whitespace between tokens, with `"zoneID": insertingZone` added when the record names no
    /// zone and `insertingZone` is given) and its references.
    mutating func scan(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer,
                       insertingZone: ZoneID? = nil) throws(RecordFormatError) -> ScannedRecord {
        s.skipWhitespace()
        let start = s.position
        s.sawWhitespace = false
        lastZoneIndex = nil
        try s.beginObject("a record object")
        let mark = scratch.mark
        defer { scratch.forget(from: mark) }
        encodedReferences.removeAll(keepingCapacity: true)
        if collectsFieldNames { referenceFields.removeAll() }
        var name: JSONStringToken?
        var type: JSONStringToken?
        var tag: JSONStringToken?
        var modified: Int64?
        var zoneID: ZoneID?
        var zoneIndex: Int?
        var isDeleted = false
        var errorCode: String?
        var reason: String?
        var first = true
        while try s.nextMember(&first) {
            let key = try s.readKey(recordingIn: &scratch, from: mark)
            s.skipWhitespace()
            if s.current == UInt8(ascii: "n") {
                // `null` under any key is kept as it is and means nothing to replay.
                try s.skipValue(scratch: &scratch)
                continue
            }
            switch member(key, s) {
            case .fields: try scanFields(&s, in: text)
            case .recordName: name = try readString(&s, "recordName")
            case .recordType: type = try readString(&s, "recordType")
            case .zoneID: (zoneID, zoneIndex) = try readIndexedZone(&s, in: text)
            case .recordChangeTag: tag = try readString(&s, "recordChangeTag")
            case .modified: modified = try readStampTime(&s)
            case .parent: try scanReference(&s, in: text, field: nil, isParent: true)
            case .deleted:
                guard s.current == UInt8(ascii: "t") || s.current == UInt8(ascii: "f") else {
                    throw s.error(.wrongType, "expected true or false for \"deleted\", found \(s.describeCurrent())")
                }
                isDeleted = try s.readBool()
            case .serverErrorCode: errorCode = try s.readString(for: "serverErrorCode")
            case .reason: reason = try s.readString(for: "reason")
            case nil: try s.skipValue(scratch: &scratch)
            }
        }
        if let errorCode {
            return .error(name: try name.map { token throws(RecordFormatError) in try s.string(token) }, zoneID: zoneID,
                          code: errorCode, reason: reason)
        }
        guard let name else { throw s.error(.missingKey, "expected key \"recordName\" in the record, found none", at: start) }
        if isDeleted {
            return .deleted(name: try s.string(name), zoneID: zoneID,
                            recordType: try type.map { token throws(RecordFormatError) in try s.string(token) })
        }
        let json = UnsafeRawBufferPointer(rebasing: text[start..<s.position])
        let insert = zoneToInsert(recordZone: zoneID, insertingZone: insertingZone)
        let compacting = s.sawWhitespace
        let referencesText = self.referencesText
        let blob = try withBytes(of: name, in: s, text) { (nameBytes: UnsafeRawBufferPointer) throws(RecordFormatError) -> RecordBlob in
            try withBytes(of: tag, in: s, text) { (tagBytes: UnsafeRawBufferPointer?) throws(RecordFormatError) -> RecordBlob in
                encodedReferences.withUnsafeBytes { references in
                    zonePrefix.withUnsafeBytes { prefix in
                        RecordBlob.make(name: nameBytes, tag: tagBytes, modified: modified, references: references, json: json,
                                        compacting: compacting, zonePrefix: insert == nil ? nil : prefix, in: arena,
                                        referencingJSON: referencesText)
                    }
                }
            }
        }
        if insert == nil { lastZoneIndex = zoneIndex }
        return .saved(blob, zoneID: zoneID ?? insert)
    }

    /// A reference (`parent`, or the value of a REFERENCE field): its target's name and whether
    /// it deletes its record with the target, noted without making strings in the common case —
    /// a plain `recordName`, an `action`, no zone; anything else is decoded as a value.
    private mutating func scanReference(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer, field: String?,
                                        isParent: Bool) throws(RecordFormatError) {
        s.skipWhitespace()
        let probe = s
        if s.current == UInt8(ascii: "{") {
            try s.beginObject()
            let mark = scratch.mark
            defer { scratch.forget(from: mark) }
            var name: JSONStringToken?
            var deletesSelf = false
            var plain = true
            var first = true
            while try s.nextMember(&first) {
                let key = try s.readKey(recordingIn: &scratch, from: mark)
                s.skipWhitespace()
                if !key.isEscaped && s.equals(key, "recordName") && s.current == UInt8(ascii: "\"") {
                    name = try s.readStringToken()
                } else if !key.isEscaped && s.equals(key, "action") && s.current == UInt8(ascii: "\"") {
                    deletesSelf = s.equals(try s.readStringToken(), "DELETE_SELF")
                } else {
                    if s.equals(key, "zoneID") || s.equals(key, "recordName") { plain = false }
                    try s.skipValue(scratch: &scratch)
                }
            }
            if plain, let name, !name.isEscaped {
                encodedReferences.append((isParent ? 1 : 0) | (deletesSelf && !isParent ? 2 : 0))
                withUnsafeBytes(of: UInt32(name.end - name.start)) { encodedReferences.append(contentsOf: $0) }
                encodedReferences.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[name.start..<name.end]))
                if collectsFieldNames { referenceFields.append(field) }
                return
            }
        }
        // A zone, escapes, or something wrong: decoded as a value, which says what is wrong.
        var careful = probe
        try addReference(try careful.decodeReference(), field: field, isParent: isParent)
        s = careful
    }

    /// Calls `body` with a string token's value as bytes: in place when it has no escapes.
    private func withBytes<R>(of token: JSONStringToken?, in s: JSONScanner, _ text: UnsafeRawBufferPointer,
                              _ body: (UnsafeRawBufferPointer?) throws(RecordFormatError) -> R) throws(RecordFormatError) -> R {
        guard let token else { return try body(nil) }
        if !token.isEscaped { return try body(UnsafeRawBufferPointer(rebasing: text[token.start..<token.end])) }
        var value = try s.string(token)
        let result = value.withUTF8 { bytes in
            Result { () throws(RecordFormatError) -> R in try body(UnsafeRawBufferPointer(bytes)) }
        }
        return try result.get()
    }

    private func withBytes<R>(of token: JSONStringToken, in s: JSONScanner, _ text: UnsafeRawBufferPointer,
                              _ body: (UnsafeRawBufferPointer) throws(RecordFormatError) -> R) throws(RecordFormatError) -> R {
        try withBytes(of: Optional(token), in: s, text) { (bytes: UnsafeRawBufferPointer?) throws(RecordFormatError) -> R in try body(bytes!) }
    }

    private func readString(_ s: inout JSONScanner, _ key: StaticString) throws(RecordFormatError) -> JSONStringToken {
        guard s.current == UInt8(ascii: "\"") else {
            throw s.error(.wrongType, "expected a string for \"\(key)\", found \(s.describeCurrent())")
        }
        return try s.readStringToken()
    }

    /// The `timestamp` of a `created`/`modified` object (other members are checked and skipped).
    private mutating func readStampTime(_ s: inout JSONScanner) throws(RecordFormatError) -> Int64? {
        try s.beginObject("an object for \"modified\"")
        let mark = scratch.mark
        defer { scratch.forget(from: mark) }
        var time: Int64?
        var first = true
        while try s.nextMember(&first) {
            let key = try s.readKey(recordingIn: &scratch, from: mark)
            s.skipWhitespace()
            let b = s.current
            if s.equals(key, "timestamp") && (b == UInt8(ascii: "-") || b &- UInt8(ascii: "0") <= 9) {
                time = try s.readNumber().exactInteger
            } else {
                try s.skipValue(scratch: &scratch)
            }
        }
        return time
    }

    private mutating func addReference(_ reference: Reference, field: String?, isParent: Bool) throws(RecordFormatError) {
        RecordBlob.encodeReference(isParent: isParent, deletesSelf: !isParent && reference.action == .deleteSelf,
                                   name: reference.recordName, zoneName: reference.zoneID?.zoneName,
                                   owner: reference.zoneID?.ownerRecordName, into: &encodedReferences)
        if collectsFieldNames { referenceFields.append(field) }
    }

    /// Walks `fields`, checking it and noting the values of `REFERENCE` and `REFERENCE_LIST` fields.
    private mutating func scanFields(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) {
        try s.beginObject("an object for \"fields\"")
        let fieldsMark = scratch.mark
        defer { scratch.forget(from: fieldsMark) }
        var first = true
        while try s.nextMember(&first) {
            let name = try s.readKey(recordingIn: &scratch, from: fieldsMark)
            s.skipWhitespace()
            guard s.current == UInt8(ascii: "{") else {
                try s.skipValue(scratch: &scratch) // not a field object: the record decoder reports it
                continue
            }
            try s.beginObject()
            let mark = scratch.mark
            defer { scratch.forget(from: mark) }
            var valueAt = -1
            var isReference = false
            var firstMember = true
            while try s.nextMember(&firstMember) {
                let key = try s.readKey(recordingIn: &scratch, from: mark)
                s.skipWhitespace()
                if s.equals(key, "value") {
                    valueAt = s.position
                    try s.skipValue(scratch: &scratch)
                } else if s.equals(key, "type") && s.current == UInt8(ascii: "\"") {
                    let type = try s.readStringToken()
                    isReference = s.equals(type, "REFERENCE") || s.equals(type, "REFERENCE_LIST")
                } else {
                    try s.skipValue(scratch: &scratch)
                }
            }
            guard isReference && valueAt >= 0 else { continue }
            var value = s
            value.position = valueAt
            let field = collectsFieldNames ? try s.string(name) : nil
            if value.current == UInt8(ascii: "{") {
                try scanReference(&value, in: text, field: field, isParent: false)
            } else if value.current == UInt8(ascii: "[") {
                try value.beginArray()
                var firstElement = true
                while try value.nextElement(&firstElement) {
                    value.skipWhitespace()
                    if value.current == UInt8(ascii: "{") {
                        try scanReference(&value, in: text, field: field, isParent: false)
                    } else {
                        try value.skipValue(scratch: &scratch)
                    }
                }
            }
        }
    }

    /// The fields holding the references of a record's compact JSON, in the order
    /// ``RecordBlob/forEachReference(_:)`` gives them (`nil` for `parent`).
    mutating func referenceFields(ofJSON json: UnsafeRawBufferPointer) -> [String?] {
        collectsFieldNames = true
        defer { collectsFieldNames = false }
        let kept = arena
        arena = nil
        defer { arena = kept }
        var s = JSONScanner(json)
        guard case .saved(let blob, _)? = try? scan(&s, in: json) else { return [] }
        blob.free()
        return referenceFields
    }
}
