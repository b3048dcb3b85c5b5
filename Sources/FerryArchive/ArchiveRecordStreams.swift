import FerryIO
import FerryPipeline
import FerryRecords

/// An archive's records as a ``RecordReader``: every record member's records, in archive order,
/// with the database and zone of the latest record at hand.
///
/// Members the archive's manifest lists are checked, not repaired: a bad record in one always
/// fails (the checksums and counts could not vouch for what is left). Members no manifest lists
/// when they are read (an archive without one, members before it) follow the ``ArchiveReader``'s
/// policy, and a record skipped under ``RecordErrorPolicy/skip(rejects:)`` is reported to
/// ``onReject`` like any reader's.
public final class ArchiveRecordReader: RecordReader {
    /// The underlying archive reader (its manifest, and ``ArchiveReader/onMember`` for assets and
    /// change logs).
    public let archive: ArchiveReader
    /// The database and zone of the record returned last; `nil` when its member's path and the
    /// manifest say nothing about them (a loose record file such as `exports/chats.ndjson`).
    public private(set) var current: (database: String, zoneID: ZoneID)?
    public var currentDatabase: String? { current?.database }
    public private(set) var recordCount = 0
    public var recordIndex: Int { recordCount + rejectedCount }
    public var rejectedCount: Int { archive.rejectedCount }
    public var bytesRead: Int { archive.bytesRead }
    public var sourceName: String { archive.name }
    public var zoneListings: [ZoneListing] { archive.zoneListings }
    public var onReject: ((any Error) -> Void)? {
        get { archive.onReject }
        set { archive.onReject = newValue }
    }

    /// Reads records from `archive`.
    public init(_ archive: ArchiveReader) {
        self.archive = archive
    }

    public func next() throws -> Record? {
        guard let item = try archive.nextRecord() else {
            current = nil
            return nil
        }
        recordCount += 1
        if let database = item.database, let zoneID = item.zoneID {
            current = (database, zoneID)
        } else {
            current = nil
        }
        return item.record
    }
}

/// An ``ArchiveWriter`` as a ``RecordWriter``: each record goes to its zone in ``database``.
public final class ArchiveRecordWriter: RecordWriter {
    /// The underlying archive writer (for tokens, assets and change logs).
    public let archive: ArchiveWriter
    /// The database records are written to unless ``write(_:database:)`` names another.
    public var database: String
    public private(set) var recordCount = 0
    public var bytesWritten: Int { archive.recordBytes }
    /// The manifest written by ``finish()``.
    public private(set) var manifest: ArchiveManifest?

    /// Writes records into `archive`, in `database` (`private` by default).
    public init(_ archive: ArchiveWriter, database: String = "private") {
        self.archive = archive
        self.database = database
    }

    public func write(_ record: Record) throws {
        try write(record, database: database)
    }

    /// Writes one record into its zone of `database` (``database`` when `nil`).
    public func write(_ record: Record, database: String?) throws {
        try archive.add(record, database: database ?? self.database)
        recordCount += 1
    }

    public func finish() throws {
        manifest = try archive.finish()
    }
}
