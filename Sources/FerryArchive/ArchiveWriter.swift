import FerryCompression
import FerryIO
import FerryRecords

/// Writes a Ferry archive: a gzip-compressed POSIX tar holding `manifest.json`, one NDJSON
/// records member per zone, change logs and asset bytes (see `Docs/ArchiveLayout.md`).
///
/// Because the manifest comes first but lists the size and SHA-256 of every later member, members
/// are staged in a temporary directory as they are added (streaming: memory does not grow with
/// the data; one file stays open per zone) and the tar is assembled in ``finish()``, which
/// commits the output atomically. The staging directory (`.NAME.ferry-stage-PID-XXXXXX` beside
/// the output) is removed in every case but SIGKILL; the next archive written in that folder
/// removes one a killed run left.
///
/// ```swift
/// let writer = try ArchiveWriter(path: "store.tar.gz")
/// for record in records { try writer.add(record, database: "private") }
/// try writer.setChangeToken("token-1", for: ZoneID(zoneName: "Chats"), database: "private")
/// try writer.addAsset(fileChecksum: checksum, bytes: photo)
/// let manifest = try writer.finish()
/// ```
public final class ArchiveWriter {
    /// How to write.
    public struct Configuration: Sendable {
        /// gzip settings (level, threads, block size).
        public var compression: GzipSink.Configuration
        /// Whether the tar stream is gzip-compressed (`.tar.gz`; `true` by default) or written as
        /// is (`.tar`, which every reader of archives accepts as well).
        public var isCompressed = true
        /// The Ferry version recorded in the manifest.
        public var ferryVersion: String
        /// The creation time recorded in the manifest and the tar headers, in milliseconds since
        /// 1970; `nil` means now. Fix it for byte-identical archives.
        public var createdAt: Int64?
        /// Where to stage members; `nil` means beside the output file (or `$TMPDIR` for a sink).
        public var stagingDirectory: String?

        /// Creates a configuration.
        public init(compression: GzipSink.Configuration = GzipSink.Configuration(), ferryVersion: String = "unknown",
                    createdAt: Int64? = nil, stagingDirectory: String? = nil) {
            self.compression = compression
            self.ferryVersion = ferryVersion
            self.createdAt = createdAt
            self.stagingDirectory = stagingDirectory
        }
    }

    private struct ZoneState {
        var zone: ArchiveManifest.Zone
        var file: StagedFile
    }

    private struct OtherMember {
        var member: ArchiveManifest.Member
        var stagedPath: String
    }

    /// The output's name, for messages.
    public let name: String
    /// Bytes of record JSON staged so far (before compression).
    public private(set) var recordBytes = 0
    private let configuration: Configuration
    private let makeSink: () throws -> any ByteSink
    private let stagingPath: String
    private var zones: [ZoneState] = []
    private var zoneIndex: [MemberKey: Int] = [:]
    private var paths = MemberPaths()
    private var others: [OtherMember] = []
    private var schema: [ExactName: ArchiveManifest.RecordTypeSchema] = [:]
    private var output = JSONOutput(capacity: 1 << 16)
    private var fileCounter = 0
    private var isFinished = false

    /// Creates a writer whose archive appears at `path` (atomically) when ``finish()`` succeeds.
    ///
    /// - Throws: ``ArchiveError`` when the staging directory cannot be created.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let staging = configuration.stagingDirectory.map { $0 + "/.ferry-stage-" }
            ?? (directory.isEmpty ? "/" : directory) + "/." + base + ".ferry-stage-"
        try self.init(name: path, stagingPrefix: staging, configuration: configuration) { try OutputFile(path: path) }
    }

    /// Creates a writer onto `sink` (standard output, memory), committed by ``finish()``.
    ///
    /// - Throws: ``ArchiveError`` when the staging directory cannot be created.
    public convenience init(sink: any ByteSink, configuration: Configuration = Configuration()) throws {
        let staging = (configuration.stagingDirectory ?? FileSystem.temporaryDirectory) + "/.ferry-stage-"
        try self.init(name: sink.name, stagingPrefix: staging, configuration: configuration) { sink }
    }

    /// `stagingPrefix` is the staging folder's path up to the process ID (`DIR/.NAME.ferry-stage-`);
    /// the stale staging folders of dead runs in `DIR` are removed first.
    private init(name: String, stagingPrefix: String, configuration: Configuration,
                 makeSink: @escaping () throws -> any ByteSink) throws {
        self.name = name
        self.configuration = configuration
        self.makeSink = makeSink
        if let slash = stagingPrefix.lastIndex(of: "/") {
            FileSystem.removeStaleTemporaries(in: slash == stagingPrefix.startIndex ? "/" : String(stagingPrefix[..<slash]))
        }
        guard let staging = FileSystem.makeTemporaryFolder(prefix: stagingPrefix) else {
            let stagingTemplate = FileSystem.temporaryTemplate(prefix: stagingPrefix)
            throw ArchiveError(.ioFailure, "cannot create the staging directory `\(stagingTemplate)`",
                               archive: name, underlying: FerryIOError(.createTemporary, path: stagingTemplate,
                                                                       errno: Syscall.errno))
        }
        stagingPath = staging
    }

    deinit {
        if !isFinished { abandon() }
    }

    /// Adds one record to the records member of its zone in `database` (`public`, `private` or
    /// `shared`). Records keep their order within a zone and are written exactly as given.
    public func add(_ record: Record, database: String = "private") throws {
        let index = try zoneState(database: database, zoneID: record.zoneID)
        output.removeAll()
        RecordJSON.encode(record, into: &output)
        output.append(0x0A)
        try wrap("cannot stage records", member: zones[index].zone.path) { try zones[index].file.write(output.bytes) }
        recordBytes += output.count
        zones[index].zone.recordCount += 1
        guard let type = record.recordType else { return }
        zones[index].zone.recordTypeCounts[ExactName(type), default: 0] += 1
        ArchiveManifest.RecordTypeSchema.add(record, to: &schema)
    }

    /// Makes sure `zoneID` appears in the archive even when it has no records.
    public func addZone(_ zoneID: ZoneID, database: String = "private") throws {
        _ = try zoneState(database: database, zoneID: zoneID)
    }

    /// Records the change token (sync token) of a zone, adding the zone if needed.
    public func setChangeToken(_ token: String, for zoneID: ZoneID, database: String = "private") throws {
        let index = try zoneState(database: database, zoneID: zoneID)
        zones[index].zone.changeToken = token
    }

    /// Adds the bytes of an asset as `assets/<fileChecksum>`. An asset already added is kept once.
    public func addAsset(fileChecksum: String, bytes: [UInt8]) throws {
        try addAsset(fileChecksum: fileChecksum, from: MemorySource(bytes))
    }

    /// Adds the bytes of an asset read from `source` (streamed) as `assets/<fileChecksum>`.
    public func addAsset(fileChecksum: String, from source: any ByteSource) throws {
        guard !fileChecksum.isEmpty else {
            throw ArchiveError(.invalidArgument, "expected a non-empty fileChecksum for an asset", archive: name)
        }
        let path = ArchivePath.assetMember(fileChecksum: fileChecksum)
        let claimant = "asset \(fileChecksum.debugDescription)"
        guard try paths.isFree(path, for: claimant, archive: name) else { return }
        try addOther(path: path, for: claimant, kind: .asset, fileChecksum: fileChecksum, source: source)
    }

    /// Adds every regular file of `directory` as an asset, its file name read as the
    /// `fileChecksum` with `%XX` escapes (as `ferry extract` writes `assets/`), so a folder of
    /// assets named by checksum — or an extracted archive's `assets/` — goes back in unchanged.
    /// Returns the number of files added.
    @discardableResult
    public func addAssets(fromDirectory directory: String) throws -> Int {
        let files: [String]
        do { files = try FileSystem.files(in: directory) } catch {
            throw ArchiveError(.ioFailure, "cannot list the assets folder", archive: name, underlying: error)
        }
        for path in files {
            let fileName = path.split(separator: "/").last.map(String.init) ?? path
            let source: InputFile
            do { source = try InputFile(path: path) } catch {
                throw ArchiveError(.ioFailure, "cannot open the asset `\(path)`", archive: name, underlying: error)
            }
            try addAsset(fileChecksum: ArchivePath.decodeComponent(fileName), from: source)
        }
        return files.count
    }

    /// Adds a change log as `changes/<name>` (its bytes are kept as given).
    public func addChangeLog(named logName: String, from source: any ByteSource) throws {
        let path = ArchivePath.changesMember(name: logName)
        let claimant = "change log \(logName.debugDescription)"
        guard try paths.isFree(path, for: claimant, archive: name) else {
            throw ArchiveError(.invalidArgument, "expected one change log named `\(logName)`, found two", archive: name, member: path)
        }
        try addOther(path: path, for: claimant, kind: .changes, fileChecksum: nil, source: source)
    }

    /// Assembles the archive — the manifest, records, change logs, then assets — compresses it,
    /// commits the output and removes the staging directory. Returns the manifest written.
    ///
    /// - Throws: ``ArchiveError`` (``ArchiveError/Code/ioFailure`` with the underlying error);
    ///   after a failure nothing appears under the output's name.
    @discardableResult
    public func finish() throws -> ArchiveManifest {
        try checkOpen()
        isFinished = true
        defer { FileSystem.removeTemporaryFolder(stagingPath) }
        var manifest = ArchiveManifest(createdAt: configuration.createdAt ?? Syscall.nowMilliseconds(),
                                       ferryVersion: configuration.ferryVersion)
        var staged: [(ArchiveManifest.Member, String)] = []
        for state in zones.sorted(by: { $0.zone.path < $1.zone.path }) {
            try wrap("cannot stage records", member: state.zone.path) { try state.file.close() }
            manifest.zones.append(state.zone)
            staged.append((ArchiveManifest.Member(path: state.zone.path, kind: .records, size: state.file.size,
                                                  sha256: state.file.sha256!), state.file.path))
        }
        for kind in [ArchiveManifest.Member.Kind.changes, .asset] {
            for other in others.filter({ $0.member.kind == kind }).sorted(by: { $0.member.path < $1.member.path }) {
                staged.append((other.member, other.stagedPath))
            }
        }
        manifest.members = staged.map(\.0)
        manifest.schema = schema
        let sink = try wrap("cannot create the output", member: nil) { try makeSink() }
        let gzip = configuration.isCompressed ? try wrap("cannot start compression", member: nil) {
            try GzipSink(wrapping: sink, configuration: configuration.compression)
        } : nil
        let tar = TarWriter(sink: gzip ?? sink, modificationTime: manifest.createdAt / 1000)
        do {
            try tar.addMember(name: ArchivePath.manifest, bytes: manifest.jsonBytes())
            for (member, stagedPath) in staged {
                try copy(stagedPath, as: member, into: tar)
            }
            try tar.finish()
            try (gzip ?? sink).commit()
        } catch {
            (sink as? OutputFile)?.abandon()
            if let failure = error as? ArchiveError { throw failure }
            throw ArchiveError(.ioFailure, "cannot write the archive", archive: name, offset: tar.offset, underlying: error)
        }
        return manifest
    }

    /// Drops everything: removes the staging directory; no output appears.
    public func abandon() {
        isFinished = true
        for state in zones { state.file.abandon() }
        FileSystem.removeTemporaryFolder(stagingPath)
    }

    // MARK: - Internals

    private func checkOpen() throws {
        if isFinished {
            throw ArchiveError(.invalidState, "expected an open archive writer, found one already finished", archive: name)
        }
    }

    private func wrap<T>(_ message: String, member: String?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw ArchiveError(.ioFailure, message, archive: name, member: member, underlying: error)
        }
    }

    private func nextStagedPath() -> String {
        fileCounter += 1
        return stagingPath + "/m\(fileCounter)"
    }

    private func zoneState(database: String, zoneID: ZoneID?) throws -> Int {
        try checkOpen()
        guard !database.isEmpty else {
            throw ArchiveError(.invalidArgument, "expected a database name such as `private`, found an empty one", archive: name)
        }
        let zone = zoneID ?? .default
        let key = MemberKey(database: ExactName(database), zone: ZoneKey(zone))
        if let index = zoneIndex[key] { return index }
        let path = ArchivePath.recordsMember(database: database, zoneName: zone.zoneName, owner: zone.ownerRecordName)
        // Distinct zones spell distinct paths (Docs/ArchiveLayout.md); should two ever meet, the
        // archive is refused rather than written with one member twice or one zone's records lost.
        let claimant = "zone \(JSONOutput.literal(zone.zoneName)) (owner "
            + (zone.ownerRecordName.map(JSONOutput.literal) ?? "none") + ") of database \(JSONOutput.literal(database))"
        _ = try paths.isFree(path, for: claimant, archive: name)
        let file = try wrap("cannot stage records", member: path) { try StagedFile(path: nextStagedPath()) }
        zones.append(ZoneState(zone: ArchiveManifest.Zone(database: database, zoneID: zoneID ?? .default, path: path), file: file))
        paths.claim(path, for: claimant)
        zoneIndex[key] = zones.count - 1
        return zones.count - 1
    }

    private func addOther(path: String, for claimant: String, kind: ArchiveManifest.Member.Kind, fileChecksum: String?,
                          source: any ByteSource) throws {
        try checkOpen()
        let file = try wrap("cannot stage a member", member: path) { try StagedFile(path: nextStagedPath()) }
        do {
            try wrap("cannot stage a member", member: path) {
                try file.write(contentsOf: source)
                try file.close()
            }
        } catch {
            file.abandon()
            throw error
        }
        paths.claim(path, for: claimant)
        others.append(OtherMember(member: ArchiveManifest.Member(path: path, kind: kind, size: file.size,
                                                                 sha256: file.sha256!, fileChecksum: fileChecksum),
                                  stagedPath: file.path))
    }

    private func copy(_ stagedPath: String, as member: ArchiveManifest.Member, into tar: TarWriter) throws {
        let input = try wrap("cannot read a staged member", member: member.path) { try InputFile(path: stagedPath) }
        try tar.beginMember(name: member.path, size: member.size)
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        var copied = 0
        while true {
            let n = try chunk.withUnsafeMutableBytes { try input.read(into: $0) }
            if n == 0 { break }
            copied += n
            guard copied <= member.size else { break }
            try chunk.withUnsafeBytes { try tar.writeData(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
        guard copied == member.size else {
            throw ArchiveError(.sizeMismatch, "expected the staged member to hold \(member.size) bytes, found \(copied)",
                               archive: name, member: member.path)
        }
        try tar.endMember(size: member.size)
    }
}

/// What makes two records land in the same records member: the database and the zone.
private struct MemberKey: Hashable {
    var database: ExactName
    var zone: ZoneKey
}
