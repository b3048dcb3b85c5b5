import FerryRecords

/// A member read before the manifest (or in an archive without one): what was done with it and
/// what was found, kept — metadata only, never its bytes — until a manifest arrives to vouch for
/// it (``ArchiveReader`` then compares the two) or the archive ends without one.
struct EarlyMember {
    /// What the reader did with the member.
    enum Handling {
        /// Its records were handed out, attributed to `database` and `zoneID` (from its name).
        case records(count: Int, typeCounts: [ExactName: Int], database: String?, zoneID: ZoneID?)
        /// It was handed to `onMember` as an asset with this checksum.
        case asset(fileChecksum: String)
        /// It was handed to `onMember` as a change log.
        case changes
        /// It was skipped (not a record file, hidden, …).
        case skipped(reason: String)
    }

    var entry: TarEntry
    /// Bytes read (equal to the header's size once the member was read to its end).
    var size: Int
    /// SHA-256 of those bytes, lowercase hexadecimal.
    var sha256: String
    var handling: Handling

    /// How the member was handled, for messages.
    var handlingDescription: String {
        switch handling {
        case .records(_, _, let database?, let zoneID?):
            "read as the records of zone `\(zoneID.zoneName)` in database `\(database)` (from its path)"
        case .records: "read as records of no particular zone (its path is not records/<database>/<zone>.ndjson)"
        case .asset: "handed on as an asset (from its path)"
        case .changes: "handed on as a change log (from its path)"
        case .skipped(let reason): "skipped (\(reason))"
        }
    }
}
