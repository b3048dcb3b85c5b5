import FerryIO
import FerryRecords

/// Carries what an archive holds besides records — assets, change logs, zones without records
/// and change tokens — into another archive, so archive → archive conversions lose nothing.
public enum ArchiveCarryOver {
    /// Installs a member handler on `input` that copies assets and change logs into `output` as
    /// they stream past (nothing is held in memory); in an archive without a manifest, those its
    /// layout names (`assets/<checksum>`, `changes/…`).
    public static func begin(from input: ArchiveRecordReader, into output: ArchiveRecordWriter) {
        let previous = input.archive.onMember
        input.archive.onMember = { member, source in
            switch member.kind {
            case .asset:
                let checksum = member.fileChecksum ?? ArchivePath.decodeComponent(String(member.path.dropFirst(ArchivePath.assets.count + 1)))
                try output.archive.addAsset(fileChecksum: checksum, from: source)
            case .changes:
                try output.archive.addChangeLog(named: ArchivePath.changeLogName(ofMember: member.path), from: source)
            case .records:
                break
            }
            try previous?(member, source)
        }
    }

    /// After `input` was read to its end: adds the zones its manifest lists (with or without
    /// records; none when it has no manifest) and their change tokens to `output`.
    public static func finish(from input: ArchiveRecordReader, into output: ArchiveRecordWriter) throws {
        for zone in input.archive.manifest.zones {
            try output.archive.addZone(zone.zoneID, database: zone.database)
            if let token = zone.changeToken {
                try output.archive.setChangeToken(token, for: zone.zoneID, database: zone.database)
            }
        }
    }
}
