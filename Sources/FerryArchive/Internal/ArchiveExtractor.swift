import FerryIO

/// Writes members under one root directory and nowhere else.
///
/// Member names arrive already checked (relative, no `..`); on top of that every directory on
/// the way is created here or must already be a real directory (an existing symlink stops
/// extraction).
///
/// Every member is staged: written whole, as it is read and checked, into a hidden folder inside
/// the root (so that moving it into place is a rename on the same file system), and moved into
/// place by ``commitStaged()`` only once the whole archive passed ``ArchiveVerifier``'s checks.
/// The staging folder (`.ferry-staging-PID-XXXXXX`) is removed by ``removeStaging()`` whatever
/// happened; one that a killed extraction left is removed by the next extraction into the folder.
final class ArchiveExtractor {
    private let root: String
    private let archive: String
    /// The staging folder, made on first use.
    private var staging: String?
    /// The members staged so far, in archive order.
    private var staged: [(path: String, entry: TarEntry)] = []

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

    /// A file in the staging folder for `entry`'s bytes (``MemberSource`` writes them as the
    /// member is read, and closes it at the member's end); ``commitStaged()`` moves it into place.
    func stage(_ entry: TarEntry) throws -> StagedFile {
        if staging == nil {
            guard let directory = FileSystem.makeTemporaryFolder(prefix: root + "/.ferry-staging-") else {
                throw ArchiveError(.ioFailure, "cannot create a staging folder in `\(root)`", archive: archive,
                                   member: entry.path, offset: entry.headerOffset,
                                   underlying: FerryIOError(.createTemporary, path: root, errno: Syscall.errno))
            }
            staging = directory
        }
        let path = staging! + "/\(staged.count + 1)"
        do {
            let file = try StagedFile(path: path)
            staged.append((path, entry))
            return file
        } catch {
            throw ArchiveError(.ioFailure, "cannot create `\(path)`", archive: archive, member: entry.path,
                               offset: entry.headerOffset, underlying: error)
        }
    }

    /// Moves every staged member to its place, in archive order, and returns how many.
    func commitStaged() throws -> Int {
        for (stagedPath, entry) in staged {
            let path = try prepare(entry.components, member: entry.path, offset: entry.headerOffset)
            let error = Syscall.rename(stagedPath, path)
            guard error == 0 else {
                throw ArchiveError(.ioFailure, "cannot move `\(stagedPath)` to `\(path)`", archive: archive, member: entry.path,
                                   underlying: FerryIOError(.rename, path: path, errno: error))
            }
        }
        defer { staged = [] }
        return staged.count
    }

    /// Removes the staging folder and whatever is left in it.
    func removeStaging() {
        if let staging { FileSystem.removeTemporaryFolder(staging) }
        staging = nil
    }
}
