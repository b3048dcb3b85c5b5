import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords

/// One zone of a state: its records, whether it was deleted, its latest token.
struct ZoneState {
    var zoneID: ZoneID
    let table: RecordTable
    var isDeleted = false
    var syncToken: String?
    var moreComing = false
}

/// What a ``ReplayState`` holds, shared between copies until one of them changes. Its zones are
/// read for every event by the one thread replaying into it (unchecked exclusivity).
final class ReplayStorage {
    /// Where the records' blobs live.
    let allocator = BlobAllocator()
    @exclusivity(unchecked) var zones: [ZoneState] = []
    var zoneIndex: [ZoneKey: Int] = [:]
    var database: ChangeEvent.Checkpoint?
    var lastCheckpoint: ChangeEvent.Checkpoint?
    /// Mapped histories whose bytes records' JSON points into (``BlobAllocator/copy(_:keepingJSON:)``).
    /// A copy of the storage copies its records' JSON, and keeps the mappings too: saves still
    /// pending in a replayer's batch may point into them.
    var mappings: [MappedFile] = []
    /// The bytes of ``mappings``.
    var mappedBytes: Int { mappings.reduce(0) { $0 + $1.bytes.count } }

    /// The index of `zone`, adding it when new.
    func index(of zone: ZoneID) -> Int {
        let key = ZoneKey(zone)
        if let i = zoneIndex[key] { return i }
        zones.append(ZoneState(zoneID: zone, table: RecordTable(allocator: allocator)))
        zoneIndex[key] = zones.count - 1
        return zones.count - 1
    }

    /// A deep copy.
    func copy() -> ReplayStorage {
        let copy = ReplayStorage()
        copy.zones = zones.map { zone in
            var copied = ZoneState(zoneID: zone.zoneID, table: zone.table.copy(into: copy.allocator))
            copied.isDeleted = zone.isDeleted
            copied.syncToken = zone.syncToken
            copied.moreComing = zone.moreComing
            return copied
        }
        copy.zoneIndex = zoneIndex
        copy.mappings = mappings
        copy.database = database
        copy.lastCheckpoint = lastCheckpoint
        return copy
    }
}

/// The state of every zone after a replay: the live records, the zones and their tokens.
///
/// Records are held as compact JSON — as the history gave them, whitespace removed — with their
/// name, change tag, modification time and references beside them, so memory is proportional to
/// the live records, not to the history. Records replayed from a mapped history file keep their
/// JSON in the mapping, which the state keeps (see ``Replayer/apply(_:)``): as the file holds it,
/// pretty-printed for a saved response, compacted when the state is written. Records and zones are
/// identified by the bytes of their names (`"é"` and `"e\u{301}"` are two records), zones by
/// name and owner.
///
/// Output order is stable: zones by name then owner, records by name, both in byte order; or,
/// with ``OutputOrder/dependencies``, parents and referenced records before the records that
/// point at them. Two states with the same records write the same records in the same order.
///
/// A value type: copies are independent (they share storage until one changes).
public struct ReplayState {
    /// The order records are written and visited in.
    public enum OutputOrder: Sendable {
        /// Zone by zone (by name, then owner), records by name, in byte order.
        case byName
        /// Zone by zone; within a zone, a record's parent and the records its `REFERENCE` fields
        /// name come before it (ties by name); records on reference cycles follow, by name.
        case dependencies
    }

    var storage = ReplayStorage()

    /// An empty state.
    public init() {}

    /// A state holding the records `reader` returns and, when given, `tokens`.
    ///
    /// - Throws: what the reader throws; ``ChangeLogError`` (``ChangeLogError/Code/invalidTokens``)
    ///   when `tokens` were written for a state with a different number of records.
    public init(loading reader: any RecordReader, tokens: ReplayTokens? = nil) throws {
        while let record = try reader.next() { try save(record) }
        if let tokens { try apply(tokens, source: reader.sourceName) }
    }

    /// Loads an NDJSON state file and its `<path>.tokens.json` sidecar when there is one.
    public init(contentsOfFile path: String) throws {
        let sidecar = ReplayTokens.sidecarPath(for: path)
        let tokens = FileSystem.exists(sidecar) ? try ReplayTokens(contentsOfFile: sidecar) : nil
        try self.init(loading: NDJSONReader(source: try InputFile(path: path)), tokens: tokens)
    }

    /// Gives this value its own storage before it changes.
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    /// Adds `record`, replacing the record of the same name in its zone (a tombstone removes it).
    public mutating func save(_ record: Record) throws {
        makeUnique()
        let zone = storage.index(of: record.zoneID ?? .default)
        let table = storage.zones[zone].table
        if record.isDeleted {
            var name = record.recordName
            name.withUTF8 { bytes in
                let bytes = UnsafeRawBufferPointer(bytes)
                if let old = table.remove(bytes, hash: RecordBlob.hash(of: bytes)) { table.allocator.release(old) }
            }
            return
        }
        try RecordScanner.withScanned(record) { scanned in
            if case .saved(let blob, _) = scanned, let old = table.insert(table.allocator.copy(blob)) {
                table.allocator.release(old)
            }
        }
    }

    /// Takes the zones' tokens and deletion marks, the database token and the last checkpoint
    /// from `tokens`.
    ///
    /// - Throws: ``ChangeLogError`` (``ChangeLogError/Code/invalidTokens``) when `tokens` give a
    ///   record count other than this state's: they belong to another state (for example one
    ///   written by an interrupted run).
    public mutating func apply(_ tokens: ReplayTokens, source: String? = nil) throws {
        if let expected = tokens.recordCount, expected != recordCount {
            throw ChangeLogError(.invalidTokens, "expected tokens for a state of \(recordCount) records, found tokens written "
                                 + "for \(expected) records: the tokens file belongs to another state", source: source)
        }
        makeUnique()
        for token in tokens.zones {
            let i = storage.index(of: token.zoneID)
            storage.zones[i].syncToken = token.syncToken
            storage.zones[i].moreComing = token.moreComing
            storage.zones[i].isDeleted = token.isDeleted && storage.zones[i].table.count == 0
        }
        storage.database = tokens.database
        storage.lastCheckpoint = tokens.lastCheckpoint
    }

    /// The number of live records.
    public var recordCount: Int { storage.zones.reduce(0) { $0 + $1.table.count } }

    /// The zones that exist (not deleted), in output order.
    public var zoneIDs: [ZoneID] { sortedZones().compactMap { storage.zones[$0].isDeleted ? nil : storage.zones[$0].zoneID } }

    /// The tokens of this state, to store beside it: every zone the history named.
    public var tokens: ReplayTokens {
        ReplayTokens(zones: sortedZones().map { i in
            let zone = storage.zones[i]
            return .init(zoneID: zone.zoneID, syncToken: zone.syncToken, moreComing: zone.moreComing, isDeleted: zone.isDeleted)
        }, database: storage.database, lastCheckpoint: storage.lastCheckpoint, recordCount: recordCount)
    }

    /// A live record as a store writing the state takes it: its zone's index (as ``AppliedChange``
    /// gives it), its JSON (valid while the state lives; compact, or pretty-printed as a mapped
    /// response holds it unless ``Replayer/pointsAtPrettyPrintedJSON`` was off) and the stamp its
    /// last save got.
    package struct LiveRecord {
        package var zone: Int
        package var json: UnsafeRawBufferPointer
        package var stamp: Int64
    }

    /// The zone of each ``LiveRecord/zone`` number.
    package var zoneIDsByNumber: [ZoneID] { storage.zones.map(\.zoneID) }

    /// The live records, zone by zone (by name, then owner), records by name.
    package func liveRecords() -> [LiveRecord] {
        var records: [LiveRecord] = []
        records.reserveCapacity(recordCount)
        for zone in sortedZones() {
            for blob in storage.zones[zone].table.sortedBlobs { records.append(LiveRecord(zone: zone, json: blob.json, stamp: blob.stamp)) }
        }
        return records
    }

    /// Zone indices in output order.
    func sortedZones() -> [Int] { storage.zoneIndex.sorted { $0.key < $1.key }.map(\.value) }

    /// The records of a zone in `order`.
    func orderedBlobs(_ zone: ZoneState, _ order: OutputOrder) -> [RecordBlob] {
        let blobs = zone.table.sortedBlobs
        guard order == .dependencies else { return blobs }
        let zoneKey = ZoneKey(zone.zoneID)
        let keys = blobs.map { ExactName($0.nameString) }
        let targets = blobs.map { blob in
            var names: [ExactName] = []
            blob.forEachReference { reference in
                if let other = reference.zone, ZoneKey(other.zoneID) != zoneKey { return }
                names.append(ExactName(String(decoding: reference.name, as: UTF8.self)))
            }
            return names
        }
        return DependencyOrder.order(keys: keys, targets: targets).order.map { blobs[$0] }
    }

    /// Calls `body` with every zone and live record, in `order`.
    func forEachBlob(order: OutputOrder = .byName, _ body: (ZoneState, RecordBlob) throws -> Void) rethrows {
        for i in sortedZones() {
            let zone = storage.zones[i]
            for blob in orderedBlobs(zone, order) { try body(zone, blob) }
        }
    }

    /// The record `name` in `zone`, decoded.
    public func record(named name: String, in zone: ZoneID = .default) throws -> Record? {
        guard let i = storage.zoneIndex[ZoneKey(zone)] else { return nil }
        var name = name
        let blob = name.withUTF8 { bytes in
            storage.zones[i].table.find(UnsafeRawBufferPointer(bytes), hash: RecordBlob.hash(of: UnsafeRawBufferPointer(bytes)))
        }
        return try blob.map { try Self.decode($0.json) }
    }

    /// Calls `body` with every live record, decoded, in `order`.
    public func forEachRecord(order: OutputOrder = .byName, _ body: (Record) throws -> Void) throws {
        try forEachBlob(order: order) { zone, blob in
            let record: Record
            do throws(RecordFormatError) { record = try Self.decode(blob.json) } catch {
                throw Self.recordError(error, json: blob.json, zoneID: zone.zoneID)
            }
            try body(record)
        }
    }

    /// The error for a live record that does not decode, naming it by zone and recordName: the
    /// state keeps a record as the history last saved it (checked as JSON, its field types not yet
    /// decoded), not the file and line it came from.
    /// With `event`, the 1-based event of the history that saved it (for `--log`, which decodes
    /// each save as it is applied).
    package static func recordError(_ error: RecordFormatError, json: UnsafeRawBufferPointer, zoneID: ZoneID,
                                    event: Int? = nil) -> ChangeLogError {
        var name = "?"
        if case .object(let object)? = try? JSONValue(parsing: String(decoding: json, as: UTF8.self)),
           let recordName = object["recordName"]?.stringValue {
            name = recordName
        }
        let saved = event.map { "as event \($0) of the history saved it" } ?? "as the history last saved it"
        return ChangeLogError(.format, "the record \"\(name)\" of zone \"\(zoneID.zoneName)\", \(saved): "
                              + error.message + " (byte \(error.byteOffset) of its JSON)", underlying: error)
    }

    /// Every live record, decoded, in `order`.
    public func records(order: OutputOrder = .byName) throws -> [Record] {
        var result: [Record] = []
        try forEachRecord(order: order) { result.append($0) }
        return result
    }

    /// Writes every live record through `writer`, in `order`, then finishes it (for files: the
    /// atomic rename). An `NDJSONWriter` gets the records' JSON as held, without re-encoding.
    ///
    /// Before finishing, each history the state was read from in place is checked for changes
    /// made in place since (``MappedFile/checkUnchanged()``): a changed one throws, and nothing is
    /// finished. `beforeFinishing` runs after that check, just before the writer is finished.
    public func write(to writer: any RecordWriter, order: OutputOrder = .byName,
                      beforeFinishing: () throws -> Void = {}) throws {
        if let ndjson = writer as? NDJSONWriter {
            try RecordGather.write(sortedZones().map { orderedBlobs(storage.zones[$0], order) }, to: ndjson)
        } else {
            try forEachRecord(order: order) { try writer.write($0) }
        }
        // The records' JSON was read from the mapped histories up to here.
        for mapping in storage.mappings { try mapping.checkUnchanged() }
        try beforeFinishing()
        try writer.finish()
    }

    /// Writes the state as NDJSON to `path` and its tokens to `<path>.tokens.json`, each through a
    /// temporary file renamed into place. An old tokens file is removed just before the state is
    /// renamed, so a run interrupted in between leaves no tokens that describe another state, and
    /// a run that fails before leaves the old state and its tokens as they were.
    public func write(toPath path: String, order: OutputOrder = .byName) throws {
        let sidecar = ReplayTokens.sidecarPath(for: path)
        let tokensFile = try OutputFile(path: sidecar)
        do {
            try tokensFile.write(tokens.json())
            try write(to: NDJSONWriter(sink: try OutputFile(path: path)), order: order) {
                if FileSystem.exists(sidecar) { try FileSystem.remove(sidecar) }
            }
            try tokensFile.commit()
        } catch {
            tokensFile.abandon()
            throw error
        }
    }

    /// Decodes a record's JSON (compact, or pretty-printed in a mapping).
    static func decode(_ json: UnsafeRawBufferPointer) throws(RecordFormatError) -> Record {
        try RecordJSON.decodeRecord(json)
    }
}
