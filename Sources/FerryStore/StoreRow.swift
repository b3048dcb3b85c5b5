import FerryRecords

/// A record made ready for the store: its system fields as the store's columns and its CKWS record
/// dictionary as compact JSON bytes, in one buffer.
///
/// This is what the store's writers insert. ``init(record:encoder:)`` makes one from a
/// ``Record``; a reader that already holds a record's compact JSON and system fields (a fast
/// scanner, a server receiving `records/modify`) can make one with
/// ``init(recordName:zoneID:recordType:changeTag:created:modified:parentName:shareName:body:)``
/// without building a `Record`. The store trusts the body to be one valid record dictionary whose
/// system fields are the ones given.
public struct StoreRow: Sendable {
    /// The zone; `nil` means the default zone.
    public var zoneID: ZoneID?
    /// `created.timestamp`, milliseconds since 1970.
    public var createdAt: Int64?
    /// `modified.timestamp`, milliseconds since 1970.
    public var modifiedAt: Int64?
    /// The record's name.
    public let recordName: String

    /// The body, then the text columns that are not bytes of the body, as UTF-8.
    var bytes: [UInt8]
    /// Start and length in `bytes` of each text column (`Column`); length -1 for NULL.
    var spans: [Int32]

    /// The text columns, in the order of `spans` (the body comes first).
    enum Column: Int, CaseIterable {
        case body, recordName, recordType, changeTag, createdBy, modifiedBy, parentName, shareName
    }

    /// Makes a row from a record; `encoder` (reused across rows) writes the compact JSON.
    public init(record: Record, encoder: StoreRowEncoder) {
        encoder.output.removeAll()
        RecordJSON.encode(record, into: &encoder.output)
        self.init(columnsOf: record, body: encoder.output.bytes)
    }

    /// Makes a row of `body`, a record's compact JSON, with the system fields of `record` (the
    /// record `body` encodes, or its system keys) as the columns.
    init(columnsOf record: Record, body: UnsafeRawBufferPointer) {
        self.init(recordName: record.recordName, zoneID: record.zoneID, recordType: record.recordType,
                  changeTag: record.recordChangeTag, created: record.created, modified: record.modified,
                  parentName: record.parent?.recordName, shareName: record.share?.recordName, body: body)
    }

    /// Makes a row from a record's compact JSON and its system fields, without a `Record`.
    public init(recordName: String, zoneID: ZoneID?, recordType: String?, changeTag: String?,
                created: RecordStamp?, modified: RecordStamp?, parentName: String?, shareName: String?,
                body: UnsafeRawBufferPointer) {
        self.zoneID = zoneID
        self.recordName = recordName
        createdAt = created?.timestamp
        modifiedAt = modified?.timestamp
        // Room for the text columns too: appending them then copies nothing.
        var bytes = [UInt8]()
        bytes.reserveCapacity(body.count + recordName.utf8.count + 64)
        bytes.append(contentsOf: body)
        var spans = [Int32](repeating: -1, count: Column.allCases.count * 2)
        spans[0] = 0
        spans[1] = Int32(body.count)
        Self.append(recordName, .recordName, &bytes, &spans)
        Self.append(recordType, .recordType, &bytes, &spans)
        Self.append(changeTag, .changeTag, &bytes, &spans)
        Self.append(created?.userRecordName, .createdBy, &bytes, &spans)
        Self.append(modified?.userRecordName, .modifiedBy, &bytes, &spans)
        Self.append(parentName, .parentName, &bytes, &spans)
        Self.append(shareName, .shareName, &bytes, &spans)
        self.bytes = bytes
        self.spans = spans
    }

    /// Makes a row of `line`, a record's compact JSON as the encoder writes it, whose system keys
    /// lie at `keys` in it, in `zoneID` (the zone `keys.zoneID` names). The text columns are
    /// spans of the body.
    init(line: UnsafeRawBufferPointer, keys: EncodedSystemKeys, zoneID: ZoneID?) {
        self.zoneID = zoneID
        recordName = String(decoding: line[keys.recordName], as: UTF8.self)
        createdAt = keys.createdAt
        modifiedAt = keys.modifiedAt
        bytes = Array(line)
        var spans = [Int32](repeating: -1, count: Column.allCases.count * 2)
        spans[0] = 0
        spans[1] = Int32(line.count)
        keys.forEachTextColumn { range, column in
            spans[column.rawValue * 2] = Int32(range.lowerBound)
            spans[column.rawValue * 2 + 1] = Int32(range.count)
        }
        self.spans = spans
    }

    private static func append(_ text: String?, _ column: Column, _ bytes: inout [UInt8], _ spans: inout [Int32]) {
        guard var text else { return }
        spans[column.rawValue * 2] = Int32(bytes.count)
        text.withUTF8 { bytes.append(contentsOf: $0) }
        spans[column.rawValue * 2 + 1] = Int32(bytes.count) - spans[column.rawValue * 2]
    }

    /// The record type.
    public var recordType: String? { text(.recordType) }
    /// The change tag.
    public var changeTag: String? { text(.changeTag) }
    /// The compact JSON of the record dictionary.
    public var body: [UInt8] {
        Array(bytes[Int(spans[0])..<Int(spans[0] + spans[1])])
    }
    /// Bytes of the body.
    public var bodyCount: Int { Int(spans[1]) }

    func text(_ column: Column) -> String? {
        let start = spans[column.rawValue * 2], count = spans[column.rawValue * 2 + 1]
        guard count >= 0 else { return nil }
        return String(decoding: bytes[Int(start)..<Int(start + count)], as: UTF8.self)
    }

    /// The bytes of a column within `buffer` (this row's `bytes`), `nil` for NULL.
    func slice(_ column: Column, in buffer: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let start = spans[column.rawValue * 2], count = spans[column.rawValue * 2 + 1]
        guard count >= 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: buffer[Int(start)..<Int(start + count)])
    }
}

/// Rows made ready together, in one buffer: what a writer inserts many of without a buffer (and a
/// `free` on the inserting thread) per row. Row `i`'s columns are those ``StoreRow`` holds.
struct StoreRows: Sendable {
    private var bytes: [UInt8] = []
    /// Per row, start and length of each text column (``StoreRow/Column``); length -1 for NULL.
    private var spans: [Int] = []
    private var stamps: [Int64?] = []
    private var zones: [ZoneID?] = []
    private(set) var count = 0

    init(capacity: Int, bytes: Int) {
        self.bytes.reserveCapacity(bytes)
        spans.reserveCapacity(capacity * StoreRow.Column.allCases.count * 2)
        stamps.reserveCapacity(capacity * 2)
    }

    /// Appends the row of `body`, a record's compact JSON, with the system fields of `record`.
    mutating func append(columnsOf record: Record, body: UnsafeRawBufferPointer) {
        let first = spans.count
        spans.append(contentsOf: repeatElement(-1, count: StoreRow.Column.allCases.count * 2))
        spans[first] = bytes.count
        bytes.append(contentsOf: body)
        spans[first + 1] = body.count
        bodyBytes += body.count
        func put(_ text: String?, _ column: StoreRow.Column) {
            guard var text else { return }
            spans[first + column.rawValue * 2] = bytes.count
            text.withUTF8 { bytes.append(contentsOf: $0) }
            spans[first + column.rawValue * 2 + 1] = bytes.count - spans[first + column.rawValue * 2]
        }
        put(record.recordName, .recordName)
        put(record.recordType, .recordType)
        put(record.recordChangeTag, .changeTag)
        put(record.created?.userRecordName, .createdBy)
        put(record.modified?.userRecordName, .modifiedBy)
        put(record.parent?.recordName, .parentName)
        put(record.share?.recordName, .shareName)
        stamps.append(record.created?.timestamp)
        stamps.append(record.modified?.timestamp)
        zones.append(record.zoneID)
        count += 1
    }

    /// Appends the row of `line`, a record's compact JSON as the encoder writes it, whose system
    /// keys lie at `keys` in it, in `zoneID` (the zone `keys.zoneID` names).
    mutating func append(line: UnsafeRawBufferPointer, keys: EncodedSystemKeys, zoneID: ZoneID?) {
        let first = spans.count
        spans.append(contentsOf: repeatElement(-1, count: StoreRow.Column.allCases.count * 2))
        let base = bytes.count
        spans[first] = base
        bytes.append(contentsOf: line)
        spans[first + 1] = line.count
        bodyBytes += line.count
        // The text columns are bytes of the body: spans into it, nothing copied.
        keys.forEachTextColumn { range, column in
            spans[first + column.rawValue * 2] = base + range.lowerBound
            spans[first + column.rawValue * 2 + 1] = range.count
        }
        stamps.append(keys.createdAt)
        stamps.append(keys.modifiedAt)
        zones.append(zoneID)
        count += 1
    }

    /// Appends a row made alone.
    mutating func append(_ row: StoreRow) {
        let base = bytes.count
        bytes.append(contentsOf: row.bytes)
        bodyBytes += row.bodyCount
        for k in 0..<StoreRow.Column.allCases.count {
            let (start, length) = (Int(row.spans[k * 2]), Int(row.spans[k * 2 + 1]))
            spans.append(length < 0 ? -1 : start + base)
            spans.append(length)
        }
        stamps.append(row.createdAt)
        stamps.append(row.modifiedAt)
        zones.append(row.zoneID)
        count += 1
    }

    /// Row `i`'s zone; `nil` means the default zone.
    func zoneID(_ i: Int) -> ZoneID? { zones[i] }

    /// Bytes of the rows' record JSON.
    private(set) var bodyBytes = 0

    /// Calls `body` with row `i`'s columns: created and modified timestamps, and each text column
    /// (`nil` for NULL) by ``StoreRow/Column``.
    func withRow<T>(_ i: Int, _ body: (_ createdAt: Int64?, _ modifiedAt: Int64?,
                                      _ text: (StoreRow.Column) -> UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { raw in
            let first = i * StoreRow.Column.allCases.count * 2
            return try body(stamps[i * 2], stamps[i * 2 + 1]) { column in
                let start = spans[first + column.rawValue * 2], length = spans[first + column.rawValue * 2 + 1]
                guard length >= 0 else { return nil }
                return UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
            }
        }
    }
}

/// Writes records' compact JSON for ``StoreRow``s, reusing one buffer. One per thread.
public final class StoreRowEncoder {
    var output = JSONOutput(capacity: 16 << 10)

    /// Creates an encoder.
    public init() {}
}

extension EncodedSystemKeys {
    /// Calls `body` with where each text column the line holds lies in it (``StoreRow/Column``).
    @inline(__always)
    func forEachTextColumn(_ body: (Range<Int>, StoreRow.Column) -> Void) {
        body(recordName, .recordName)
        if let range = recordType { body(range, .recordType) }
        if let range = recordChangeTag { body(range, .changeTag) }
        if let range = createdBy { body(range, .createdBy) }
        if let range = modifiedBy { body(range, .modifiedBy) }
        if let range = parentName { body(range, .parentName) }
        if let range = shareName { body(range, .shareName) }
    }
}
