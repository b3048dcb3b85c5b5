import FerryRecords

/// A record read from an archive, with the member it came from and the database and zone that
/// member holds.
public struct ArchiveRecord: Hashable, Sendable {
    /// The record, exactly as it was written.
    public var record: Record
    /// The database, `public`, `private` or `shared`: the manifest's for the member, or what the
    /// member's path says in Ferry's layout (`records/<database>/<zone>.ndjson`); `nil` for a
    /// record file no manifest lists and whose path says nothing (`exports/chats.ndjson`).
    public var database: String?
    /// The zone of the records member, known exactly when ``database`` is (the record's own
    /// `zoneID` may be absent for the default zone).
    public var zoneID: ZoneID?
    /// The path of the member inside the archive.
    public var member: String

    /// Creates an archive record.
    public init(record: Record, database: String?, zoneID: ZoneID?, member: String) {
        self.record = record
        self.database = database
        self.zoneID = zoneID
        self.member = member
    }
}
