import FerryCompression
import FerryIO
import FerryNDJSON
import FerryRecords

/// Reads a Ferry archive as a stream: the manifest first, then records zone by zone, checking
/// every member's size and SHA-256 against the manifest and every records member's counts.
///
/// gzip is detected by its magic bytes (`Compression.openInput`), so compressed and plain tar
/// streams are both read, from files, standard input or memory, with bounded memory. The reader
/// is one pass: iterate records with ``nextRecord()`` or write the members out with
/// ``extract(to:)``, not both. Anything unsafe — absolute names, `..`, links, devices, FIFOs,
/// members over the limits — stops reading with an ``ArchiveError`` naming the member and the
/// byte offset in the tar stream.
public final class ArchiveReader {
    /// Limits for untrusted input. `nil` turns a limit off.
    public struct Configuration: Sendable {
        /// gzip limits: total decompressed size and compression ratio (decompression bombs).
        public var gzip: GzipSource.Configuration
        /// The largest member accepted; 16 GiB by default.
        public var maximumMemberBytes: Int?
        /// The most member bytes accepted in total; 64 GiB by default.
        public var maximumTotalBytes: Int?
        /// The most members accepted; one million by default.
        public var maximumMembers: Int
        /// The largest `manifest.json` accepted (it is read into memory); 64 MiB by default.
        public var maximumManifestBytes: Int
        /// The largest pax or GNU long-name header accepted; 1 MiB by default.
        public var maximumMetadataBytes: Int
        /// Limits for the NDJSON records members.
        public var records: NDJSONReader.Configuration

        /// Creates a configuration.
        public init(gzip: GzipSource.Configuration = GzipSource.Configuration(), maximumMemberBytes: Int? = 16 << 30,
                    maximumTotalBytes: Int? = 64 << 30, maximumMembers: Int = 1_000_000,
                    maximumManifestBytes: Int = 64 << 20, maximumMetadataBytes: Int = 1 << 20,
                    records: NDJSONReader.Configuration = NDJSONReader.Configuration()) {
            self.gzip = gzip
            self.maximumMemberBytes = maximumMemberBytes
            self.maximumTotalBytes = maximumTotalBytes
            self.maximumMembers = maximumMembers
            self.maximumManifestBytes = maximumManifestBytes
            self.maximumMetadataBytes = maximumMetadataBytes
            self.records = records
        }
    }

    private struct OpenRecords {
        var zone: ArchiveManifest.Zone
        var member: ArchiveManifest.Member
        var entry: TarEntry
        var source: MemberSource
        var reader: NDJSONReader
        var count = 0
        var typeCounts: [String: Int] = [:]
    }

    /// The archive's name (its path, or the source's name).
    public let name: String
    /// The manifest, read when the reader was created.
    public let manifest: ArchiveManifest
    /// Called by ``nextRecord()`` for each asset and change-log member with a source of its
    /// bytes; whatever the handler leaves unread is read and checked after it returns.
    public var onMember: ((ArchiveManifest.Member, any ByteSource) throws -> Void)?

    /// Bytes of the (decompressed) tar stream read so far.
    public var bytesRead: Int { tar.offset }

    private let configuration: Configuration
    private let manifestBytes: [UInt8]
    private let tar: TarReader
    private var seen: Set<String> = []
    private var open: OpenRecords?
    private var isFinished = false

    /// Opens the archive at `path`.
    ///
    /// - Throws: ``ArchiveError`` when the file cannot be opened or the manifest is missing or bad.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        let file: InputFile
        do { file = try InputFile(path: path) } catch {
            throw ArchiveError(.ioFailure, "cannot open the archive", archive: path, underlying: error)
        }
        try self.init(source: file, configuration: configuration)
    }

    /// Opens an archive read from `source` (gzip-compressed or not) and reads its manifest.
    ///
    /// - Throws: ``ArchiveError``: ``ArchiveError/Code/missingManifest`` when the first member is
    ///   not `manifest.json`, ``ArchiveError/Code/invalidManifest``, and any reading failure.
    public init(source: any ByteSource, configuration: Configuration = Configuration()) throws {
        name = source.name
        self.configuration = configuration
        let input: any ByteSource
        do { input = try Compression.openInput(source, configuration: configuration.gzip) } catch {
            throw ArchiveError(error is CompressionError ? .decompressionFailed : .ioFailure,
                               "cannot start reading the archive", archive: source.name, offset: 0, underlying: error)
        }
        tar = TarReader(source: input, archive: source.name, limits: TarReader.Limits(
            maximumMemberBytes: configuration.maximumMemberBytes, maximumTotalBytes: configuration.maximumTotalBytes,
            maximumMembers: configuration.maximumMembers, maximumMetadataBytes: configuration.maximumMetadataBytes))
        var first = try tar.next()
        while let entry = first, entry.kind == .directory { first = try tar.next() }
        guard let entry = first, entry.path == ArchivePath.manifest else {
            throw ArchiveError(.missingManifest, "expected `manifest.json` as the first member, found "
                               + (first.map { "`\($0.path)`" } ?? "no members"), archive: source.name,
                               member: first?.path, offset: first?.headerOffset ?? 0)
        }
        guard entry.size <= configuration.maximumManifestBytes else {
            throw ArchiveError(.limitExceeded, "expected a manifest of at most \(configuration.maximumManifestBytes) bytes "
                               + "(maximumManifestBytes), found \(entry.size)", archive: source.name,
                               member: entry.path, offset: entry.headerOffset)
        }
        manifestBytes = try MemberSource(tar: tar, archive: source.name, member: entry.path).readAll()
        manifest = try ArchiveManifest(parsing: manifestBytes, archive: source.name)
        try Self.check(manifest, archive: source.name)
    }

    /// Returns the next record, zone after zone, or `nil` after the last member, once every
    /// member listed in the manifest has been read and checked.
    ///
    /// A member's checksum is compared when its end is reached, so records of a member that turns
    /// out to be corrupt may already have been returned: use ``ArchiveVerifier`` first when that
    /// matters.
    ///
    /// - Throws: ``ArchiveError`` naming the member: checksum, size or count mismatches, members
    ///   missing from or not listed in the manifest, invalid records, unsafe entries, truncation.
    public func nextRecord() throws -> ArchiveRecord? {
        while true {
            if var current = open {
                let record: Record?
                do { record = try current.reader.next() } catch let error as ArchiveError { throw error } catch {
                    throw ArchiveError(.invalidRecord, "expected one record dictionary per line", archive: name,
                                       member: current.member.path, offset: current.entry.dataOffset, underlying: error)
                }
                if let record {
                    current.count += 1
                    if let type = record.recordType { current.typeCounts[type, default: 0] += 1 }
                    open = current
                    return ArchiveRecord(record: record, database: current.zone.database, zoneID: current.zone.zoneID)
                }
                open = nil
                try check(current.source, against: current.member, entry: current.entry)
                guard current.count == current.zone.recordCount, current.typeCounts == current.zone.recordTypeCounts else {
                    throw ArchiveError(.countMismatch, "expected \(current.zone.recordCount) records "
                                       + "\(Self.describe(current.zone.recordTypeCounts)) as the manifest says, found "
                                       + "\(current.count) \(Self.describe(current.typeCounts))", archive: name,
                                       member: current.member.path, offset: current.entry.dataOffset)
                }
            }
            guard let (entry, member) = try nextListedMember() else { return nil }
            let source = MemberSource(tar: tar, archive: name, member: entry.path)
            if member.kind == .records, let zone = manifest.zone(at: member.path) {
                let reader = NDJSONReader(source: source, configuration: configuration.records)
                open = OpenRecords(zone: zone, member: member, entry: entry, source: source, reader: reader)
            } else {
                if let onMember { try onMember(member, source) }
                try check(source, against: member, entry: entry)
            }
        }
    }

    /// Writes every remaining member under `directory` (created if missing; its parent must
    /// exist), `manifest.json` included. Each file is written to a temporary name and renamed into
    /// place only after its size and SHA-256 match the manifest.
    ///
    /// Nothing is ever written outside `directory`: member names were checked when read, and an
    /// existing symlink or non-directory on the way to a member stops extraction.
    ///
    /// - Throws: ``ArchiveError`` naming the first bad member; members before it stay extracted.
    public func extract(to directory: String) throws {
        guard open == nil, seen.isEmpty else {
            throw ArchiveError(.invalidState, "expected a reader that has not returned records yet", archive: name)
        }
        let root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        let extractor = try ArchiveExtractor(root: root, archive: name)
        try extractor.write(manifestBytes, components: [ArchivePath.manifest])
        while let (entry, member) = try nextListedMember() {
            let source = MemberSource(tar: tar, archive: name, member: entry.path)
            try extractor.write(source, components: entry.components, member: member, entry: entry, reader: self)
        }
    }

    // MARK: - Internals

    /// The next member with data, checked against the manifest; `nil` at the end once every
    /// listed member was seen.
    private func nextListedMember() throws -> (TarEntry, ArchiveManifest.Member)? {
        if isFinished { return nil }
        while let entry = try tar.next() {
            if entry.kind == .directory { continue }
            guard let member = manifest.member(at: entry.path), !seen.contains(entry.path) else {
                throw ArchiveError(.unexpectedMember, seen.contains(entry.path) || entry.path == ArchivePath.manifest
                                   ? "expected each member once, found `\(entry.path)` again"
                                   : "expected only members listed in the manifest, found `\(entry.path)`",
                                   archive: name, member: entry.path, offset: entry.headerOffset)
            }
            seen.insert(entry.path)
            if entry.size != member.size {
                throw ArchiveError(.sizeMismatch, "expected \(member.size) bytes as the manifest says, found \(entry.size)",
                                   archive: name, member: entry.path, offset: entry.headerOffset)
            }
            return (entry, member)
        }
        isFinished = true
        if let missing = manifest.members.first(where: { !seen.contains($0.path) }) {
            throw ArchiveError(.missingMember, "expected the member listed in the manifest, found the end of the archive",
                               archive: name, member: missing.path, offset: tar.offset)
        }
        return nil
    }

    /// Reads the rest of a member and compares its size and SHA-256 with the manifest.
    func check(_ source: MemberSource, against member: ArchiveManifest.Member, entry: TarEntry) throws {
        let digest = try source.finish()
        guard source.bytesRead == member.size else {
            throw ArchiveError(.sizeMismatch, "expected \(member.size) bytes, found \(source.bytesRead)",
                               archive: name, member: member.path, offset: entry.dataOffset)
        }
        guard digest == member.sha256 else {
            throw ArchiveError(.checksumMismatch, "expected SHA-256 \(member.sha256) from the manifest, found \(digest)",
                               archive: name, member: member.path, offset: entry.dataOffset)
        }
    }

    private static func describe(_ counts: [String: Int]) -> String {
        "(" + counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }

    /// Checks that the manifest's paths are safe, unique and consistent.
    private static func check(_ manifest: ArchiveManifest, archive: String) throws {
        func invalid(_ message: String, _ member: String? = nil) -> ArchiveError {
            ArchiveError(.invalidManifest, message, archive: archive, member: ArchivePath.manifest)
        }
        var paths: Set<String> = [ArchivePath.manifest]
        for member in manifest.members {
            guard case .safe(let components) = ArchivePath.validate(member.path),
                  components.joined(separator: "/") == member.path else {
                throw invalid("expected a normalized relative path for member `\(member.path)`")
            }
            guard paths.insert(member.path).inserted else { throw invalid("expected member `\(member.path)` to be listed once") }
        }
        for zone in manifest.zones where manifest.member(at: zone.path)?.kind != .records {
            throw invalid("expected zone `\(zone.zoneID.zoneName)` to point at a records member, found `\(zone.path)`")
        }
    }
}
