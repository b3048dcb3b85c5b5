import FerryIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    private var staged: [(path: String, entry: TarEntry, inMemory: Bool)] = []

    /// Whether the target directory was made for this extraction (removed again, if still
    /// empty, when the extraction fails).
    private let madeRoot: Bool
    /// Whether the staged members were moved into place.
    private var committed = false

    init(root: String, archive: String) throws {
        self.root = root
        self.archive = archive
        var made = false
        let error = Syscall.makeDirectory(root, made: &made)
        madeRoot = made
        guard error == 0, FileSystem.isDirectory(root) else {
            throw ArchiveError(.ioFailure, "cannot create the target directory `\(root)`", archive: archive,
                               underlying: FerryIOError(.open, path: root, errno: error == 0 ? nil : error))
        }
        // A staging folder (or a member's temporary) a killed extraction left behind.
        FileSystem.removeStaleTemporaries(in: root)
    }

    /// Creates the parent directories of `components` and returns the file's path.
    private func prepare(_ components: [String], member: String, offset: Int?, made: (String) -> Void = { _ in }) throws -> String {
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
                made(path)
            case .directory where isLast, .regular where !isLast, .other:
                throw ArchiveError(.unsafePath, "expected \(isLast ? "a file" : "a directory") at `\(path)`, found something else",
                                   archive: archive, member: member, offset: offset)
            default:
                break
            }
        }
        return path
    }

    /// Stages bytes held in memory (the manifest), to be moved into place with the members.
    func stage(_ bytes: [UInt8], components: [String]) throws {
        let member = components.joined(separator: "/")
        let entry = TarEntry(path: member, components: components, kind: .file, size: bytes.count, headerOffset: 0, dataOffset: 0)
        let file = try stage(entry)
        do {
            try bytes.withUnsafeBytes { try file.write($0) }
            try file.close()
        } catch {
            file.abandon()
            throw ArchiveError(.ioFailure, "cannot write `\(file.path)`", archive: archive, member: member, underlying: error)
        }
        staged[staged.count - 1].inMemory = true
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
            staged.append((path, entry, false))
            return file
        } catch {
            throw ArchiveError(.ioFailure, "cannot create `\(path)`", archive: archive, member: entry.path,
                               offset: entry.headerOffset, underlying: error)
        }
    }

    /// What ``commitStaged()`` did, in order, so that a failure can undo it.
    private enum Step {
        case madeDirectory(String)
        /// A file the target held, moved aside into the staging folder.
        case movedAside(path: String, to: String)
        case placed(path: String, from: String)
    }

    /// Moves every staged member to its place, in archive order, and returns how many.
    ///
    /// Every member or none: the places are checked first, against each other (a member where
    /// another needs a folder) and against the target (symbolic links, files where folders go,
    /// names too long), with nothing moved; then the members are moved, each file the target
    /// held at a member's place set aside in the staging folder; and if a move still fails (the
    /// target changed meanwhile), every step is undone, so the target holds what it held.
    func commitStaged() throws -> Int {
        try checkPlaces()
        var steps: [Step] = []
        do {
            for (index, (stagedPath, entry, _)) in staged.enumerated() {
                let path = try prepare(entry.components, member: entry.path, offset: offset(of: entry, at: index)) {
                    steps.append(.madeDirectory($0))
                }
                if Syscall.kind(path) == .regular {
                    let aside = staging! + "/replaced-\(index + 1)"
                    let error = Syscall.rename(path, aside)
                    guard error == 0 else { throw moveFailure(from: path, to: aside, entry: entry, errno: error) }
                    steps.append(.movedAside(path: path, to: aside))
                }
                let error = Syscall.rename(stagedPath, path)
                guard error == 0 else { throw moveFailure(from: stagedPath, to: path, entry: entry, errno: error) }
                steps.append(.placed(path: path, from: stagedPath))
            }
        } catch {
            for step in steps.reversed() {
                switch step {
                case .placed(let path, let from): _ = Syscall.rename(path, from)
                case .movedAside(let path, let aside): _ = Syscall.rename(aside, path)
                case .madeDirectory(let path): _ = Syscall.removeDirectory(path)
                }
            }
            throw error
        }
        defer { staged = [] }
        committed = true
        return staged.count
    }

    /// The tar offset to report for a staged entry (none for bytes staged from memory).
    private func offset(of entry: TarEntry, at index: Int) -> Int? {
        staged[index].inMemory ? nil : entry.headerOffset
    }

    private func moveFailure(from: String, to: String, entry: TarEntry, errno: Int32) -> ArchiveError {
        ArchiveError(.ioFailure, "cannot move `\(from)` to `\(to)`", archive: archive, member: entry.path,
                     underlying: FerryIOError(.rename, path: to, errno: errno))
    }

    /// Checks, moving nothing, that every staged member can be put in its place: no member
    /// where another needs a folder, no name longer than the file system takes, and on the
    /// target's side no symbolic link, nothing but a folder where a folder goes, nothing but a
    /// file where a file goes.
    private func checkPlaces() throws {
        var files: Set<String> = []
        var folders: Set<String> = []
        var checked: [String: Syscall.PathKind] = [:]
        for (index, (_, entry, _)) in staged.enumerated() {
            let offset = offset(of: entry, at: index)
            func clash(_ message: String) -> ArchiveError {
                ArchiveError(.unsafePath, message, archive: archive, member: entry.path, offset: offset)
            }
            if let staging, entry.components.first == String(staging.split(separator: "/").last ?? "") {
                throw clash("refusing to write into the staging folder `\(staging)`")
            }
            var relative = ""
            var path = root
            for (position, component) in entry.components.enumerated() {
                let isLast = position == entry.components.count - 1
                relative += (relative.isEmpty ? "" : "/") + component
                path += "/" + component
                if component.utf8.count > Self.maximumNameBytes {
                    throw ArchiveError(.ioFailure, "the name `\(component)` is longer than the file system takes (\(Self.maximumNameBytes) bytes)",
                                       archive: archive, member: entry.path, offset: offset)
                }
                if path.utf8.count >= Self.maximumPathBytes {
                    throw ArchiveError(.ioFailure, "the path `\(path)` is longer than the file system takes",
                                       archive: archive, member: entry.path, offset: offset)
                }
                if isLast {
                    if folders.contains(relative) { throw clash("expected a file at `\(path)`, where another member needs a folder") }
                    files.insert(relative)
                } else {
                    if files.contains(relative) { throw clash("expected a folder at `\(path)`, where another member is a file") }
                    folders.insert(relative)
                }
                let kind: Syscall.PathKind
                if let known = checked[path] { kind = known } else {
                    kind = Syscall.kind(path)
                    checked[path] = kind
                }
                if kind == .symlink { throw clash("refusing to write through the existing symbolic link `\(path)`") }
                if kind != .missing && kind != (isLast ? .regular : .directory) {
                    throw clash("expected \(isLast ? "a file" : "a directory") at `\(path)`, found something else")
                }
            }
        }
    }

    /// The longest file name, and the longest path, the file systems Ferry runs on take.
    static let maximumNameBytes = 255
    static let maximumPathBytes = Int(PATH_MAX)

    /// Removes the staging folder and whatever is left in it.
    func removeStaging() {
        if let staging { FileSystem.removeTemporaryFolder(staging) }
        staging = nil
        // A failed extraction leaves no folder it made (rmdir: only an empty one goes).
        if madeRoot && !committed { _ = Syscall.removeDirectory(root) }
    }
}
