/// The files a folder input stands for, and what was passed over.
///
/// ``FileSystem/listFiles(in:)`` makes one: every regular file under the folder, subfolders
/// included, depth-first with each folder's entries sorted by name (byte order) — the same input
/// always gives the same order. Passed over, and listed in ``skipped``: hidden entries (names
/// starting with `.`, a hidden folder as one entry), a SQLite store's sidecar files (`NAME-wal`,
/// `NAME-shm`, `NAME-journal` beside a file `NAME`), entries that are neither files nor folders
/// (FIFOs, devices, dangling links), and a symbolic link to a folder of the tree itself (that
/// folder is read in its own place, once; a link up the tree would loop). A link to a folder
/// outside the tree is followed, once.
public struct FolderListing: Sendable, Equatable {
    /// The files to read, in order.
    public var files: [String] = []
    /// The entries passed over, in the order met.
    public var skipped: [String] = []

    /// Creates an empty listing.
    public init() {}
}

extension FileSystem {
    /// Lists the files under `directory` as ``FolderListing`` describes.
    ///
    /// - Throws: `FerryIOError` when `directory` (or a folder below it) cannot be listed.
    public static func listFiles(in directory: String) throws -> FolderListing {
        var listing = FolderListing()
        var walk = Walk(root: directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory)
        try list(walk.root, into: &listing, walk: &walk)
        return listing
    }

    /// The folders read so far, and those of the tree itself (found when a link first asks).
    private struct Walk {
        let root: String
        var visited: Set<[UInt64]> = []
        var tree: Set<[UInt64]>?

        /// Whether the folder a link leads to is one of the tree's own, reached without links.
        mutating func isInTree(_ identity: [UInt64]) -> Bool {
            if tree == nil {
                var found: Set<[UInt64]> = []
                Self.collect(root, into: &found)
                tree = found
            }
            return tree!.contains(identity)
        }

        private static func collect(_ directory: String, into found: inout Set<[UInt64]>) {
            guard let identity = Syscall.identity(path: directory), found.insert([identity.device, identity.inode]).inserted,
                  let entries = Syscall.directoryEntries(directory) else { return }
            let prefix = directory == "/" ? "/" : directory + "/"
            for name in entries where !name.hasPrefix(".") && Syscall.kind(prefix + name) == .directory {
                collect(prefix + name, into: &found)
            }
        }
    }

    private static func list(_ directory: String, into listing: inout FolderListing, walk: inout Walk) throws {
        guard let identity = Syscall.identity(path: directory), let entries = Syscall.directoryEntries(directory) else {
            throw FerryIOError(.open, path: directory, errno: Syscall.errno)
        }
        guard walk.visited.insert([identity.device, identity.inode]).inserted else {
            listing.skipped.append(directory)
            return
        }
        let names = Set(entries)
        let prefix = directory == "/" ? "/" : directory + "/"
        for name in entries.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let path = prefix + name
            if name.hasPrefix(".") || isSidecar(name, among: names, in: prefix) {
                listing.skipped.append(path)
            } else if Syscall.isDirectory(path) {
                if Syscall.kind(path) == .symlink, let target = Syscall.identity(path: path),
                   walk.isInTree([target.device, target.inode]) {
                    // The folder is the tree's own: read in its place, not at the link's.
                    listing.skipped.append(path)
                    continue
                }
                try list(path, into: &listing, walk: &walk)
            } else if Syscall.isRegularFile(path) == true {
                listing.files.append(path)
            } else {
                listing.skipped.append(path)
            }
        }
    }

    /// Whether `name` is SQLite's `-wal`, `-shm` or `-journal` file of a file beside it.
    private static func isSidecar(_ name: String, among names: Set<String>, in prefix: String) -> Bool {
        for suffix in ["-wal", "-shm", "-journal"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if names.contains(base), Syscall.isRegularFile(prefix + base) == true { return true }
        }
        return false
    }
}
