import FerryChangeLog
import FerryInternals
import FerryIO
import FerryPipeline
import FerryRecords


/// Imports records into a store: a ``RecordWriter`` whose output is a store file.
///
/// - A **new store** (no file, or an empty one) is built beside its target under a temporary
///   name, without a rollback journal or syncs, its indexes made after the rows, then synced and
///   linked into place by ``finish()``: other processes see no store or the whole one, and a
///   killed import leaves only a temporary, which the next import to that name removes.
/// - An **existing store** is written in one transaction (WAL): readers keep reading the state
///   before it until ``finish()`` commits; a second writer waits up to the busy timeout, then
///   fails. A failed or abandoned import leaves the store as it was.
///
/// Records are encoded on the calling thread and inserted by SQLite on another, so decoding the
/// input and inserting overlap; records that arrive encoded (``write(encodedLines:records:)``,
/// from sources that transcode on worker threads) are stored as they are, only their system
/// keys read. Nothing is visible until ``finish()`` succeeds.
///
/// ```swift
/// let writer = try StoreWriter(path: "chat.sqlite", configuration: .init(mode: .upsert))
/// while let record = try reader.next() { try writer.write(record) }
/// try writer.finish()
/// ```
public final class StoreWriter: RecordWriter {
    /// What happens to a record whose zone already holds one of its name.
    public enum Mode: String, Sendable, CaseIterable {
        /// It is an error (CloudKit's `create`); nothing is written.
        case insert
        /// The stored record is updated: the new record's fields and system keys win, those it
        /// lacks are kept (CloudKit's `update`).
        case upsert
        /// The stored record is replaced whole (CloudKit's `replace`).
        case replace
    }

    /// How records are written.
    public struct Configuration: Sendable {
        /// What to do with records that exist.
        public var mode: Mode
        /// The database of records written without one: `public`, `private` or `shared`.
        public var database: String
        /// Seconds to wait for another writer before failing.
        public var busyTimeout: Double
        /// SQLite's page cache while writing, in MiB. A new store in insert mode, which only
        /// appends, uses at most ``appendingCacheMiB``.
        public var cacheMiB: Int
        /// Records handed to the inserting thread at a time.
        public var batchSize: Int

        /// Creates a configuration.
        public init(mode: Mode = .insert, database: String = "private", busyTimeout: Double = 5, cacheMiB: Int = 256,
                    batchSize: Int = 512) {
            self.mode = mode
            self.database = database
            self.busyTimeout = busyTimeout
            self.cacheMiB = cacheMiB
            self.batchSize = batchSize
        }
    }

    /// SQLite's page cache while records are only appended (a new store in insert mode), in
    /// MiB. Appending touches a few pages at the ends of the table and the type index; a larger
    /// cache only holds written pages longer. Measured on 1M records (724 MB, averages of four
    /// alternating rounds): 2–32 MiB imported in 3.9–4.4 s with 90–125 MB of RSS, 256 MiB in
    /// 4.5 s with 350 MB.
    public static let appendingCacheMiB = 16

    /// The page cache for a load configured with `configured` MiB: at most
    /// ``appendingCacheMiB`` when it only appends (a new store), else `configured`.
    static func cacheMiB(_ configured: Int, appending: Bool) -> Int {
        appending ? min(configured, appendingCacheMiB) : configured
    }

    /// What an import did.
    public struct Statistics: Sendable, Equatable {
        /// Records created, modified, and left unchanged (saved again byte for byte).
        public var created = 0, modified = 0, unchanged = 0
    }

    /// The store file.
    public let path: String
    /// The configuration.
    public let configuration: Configuration
    /// Whether the import makes a new store (rather than writing into an existing one).
    public let isNewStore: Bool
    /// Records written so far.
    public private(set) var recordCount = 0
    /// Bytes of record JSON handed to the store so far.
    public private(set) var bytesWritten = 0
    /// What the import did, after ``finish()``.
    public private(set) var statistics = Statistics()

    private let staged: StagedStore?
    private var store: RecordStore?
    /// A row, or rows made in one buffer (inserted, never saved over), and the id of their database.
    enum Item: Sendable {
        case row(StoreRow, database: Int64)
        case rows(StoreRows, database: Int64)
    }

    private var pipeline: WritePipeline<StoreMutator, Item>?
    private var batch: [Item] = []
    private let encoder = StoreRowEncoder()
    /// The system keys of the encoded line read last (reused line after line).
    private var lineKeys = Record(recordName: "")
    /// Where the system keys of the encoded line read last lie in it (reused line after line).
    private var encodedKeys = EncodedSystemKeys()
    /// The zones encoded lines named, by their JSON.
    private var encodedZones = ZoneCache()
    private let defaultDatabase: Int64
    /// Whether the records indexes are made after the rows (a new store in insert mode).
    private var buildsIndexesLast: Bool
    private var isDone = false
    private var hasRestoredJournal = false

    /// Opens `path` for an import: a new store when there is no file (or an empty one), else the
    /// store there.
    ///
    /// - Throws: ``StoreError`` — ``StoreError/Code-swift.enum/notAStore`` when the file is
    ///   something else (Ferry never overwrites it), ``StoreError/Code-swift.enum/busy`` when
    ///   another process writes to the store beyond the busy timeout.
    public init(path: String, configuration: Configuration = .init()) throws {
        self.path = path
        self.configuration = configuration
        defaultDatabase = try StoreCodec.databaseID(configuration.database)
        let kind = StoreFile.kind(at: path)
        let appends = configuration.mode == .insert && (kind == .missing || kind == .empty)
        let storeConfiguration = RecordStore.Configuration(
            busyTimeout: configuration.busyTimeout,
            cacheMiB: Self.cacheMiB(configuration.cacheMiB, appending: appends), mapsFile: false)
        switch kind {
        case .missing, .empty:
            isNewStore = true
            buildsIndexesLast = configuration.mode == .insert
            let staged = try StagedStore(target: path)
            self.staged = staged
            do {
                let store = try RecordStore(opening: staged.temporaryPath, access: .readWrite, configuration: storeConfiguration,
                                            creating: true, bulkLoad: true)
                if buildsIndexesLast {
                    // The type index grows at a few places (one per type and zone) and costs little
                    // while rows arrive; the name index takes random inserts, cheaper sorted at the end.
                    try store.connection.execute("DROP INDEX records_by_name")
                }
                try store.connection.execute("BEGIN")
                self.store = store
            } catch let error as StoreError {
                staged.abandon()
                throw error.at(path)
            }
        case .store:
            isNewStore = false
            buildsIndexesLast = false
            staged = nil
            let store = try RecordStore(path: path, access: .readWrite, configuration: storeConfiguration)
            try Self.beginWriting(store)
            self.store = store
        case .notSQLite, .otherSQLite, .folder, .standardInput, .compressed:
            throw StoreError(.notAStore, StoreFile.notAStoreMessage(kind), path: path)
        }
        let mode = configuration.mode
        let mutator = try StoreMutator(connection: store!.connection, path: path)
        // A new store in insert mode creates each record once: its journal is written at the end.
        mutator.defersCreatedJournal = buildsIndexesLast
        pipeline = WritePipeline(context: mutator) { mutator, item in
            switch item {
            case .row(let row, let database):
                let zone = try mutator.zone(for: row.zoneID, database: database)
                switch mode {
                case .insert: try mutator.insert(row, zone: zone)
                case .replace: try mutator.save(row, zone: zone)
                case .upsert: try mutator.save(row, zone: zone, merging: true)
                }
            case .rows(let rows, let database):
                for k in 0..<rows.count { try mutator.insert(rows, k, zone: try mutator.zone(for: rows.zoneID(k), database: database)) }
            }
        }
        batch.reserveCapacity(configuration.batchSize)
    }

    deinit {
        if !isDone { abandon() }
    }

    /// Takes the write lock of an existing store (`BEGIN IMMEDIATE`), waiting up to the busy timeout.
    static func beginWriting(_ store: RecordStore) throws {
        do {
            try store.connection.execute("BEGIN IMMEDIATE")
        } catch let error as StoreError where error.code == .busy {
            var busy = error
            busy.message = "another process is writing to the store; waited \(formatSeconds(store.configuration.busyTimeout)) s "
                + "for it to finish (raise --busy-timeout to wait longer)"
            throw busy
        }
    }

    static func formatSeconds(_ seconds: Double) -> String {
        abs(seconds) < 1e15 && seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// Writes one record into the writer's database.
    public func write(_ record: Record) throws {
        try write(StoreRow(record: record, encoder: encoder), databaseID: defaultDatabase)
    }

    /// Writes one record into `database` (`public`, `private`, `shared`).
    public func write(_ record: Record, database: String?) throws {
        try write(StoreRow(record: record, encoder: encoder), databaseID: try database.map(StoreCodec.databaseID) ?? defaultDatabase)
    }

    /// Writes a prepared row (see ``StoreRow``) into `database`, or the writer's database.
    public func write(_ row: StoreRow, database: String? = nil) throws {
        try write(row, databaseID: try database.map(StoreCodec.databaseID) ?? defaultDatabase)
    }

    /// Takes records encoded as compact NDJSON lines: their bytes become the stored JSON.
    public var acceptsEncodedLines: Bool { true }

    /// Writes `records` records given as compact NDJSON lines, each ended by a newline, as
    /// ``RecordJSON/encode(_:into:)`` writes them: the bytes of each line are stored as they are
    /// and only its system keys are read (for the columns). The rows are those
    /// ``write(_:)`` makes of the decoded records.
    public func write(encodedLines bytes: UnsafeRawBufferPointer, records: Int) throws {
        guard bytes.baseAddress != nil else { return }
        if configuration.mode == .insert { return try insert(encodedLines: bytes, records: records) }
        var start = 0
        while start < bytes.count {
            let end = ByteSearch.firstIndex(of: 0x0A, in: bytes, from: start) ?? bytes.count
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            start = end + 1
            if RecordJSON.readEncodedSystemKeys(line, into: &encodedKeys) {
                let zoneID = try zoneID(in: line, at: encodedKeys.zoneID)
                try write(StoreRow(line: line, keys: encodedKeys, zoneID: zoneID), databaseID: defaultDatabase)
                continue
            }
            guard RecordJSON.decodeSystemKeys(line, into: &lineKeys) else {
                // Not what an encoder writes (not compact, or not a plain record): decoded and
                // encoded like any record; decoding says what is wrong, if anything.
                try write(try RecordJSON.decodeRecord(line))
                continue
            }
            try write(StoreRow(columnsOf: lineKeys, body: line), databaseID: defaultDatabase)
        }
    }

    /// Encoded lines inserted as rows made in one buffer.
    private func insert(encodedLines bytes: UnsafeRawBufferPointer, records: Int) throws {
        guard !isDone, let pipeline else { throw StoreError(.invalidArgument, "the import is finished", path: path) }
        guard bytes.baseAddress != nil else { return }
        var rows = StoreRows(capacity: records, bytes: bytes.count + records * 64)
        var start = 0
        while start < bytes.count {
            let end = ByteSearch.firstIndex(of: 0x0A, in: bytes, from: start) ?? bytes.count
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            start = end + 1
            if RecordJSON.readEncodedSystemKeys(line, into: &encodedKeys) {
                rows.append(line: line, keys: encodedKeys, zoneID: try zoneID(in: line, at: encodedKeys.zoneID))
            } else if RecordJSON.decodeSystemKeys(line, into: &lineKeys) {
                rows.append(columnsOf: lineKeys, body: line)
            } else {
                // Not what an encoder writes (not compact, or not a plain record): decoded and
                // encoded like any record; decoding says what is wrong, if anything.
                let row = StoreRow(record: try RecordJSON.decodeRecord(line), encoder: encoder)
                rows.append(row)
            }
        }
        recordCount += rows.count
        bytesWritten += rows.bodyBytes
        staged?.noteWritten(rows.bodyBytes)
        try flushBatch()
        try pipeline.submit([.rows(rows, database: defaultDatabase)])
    }

    /// The zone ID whose JSON lies at `range` of `line` (`nil`: the line names none), found by
    /// its bytes among the zones seen before.
    private func zoneID(in line: UnsafeRawBufferPointer, at range: Range<Int>?) throws -> ZoneID? {
        guard let range else { return nil }
        if let index = encodedZones.index(of: line, range) { return encodedZones.zone(at: index) }
        var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: line[range]))
        let zoneID: ZoneID
        do {
            zoneID = try scanner.decodeZoneID()
        } catch {
            throw StoreError(.invalidRecord, "the zoneID of a record is not a zone ID: \(error)", path: path)
        }
        _ = encodedZones.add(zoneID, from: line, range)
        return zoneID
    }

    private func write(_ row: StoreRow, databaseID: Int64) throws {
        guard !isDone, let pipeline else { throw StoreError(.invalidArgument, "the import is finished", path: path) }
        recordCount += 1
        bytesWritten += row.bodyCount
        staged?.noteWritten(row.bodyCount)
        batch.append(.row(row, database: databaseID))
        if batch.count >= configuration.batchSize {
            let full = batch
            batch.removeAll(keepingCapacity: true)
            try pipeline.submit(full)
        }
    }

    /// Sets the upstream change token of a zone (from an archive's manifest, say), making the
    /// zone when the store lacks it.
    public func setSyncToken(_ token: String?, for zoneID: ZoneID, database: String, moreComing: Bool = false) throws {
        let databaseID = try StoreCodec.databaseID(database)
        try flushBatch()
        try pipeline?.sync { mutator in
            let zone = try mutator.zone(for: zoneID, database: databaseID)
            if let token { try mutator.checkpoint(zone: zone, database: databaseID, token: token, moreComing: moreComing) }
        }
    }

    /// Replaces what this import wrote with a store's journal (from an archive of a store): the
    /// records, zones and journal numbers the journal gives, and the store ID its tokens carry, so
    /// the tokens the original store gave out keep working. Only a new store restores a journal;
    /// an import into an existing store ignores it.
    ///
    /// A store's journal comes one database at a time (a change log does not name databases):
    /// the first call empties what the import wrote, later ones add to it.
    public func restoreJournal(from reader: ChangeLogReader, database: String) throws {
        guard isNewStore, let pipeline else { return }
        try flushBatch()
        let makesIndexes = buildsIndexesLast
        buildsIndexesLast = false
        let first = !hasRestoredJournal
        hasRestoredJournal = true
        let database = try StoreCodec.databaseID(database)
        let cacheMiB = configuration.cacheMiB
        try pipeline.sync { mutator in
            if first {
                try mutator.flush()
                // Restoring looks records up and updates them: not an append-only load.
                try mutator.connection.execute("PRAGMA cache_size = -\(cacheMiB * 1024)")
                mutator.defersCreatedJournal = false
                // The journal puts each record where it last changed; the records read before it
                // (the archive's records members) are in stored order, which is kept (finish()).
                try mutator.connection.execute("""
                    CREATE TEMP TABLE restore_order AS
                        SELECT z.database_id AS database_id, z.zone_name AS zone_name, z.owner_record_name AS owner,
                               r.record_name AS record_name, r.id AS id
                        FROM records r JOIN zones z ON z.id = r.zone_id;
                    CREATE UNIQUE INDEX temp.restore_order_key ON restore_order (database_id, zone_name, owner, record_name)
                    """)
                try mutator.connection.execute("DELETE FROM records; DELETE FROM journal; DELETE FROM checkpoints; DELETE FROM zones")
                if makesIndexes { for sql in StoreSchema.recordIndexes { try mutator.connection.execute(sql) } }
                mutator.forgetCaches()
            }
            let applier = ReplayApplier(mutator: mutator, database: database, cascade: false, commitsEachCheckpoint: false,
                                        restoresJournal: true, maximumListedAnomalies: 0)
            let encoder = StoreRowEncoder()
            var index = 0
            while let event = try reader.next() {
                index += 1
                try applier.take(ReplayItem(change: ReplayChange(event, encoder: encoder, cascade: false, defaultZone: nil), index: index))
            }
            try applier.finishHistory()
            try mutator.resumeSequence()
            if let storeID = applier.restoredStoreID {
                let update = try mutator.connection.prepare("UPDATE ferry_store SET value = ?1 WHERE key = 'storeID'")
                try update.bind(storeID, at: 1)
                try update.run()
            }
        }
    }

    /// After a journal was restored: gives the records the row ids (the stored order) they had
    /// when read from the archive's records members, before the journal was replayed; a record
    /// only the journal held goes after them, in the journal's order.
    private static func restoreStoredOrder(_ connection: SQLiteConnection) throws {
        try connection.execute("""
            UPDATE records SET id = -id;
            UPDATE records SET id = coalesce(
                (SELECT o.id FROM restore_order o JOIN zones z
                    ON z.database_id = o.database_id AND z.zone_name = o.zone_name AND z.owner_record_name = o.owner
                 WHERE z.id = records.zone_id AND o.record_name = records.record_name),
                (SELECT coalesce(max(id), 0) FROM restore_order) - id);
            DROP TABLE restore_order;
            """)
    }

    private func flushBatch() throws {
        guard !batch.isEmpty, let pipeline else { return }
        let rest = batch
        batch.removeAll(keepingCapacity: true)
        try pipeline.submit(rest)
    }

    /// Writes what is pending, builds the indexes of a new store, commits, and for a new store
    /// syncs it and gives it its name. On failure nothing is written (the store is as it was).
    public func finish() throws {
        guard !isDone, let pipeline, let store else { return }
        do {
            try flushBatch()
            let restored = hasRestoredJournal
            statistics = try pipeline.sync { mutator in
                try mutator.writeDeferredJournal()
                try mutator.flush()
                if restored { try Self.restoreStoredOrder(mutator.connection) }
                return Statistics(created: mutator.created, modified: mutator.modified, unchanged: mutator.unchanged)
            }
            if buildsIndexesLast { try buildIndexes(store) }
            try store.connection.execute("COMMIT")
            if let staged {
                _ = try store.connection.text("PRAGMA journal_mode = WAL")
                self.pipeline = nil
                self.store = nil
                try staged.publish()
            }
            isDone = true
            self.pipeline = nil
            self.store = nil
        } catch {
            abandon()
            if let error = error as? StoreError, staged != nil { throw error.at(path) }
            throw error
        }
    }

    /// Makes the records indexes of a new store after its rows; a duplicate record is a conflict
    /// naming the record.
    private func buildIndexes(_ store: RecordStore) throws {
        var failure: StoreError?
        do {
            try store.connection.sortingOnThreads(Processors.available) {
                try store.connection.execute(StoreSchema.recordIndexes[0])
            }
        } catch let error as StoreError {
            failure = error
        }
        guard let failure else { return }
        guard failure.code == .conflict else { throw failure }
        let duplicate = try store.connection.prepare("""
            SELECT r.record_name, z.zone_name, z.owner_record_name, z.database_id FROM records r JOIN zones z ON z.id = r.zone_id
            GROUP BY r.zone_id, r.record_name HAVING count(*) > 1 LIMIT 1
            """)
        guard try duplicate.step() else { throw failure }
        let name = duplicate.text(at: 0) ?? ""
        let owner = duplicate.text(at: 2) ?? ""
        throw StoreError(.conflict, "the record \(JSONOutput.literal(name)) occurs twice in the zone "
                         + JSONOutput.literal(duplicate.text(at: 1) ?? "")
                         + "\(owner.isEmpty ? "" : " (owner \(JSONOutput.literal(owner)))") of the \(StoreCodec.databaseName(duplicate.int64(at: 3))) database; "
                         + "import with --mode upsert or --mode replace to keep the last one", path: path, recordName: name)
    }

    /// Drops the import: rolls back an existing store's transaction, removes a new store's file.
    public func abandon() {
        guard !isDone else { return }
        isDone = true
        pipeline?.drain()
        pipeline = nil
        if staged == nil { try? store?.connection.execute("ROLLBACK") }
        store = nil
        staged?.abandon()
    }
}

