import FerryIO
import FerryNDJSON
import FerryRecords

/// One live record: its compact JSON and what replay compares on the next save.
struct StoredRecord {
    var bytes: [UInt8]
    var changeTag: String?
    var modifiedTimestamp: Int64?
}

/// One zone of a state: its records by name, whether it was deleted, its latest token.
struct ZoneState {
    var zoneID: ZoneID
    var records: [String: StoredRecord] = [:]
    var isDeleted = false
    var syncToken: String?
    var moreComing = false
}

/// The state of every zone after a replay: the live records, the zones and their tokens.
///
/// Records are held as their compact JSON (as the history gave them), so memory is proportional to
/// the live records, not to the history. Output is in a stable order — zone (name, then owner),
/// then recordName, both by UTF-8 bytes — so two states with the same records write the same bytes.
public struct ReplayState {
    /// Zones in the order first seen; ``zoneIndex`` finds them by key.
    var zoneList: [ZoneState] = []
    var zoneIndex: [ZoneKey: Int] = [:]
    var database: ChangeEvent.Checkpoint?
    var lastCheckpoint: ChangeEvent.Checkpoint?

    /// An empty state.
    public init() {}

    /// Loads a state Ferry wrote (NDJSON records, or anything `NDJSONReader` reads) and, when given,
    /// the tokens written with it.
    public init(loading source: ByteSource, tokens: ReplayTokens? = nil) throws {
        let reader = NDJSONReader(source: source)
        while let record = try reader.next() {
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(record, into: &out)
            let zone = record.zoneID ?? .default
            insert(StoredRecord(bytes: out.array, changeTag: record.recordChangeTag, modifiedTimestamp: record.modified?.timestamp),
                   named: record.recordName, zone: zone)
        }
        if let tokens { apply(tokens) }
    }

    /// Loads a state file and its `<path>.tokens.json` sidecar when there is one.
    public init(contentsOfFile path: String) throws {
        let sidecar = ReplayTokens.sidecarPath(for: path)
        let tokens = FileSystem.exists(sidecar) ? try ReplayTokens(contentsOfFile: sidecar) : nil
        try self.init(loading: try InputFile(path: path), tokens: tokens)
    }

    /// The index of `zone`, adding it when new.
    mutating func index(of zone: ZoneID) -> Int {
        let key = ZoneKey(zone)
        if let i = zoneIndex[key] { return i }
        zoneList.append(ZoneState(zoneID: zone))
        zoneIndex[key] = zoneList.count - 1
        return zoneList.count - 1
    }

    mutating func insert(_ record: StoredRecord, named name: String, zone: ZoneID) {
        let i = index(of: zone)
        zoneList[i].records[name] = record
    }

    mutating func apply(_ tokens: ReplayTokens) {
        for token in tokens.zones {
            let i = index(of: token.zoneID)
            zoneList[i].syncToken = token.syncToken
            zoneList[i].moreComing = token.moreComing
            zoneList[i].isDeleted = token.isDeleted && zoneList[i].records.isEmpty
        }
        database = tokens.database
        lastCheckpoint = tokens.lastCheckpoint
    }

    /// The number of live records.
    public var recordCount: Int { zoneList.reduce(0) { $0 + $1.records.count } }

    /// The zones that exist (not deleted), in output order.
    public var zoneIDs: [ZoneID] { sortedZones().compactMap { zoneList[$0].isDeleted ? nil : zoneList[$0].zoneID } }

    /// The tokens of this state, to store beside it.
    public var tokens: ReplayTokens {
        ReplayTokens(zones: sortedZones().map { i in
            let zone = zoneList[i]
            return .init(zoneID: zone.zoneID, syncToken: zone.syncToken, moreComing: zone.moreComing, isDeleted: zone.isDeleted)
        }, database: database, lastCheckpoint: lastCheckpoint)
    }

    /// Zone indices in output order.
    func sortedZones() -> [Int] { zoneIndex.sorted { $0.key < $1.key }.map(\.value) }

    static func sortedNames(_ records: [String: StoredRecord]) -> [String] {
        records.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The compact JSON of every live record, in output order.
    func forEachRecordJSON(_ body: (ZoneState, String, StoredRecord) throws -> Void) rethrows {
        for i in sortedZones() {
            let zone = zoneList[i]
            for name in Self.sortedNames(zone.records) { try body(zone, name, zone.records[name]!) }
        }
    }

    /// The record `name` in `zone`, decoded.
    public func record(named name: String, in zone: ZoneID = .default) throws -> Record? {
        guard let i = zoneIndex[ZoneKey(zone)], let stored = zoneList[i].records[name] else { return nil }
        return try Self.decode(stored.bytes)
    }

    /// Calls `body` with every live record, decoded, in output order.
    public func forEachRecord(_ body: (Record) throws -> Void) throws {
        try forEachRecordJSON { _, _, stored in try body(try Self.decode(stored.bytes)) }
    }

    /// Every live record, decoded, in output order.
    public func records() throws -> [Record] {
        var result: [Record] = []
        try forEachRecord { result.append($0) }
        return result
    }

    /// Writes every live record as NDJSON onto `sink` in output order, then commits it (for an
    /// `OutputFile`, the atomic rename: an interrupted write leaves no partial state).
    public func write(to sink: ByteSink) throws {
        var out = JSONOutput(capacity: 1 << 20)
        try forEachRecordJSON { _, _, stored in
            stored.bytes.withUnsafeBytes { out.append($0) }
            out.append(0x0A)
            if out.count >= 1 << 20 {
                try sink.write(out.bytes)
                out.removeAll()
            }
        }
        try sink.write(out.bytes)
        try sink.commit()
    }

    /// Writes every live record through `writer` (decoded, so any record writer works), then finishes it.
    public func write(to writer: NDJSONWriter) throws {
        try forEachRecord { try writer.write($0) }
        try writer.finish()
    }

    /// Writes the state to `path` and its tokens to `<path>.tokens.json`, each atomically.
    /// The tokens file is written after the state, so a tokens file never describes a state that
    /// was not written.
    public func write(toPath path: String) throws {
        try write(to: try OutputFile(path: path))
        try tokens.write(toPath: ReplayTokens.sidecarPath(for: path))
    }

    static func decode(_ bytes: [UInt8]) throws -> Record {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(RecordFormatError) -> Record in try RecordJSON.decodeRecord(buffer) }
        }
        return try result.get()
    }
}
