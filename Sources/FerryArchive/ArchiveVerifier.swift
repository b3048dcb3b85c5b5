import FerryInternals
import FerryIO
import FerryRecords

/// Checks a whole archive without writing anything.
///
/// With a manifest (wherever it is): every member's size and SHA-256, every records member's
/// record counts per type, the inferred field schema against the records, and that the members
/// are exactly those the manifest lists. Without one there is nothing to check sizes, checksums
/// or counts against: what can be checked still is — the gzip and tar layers are intact, nothing
/// is unsafe, every record member decodes — and then verification fails with
/// ``ArchiveError/Code/missingManifest`` saying what was and was not checked, unless
/// ``requiresManifest`` is off. The first problem stops verification with an ``ArchiveError``
/// naming the member (and the byte offset in the tar stream).
public struct ArchiveVerifier {
    /// What a successful verification found.
    public struct Report: Sendable {
        /// The archive's manifest (empty when ``manifestPlacement`` is `.notRead`).
        public var manifest: ArchiveManifest
        /// Members checked, the manifest excluded.
        public var memberCount: Int
        /// Records read and counted.
        public var recordCount: Int
        /// Where the manifest was; `.notRead` when the archive has none.
        public var manifestPlacement: ArchiveReader.ManifestPlacement
        /// Members read as records.
        public var recordMemberCount: Int
        /// Members skipped as not record files (only in an archive without a manifest).
        public var skippedMembers: [ArchiveReader.SkippedMember]

        /// One sentence on what was checked: everything against the manifest, or, without one,
        /// what could and could not be.
        public var summary: String {
            if manifestPlacement != .notRead {
                return "\(Plural.count(memberCount, "member")), \(Plural.count(recordCount, "record")) in \(Plural.count(manifest.zones.count, "zone")); every member's "
                    + "size and SHA-256 and every zone's record counts match the manifest"
                    + (manifestPlacement == .first ? "" : " (found after \(Plural.count(membersBeforeManifest, "member")))")
            }
            var text = "no manifest.json among \(Plural.count(memberCount, "member")). Checked: the gzip and tar layers are intact, "
                + "no member is unsafe, \(Plural.count(recordMemberCount, "record file")) \(recordMemberCount == 1 ? "holds" : "hold") \(Plural.count(recordCount, "valid record"))"
            if let first = skippedMembers.first {
                let count = skippedMembers.count
                text += " (\(Plural.count(count, "other member")) skipped: \(first.path), \(first.reason)"
                    + (count > 1 ? ", …" : "") + ")"
            }
            return text + ". Not checked: member sizes, SHA-256 checksums and record counts — without a manifest "
                + "nothing states them"
        }

        private var membersBeforeManifest: Int {
            if case .after(let members) = manifestPlacement { members } else { 0 }
        }
    }

    /// The limits applied while reading.
    public var configuration: ArchiveReader.Configuration
    /// Whether an archive without `manifest.json` fails verification (after everything that can
    /// be checked was): `true` by default, since nothing vouches for its members.
    public var requiresManifest: Bool

    /// Creates a verifier.
    public init(configuration: ArchiveReader.Configuration = ArchiveReader.Configuration(), requiresManifest: Bool = true) {
        self.configuration = configuration
        self.requiresManifest = requiresManifest
    }

    /// Verifies the archive at `path`.
    ///
    /// - Throws: ``ArchiveError`` for the first bad member, or for a missing manifest.
    public func verify(path: String) throws -> Report {
        try check(ArchiveReader(path: path, configuration: configuration))
    }

    /// Verifies an archive read from `source` (gzip-compressed or not).
    ///
    /// - Throws: ``ArchiveError`` for the first bad member, or for a missing manifest.
    public func verify(_ source: any ByteSource) throws -> Report {
        try check(ArchiveReader(source: source, configuration: configuration))
    }

    /// Reads the whole archive through `reader` and checks it: what ``verify(path:)`` does, and
    /// what ``ArchiveReader/extract(to:)`` does before it moves anything into place.
    func check(_ reader: ArchiveReader) throws -> Report {
        var records = 0
        var schema: [ExactName: ArchiveManifest.RecordTypeSchema] = [:]
        while let item = try reader.nextRecord() {
            records += 1
            ArchiveManifest.RecordTypeSchema.add(item.record, to: &schema)
        }
        let report = Report(manifest: reader.manifest, memberCount: reader.memberCount, recordCount: records,
                            manifestPlacement: reader.manifestPlacement, recordMemberCount: reader.recordMemberCount,
                            skippedMembers: reader.skippedMembers)
        guard reader.manifestPlacement != .notRead else {
            if requiresManifest {
                throw ArchiveError(.missingManifest, "expected a manifest.json to verify against, found " + report.summary,
                                   archive: reader.name)
            }
            return report
        }
        // The schema is inferred from the records: when the manifest gives one (hand-made archives
        // may leave it empty), it must say exactly what they hold.
        let stated = reader.manifest.schema
        for type in Set(schema.keys).union(stated.keys).sorted() where !stated.isEmpty && schema[type] != stated[type] {
            let found = schema[type] ?? ArchiveManifest.RecordTypeSchema()
            let expected = stated[type] ?? ArchiveManifest.RecordTypeSchema()
            var detail = "\(expected.recordCount) records in the manifest, \(found.recordCount) in the archive"
            for field in Set(found.fields.keys).union(expected.fields.keys).sorted()
            where found.fields[field] != expected.fields[field] {
                detail = "field types \(Self.describe(expected.fields[field])) in the manifest, "
                    + "\(Self.describe(found.fields[field])) in the records"
                try fail("\(type).\(field)", detail, reader)
            }
            try fail(type.string, detail, reader)
        }
        return report
    }

    private func fail(_ what: String, _ detail: String, _ reader: ArchiveReader) throws -> Never {
        throw ArchiveError(.countMismatch, "expected the manifest's schema to describe the records, found \(what): \(detail)",
                           archive: reader.name, member: ArchivePath.manifest)
    }

    private static func describe(_ types: [String: Int]?) -> String {
        guard let types, !types.isEmpty else { return "(none)" }
        return "(" + types.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
}
