import FerryCompression
import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords

/// Reads an archive as a stream of records: a Ferry archive, checked member by member against
/// its manifest, or any tar of record files (`tar czf exports.tar.gz exports/`).
///
/// **With a manifest.** `manifest.json` usually comes first (Ferry writes it there): then every
/// later member is checked as it streams past — listed exactly once, its size and SHA-256, and
/// for records its counts per type. It may also be any later member: the members before it are
/// read by their names (below) while their size, SHA-256, record counts and handling are noted,
/// and compared with the manifest when it arrives; members after it are checked as usual. At the
/// end every listed member must have been seen.
///
/// **Without a manifest**, regular files are read in archive order by their names: record files
/// (`.ndjson`, `.jsonl`, `.json`, optionally `.gz`) through ``FerryJSON/NDJSONReader`` (NDJSON
/// lines or whole documents such as saved CKWS responses), `assets/…` and `changes/…` go to
/// ``onMember``, and hidden files and anything else are skipped (``skippedMembers``). Nothing
/// vouches for such members; ``ArchiveVerifier`` says so.
///
/// Directories are passed over. Anything unsafe — absolute names, `..`, symbolic and hard links,
/// devices, FIFOs, members over the limits — stops reading with an ``ArchiveError`` naming the
/// member and the byte offset in the tar stream, whether or not there is a manifest.
///
/// gzip is detected by its magic bytes (`Compression.openInput`), for the archive and for each
/// record member, so `.tar.gz` and `.tar` with `.ndjson.gz` members inside are read, from files,
/// standard input or memory, with bounded memory. The reader is one pass: iterate records with
/// ``nextRecord()`` or write the members out with ``extract(to:)``, not both.
public final class ArchiveReader {
    /// Limits for untrusted input. `nil` turns a limit off.
    public struct Configuration: Sendable {
        /// gzip limits (decompression bombs): the total decompressed size and the compression
        /// ratio, for the archive, and again for the compressed record members inside it, which
        /// share one budget of decompressed bytes.
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
        /// Limits for the records members.
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

    /// Where `manifest.json` was found.
    public enum ManifestPlacement: Hashable, Sendable {
        /// Not among the members read so far; once the archive was read to its end, it has none.
        case notRead
        /// The first member: every other member was checked against it as it streamed past.
        case first
        /// After this many other members, which were checked against it when it arrived.
        case after(members: Int)
    }

    /// A member read without a manifest that was not read as records, an asset or a change log.
    public struct SkippedMember: Hashable, Sendable {
        /// The member's path.
        public var path: String
        /// Why it was skipped.
        public var reason: String
    }

    /// The archive's name (its path, or the source's name).
    public let name: String
    /// What `manifest.json` says. Read when the reader is created if it is the first member (as
    /// Ferry writes it), else when it streams past (see ``manifestPlacement``); until then, and for
    /// an archive without one, an empty manifest: no zones, no members, `createdAt` 0,
    /// `ferryVersion` empty.
    public private(set) var manifest = ArchiveManifest(createdAt: 0, ferryVersion: "")
    /// Where the manifest was found, or ``ManifestPlacement/notRead``.
    public private(set) var manifestPlacement = ManifestPlacement.notRead
    /// Regular-file members read so far, `manifest.json` not counted.
    public private(set) var memberCount = 0
    /// Members read as records so far.
    public private(set) var recordMemberCount = 0
    /// Records read so far: returned by ``nextRecord()``, or checked and written by ``extract(to:)``.
    public private(set) var recordCount = 0
    /// Members skipped because they are not record files, in archive order.
    public internal(set) var skippedMembers: [SkippedMember] = []
    /// Records skipped under ``RecordErrorPolicy/skip(rejects:)`` so far.
    public var rejectedCount: Int { closedRejects + (open?.reader.rejectedCount ?? 0) }
    /// The responses read so far that list zones and hold no records (`zones/list`,
    /// `changes/database`…), from every record member.
    public var zoneListings: [ZoneListing] { closedListings + (open?.reader.zoneListings ?? []) }
    /// Called by ``nextRecord()`` for each asset and change-log member with a source of its
    /// bytes; whatever the handler leaves unread is read and checked after it returns.
    ///
    /// For a member no manifest lists (yet), the entry is made from its name — `assets/<checksum>`
    /// or `changes/<name>` — with its size from the tar header and an empty `sha256`: nothing
    /// vouches for it until a later manifest does.
    public var onMember: ((ArchiveManifest.Member, any ByteSource) throws -> Void)?
    /// Called for every record skipped under ``RecordErrorPolicy/skip(rejects:)`` with its
    /// `RecordFormatError` (which names the archive, the member and the line).
    public var onReject: ((any Error) -> Void)?

    /// Bytes of the (decompressed) tar stream read so far.
    public var bytesRead: Int { tar.offset }

    private struct OpenRecords {
        var entry: TarEntry
        var source: MemberSource
        var reader: NDJSONReader
        /// Whether the member is gzip-compressed (the reader then counts decompressed bytes).
        var isCompressed: Bool
        var database: String?
        var zoneID: ZoneID?
        /// The manifest's entries when it was read before this member.
        var listed: (zone: ArchiveManifest.Zone, member: ArchiveManifest.Member)?
        var count = 0
        var typeCounts: [ExactName: Int] = [:]
    }

    let configuration: Configuration
    private var policy: RecordErrorPolicy
    let tar: TarReader
    private var manifestBytes: [UInt8] = []
    /// The first member after the leading directories, when it was not the manifest.
    private var lookahead: TarEntry?
    /// Paths of the members read so far, `manifest.json` included once read.
    private var seen: Set<String> = []
    /// Members read while no manifest had been, waiting for one to vouch for them.
    var early: [EarlyMember] = []
    private var open: OpenRecords?
    private var closedRejects = 0
    private var closedListings: [ZoneListing] = []
    /// Bytes decompressed from gzip-compressed members so far.
    var memberOutputBytes = 0
    var hasStarted = false
    private var isFinished = false
    /// While extracting: where each member's bytes are copied as they are read.
    private var stage: ((TarEntry) throws -> StagedFile)?
    /// The history member last handed out by ``nextHistoryMember()``, checked on the next call.
    var pendingHistory: PendingHistoryMember?
    /// The path components of the last history member no manifest listed (they come in name order).
    var lastUnlistedHistory: [String]?

    /// Opens the archive at `path`.
    ///
    /// - Throws: ``ArchiveError`` when the file cannot be opened or a leading manifest is bad.
    public convenience init(path: String, configuration: Configuration = Configuration(),
                            policy: RecordErrorPolicy = .fail) throws {
        let file: InputFile
        do { file = try InputFile(path: path) } catch {
            throw ArchiveError(.ioFailure, "cannot open the archive", archive: path, underlying: error)
        }
        try self.init(source: file, configuration: configuration, policy: policy)
    }

    /// Opens an archive read from `source` (gzip-compressed or not) and reads its manifest when
    /// that is the first member.
    ///
    /// `policy` applies to records in members no manifest vouches for when they are read (an
    /// archive without one, members before it): under ``RecordErrorPolicy/skip(rejects:)`` a bad
    /// record is written to the rejects sink, reported to ``onReject`` and skipped. A member the
    /// manifest lists is checked, not repaired: a bad record in it always fails.
    ///
    /// - Throws: ``ArchiveError``: ``ArchiveError/Code/invalidManifest`` for a bad leading
    ///   manifest, and any reading failure.
    public init(source: any ByteSource, configuration: Configuration = Configuration(),
                policy: RecordErrorPolicy = .fail) throws {
        name = source.name
        self.configuration = configuration
        self.policy = policy
        let input: any ByteSource
        do { input = try Compression.openInput(source, configuration: configuration.gzip) } catch {
            throw ArchiveError(error is CompressionError ? .decompressionFailed : .ioFailure,
                               "cannot start reading the archive", archive: source.name, offset: 0, underlying: error)
        }
        tar = TarReader(source: input, archive: source.name, limits: TarReader.Limits(
            maximumMemberBytes: configuration.maximumMemberBytes, maximumTotalBytes: configuration.maximumTotalBytes,
            maximumMembers: configuration.maximumMembers, maximumMetadataBytes: configuration.maximumMetadataBytes))
        if let first = try nextEntry() {
            if first.path == ArchivePath.manifest {
                try readManifest(first)
            } else {
                lookahead = first
            }
        }
    }

    /// Returns the next record, member after member in archive order, or `nil` after the last
    /// member, once every member the manifest lists (when there is one) has been read and checked.
    ///
    /// A member's checksum is compared when its end is reached (or, for members before a late
    /// manifest, when the manifest arrives), so records of a member that turns out to be corrupt
    /// may already have been returned: use ``ArchiveVerifier`` first when that matters.
    ///
    /// - Throws: ``ArchiveError`` naming the member: checksum, size or count mismatches, members
    ///   missing from or not listed in the manifest, invalid records (with their line), unsafe
    ///   entries, truncation.
    public func nextRecord() throws -> ArchiveRecord? {
        hasStarted = true
        while true {
            if open != nil {
                if let record = try nextRecordOfOpenMember() { return record }
                continue
            }
            guard let entry = try nextEntry() else {
                try finish()
                return nil
            }
            if entry.path == ArchivePath.manifest && manifestPlacement == .notRead {
                try readManifest(entry)
                early = []
                continue
            }
            try begin(entry)
        }
    }

    /// Writes every member under `directory` (created if missing; its parent must exist),
    /// `manifest.json` included, and returns how many files were written.
    ///
    /// The archive goes through exactly the checks of ``ArchiveVerifier`` (without requiring a
    /// manifest): every member's size and SHA-256, every records member decoded and its counts
    /// per type, the schema, the members listed. Each member is written to a staging folder
    /// inside `directory` as it is read, and all of them are moved into place only once the
    /// whole archive checked out (to its tar end and gzip trailer); on any failure none of them
    /// appears. Every regular file is written, record file or not; a record file no manifest
    /// vouches for is written whatever it holds (its bad records are skipped while counting, not
    /// refused). ``recordCount`` then gives the records extracted.
    ///
    /// Nothing is ever written outside `directory`: member names were checked when read, and an
    /// existing symlink or non-directory on the way to a member stops extraction.
    ///
    /// - Throws: ``ArchiveError`` naming the first bad member, the same one ``ArchiveVerifier``
    ///   reports.
    @discardableResult
    public func extract(to directory: String) throws -> Int {
        guard !hasStarted else {
            throw ArchiveError(.invalidState, "expected a reader that has not returned records yet", archive: name)
        }
        let root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        let extractor = try ArchiveExtractor(root: root, archive: name)
        defer { extractor.removeStaging() }
        stage = { try extractor.stage($0) }
        defer { stage = nil }
        // Extraction writes every file: a record file no manifest vouches for is written whatever
        // it holds (a saved response with a per-record server error, a `package.json`), its bad
        // records only skipped while counting. Members a manifest lists still fail on any (their
        // counts, and the schema, then disagree with the manifest too).
        policy = .skip(rejects: nil)
        _ = try ArchiveVerifier(configuration: configuration, requiresManifest: false).check(self)
        if manifestPlacement != .notRead {
            try extractor.stage(manifestBytes, components: [ArchivePath.manifest])
        }
        return try extractor.commitStaged()
    }

    // MARK: - Members

    /// The next regular-file member (directories are passed over), or `nil` after the last.
    func nextEntry() throws -> TarEntry? {
        if let entry = lookahead {
            lookahead = nil
            return entry
        }
        while let entry = try tar.next() {
            if entry.kind != .directory { return entry }
        }
        return nil
    }

    /// Reads `manifest.json`, checks it, and compares the members read before it with it (the
    /// caller then drops or commits them).
    func readManifest(_ entry: TarEntry) throws {
        guard entry.size <= configuration.maximumManifestBytes else {
            throw ArchiveError(.limitExceeded, "expected a manifest of at most \(configuration.maximumManifestBytes) bytes "
                               + "(maximumManifestBytes), found \(entry.size)", archive: name,
                               member: entry.path, offset: entry.headerOffset)
        }
        manifestBytes = try MemberSource(tar: tar, archive: name, member: entry.path).readAll()
        let manifest = try ArchiveManifest(parsing: manifestBytes, archive: name)
        try Self.check(manifest, archive: name)
        self.manifest = manifest
        manifestPlacement = memberCount == 0 ? .first : .after(members: memberCount)
        seen.insert(entry.path)
        try reconcileEarlyMembers()
    }

    /// Refuses a member seen before (or a second `manifest.json`) and counts it.
    func checkFirstSighting(_ entry: TarEntry) throws {
        guard seen.insert(entry.path).inserted else {
            throw ArchiveError(.unexpectedMember, "expected each member once, found `\(entry.path)` again",
                               archive: name, member: entry.path, offset: entry.headerOffset)
        }
        memberCount += 1
    }

    /// The manifest's entry for a member read after the manifest, with its size checked.
    func listedMember(for entry: TarEntry) throws -> ArchiveManifest.Member {
        guard let member = manifest.member(at: entry.path) else {
            throw ArchiveError(.unexpectedMember, "expected only members listed in the manifest, found `\(entry.path)`",
                               archive: name, member: entry.path, offset: entry.headerOffset)
        }
        if entry.size != member.size {
            throw ArchiveError(.sizeMismatch, "expected \(member.size) bytes as the manifest says, found \(entry.size)",
                               archive: name, member: entry.path, offset: entry.headerOffset)
        }
        return member
    }

    /// Starts on a member: opens its records, or hands it to ``onMember``, or skips it.
    private func begin(_ entry: TarEntry) throws {
        try checkFirstSighting(entry)
        let source = MemberSource(tar: tar, archive: name, member: entry.path, copy: try stage?(entry))
        if manifestPlacement != .notRead {
            let member = try listedMember(for: entry)
            if member.kind == .records, let zone = manifest.zone(at: member.path) {
                try openRecords(entry, source: source, database: zone.database, zoneID: zone.zoneID, listed: (zone, member))
            } else {
                if let onMember { try onMember(member, source) }
                try check(source, against: member, entry: entry)
            }
            return
        }
        let handling: EarlyMember.Handling
        switch MemberRole.of(entry.components) {
        case .records(let database, let zoneID):
            try openRecords(entry, source: source, database: database, zoneID: zoneID, listed: nil)
            return
        case .asset(let fileChecksum):
            if let onMember {
                try onMember(ArchiveManifest.Member(path: entry.path, kind: .asset, size: entry.size, sha256: "",
                                                    fileChecksum: fileChecksum), source)
            }
            handling = .asset(fileChecksum: fileChecksum)
        case .changes:
            if let onMember {
                try onMember(ArchiveManifest.Member(path: entry.path, kind: .changes, size: entry.size, sha256: ""), source)
            }
            handling = .changes
        case .skipped(let reason):
            skippedMembers.append(SkippedMember(path: entry.path, reason: reason))
            handling = .skipped(reason: reason)
        }
        let digest = try source.finish()
        early.append(EarlyMember(entry: entry, size: source.bytesRead, sha256: digest, handling: handling))
    }

    private func openRecords(_ entry: TarEntry, source: MemberSource, database: String?, zoneID: ZoneID?,
                             listed: (zone: ArchiveManifest.Zone, member: ArchiveManifest.Member)?) throws {
        // Compressed members share one budget of decompressed bytes: the gzip output limit bounds
        // them together, not each.
        var gzip = configuration.gzip
        if let limit = gzip.maximumOutputBytes { gzip.maximumOutputBytes = max(0, limit - memberOutputBytes) }
        let input: any ByteSource
        do { input = try Compression.openInput(source, configuration: gzip) } catch {
            throw memberError(error, entry: entry)
        }
        let isCompressed = input is GzipSource
        var records = configuration.records
        if !isCompressed {
            // A small member needs no buffer of the default size (1 MiB, doubled).
            records.chunkSize = min(records.chunkSize, max(4096, entry.size + 1))
        }
        let reader = NDJSONReader(source: input, policy: listed == nil ? policy : .fail, configuration: records)
        recordMemberCount += 1
        reader.onReject = { [weak self] error in self?.onReject?(error) }
        open = OpenRecords(entry: entry, source: source, reader: reader, isCompressed: isCompressed, database: database,
                           zoneID: zoneID, listed: listed)
    }

    /// The next record of the open member; at its end, checks the member and closes it.
    private func nextRecordOfOpenMember() throws -> ArchiveRecord? {
        guard var current = open else { return nil }
        let record: Record?
        do { record = try current.reader.next() } catch { throw memberError(error, entry: current.entry) }
        if let record {
            current.count += 1
            recordCount += 1
            if let type = record.recordType { current.typeCounts[ExactName(type), default: 0] += 1 }
            open = current
            // A member whose path gives the database but a shortened zone name: its records'
            // own zones (Ferry writes each record with its zoneID).
            let zoneID = current.zoneID ?? current.database.map { _ in record.zoneID ?? .default }
            return ArchiveRecord(record: record, database: current.database, zoneID: zoneID, member: current.entry.path)
        }
        open = nil
        closedRejects += current.reader.rejectedCount
        closedListings += current.reader.zoneListings
        if current.isCompressed { memberOutputBytes += current.reader.bytesRead }
        guard let (zone, member) = current.listed else {
            let digest = try current.source.finish()
            early.append(EarlyMember(entry: current.entry, size: current.source.bytesRead, sha256: digest,
                                     handling: .records(count: current.count, typeCounts: current.typeCounts,
                                                        database: current.database, zoneID: current.zoneID)))
            return nil
        }
        try check(current.source, against: member, entry: current.entry)
        try checkCounts(count: current.count, typeCounts: current.typeCounts, zone: zone, entry: current.entry)
        return nil
    }

    /// An error met while reading a member's records, as an ``ArchiveError`` naming the member.
    private func memberError(_ error: any Error, entry: TarEntry) -> ArchiveError {
        switch error {
        case let failure as ArchiveError:
            return failure
        case let failure as CompressionError:
            return ArchiveError(.decompressionFailed, "the compressed member could not be read", archive: name,
                                member: entry.path, offset: entry.dataOffset, underlying: failure)
        case let failure as RecordFormatError:
            // The member and line say where; the message is the record error's own, with the
            // column and record index it gives.
            var place: [String] = []
            if let column = failure.column { place.append("column \(column)") }
            if let index = failure.recordIndex { place.append("record \(index)") }
            return ArchiveError(.invalidRecord, (place.isEmpty ? "" : place.joined(separator: ", ") + ": ") + failure.message,
                                archive: name, member: entry.path, offset: entry.dataOffset, line: failure.line,
                                underlying: failure)
        default:
            return ArchiveError(.ioFailure, "the member could not be read", archive: name, member: entry.path,
                                offset: entry.dataOffset, underlying: error)
        }
    }

    /// At the end: every member the manifest lists must have been seen.
    func finish() throws {
        guard !isFinished else { return }
        isFinished = true
        early = []
        guard manifestPlacement != .notRead else { return }
        if let missing = manifest.members.first(where: { !seen.contains($0.path) }) {
            throw ArchiveError(.missingMember, "expected the member listed in the manifest, found the end of the archive",
                               archive: name, member: missing.path, offset: tar.offset)
        }
    }

    // MARK: - Checks

    /// Compares every member read before the manifest with what the manifest says of it: listed,
    /// the same size and SHA-256, handled as what the manifest lists it as (records of the same
    /// database and zone, with the same counts; an asset with the same checksum; a change log).
    private func reconcileEarlyMembers() throws {
        for member in early {
            let entry = member.entry
            guard let listed = manifest.member(at: entry.path) else {
                throw ArchiveError(.unexpectedMember, "expected only members listed in the manifest, found `\(entry.path)` "
                                   + "(before the manifest)", archive: name, member: entry.path, offset: entry.headerOffset)
            }
            guard member.size == listed.size else {
                throw ArchiveError(.sizeMismatch, "expected \(listed.size) bytes as the manifest says, found \(member.size)",
                                   archive: name, member: entry.path, offset: entry.headerOffset)
            }
            guard member.sha256 == listed.sha256 else {
                throw ArchiveError(.checksumMismatch, "expected SHA-256 \(listed.sha256) from the manifest, found \(member.sha256)",
                                   archive: name, member: entry.path, offset: entry.dataOffset)
            }
            func conflict(_ what: String) -> ArchiveError {
                ArchiveError(.memberBeforeManifest, "expected the manifest to say what the member was taken for before "
                             + "the manifest came — \(member.handlingDescription) — found \(what); put manifest.json "
                             + "first (tar czf out.tar.gz manifest.json …)", archive: name, member: entry.path,
                             offset: entry.headerOffset)
            }
            switch member.handling {
            case .records(let count, let typeCounts, let database, let zoneID):
                guard listed.kind == .records, let zone = manifest.zone(at: entry.path) else {
                    throw conflict("it listed as \(Self.describe(listed.kind))")
                }
                guard database == zone.database, zoneID?.zoneName == zone.zoneID.zoneName,
                      zoneID?.ownerRecordName == zone.zoneID.ownerRecordName else {
                    throw conflict("zone `\(zone.zoneID.zoneName)` in database `\(zone.database)`")
                }
                try checkCounts(count: count, typeCounts: typeCounts, zone: zone, entry: entry)
            case .asset(let fileChecksum):
                guard listed.kind == .asset, (listed.fileChecksum ?? fileChecksum) == fileChecksum else {
                    throw conflict("it listed as \(Self.describe(listed.kind))"
                                   + (listed.fileChecksum.map { " with checksum `\($0)`" } ?? ""))
                }
            case .changes:
                guard listed.kind == .changes else { throw conflict("it listed as \(Self.describe(listed.kind))") }
            case .skipped:
                throw conflict("it listed as \(Self.describe(listed.kind))")
            }
        }
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

    private func checkCounts(count: Int, typeCounts: [ExactName: Int], zone: ArchiveManifest.Zone, entry: TarEntry) throws {
        guard count == zone.recordCount, typeCounts == zone.recordTypeCounts else {
            throw ArchiveError(.countMismatch, "expected \(zone.recordCount) records "
                               + "\(Self.describe(zone.recordTypeCounts)) as the manifest says, found "
                               + "\(count) \(Self.describe(typeCounts))", archive: name,
                               member: entry.path, offset: entry.dataOffset)
        }
    }

    private static func describe(_ counts: [ExactName: Int]) -> String {
        "(" + counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }

    private static func describe(_ kind: ArchiveManifest.Member.Kind) -> String {
        switch kind {
        case .records: "records of no zone"
        case .asset: "an asset"
        case .changes: "a change log"
        }
    }

    /// Checks that the manifest's paths are safe, unique and consistent.
    private static func check(_ manifest: ArchiveManifest, archive: String) throws {
        func invalid(_ message: String) -> ArchiveError {
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
        // Zones and records members pair up one to one: a member of no zone, or of two, would have
        // its records dropped or attributed to one zone only.
        var zones: [String: ArchiveManifest.Zone] = [:]
        for zone in manifest.zones {
            guard manifest.member(at: zone.path)?.kind == .records else {
                throw invalid("expected zone `\(zone.zoneID.zoneName)` to point at a records member, found `\(zone.path)`")
            }
            if let other = zones[zone.path] {
                throw invalid("expected each zone to have its own records member, found zones `\(other.zoneID.zoneName)` "
                              + "(\(other.database)) and `\(zone.zoneID.zoneName)` (\(zone.database)) both at `\(zone.path)`")
            }
            zones[zone.path] = zone
        }
        for member in manifest.members where member.kind == .records && zones[member.path] == nil {
            throw invalid("expected records member `\(member.path)` to be the path of one of the manifest's zones, found none")
        }
    }
}
