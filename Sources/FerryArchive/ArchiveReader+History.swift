import FerryCompression
import FerryIO

extension ArchiveReader {
    /// A member of an archive that holds history — a change log or saved CloudKit responses — as
    /// ``nextHistoryMember()`` hands it out.
    public struct HistoryMember {
        /// The member's path in the archive.
        public let path: String
        /// The member's bytes, decompressed when the member is gzip-compressed. Read it to its end
        /// (or stop early) before asking for the next member; it is valid until then.
        public let source: any ByteSource
    }

    /// Returns the next member that holds history, in archive order, or `nil` after the last one,
    /// once every member was read and checked. For `ferry replay`, which reads an archive as the
    /// history it carries rather than as records:
    ///
    /// - In an archive with a manifest (one Ferry wrote), the history is its change logs
    ///   (`changes/…`, the journal of a store it was made from). Its records members are a state,
    ///   not a history: they and its assets are read and checked against the manifest (size and
    ///   SHA-256), not handed out. An archive whose manifest lists records but no change log is
    ///   refused: it is a state (use it as a replay's base).
    /// - In an archive without a manifest (`tar czf pages.tar.gz pages/`), every member holding
    ///   history by its name is handed out: change logs (`changes/…`) and record files (names
    ///   ending in `.ndjson`, `.jsonl` or `.json`, optionally `.gz`) — Ferry change logs or saved
    ///   CloudKit change responses. Other members are skipped as ``ArchiveReader`` skips them
    ///   (hidden files, other names; see ``skippedMembers``).
    ///
    /// A member handed out is checked (against the manifest when it lists it) when the next one is
    /// asked for, after the rest of it was read.
    ///
    /// - Throws: ``ArchiveError`` naming the member: a state without history, checksum and size
    ///   mismatches, members missing from or not listed in the manifest, truncation.
    public func nextHistoryMember() throws -> HistoryMember? {
        // A leading manifest was read when the archive was opened.
        if !hasStarted && manifestPlacement != .notRead { try checkHoldsHistory() }
        hasStarted = true
        try closePendingHistory()
        while let entry = try nextEntry() {
            if entry.path == ArchivePath.manifest && manifestPlacement == .notRead {
                try readManifest(entry)
                early = []
                try checkHoldsHistory()
                continue
            }
            try checkFirstSighting(entry)
            let source = MemberSource(tar: tar, archive: name, member: entry.path)
            if manifestPlacement != .notRead {
                let member = try listedMember(for: entry)
                guard member.kind == .changes else {
                    try check(source, against: member, entry: entry)
                    continue
                }
                return try handOut(entry, source: source, listed: member)
            }
            switch MemberRole.of(entry.components) {
            case .changes, .records:
                try checkNameOrder(entry)
                return try handOut(entry, source: source, listed: nil)
            case .asset(let fileChecksum):
                let digest = try source.finish()
                early.append(EarlyMember(entry: entry, size: source.bytesRead, sha256: digest, handling: .asset(fileChecksum: fileChecksum)))
            case .skipped(let reason):
                skippedMembers.append(SkippedMember(path: entry.path, reason: reason))
                let digest = try source.finish()
                early.append(EarlyMember(entry: entry, size: source.bytesRead, sha256: digest, handling: .skipped(reason: reason)))
            }
        }
        try finish()
        return nil
    }

    /// Members no manifest orders come in the order `replay` reads a folder in — depth-first,
    /// each folder's entries by name (byte order) — so that an archive of a folder of pages replays
    /// as the folder does. A tar made without `--sort=name` lists a folder in the order the file
    /// system happened to give, which would apply the pages out of order.
    private func checkNameOrder(_ entry: TarEntry) throws {
        defer { lastUnlistedHistory = entry.components }
        guard let last = lastUnlistedHistory,
              entry.components.lexicographicallyPrecedes(last, by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) else { return }
        throw ArchiveError(.unexpectedMember, "expected the history's members in name order, as a folder is replayed, found `\(entry.path)` "
                           + "after `\(last.joined(separator: "/"))`: make the archive with `tar --sort=name`, or extract it and "
                           + "replay the folder", archive: name, member: entry.path, offset: entry.headerOffset)
    }

    /// A manifest that lists records but no change log describes a state, not a history.
    private func checkHoldsHistory() throws {
        guard !manifest.members.contains(where: { $0.kind == .changes }),
              manifest.members.contains(where: { $0.kind == .records }) else { return }
        throw ArchiveError(.invalidArgument, "expected a history (change logs, or saved change responses), found an archive "
                           + "holding a state (records, no change log): give it to replay as the base (--base) or convert it",
                           archive: name, member: ArchivePath.manifest)
    }

    /// Opens a history member's bytes (decompressed; gzip members share the archive's budget of
    /// decompressed bytes) and keeps it to check on the next call.
    private func handOut(_ entry: TarEntry, source: MemberSource, listed: ArchiveManifest.Member?) throws -> HistoryMember {
        var gzip = configuration.gzip
        if let limit = gzip.maximumOutputBytes { gzip.maximumOutputBytes = max(0, limit - memberOutputBytes) }
        let input: any ByteSource
        do { input = try Compression.openInput(source, configuration: gzip) } catch {
            throw ArchiveError(error is CompressionError ? .decompressionFailed : .ioFailure, "the member could not be read",
                               archive: name, member: entry.path, offset: entry.dataOffset, underlying: error)
        }
        let counted = CountingSource(input, isCompressed: input is GzipSource)
        pendingHistory = PendingHistoryMember(entry: entry, source: source, listed: listed, counted: counted)
        return HistoryMember(path: entry.path, source: counted)
    }

    /// Reads the rest of the member handed out last and checks it.
    private func closePendingHistory() throws {
        guard let pending = pendingHistory else { return }
        pendingHistory = nil
        if pending.counted.isCompressed { memberOutputBytes += pending.counted.bytesRead }
        if let listed = pending.listed {
            try check(pending.source, against: listed, entry: pending.entry)
        } else {
            let digest = try pending.source.finish()
            early.append(EarlyMember(entry: pending.entry, size: pending.source.bytesRead, sha256: digest, handling: .changes))
        }
    }
}

/// A history member handed out and not yet checked.
struct PendingHistoryMember {
    var entry: TarEntry
    var source: MemberSource
    var listed: ArchiveManifest.Member?
    var counted: CountingSource
}

/// A source that counts the bytes read through it (a member's decompressed bytes).
final class CountingSource: ByteSource {
    private let wrapped: any ByteSource
    let isCompressed: Bool
    private(set) var bytesRead = 0

    init(_ wrapped: any ByteSource, isCompressed: Bool) {
        self.wrapped = wrapped
        self.isCompressed = isCompressed
    }

    var name: String { wrapped.name }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try wrapped.read(into: buffer)
        bytesRead += n
        return n
    }
}
