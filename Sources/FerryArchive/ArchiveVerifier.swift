import FerryIO
import FerryRecords

/// Checks a whole archive without writing anything: every member's size and SHA-256 against the
/// manifest, every records member's record counts per type, the inferred field schema against
/// the records, and that the members are exactly those the manifest lists. The first problem stops verification with an ``ArchiveError``
/// naming the member (and the byte offset in the tar stream).
public struct ArchiveVerifier {
    /// What a successful verification found.
    public struct Report: Sendable {
        /// The archive's manifest.
        public var manifest: ArchiveManifest
        /// Members checked, the manifest excluded.
        public var memberCount: Int
        /// Records read and counted.
        public var recordCount: Int
    }

    /// The limits applied while reading.
    public var configuration: ArchiveReader.Configuration

    /// Creates a verifier.
    public init(configuration: ArchiveReader.Configuration = ArchiveReader.Configuration()) {
        self.configuration = configuration
    }

    /// Verifies the archive at `path`.
    ///
    /// - Throws: ``ArchiveError`` for the first bad member.
    public func verify(path: String) throws -> Report {
        try verify(ArchiveReader(path: path, configuration: configuration))
    }

    /// Verifies an archive read from `source` (gzip-compressed or not).
    ///
    /// - Throws: ``ArchiveError`` for the first bad member.
    public func verify(_ source: any ByteSource) throws -> Report {
        try verify(ArchiveReader(source: source, configuration: configuration))
    }

    private func verify(_ reader: ArchiveReader) throws -> Report {
        var records = 0
        var schema: [String: ArchiveManifest.RecordTypeSchema] = [:]
        while let item = try reader.nextRecord() {
            records += 1
            ArchiveManifest.RecordTypeSchema.add(item.record, to: &schema)
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
            try fail(type, detail, reader)
        }
        return Report(manifest: reader.manifest, memberCount: reader.manifest.members.count, recordCount: records)
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
