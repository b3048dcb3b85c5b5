import FerryIO

/// Checks a whole archive without writing anything: every member's size and SHA-256 against the
/// manifest, every records member's record counts per type, and that the members are exactly
/// those the manifest lists. The first problem stops verification with an ``ArchiveError``
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
        while try reader.nextRecord() != nil { records += 1 }
        return Report(manifest: reader.manifest, memberCount: reader.manifest.members.count, recordCount: records)
    }
}
