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
    /// The fast path's key spans. A class: copies of a scanner share it until
    /// ``useOwnKeyStack()``, so each thread's copy must get its own.
    private(set) var keyStack = KeyStack()
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

    /// Gives this copy key storage of its own (before it runs on another thread than the copy
    /// it was made from).
    mutating func useOwnKeyStack() { keyStack = KeyStack() }

    /// Reads a zone ID object, reusing the value decoded for byte-identical zone objects.
    mutating func readZone(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> ZoneID {
        try readIndexedZone(&s, in: text).zone
    }

    /// Reads a zone ID object as ``readZone(_:in:)`` does, with its index in the zone cache
    /// (`nil` when the cache is full or the object too long to keep).
    private mutating func readIndexedZone(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> (zone: ZoneID, index: Int?) {
        s.skipWhitespace()
        let start = s.position
        guard s.current == UInt8(ascii: "{") else { throw s.unexpected("a zone ID object") }
        var probe = s
        try s.skipValue(scratch: &scratch)
        if let index = zoneCache.index(of: text, start..<s.position) { return (zoneCache.zone(at: index), index) }
        let zone = try probe.decodeZoneID()
        return (zone, zoneCache.add(zone, from: text, start..<s.position))
    }

    /// Scans the record dictionary at the scanner.
    ///
    /// A record to save becomes a ``RecordBlob`` holding its JSON (compacted when the text has
    /// whitespace between tokens, with `"zoneID": insertingZone` added when the record names no
    /// zone and `insertingZone` is given) and its references.
    mutating func scan(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer,
                       insertingZone: ZoneID? = nil) throws(RecordFormatError) -> ScannedRecord {
        if !collectsFieldNames, let record = fastScan(text, at: s.position, insertingZone: insertingZone) {
            s.position = record.end
            return record.scanned
        }
        return try carefulScan(&s, in: text, insertingZone: insertingZone)
    }

    /// The fast path of ``scan(_:in:insertingZone:)``: `nil` when ``FastScanner`` gave up.
    mutating func fastScan(_ text: UnsafeRawBufferPointer, at position: Int,
                                   insertingZone: ZoneID?) -> (scanned: ScannedRecord, end: Int)? {
        encodedReferences.removeAll(keepingCapacity: true)
        lastZoneIndex = nil
        // The careful path counts depth from the document, which holds the record a few levels
        // down: stay well inside its limit.
        var f = FastScanner(text, at: position, maximumDepth: maximumDepth - 8, keys: keyStack)
        f.skipWhitespace()
        let start = f.position
        f.sawWhitespace = false
        var name: Range<Int>?
        var tag: Range<Int>?
        var type: Range<Int>?
        var zone: Range<Int>?
        var modified: Int64?
        var isDeleted = false
        do throws(FastScanner.Bail) {
            try f.object { f, key throws(FastScanner.Bail) in
                switch key.count {
                case 6 where f.equals(key, "fields"):
                    try Self.fastFields(&f, into: &encodedReferences)
                case 10 where f.equals(key, "recordName"):
                    let value = try f.string()
                    guard value.isPlain else { throw FastScanner.Bail() }
                    name = value.range
                case 10 where f.equals(key, "recordType"):
                    type = try f.string().range
                case 6 where f.equals(key, "zoneID"):
                    f.skipWhitespace()
                    let zoneStart = f.position
                    guard f.current == UInt8(ascii: "{") else { throw FastScanner.Bail() }
                    try f.skipValue()
                    zone = zoneStart..<f.position
                case 15 where f.equals(key, "recordChangeTag"):
                    let value = try f.string()
                    guard value.isPlain else { throw FastScanner.Bail() }
                    tag = value.range
                case 8 where f.equals(key, "modified"):
                    try f.object { f, key throws(FastScanner.Bail) in
                        if f.equals(key, "timestamp") {
                            guard let time = try f.number() else { throw FastScanner.Bail() }
                            modified = time
                        } else {
                            try f.skipValue()
                        }
                    }
                case 6 where f.equals(key, "parent"):
                    try Self.fastReference(&f, isParent: true, into: &encodedReferences)
                case 7 where f.equals(key, "deleted"):
                    isDeleted = try f.bool()
                case 15 where f.equals(key, "serverErrorCode"):
                    throw FastScanner.Bail() // error entries: the careful path
                default:
                    try f.skipValue()
                }
            }
        } catch {
            return nil
        }
        guard let name else { return nil }
        let end = f.position
        var zoneID: ZoneID?
        var zoneIndex: Int?
        if let zone {
            if let index = zoneCache.index(of: text, zone) {
                zoneID = zoneCache.zone(at: index)
                zoneIndex = index
            } else {
                var s = JSONScanner(text, maximumDepth: maximumDepth)
                s.position = zone.lowerBound
                guard let decoded = try? readIndexedZone(&s, in: text) else { return nil }
                zoneID = decoded.zone
                zoneIndex = decoded.index
            }
        }
        if isDeleted {
            let typeName = type.map { String(decoding: UnsafeRawBufferPointer(rebasing: text[$0]), as: UTF8.self) }
            // A type with escapes needs decoding: the careful path.
            if let type, text[type].contains(UInt8(ascii: "\\")) { return nil }
            return (.deleted(name: String(decoding: UnsafeRawBufferPointer(rebasing: text[name]), as: UTF8.self), zoneID: zoneID,
                             recordType: typeName), end)
        }
        let insert = zoneToInsert(recordZone: zoneID, insertingZone: insertingZone)
        let json = UnsafeRawBufferPointer(rebasing: text[start..<end])
        let blob = encodedReferences.withUnsafeBytes { references in
            zonePrefix.withUnsafeBytes { prefix in
                RecordBlob.make(name: UnsafeRawBufferPointer(rebasing: text[name]), tag: tag.map { UnsafeRawBufferPointer(rebasing: text[$0]) },
                                modified: modified, references: references, json: json, compacting: f.sawWhitespace,
                                zonePrefix: insert == nil ? nil : prefix, in: arena, referencingJSON: referencesText)
            }
        }
        lastZoneIndex = zoneIndex
        return (.saved(blob, zoneID: zoneID ?? insert), end)
    }

    /// The zone decoded earlier for the same bytes.
    func cachedZone(_ text: UnsafeRawBufferPointer, _ range: Range<Int>) -> ZoneID? {
        zoneCache.index(of: text, range).map { zoneCache.zone(at: $0) }
    }

    /// `fields`, fast: checked, with the targets of `REFERENCE` and `REFERENCE_LIST` values noted.
    private static func fastFields(_ f: inout FastScanner, into references: inout [UInt8]) throws(FastScanner.Bail) {
        try f.object { f, _ throws(FastScanner.Bail) in
            f.skipWhitespace()
            guard f.current == UInt8(ascii: "{") else {
                try f.skipValue()
                return
            }
            var valueAt = -1
            var isReference = false
            try f.object { f, key throws(FastScanner.Bail) in
                if f.equals(key, "value") {
                    f.skipWhitespace()
                    valueAt = f.position
                    try f.skipValue()
                } else if f.equals(key, "type") {
                    f.skipWhitespace()
                    guard f.current == UInt8(ascii: "\"") else {
                        try f.skipValue()
                        return
                    }
                    let type = try f.string().range
                    isReference = f.equals(type, "REFERENCE") || f.equals(type, "REFERENCE_LIST")
                } else {
                    try f.skipValue()
                }
            }
            guard isReference && valueAt >= 0 else { return }
            let after = f.position
            f.position = valueAt
            if f.current == UInt8(ascii: "{") {
                try fastReference(&f, isParent: false, into: &references)
            } else if f.current == UInt8(ascii: "[") {
                try f.array { f throws(FastScanner.Bail) in
                    f.skipWhitespace()
                    if f.current == UInt8(ascii: "{") { try fastReference(&f, isParent: false, into: &references) } else { try f.skipValue() }
                }
            }
            f.position = after
        }
    }

    /// A reference object, fast: a plain `recordName` and an `action`; a reference naming a zone
    /// takes the careful path.
    private static func fastReference(_ f: inout FastScanner, isParent: Bool, into references: inout [UInt8]) throws(FastScanner.Bail) {
        var name: Range<Int>?
        var deletesSelf = false
        try f.object { f, key throws(FastScanner.Bail) in
            if f.equals(key, "recordName") {
                let value = try f.string()
                guard value.isPlain else { throw FastScanner.Bail() }
                name = value.range
            } else if f.equals(key, "action") {
                f.skipWhitespace()
                if f.current == UInt8(ascii: "n") {
                    try f.skipValue()
                } else {
                    deletesSelf = f.equals(try f.string().range, "DELETE_SELF")
                }
            } else if f.equals(key, "zoneID") {
                throw FastScanner.Bail()
            } else {
                try f.skipValue()
            }
        }
        guard let name else { throw FastScanner.Bail() }
        references.append((isParent ? 1 : 0) | (deletesSelf && !isParent ? 2 : 0))
        withUnsafeBytes(of: UInt32(name.count)) { references.append(contentsOf: $0) }
        references.append(contentsOf: UnsafeRawBufferPointer(start: f.base + name.lowerBound, count: name.count))
    }

    /// The careful path of ``scan(_:in:insertingZone:)``: `JSONScanner` checks everything and
    /// words the errors.
    private mutating func carefulScan(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer,
                                      insertingZone: ZoneID?) throws(RecordFormatError) -> ScannedRecord {
        s.skipWhitespace()
        let start = s.position
        s.sawWhitespace = false
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
            } else if s.equals(key, "fields") {
                try scanFields(&s)
            } else if s.equals(key, "recordName") {
                name = try readString(&s, "recordName")
            } else if s.equals(key, "recordType") {
                type = try readString(&s, "recordType")
            } else if s.equals(key, "zoneID") {
                zoneID = try readZone(&s, in: text)
            } else if s.equals(key, "recordChangeTag") {
                tag = try readString(&s, "recordChangeTag")
            } else if s.equals(key, "modified") {
                modified = try readStampTime(&s)
            } else if s.equals(key, "parent") {
                try addReference(try s.decodeReference(), field: nil, isParent: true)
            } else if s.equals(key, "deleted") {
                guard s.current == UInt8(ascii: "t") || s.current == UInt8(ascii: "f") else {
                    throw s.error(.wrongType, "expected true or false for \"deleted\", found \(s.describeCurrent())")
                }
                isDeleted = try s.readBool()
            } else if s.equals(key, "serverErrorCode") {
                errorCode = try s.readString(for: "serverErrorCode")
            } else if s.equals(key, "reason") {
                reason = try s.readString(for: "reason")
            } else {
                try s.skipValue(scratch: &scratch)
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
        let blob = try withBytes(of: name, in: s, text) { (nameBytes: UnsafeRawBufferPointer) throws(RecordFormatError) -> RecordBlob in
            try withBytes(of: tag, in: s, text) { (tagBytes: UnsafeRawBufferPointer?) throws(RecordFormatError) -> RecordBlob in
                encodedReferences.withUnsafeBytes { references in
                    zonePrefix.withUnsafeBytes { prefix in
                        RecordBlob.make(name: nameBytes, tag: tagBytes, modified: modified, references: references, json: json,
                                        compacting: compacting, zonePrefix: insert == nil ? nil : prefix, in: arena)
                    }
                }
            }
        }
        return .saved(blob, zoneID: zoneID ?? insert)
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
    private mutating func scanFields(_ s: inout JSONScanner) throws(RecordFormatError) {
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
                try addReference(try value.decodeReference(), field: field, isParent: false)
            } else if value.current == UInt8(ascii: "[") {
                try value.beginArray()
                var firstElement = true
                while try value.nextElement(&firstElement) {
                    value.skipWhitespace()
                    if value.current == UInt8(ascii: "{") {
                        try addReference(try value.decodeReference(), field: field, isParent: false)
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
