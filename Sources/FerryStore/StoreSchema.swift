/// The tables of a store file, its format version and the migrations between versions.
///
/// This is a contract: other tools read stores with plain SQL (see `Docs/StoreFormat.md`), so a
/// change of a table's meaning is a new format version with a migration, never an edit here.
package enum StoreSchema {
    /// `PRAGMA application_id` of every store: the bytes `FRRY`.
    package static let applicationID: Int32 = 0x4652_5259

    /// The page size of new stores (`PRAGMA page_size`; SQLite's default is 4096). Records are
    /// hundreds of bytes to kilobytes of JSON: larger pages hold more of them whole, so a bulk
    /// load writes fewer pages and fewer overflow chains (importing 1M records into a new store
    /// spent 2.97 s in SQLite's inserts with 4 KiB pages, 1.65 s with 16 KiB), and scans read
    /// fewer pages; a small change rewrites a page of 16 KiB. Existing stores keep theirs.
    package static let pageSize = 16384

    /// The format version this Ferry writes (`PRAGMA user_version`).
    package static let currentVersion = 2

    /// The oldest format version read as it is when a store is opened read-only: the migrations
    /// after it only add tables (version 2: `assets`), so what it holds means the same, and what
    /// it lacks (uploaded assets) reads as empty.
    package static let oldestReadableAsIs = 1

    /// The oldest format version a store can have: the first Ferry made stores of version 1, and
    /// ``migrations`` lead from each version on to ``currentVersion``.
    package static let oldestVersion = 1

    /// The value of `ferry_store.format`.
    package static let formatName = "ferry-store"

    /// Creates the tables of version 1 (run on an empty file, in a transaction).
    package static let version1 = """
    CREATE TABLE ferry_store (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE databases (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        sync_token  TEXT,
        more_coming INTEGER NOT NULL DEFAULT 0
    ) STRICT;
    INSERT INTO databases (id, name) VALUES (1, 'public'), (2, 'private'), (3, 'shared');

    CREATE TABLE zones (
        id                INTEGER PRIMARY KEY,
        database_id       INTEGER NOT NULL REFERENCES databases (id),
        zone_name         TEXT NOT NULL,
        owner_record_name TEXT NOT NULL,
        zone_type         TEXT,
        zone_json         TEXT NOT NULL,
        sync_token        TEXT,
        more_coming       INTEGER NOT NULL DEFAULT 0,
        is_deleted        INTEGER NOT NULL DEFAULT 0,
        record_count      INTEGER NOT NULL DEFAULT 0,
        change_seq        INTEGER NOT NULL DEFAULT 0,
        UNIQUE (database_id, zone_name, owner_record_name)
    ) STRICT;

    CREATE TABLE records (
        id          INTEGER PRIMARY KEY,
        zone_id     INTEGER NOT NULL REFERENCES zones (id),
        record_name TEXT NOT NULL,
        record_type TEXT,
        change_tag  TEXT,
        created_at  INTEGER,
        created_by  TEXT,
        modified_at INTEGER,
        modified_by TEXT,
        parent_name TEXT,
        share_name  TEXT,
        seq         INTEGER NOT NULL,
        body        TEXT NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX records_by_name ON records (zone_id, record_name);
    CREATE INDEX records_by_type ON records (record_type, zone_id);

    CREATE TABLE journal (
        seq         INTEGER PRIMARY KEY,
        zone_id     INTEGER NOT NULL REFERENCES zones (id),
        kind        TEXT NOT NULL,
        record_name TEXT,
        record_type TEXT,
        change_tag  TEXT
    ) STRICT;

    CREATE TABLE checkpoints (
        id          INTEGER PRIMARY KEY,
        database_id INTEGER NOT NULL REFERENCES databases (id),
        zone_id     INTEGER NOT NULL,
        sync_token  TEXT NOT NULL,
        more_coming INTEGER NOT NULL DEFAULT 0,
        seq         INTEGER NOT NULL,
        UNIQUE (database_id, zone_id, sync_token)
    ) STRICT;

    CREATE TABLE field_indexes (
        name        TEXT PRIMARY KEY,
        record_type TEXT NOT NULL,
        field_name  TEXT NOT NULL,
        kind        TEXT NOT NULL
    ) STRICT;
    """

    /// The secondary indexes of `records`; a new store's bulk load builds the first after the rows.
    package static let recordIndexes = [
        "CREATE UNIQUE INDEX IF NOT EXISTS records_by_name ON records (zone_id, record_name)",
        "CREATE INDEX IF NOT EXISTS records_by_type ON records (record_type, zone_id)",
    ]

    /// Migrations: the SQL that takes a store from `version - 1` to `version`, run in the same
    /// transaction as the `user_version` update. Version 1 is created directly.
    package static let migrations: [(version: Int, sql: String)] = [
        (2, """
        CREATE TABLE assets (
            id          INTEGER PRIMARY KEY,
            receipt     TEXT NOT NULL UNIQUE,
            checksum    TEXT NOT NULL,
            size        INTEGER NOT NULL,
            bytes       BLOB NOT NULL,
            uploaded_at INTEGER NOT NULL,
            attached    INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        """),
    ]

    /// The kinds of journal entries (`journal.kind`).
    package enum JournalKind: String, Sendable, CaseIterable {
        case created, modified, deleted, zoneSaved, zoneDeleted, zonePurged
    }
}
