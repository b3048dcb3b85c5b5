import FerryRecords

/// A record read from an archive, with the database and zone whose member it came from.
public struct ArchiveRecord: Hashable, Sendable {
    /// The record, exactly as it was written.
    public var record: Record
    /// The database: `public`, `private` or `shared`.
    public var database: String
    /// The zone of the records member (the record's own `zoneID` may be absent for the default zone).
    public var zoneID: ZoneID

    /// Creates an archive record.
    public init(record: Record, database: String, zoneID: ZoneID) {
        self.record = record
        self.database = database
        self.zoneID = zoneID
    }
}
