import FerryIO

/// The store files this process holds SQLite connections to.
///
/// SQLite coordinates processes with POSIX advisory locks, which belong to the process and the
/// file: closing *any* descriptor of the file in the process releases every lock the process
/// holds on it, SQLite's connections' included. A WAL connection's shared lock is what tells
/// other processes it is there; without it, another process closing its last connection takes
/// itself for the last one, checkpoints and deletes the WAL, and this process's later writes go
/// to a deleted file. So nothing in Ferry opens and closes a store file itself (to read its
/// header, say) while a connection to it is open here: ``StoreFile/kind(at:)`` asks this
/// registry first.
enum OpenStoreFiles {
    private static let lock = Lock()
    nonisolated(unsafe) private static var counts: [FileSystem.FileKey: Int] = [:]

    /// Notes a connection opened to `path`; returns the key to pass to ``closed(_:)``, or `nil`
    /// when the path names no file (an in-memory database).
    static func opened(_ path: String) -> FileSystem.FileKey? {
        let key = FileSystem.key(of: path)
        guard case .existing = key else { return nil }
        lock.withLock { counts[key, default: 0] += 1 }
        return key
    }

    /// Notes a connection closed.
    static func closed(_ key: FileSystem.FileKey) {
        lock.withLock {
            let count = (counts[key] ?? 1) - 1
            counts[key] = count > 0 ? count : nil
        }
    }

    /// Whether a connection of this process holds the file at `path` open.
    static func isOpen(_ path: String) -> Bool {
        let key = FileSystem.key(of: path)
        guard case .existing = key else { return false }
        return lock.withLock { counts[key] != nil }
    }
}
