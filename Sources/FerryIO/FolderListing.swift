/// The files a folder input stands for, and what was passed over.
///
/// ``FileSystem/listFiles(in:)`` makes one: every regular file under the folder, subfolders
/// included, depth-first with each folder's entries sorted by name (byte order) — the same input
/// always gives the same order. Passed over, and listed in ``skipped``: hidden entries (names
/// starting with `.`, a hidden folder as one entry), a SQLite store's sidecar files (`NAME-wal`,
/// `NAME-shm`, `NAME-journal` beside a file `NAME`), entries that are neither files nor folders
/// (FIFOs, devices, dangling links), and a folder reached a second time through a symbolic link
/// (which would otherwise loop).
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
        var visited: Set<[UInt64]> = []
        try list(directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory,
                 into: &listing, visited: &visited)
        return listing
    }

    private static func list(_ directory: String, into listing: inout FolderListing, visited: inout Set<[UInt64]>) throws {
        guard let identity = Syscall.identity(path: directory), let entries = Syscall.directoryEntries(directory) else {
            throw FerryIOError(.open, path: directory, errno: Syscall.errno)
        }
        guard visited.insert([identity.device, identity.inode]).inserted else {
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
                try list(path, into: &listing, visited: &visited)
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
