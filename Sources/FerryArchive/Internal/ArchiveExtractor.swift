import FerryIO

/// Writes members under one root directory and nowhere else.
///
/// Member names arrive already checked (relative, no `..`); on top of that every directory on
/// the way is created here or must already be a real directory (an existing symlink stops
/// extraction), and each file is written to a temporary name (`OutputFile`) and renamed into
/// place only after its checksum matched.
///
/// Members nothing vouches for yet (before a later manifest, or in an archive without one) are
/// staged: written whole into a hidden folder inside the root (so that moving them into place is
/// a rename on the same file system), closed, and moved only when the reader says so. The
/// staging folder (`.ferry-staging-PID-XXXXXX`) is removed by ``removeStaging()`` whatever
/// happened; one that a killed extraction left is removed by the next extraction into the folder.
final class ArchiveExtractor {
    private let root: String
    private let archive: String
    /// The staging folder, made on first use.
    private var staging: String?
    private var stagedCount = 0

    init(root: String, archive: String) throws {
        self.root = root
        self.archive = archive
        let error = Syscall.makeDirectory(root)
        guard error == 0, FileSystem.isDirectory(root) else {
            throw ArchiveError(.ioFailure, "cannot create the target directory `\(root)`", archive: archive,
                               underlying: FerryIOError(.open, path: root, errno: error == 0 ? nil : error))
        }
        // A staging folder (or a member's temporary) a killed extraction left behind.
        FileSystem.removeStaleTemporaries(in: root)
    }

    /// Creates the parent directories of `components` and returns the file's path.
    private func prepare(_ components: [String], member: String, offset: Int?) throws -> String {
        if let staging, components.first == String(staging.split(separator: "/").last ?? "") {
            throw ArchiveError(.unsafePath, "refusing to write into the staging folder `\(staging)`", archive: archive,
                               member: member, offset: offset)
        }
        var path = root
        for (index, component) in components.enumerated() {
            path += "/" + component
            let kind = Syscall.kind(path)
            let isLast = index == components.count - 1
            switch kind {
            case .symlink:
                throw ArchiveError(.unsafePath, "refusing to write through the existing symbolic link `\(path)`",
                                   archive: archive, member: member, offset: offset)
            case .missing where !isLast:
                let error = Syscall.makeDirectory(path)
                if error != 0 {
                    throw ArchiveError(.ioFailure, "cannot create directory `\(path)`", archive: archive, member: member,
                                       offset: offset, underlying: FerryIOError(.open, path: path, errno: error))
                }
            case .directory where isLast, .regular where !isLast, .other:
                throw ArchiveError(.unsafePath, "expected \(isLast ? "a file" : "a directory") at `\(path)`, found something else",
                                   archive: archive, member: member, offset: offset)
            default:
                break
            }
        }
        return path
    }

    /// Writes bytes held in memory (the manifest).
    func write(_ bytes: [UInt8], components: [String]) throws {
        let member = components.joined(separator: "/")
        let path = try prepare(components, member: member, offset: nil)
        do {
            let output = try OutputFile(path: path)
            try output.write(bytes)
            try output.commit()
        } catch {
            throw ArchiveError(.ioFailure, "cannot write `\(path)`", archive: archive, member: member, underlying: error)
        }
    }

    /// Streams a member into place, committing it only when `reader` finds its size and
    /// SHA-256 match the manifest.
    func write(_ source: MemberSource, components: [String], member: ArchiveManifest.Member, entry: TarEntry,
               reader: ArchiveReader) throws {
        let path = try prepare(components, member: member.path, offset: entry.headerOffset)
        try copy(source, to: path, entry: entry) { try reader.check(source, against: member, entry: entry) }
    }

    /// Writes a member whole into the staging folder and returns the staged file's path.
    func stage(_ source: MemberSource, entry: TarEntry) throws -> String {
        if staging == nil {
            guard let directory = FileSystem.makeTemporaryDirectory(template: FileSystem.temporaryTemplate(prefix: root + "/.ferry-staging-")) else {
                throw ArchiveError(.ioFailure, "cannot create a staging folder in `\(root)`", archive: archive,
                                   member: entry.path, offset: entry.headerOffset,
                                   underlying: FerryIOError(.createTemporary, path: root, errno: Syscall.errno))
            }
            staging = directory
        }
        stagedCount += 1
        let path = staging! + "/\(stagedCount)"
        try copy(source, to: path, entry: entry) {}
        return path
    }

    /// Moves a staged file to its member's place.
    func commitStaged(_ staged: String, components: [String], member: String) throws {
        let path = try prepare(components, member: member, offset: nil)
        let error = Syscall.rename(staged, path)
        guard error == 0 else {
            throw ArchiveError(.ioFailure, "cannot move `\(staged)` to `\(path)`", archive: archive, member: member,
                               underlying: FerryIOError(.rename, path: path, errno: error))
        }
    }

    /// Removes the staging folder and whatever is left in it.
    func removeStaging() {
        if let staging { FileSystem.removeTree(staging) }
        staging = nil
    }

    /// Copies what `source` has left to a temporary file for `path`, runs `check`, and commits.
    private func copy(_ source: MemberSource, to path: String, entry: TarEntry, check: () throws -> Void) throws {
        let output: OutputFile
        do { output = try OutputFile(path: path) } catch {
            throw ArchiveError(.ioFailure, "cannot create `\(path)`", archive: archive, member: entry.path,
                               offset: entry.headerOffset, underlying: error)
        }
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        do {
            while true {
                let n = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { break }
                do {
                    try chunk.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                } catch {
                    throw ArchiveError(.ioFailure, "cannot write `\(path)`", archive: archive, member: entry.path,
                                       offset: entry.dataOffset + source.bytesRead, underlying: error)
                }
            }
            try check()
            do { try output.commit() } catch {
                throw ArchiveError(.ioFailure, "cannot write `\(path)`", archive: archive, member: entry.path, underlying: error)
            }
        } catch {
            output.abandon()
            throw error
        }
    }
}
