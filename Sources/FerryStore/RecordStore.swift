import FerryIO
import FerryRecords

/// A Ferry record store: one SQLite file holding databases → zones (with their change tokens) →
/// records (system fields as columns, the CKWS record dictionary as compact JSON), and a journal
/// of every change. See `Docs/StoreFormat.md` for the tables, which other tools may read.
///
/// A `RecordStore` is one connection to the file. Many may read at once, from this process or
/// others, while one writes (WAL): readers see the last committed state. Writing goes through
/// ``StoreWriter`` (import) and ``StoreReplayer`` (replay into the store), which take the write
/// lock for their transaction, waiting up to ``Configuration/busyTimeout`` for another writer.
///
/// ```swift
/// let store = try RecordStore(path: "chat.sqlite")
/// let page = try store.query(StoreQuery(recordType: "Message", predicate: "count > 50", limit: 100))
/// ```
public final class RecordStore {
    /// How a store is opened.
    public struct Configuration: Sendable {
        /// Seconds to wait for another connection's write lock before failing with
        /// ``StoreError/Code-swift.enum/busy``: 0 (or less, or NaN) does not wait; more than
        /// ``maximumBusyTimeout``, infinity included, waits that long.
        public var busyTimeout: Double
        /// The longest wait SQLite can make: `Int32.max` milliseconds, about 24.8 days.
        public static let maximumBusyTimeout = Double(Int32.max) / 1000
        /// SQLite's page cache, in MiB, for this connection.
        public var cacheMiB: Int
        /// Whether reads go through a memory map of the file (`PRAGMA mmap_size`).
        public var mapsFile: Bool

        /// Creates a configuration.
        public init(busyTimeout: Double = 5, cacheMiB: Int = 64, mapsFile: Bool = true) {
            self.busyTimeout = busyTimeout
            self.cacheMiB = cacheMiB
            self.mapsFile = mapsFile
        }
    }

    /// Whether the connection may write.
    public enum Access: Sendable {
        case readOnly, readWrite
    }

    /// The store file.
    public let path: String
    /// Whether this connection may write.
    public let access: Access
    /// The configuration it was opened with.
    public let configuration: Configuration
    /// The store's identity, made when it was created: its change tokens carry it, so a token of
    /// another store is refused.
    public let storeID: String
    /// The format version of the file (`PRAGMA user_version`).
    public let formatVersion: Int
    /// The connection; one thread at a time.
    let connection: SQLiteConnection
    /// Statements kept prepared for the calls a server repeats (``fetch(names:zone:database:desiredKeys:)``,
    /// ``zones()``), by their SQL; each is reset after its use.
    private var preparedStatements: [String: SQLiteStatement] = [:]
    /// The mutator ``apply(_:database:)`` keeps between batches (its statements stay prepared).
    var batchMutator: StoreMutator?

    /// The statement of `sql`, prepared on first use and kept: reset, its bindings cleared.
    func preparedStatement(_ sql: String) throws -> SQLiteStatement {
        if let statement = preparedStatements[sql] {
            statement.clearBindings()
            return statement
        }
        let statement = try connection.prepare(sql, persistent: true)
        preparedStatements[sql] = statement
        return statement
    }

    /// Opens the store at `path`.
    ///
    /// - Throws: ``StoreError`` — ``StoreError/Code-swift.enum/notAStore`` naming what the file
    ///   is instead (another SQLite database, not SQLite, missing), ``StoreError/Code-swift.enum/corrupt``,
    ///   ``StoreError/Code-swift.enum/newerFormat``; an older format is migrated when opened for
    ///   writing and read as it is when opened for reading (``formatVersion`` says which; the
    ///   migrations since only add tables, whose contents then read as empty).
    public convenience init(path: String, access: Access = .readOnly, configuration: Configuration = .init()) throws {
        let kind = StoreFile.kind(at: path)
        guard kind == .store else { throw StoreError(.notAStore, StoreFile.notAStoreMessage(kind), path: path) }
        try self.init(opening: path, access: access, configuration: configuration)
    }

    /// Opens a file known to be a store (or being made one: ``create(at:configuration:)``). With
    /// `bulkLoad`, for a file nothing else can see yet, writes go without a rollback journal or syncs.
    init(opening path: String, access: Access, configuration: Configuration, creating: Bool = false, bulkLoad: Bool = false) throws {
        self.path = path
        self.access = access
        self.configuration = configuration
        // Readers open the file read-write and refuse writes with `query_only`: SQLite deletes a
        // WAL store's -wal and -shm files when the last connection closes, but not when that
        // connection is read-only, so read-only readers left them beside the store after every
        // read. A file this process may not write is opened read-only; in a folder no one may
        // write (no write permission bit), with no WAL files beside it, it is read as immutable:
        // no process can write it there (a WAL writer needs those files), and SQLite could open it
        // no other way. (Another user's folder that its owner may write is not such a folder.)
        let mode: SQLiteConnection.OpenMode
        if creating {
            mode = .createIfMissing
        } else if access == .readOnly && !FileSystem.isWritable(path) {
            let folder = FileSystem.directory(of: path)
            let sidecars = FileSystem.exists(path + "-wal") || FileSystem.exists(path + "-shm")
            mode = !FileSystem.isWritable(folder) && FileSystem.isWriteProtected(folder) && !sidecars ? .immutable : .readOnly
        } else {
            mode = .readWrite
        }
        let connection = try SQLiteConnection(path: path, mode: mode)
        self.connection = connection
        connection.setBusyTimeout(seconds: configuration.busyTimeout)
        do {
            if access == .readOnly { try connection.execute("PRAGMA query_only = ON") }
            try connection.registerFunctions()
            if creating {
                // Before the first table (a database's page size is fixed when it is made), and
                // before the cache size: a page size set after it leaves SQLite's cache unbounded
                // in a long transaction (importing 1M records grew to 1.1 GB instead of 400 MB).
                try connection.execute("PRAGMA page_size = \(StoreSchema.pageSize)")
            }
            try connection.execute("PRAGMA cache_size = -\(configuration.cacheMiB * 1024)")
            // Debian builds SQLite with SECURE_DELETE: zeroing freed pages doubles the writes of a
            // replace or delete, for no benefit to a store.
            try connection.execute("PRAGMA secure_delete = OFF")
            if configuration.mapsFile { try connection.execute("PRAGMA mmap_size = 2147418112") }
            if creating {
                try Self.initialize(connection)
            }
            guard let applicationID = try connection.integer("PRAGMA application_id"), Int32(truncatingIfNeeded: applicationID) == StoreSchema.applicationID else {
                throw StoreError(.notAStore, StoreFile.notAStoreMessage(.otherSQLite(applicationID: 0)), path: path)
            }
            var version = Int(try connection.integer("PRAGMA user_version") ?? 0)
            if version > StoreSchema.currentVersion {
                throw StoreError(.newerFormat, "expected a store of format version \(StoreSchema.currentVersion) or older, found version "
                                 + "\(version): it was written by a newer Ferry; use that one", path: path)
            }
            if version < StoreSchema.oldestVersion {
                throw StoreError(.notAStore, "expected a store of format version \(StoreSchema.oldestVersion) to \(StoreSchema.currentVersion), "
                                 + "found format version \(version), which no Ferry writes (its PRAGMA user_version was changed)", path: path)
            }
            if version < StoreSchema.currentVersion && !(access == .readOnly && version >= StoreSchema.oldestReadableAsIs) {
                guard access == .readWrite else {
                    throw StoreError(.newerFormat, "the store has format version \(version), older than this Ferry's "
                                     + "\(StoreSchema.currentVersion); open it once for writing (for example `ferry index`) to migrate it", path: path)
                }
                try Self.migrate(connection, from: version)
                version = StoreSchema.currentVersion
            }
            formatVersion = version
            let statement = try connection.prepare("SELECT key, value FROM ferry_store")
            var meta: [String: String] = [:]
            while try statement.step() { meta[statement.text(at: 0) ?? ""] = statement.text(at: 1) }
            guard meta["format"] == StoreSchema.formatName, let id = meta["storeID"] else {
                throw StoreError(.notAStore, "expected the marker row format = \(StoreSchema.formatName) and a storeID in the table "
                                 + "ferry_store, found \(meta.isEmpty ? "none" : meta.keys.sorted().joined(separator: ", "))", path: path)
            }
            storeID = id
            if bulkLoad {
                _ = try connection.text("PRAGMA journal_mode = OFF")
                try connection.execute("PRAGMA synchronous = OFF")
            } else if access == .readWrite {
                // WAL is recorded in the file; a store copied in from elsewhere may lack it.
                if try connection.text("PRAGMA journal_mode")?.lowercased() != "wal" {
                    _ = try connection.text("PRAGMA journal_mode = WAL")
                }
                try connection.execute("PRAGMA synchronous = NORMAL")
            }
        } catch let error as StoreError where error.code == .notAStore && error.sqliteCode != nil {
            throw StoreError(.notAStore, "expected a Ferry store, found a file SQLite cannot read as a database: "
                             + (error.sqliteMessage ?? error.message), path: path)
        }
    }

    /// Creates a new, empty store at `path`, which must not exist (or be empty). The file is built
    /// beside it and linked into place, so no other process ever sees a half-made store.
    @discardableResult
    public static func create(at path: String, configuration: Configuration = .init()) throws -> RecordStore {
        let staged = try StagedStore(target: path)
        do {
            try Self.build(at: staged.temporaryPath, configuration: configuration)
            try staged.publish()
        } catch {
            staged.abandon()
            throw error
        }
        return try RecordStore(path: path, access: .readWrite, configuration: configuration)
    }

    /// Makes an empty store at `path` and closes it.
    private static func build(at path: String, configuration: Configuration) throws {
        let store = try RecordStore(opening: path, access: .readWrite, configuration: configuration, creating: true)
        _ = try store.connection.text("PRAGMA journal_mode = WAL")
    }

    /// Writes the tables of a new store into an empty database, in one transaction.
    static func initialize(_ connection: SQLiteConnection) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try connection.execute("PRAGMA application_id = \(StoreSchema.applicationID)")
            try connection.execute(StoreSchema.version1)
            for migration in StoreSchema.migrations { try connection.execute(migration.sql) }
            let insert = try connection.prepare("INSERT INTO ferry_store (key, value) VALUES (?, ?)")
            for (key, value) in [("format", StoreSchema.formatName), ("storeID", makeStoreID()),
                                 ("createdAt", String(Syscall.nowMilliseconds())), ("createdBy", "ferry")] {
                try insert.bind(key, at: 1)
                try insert.bind(value, at: 2)
                try insert.run()
            }
            try connection.execute("PRAGMA user_version = \(StoreSchema.currentVersion)")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Applies the migrations after `version`, each with its `user_version` in one transaction.
    static func migrate(_ connection: SQLiteConnection, from version: Int) throws {
        let steps = StoreSchema.migrations.filter { $0.version > version }
        guard steps.map(\.version) == Array((version + 1)...StoreSchema.currentVersion) else {
            throw StoreError(.notAStore, "no migration leads from format version \(version) to \(StoreSchema.currentVersion)")
        }
        for migration in steps {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA user_version = \(migration.version)")
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// 16 hex digits from the system's random source.
    static func makeStoreID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    // MARK: What the store holds

    /// The zones of the store, by database, name and owner.
    public func zones() throws -> [StoreZone] {
        let statement = try preparedStatement("""
            SELECT z.id, d.name, z.zone_json, z.sync_token, z.more_coming, z.is_deleted, z.record_count, z.change_seq
            FROM zones z JOIN databases d ON d.id = z.database_id
            ORDER BY z.database_id, z.zone_name, z.owner_record_name
            """)
        defer { statement.reset() }
        var zones: [StoreZone] = []
        while try statement.step() {
            zones.append(StoreZone(
                database: statement.text(at: 1) ?? "private",
                zoneID: try StoreCodec.zoneID(fromJSON: statement.textBytes(at: 2)),
                syncToken: statement.text(at: 3), moreComing: statement.int64(at: 4) != 0,
                isDeleted: statement.int64(at: 5) != 0, recordCount: Int(statement.int64(at: 6)),
                changeToken: StoreToken(storeID: storeID, sequence: statement.int64(at: 7))))
        }
        return zones
    }

    /// Live records in the store.
    public func recordCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM records") ?? 0)
    }

    /// Records per zone and type: `(database, zone, type, count)`, type `nil` for records without one.
    public func typeCounts() throws -> [(database: String, zoneName: String, ownerRecordName: String?, recordType: String?, count: Int)] {
        let statement = try connection.prepare("""
            SELECT d.name, z.zone_name, z.owner_record_name, c.record_type, c.n
            FROM (SELECT zone_id, record_type, count(*) AS n FROM records GROUP BY record_type, zone_id) c
            JOIN zones z ON z.id = c.zone_id JOIN databases d ON d.id = z.database_id
            ORDER BY z.database_id, z.zone_name, z.owner_record_name, c.record_type
            """)
        var rows: [(String, String, String?, String?, Int)] = []
        while try statement.step() {
            let owner = statement.text(at: 2) ?? ""
            rows.append((statement.text(at: 0) ?? "", statement.text(at: 1) ?? "", owner.isEmpty ? nil : owner,
                         statement.text(at: 3), Int(statement.int64(at: 4))))
        }
        return rows
    }

    /// The store's latest change token: pass it to ``changes(since:)`` later to get what changed after now.
    public func currentToken() throws -> StoreToken {
        StoreToken(storeID: storeID, sequence: try connection.integer("SELECT max(seq) FROM journal") ?? 0)
    }

    /// The upstream change token of `database` (`public`, `private` or `shared`): CloudKit's
    /// `changes/database` `syncToken` of the last database-wide checkpoint applied, or `nil`.
    public func databaseSyncToken(_ database: String) throws -> String? {
        let statement = try connection.prepare("SELECT sync_token FROM databases WHERE name = ?")
        try statement.bind(database, at: 1)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// Journal entries in the store.
    public func journalCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM journal") ?? 0)
    }

    /// A metadata value of the `ferry_store` table.
    public func metadata(_ key: String) throws -> String? {
        let statement = try connection.prepare("SELECT value FROM ferry_store WHERE key = ?")
        try statement.bind(key, at: 1)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// The error for the first body of `records` that is not JSON (a full scan: for explaining a
    /// failure), as ``locating(_:rowID:)`` words it; `nil` when every body is JSON.
    func firstDamagedBody() -> StoreError? {
        guard let statement = try? connection.prepare("SELECT id, body FROM records WHERE NOT json_valid(body) ORDER BY id LIMIT 1"),
              (try? statement.step()) == true else { return nil }
        let rowID = statement.int64(at: 0)
        do {
            _ = try record(fromBody: statement.textBytes(at: 1), rowID: rowID)
        } catch let error as StoreError {
            return error
        } catch {
            return nil
        }
        return nil
    }

    /// `error`, about the body in row `rowID` of `records`, naming the file, the record and its
    /// zone: read from the row's columns, which damage to the body leaves readable.
    func locating(_ error: StoreError, rowID: Int64) -> StoreError {
        var located = error
        located.path = error.path ?? path
        var place = "row \(rowID) of records"
        if let row = try? connection.prepare("""
               SELECT r.record_name, z.zone_name FROM records r JOIN zones z ON z.id = r.zone_id WHERE r.id = ?1
               """),
           (try? row.bind(rowID, at: 1)) != nil, (try? row.step()) == true, let name = row.text(at: 0) {
            located.recordName = name
            place = "record \(JSONOutput.literal(name)) in zone \(JSONOutput.literal(row.text(at: 1) ?? "")) (row \(rowID) of records)"
        }
        located.message = place + ": " + error.message
        return located
    }

    /// Runs raw SQL on the store, bypassing Ferry's invariants: for this package's tests and tools
    /// (damaging a store on purpose, say), never for data.
    package func execute(sql: String) throws {
        try connection.execute(sql)
    }

    /// The version of the SQLite library in use.
    public static var sqliteVersion: String { SQLiteConnection.libraryVersion }
}

/// One zone of a store.
public struct StoreZone: Sendable, Equatable {
    /// `public`, `private` or `shared`.
    public var database: String
    /// The zone ID as first stored (name, owner, type, unknown members).
    public var zoneID: ZoneID
    /// The upstream change token of the last checkpoint applied (CloudKit's `syncToken`).
    public var syncToken: String?
    /// `moreComing` of that checkpoint.
    public var moreComing: Bool
    /// Whether the zone was deleted (its records are gone; its name is kept for the journal).
    public var isDeleted: Bool
    /// Live records in the zone.
    public var recordCount: Int
    /// The store's own token of the zone's latest change.
    public var changeToken: StoreToken
}
