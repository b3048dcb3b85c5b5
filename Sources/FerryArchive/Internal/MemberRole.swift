import FerryRecords

/// What a member is taken for when no manifest lists it: in an archive without `manifest.json`,
/// and for the members before one that comes later. Decided by the member's name alone, in this
/// order (`Docs/ArchiveLayout.md`, "Archives without a manifest"):
///
/// 1. a name with a component starting with `.` is skipped as hidden (`.DS_Store`, the `._*`
///    AppleDouble files macOS `tar` adds, `.git/…`);
/// 2. `assets/<checksum>` is an asset and `changes/…` a change log, as Ferry writes them;
/// 3. a `manifest.json` below the root is skipped: only the root's is the archive's manifest;
/// 4. a name ending in `.ndjson`, `.jsonl` or `.json`, optionally followed by `.gz` (any case),
///    holds records: NDJSON lines or whole JSON documents such as saved CKWS responses. Under
///    `records/<database>/<zone>[@<owner>].ndjson` its records belong to that database and zone
///    (a shortened `<zone>[@<owner>]`, see ``ArchivePath/fit(_:within:)``, leaves each record in
///    its own zone; a shortened `<database>` says neither);
/// 5. anything else is skipped as not a record file.
enum MemberRole: Equatable {
    /// Records, with the database and zone the name gives in Ferry's layout (else `nil`).
    case records(database: String?, zoneID: ZoneID?)
    /// Asset bytes, with the checksum the name encodes.
    case asset(fileChecksum: String)
    /// A change log.
    case changes
    /// Not read; the reason says why.
    case skipped(reason: String)

    /// Extensions of record files, each optionally followed by `.gz`.
    static let recordExtensions = [".ndjson", ".jsonl", ".json"]

    /// The role of the member whose normalized path components are `components`.
    static func of(_ components: [String]) -> MemberRole {
        guard let last = components.last else { return .skipped(reason: "the name is empty") }
        if components.contains(where: { $0.hasPrefix(".") }) {
            return .skipped(reason: "hidden (a name starting with `.`: .DS_Store, macOS `._` files, …)")
        }
        if components.count == 2 && components[0] == ArchivePath.assets {
            return .asset(fileChecksum: ArchivePath.decodeComponent(components[1]))
        }
        if components.count >= 2 && components[0] == ArchivePath.changes { return .changes }
        if last == ArchivePath.manifest {
            return .skipped(reason: "a manifest is read only at the archive's root")
        }
        guard isRecordFile(last) else {
            return .skipped(reason: "not a record file: the name does not end in .ndjson, .jsonl or .json (each optionally .gz)")
        }
        if components.count == 3 && components[0] == ArchivePath.records && last.hasSuffix(ArchivePath.recordsExtension) {
            let database = ArchivePath.isShortened(components[1]) ? nil : ArchivePath.decodeComponent(components[1])
            let zone = last.dropLast(ArchivePath.recordsExtension.count)
            // A shortened name does not say the zone: the records keep their own `zoneID`.
            if ArchivePath.isShortened(zone) { return .records(database: database, zoneID: nil) }
            let pieces = zone.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            let owner = pieces.count == 2 ? ArchivePath.decodeComponent(String(pieces[1])) : nil
            let zoneID = ZoneID(zoneName: ArchivePath.decodeComponent(String(pieces[0])), ownerRecordName: owner)
            return .records(database: database, zoneID: database == nil ? nil : zoneID)
        }
        return .records(database: nil, zoneID: nil)
    }

    /// Whether `name` ends in a record file extension, optionally followed by `.gz`.
    static func isRecordFile(_ name: String) -> Bool {
        var lower = name.lowercased()
        if lower.hasSuffix(".gz") { lower.removeLast(3) }
        return recordExtensions.contains { lower.hasSuffix($0) && lower.count > $0.count }
    }
}
