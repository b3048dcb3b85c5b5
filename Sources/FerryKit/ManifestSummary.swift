import FerryArchive
import FerryInternals
import FerryRecords

/// The text `inspect` prints for an archive: what its manifest says.
public struct ManifestSummary {
    /// The archive's path.
    public var path: String
    /// Its manifest.
    public var manifest: ArchiveManifest

    /// The summary of `manifest`, the manifest of the archive at `path`.
    public init(path: String, manifest: ArchiveManifest) {
        self.path = path
        self.manifest = manifest
    }

    /// The text `ferry inspect` prints.
    public var text: String {
        var lines: [String] = []
        let bytes = manifest.members.reduce(0) { $0 + $1.size }
        let assets = manifest.members.filter { $0.kind == .asset }
        let logs = manifest.members.filter { $0.kind == .changes }
        lines.append("\(path): Ferry archive, format \(manifest.formatVersion), written \(ISO8601.format(milliseconds: manifest.createdAt)) by Ferry \(manifest.ferryVersion)")
        lines.append("\(Plural.count(manifest.recordCount, "record")) in \(Plural.count(manifest.zones.count, "zone")), \(Plural.count(assets.count, "asset")), "
                     + "\(Plural.count(logs.count, "change log")), \(Plural.count(manifest.members.count, "member")), \(Plural.count(bytes, "byte")) uncompressed")
        lines.append("")
        var rows = [["DATABASE", "ZONE", "OWNER", "RECORDS", "TYPES", "CHANGE TOKEN"]]
        for zone in manifest.zones {
            let types = zone.recordTypeCounts.sorted { $0.key < $1.key }.map { "\($0.key.string) \($0.value)" }.joined(separator: ", ")
            rows.append([zone.database, zone.zoneID.zoneName, zone.zoneID.ownerRecordName ?? "-", String(zone.recordCount),
                         types.isEmpty ? "-" : types, zone.changeToken ?? "-"])
        }
        lines.append(contentsOf: TextTable.lines(rows))
        if !manifest.schema.isEmpty {
            lines.append("")
            var schemaRows = [["TYPE", "FIELD", "TYPES"]]
            for (type, entry) in manifest.schema.sorted(by: { $0.key < $1.key }) {
                for (field, types) in entry.fields.sorted(by: { $0.key < $1.key }) {
                    schemaRows.append([type.string, field.string, types.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
                }
            }
            lines.append(contentsOf: TextTable.lines(schemaRows))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The object `ferry inspect --json` prints in `archives`.
    public var json: JSONValue {
        .object(["path": .string(path), "manifest": manifest.jsonValue])
    }
}
