import FerryIO

/// What a file is, seen from its first bytes: a Ferry store, another SQLite database, or
/// something else. Stores are recognised by content, like every other input.
public enum StoreFile {
    /// The verdict on one file.
    public enum Kind: Equatable, Sendable {
        /// No such file.
        case missing
        /// An empty file (a store can be created in its place).
        case empty
        /// A SQLite database whose `application_id` is Ferry's.
        case store
        /// A SQLite database of something else; the `application_id` found.
        case otherSQLite(applicationID: Int32)
        /// Not a SQLite database.
        case notSQLite
        /// A folder.
        case folder
        /// `-`: standard input, which SQLite cannot open.
        case standardInput
        /// A gzip-compressed file, which SQLite cannot open.
        case compressed
    }

    /// The 16 bytes every SQLite database starts with.
    static let sqliteHeader: [UInt8] = Array("SQLite format 3\0".utf8)

    /// Classifies the bytes a file starts with (its first 100 bytes suffice).
    public static func kind(ofPrefix prefix: some Collection<UInt8>) -> Kind {
        let bytes = Array(prefix.prefix(100))
        if bytes.isEmpty { return .empty }
        guard bytes.count >= 16, Array(bytes[0..<16]) == sqliteHeader else { return .notSQLite }
        guard bytes.count >= 72 else { return .otherSQLite(applicationID: 0) }
        // The application ID is a big-endian 32-bit integer at offset 68 of the header.
        let id = Int32(bitPattern: UInt32(bytes[68]) << 24 | UInt32(bytes[69]) << 16 | UInt32(bytes[70]) << 8 | UInt32(bytes[71]))
        return id == StoreSchema.applicationID ? .store : .otherSQLite(applicationID: id)
    }

    /// Whether bytes a file starts with are SQLite's header (a store or another database).
    public static func isSQLite(prefix: some Collection<UInt8>) -> Bool {
        switch kind(ofPrefix: prefix) {
        case .store, .otherSQLite: true
        default: false
        }
    }

    /// Classifies the file at `path`: `-` is ``Kind/standardInput``, a folder ``Kind/folder``, a
    /// gzip file ``Kind/compressed``; a pipe, a device, or a file that cannot be read is
    /// ``Kind/notSQLite`` (not opened).
    public static func kind(at path: String) -> Kind {
        guard path != "-" else { return .standardInput }
        if FileSystem.isDirectory(path) { return .folder }
        guard FileSystem.exists(path) else { return .missing }
        // Opened by SQLite here already, it is a store (a connection checked it), and opening
        // and closing it again would release that connection's locks (``OpenStoreFiles``).
        if OpenStoreFiles.isOpen(path) { return .store }
        // A pipe or device is never a store, and is not read here: a named pipe would block the
        // open or the read, and the bytes read would be lost to the reader that opens it next.
        guard FileSystem.isRegularFile(path), let input = try? InputFile(path: path) else { return .notSQLite }
        var prefix: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 100)
        while prefix.count < 100 {
            let n = (try? chunk.withUnsafeMutableBytes { try input.read(into: $0) }) ?? 0
            if n <= 0 { break }
            prefix += chunk[0..<n]
        }
        if prefix.count >= 2 && prefix[0] == 0x1F && prefix[1] == 0x8B { return .compressed }
        return kind(ofPrefix: prefix)
    }

    /// Whether `path` holds a Ferry store.
    public static func isStore(_ path: String) -> Bool { kind(at: path) == .store }

    /// The message for a file that is not a store, naming what it is instead.
    public static func notAStoreMessage(_ kind: Kind) -> String {
        switch kind {
        case .missing: "expected a Ferry store, found no such file"
        case .empty: "expected a Ferry store, found an empty file"
        case .store: "a Ferry store"
        case .otherSQLite(let id):
            "expected a Ferry store (a SQLite database with application_id 0x46525259, \"FRRY\"), found a SQLite database "
                + "with application_id \(hex(id)): it belongs to another program, and Ferry will not change it"
        case .notSQLite: "expected a Ferry store (a SQLite database), found a file that does not start with SQLite's header"
        case .folder: "expected a Ferry store (a SQLite database), found a folder"
        case .standardInput: "a store is read from its file, not from standard input: give the store's path"
        case .compressed: "expected a Ferry store, found a gzip-compressed file: a store is read from its file, not from a "
            + "compressed one; decompress it and give the store's path"
        }
    }

    static func hex(_ value: Int32) -> String {
        let digits = String(UInt32(bitPattern: value), radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
