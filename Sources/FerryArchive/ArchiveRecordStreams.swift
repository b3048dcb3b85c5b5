import FerryIO
import FerryPipeline
import FerryRecords

/// An archive's records as a ``RecordReader``: every zone's records, in the archive's order,
/// with the database and zone of the latest record at hand.
///
/// An archive is checked, not repaired: a bad member always fails (there is nothing to skip to
/// that the checksums could vouch for), so ``onReject`` is never called.
public final class ArchiveRecordReader: RecordReader {
    /// The underlying archive reader (its manifest, and ``ArchiveReader/onMember`` for assets and
    /// change logs).
    public let archive: ArchiveReader
    /// The database and zone of the record returned last.
    public private(set) var current: (database: String, zoneID: ZoneID)?
    public private(set) var recordCount = 0
    public var recordIndex: Int { recordCount }
    public var rejectedCount: Int { 0 }
    public var bytesRead: Int { archive.bytesRead }
    public var sourceName: String { archive.name }
    public var onReject: ((any Error) -> Void)?

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
        current = (item.database, item.zoneID)
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
