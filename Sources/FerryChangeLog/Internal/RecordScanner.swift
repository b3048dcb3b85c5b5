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

/// Makes replay's ``ScannedRecord``s: reads each record dictionary with a
/// ``RecordSummaryScanner`` (which checks it is valid JSON without decoding it) and keeps a record
/// to save as a ``RecordBlob`` of its compact JSON and its references.
struct RecordScanner {
    /// The scanner of record dictionaries.
    var summaries = RecordSummaryScanner()
    /// The ``ZoneCache`` index of the zone named by the record the latest ``scan(_:in:insertingZone:)``
    /// read to save (`nil` for a record naming no zone, a zone not cached, a tombstone or error
    /// entry). It means something only to this scanner: each copy keeps its own cache.
    private(set) var lastZoneIndex: Int?
    private var zonePrefix: [UInt8] = []
    /// Where blobs are made; `nil` means each in its own `malloc`ed block.
    var arena: BlobArena?
    /// Whether blobs may point at the JSON they were read from instead of copying it: only when
    /// that text outlives them (blocks of history, whose blobs are copied when applied).
    var referencesText = false
    /// Whether blobs may point at pretty-printed JSON too, to be compacted when written: only when
    /// the text is a mapping the state keeps (``referencesText`` as well).
    var pointsAtWhitespace = false
    /// Deepest nesting accepted.
    var maximumDepth = 512
    /// Whether a tombstone (`"deleted": true`) is a record to save as it is, not a delete: for
    /// a store's journal, whose saved rows may be tombstones.
    var keepsTombstones = false

    /// The keys of open objects of the documents the records come in (duplicate-key checks
    /// without allocating).
    var scratch = JSONKeyScratch()

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
        try summaries.readZone(&s, in: text)
    }

    /// The zone decoded earlier for the same bytes.
    func cachedZone(_ text: UnsafeRawBufferPointer, _ range: Range<Int>) -> ZoneID? {
        summaries.cachedZone(text, range)
    }

    /// Scans the record dictionary at the scanner.
    ///
    /// A record to save becomes a ``RecordBlob`` holding its JSON (compacted when the text has
    /// whitespace between tokens, with `"zoneID": insertingZone` added when the record names no
    /// zone and `insertingZone` is given) and its references.
    mutating func scan(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer,
                       insertingZone: ZoneID? = nil) throws(RecordFormatError) -> ScannedRecord {
        lastZoneIndex = nil
        let summary = try summaries.scan(&s, in: text)
        switch summary.kind {
        case .error(let code, let reason):
            return .error(name: try summary.name.map { token throws(RecordFormatError) in try s.string(token) },
                          zoneID: summary.zoneID, code: code, reason: reason)
        case .deleted where !keepsTombstones:
            return .deleted(name: try s.string(summary.name!), zoneID: summary.zoneID,
                            recordType: try summary.type.map { token throws(RecordFormatError) in try s.string(token) })
        case .saved, .deleted:
            break
        }
        var json = UnsafeRawBufferPointer(rebasing: text[summary.json])
        let insert = zoneToInsert(recordZone: summary.zoneID, insertingZone: insertingZone)
        // A `"zoneID": null` makes way for the zone inserted (a key written twice otherwise): the
        // record is written again without it (rare, so through a JSON value).
        var rewritten: [UInt8] = []
        if insert != nil, summary.hasNullZoneID, case .object(var object) = try RecordJSON.parseValue(json) {
            object["zoneID"] = nil
            var out = JSONOutput(capacity: json.count)
            out.appendValue(.object(object))
            rewritten = out.array
        }
        let name = summary.name!
        // Names and tags are bytes of the text unless they hold escapes (then decoded strings).
        var nameString = name.isEscaped ? try s.string(name) : nil
        var tagString = try summary.tag.flatMap { token throws(RecordFormatError) in token.isEscaped ? try s.string(token) : nil }
        let blob = Self.withBytes(of: name, decoded: &nameString, in: text) { nameBytes in
            Self.withBytes(of: summary.tag, decoded: &tagString, in: text) { tagBytes in
                summaries.references.withUnsafeBytes { references in
                    zonePrefix.withUnsafeBytes { prefix in
                        rewritten.withUnsafeBytes { rewrittenJSON in
                            if !rewritten.isEmpty { json = rewrittenJSON }
                            return RecordBlob.make(name: nameBytes!, tag: tagBytes, modified: summary.modified, references: references,
                                                   json: json, compacting: rewritten.isEmpty && summary.hasWhitespace,
                                                   zonePrefix: insert == nil ? nil : prefix, in: arena,
                                                   referencingJSON: rewritten.isEmpty && referencesText,
                                                   pointingAtWhitespace: pointsAtWhitespace)
                        }
                    }
                }
            }
        }
        if insert == nil { lastZoneIndex = summary.zoneIndex }
        return .saved(blob, zoneID: summary.zoneID ?? insert)
    }

    /// Calls `body` with a string token's value as bytes: in place, or `decoded` (its value, for
    /// a token with escapes).
    @inline(__always)
    private static func withBytes<R>(of token: JSONStringToken?, decoded: inout String?, in text: UnsafeRawBufferPointer,
                                     _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let token else { return body(nil) }
        if var value = decoded { return value.withUTF8 { body(UnsafeRawBufferPointer($0)) } }
        return body(UnsafeRawBufferPointer(rebasing: text[token.start..<token.end]))
    }

    /// The fields holding the references of a record's compact JSON, in the order
    /// ``RecordBlob/forEachReference(_:)`` gives them (`nil` for `parent`).
    mutating func referenceFields(ofJSON json: UnsafeRawBufferPointer) -> [String?] {
        summaries.collectsFieldNames = true
        defer { summaries.collectsFieldNames = false }
        var s = JSONScanner(json)
        guard (try? summaries.scan(&s, in: json)) != nil else { return [] }
        return summaries.referenceFields
    }
}
