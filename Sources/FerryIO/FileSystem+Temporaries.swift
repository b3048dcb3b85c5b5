#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Ferry's own temporaries, and how a later run tells the ones a killed run left from the ones a
// running process is still using.
//
// Every file or folder Ferry names while it works is hidden and carries `.ferry-`, an optional
// kind word, the ID of the process that made it and a dash: `.out.ndjson.ferry-4242-a1b2c3`,
// `.backup.tar.gz.ferry-stage-4242-Xy12Ab`, `.ferry-staging-4242-…`, `.ferry-sort-4242-…`,
// `.store.sqlite.ferry-store-4242-…`. A run that is killed (SIGKILL, power loss) cannot remove
// them; the next run that works in the same folder removes those whose process is gone.
extension FileSystem {
    /// A unique name for a temporary of this process: `prefix`, the process ID, a dash and 8
    /// random hex digits (`.out.ndjson.ferry-4242-0a1b2c3d` for the prefix `.out.ndjson.ferry-`).
    /// `prefix` must end in `.ferry-` or `.ferry-KIND-` for ``removeStaleTemporaries(in:)`` to
    /// recognise the name.
    public static func temporaryName(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let random = String(generator.next() as UInt32, radix: 16)
        return prefix + String(processID) + "-" + String(repeating: "0", count: 8 - random.utf8.count) + random
    }

    /// A `mkdtemp`/`mkstemp` template for a temporary of this process: `prefix`, the process ID
    /// and `-XXXXXX`.
    public static func temporaryTemplate(prefix: String) -> String {
        prefix + String(processID) + "-XXXXXX"
    }

    /// The process that made a temporary of Ferry's, read from its name, or `nil` when the name
    /// is not one. Only the names Ferry makes are taken (a user's hidden `.exports.ferry-2023-11`
    /// is not): hidden (a leading dot); after the last `.ferry-` one of Ferry's kind words
    /// (`stage`, `staging`, `sort`, `store`, `journal`) and a dash, or none; the process ID
    /// (decimal) and a dash; then `mkstemp`'s six letters or digits, or ``temporaryName(prefix:)``'s
    /// eight hex digits, alone or followed by a SQLite sidecar's suffix (`-journal`, `-wal`,
    /// `-shm`, beside a temporary store) or a sort run's number (`-12.ndjson`).
    public static func temporaryOwner(ofName name: String) -> Int32? {
        let bytes = Array(name.utf8)
        let marker = Array(".ferry-".utf8)
        guard bytes.first == UInt8(ascii: "."), bytes.count > marker.count else { return nil }
        var start = bytes.count - marker.count
        while start >= 0 && !bytes[start..<start + marker.count].elementsEqual(marker) { start -= 1 }
        guard start >= 0 else { return nil }
        var position = start + marker.count
        var word = position
        while word < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[word]) { word += 1 }
        if word > position, word < bytes.count, bytes[word] == UInt8(ascii: "-") {
            guard Self.temporaryKinds.contains(String(decoding: bytes[position..<word], as: UTF8.self)) else { return nil }
            position = word + 1
        }
        var end = position
        while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
        guard end > position, end - position <= 10, end < bytes.count, bytes[end] == UInt8(ascii: "-"),
              let pid = Int32(String(decoding: bytes[position..<end], as: UTF8.self)) else { return nil }
        let tail = bytes[(end + 1)...]
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
        func isHex(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        }
        // mkstemp's / mkdtemp's name.
        if tail.count == 6 && tail.allSatisfy(isAlphanumeric) { return pid }
        // temporaryName's, with what is named after it.
        guard tail.count >= 8, tail.prefix(8).allSatisfy(isHex) else { return nil }
        let rest = String(decoding: tail.dropFirst(8), as: UTF8.self)
        if rest.isEmpty || rest == "-journal" || rest == "-wal" || rest == "-shm" { return pid }
        if rest.hasPrefix("-") && rest.hasSuffix(".ndjson") {
            let number = rest.dropFirst().dropLast(".ndjson".count)
            if !number.isEmpty && number.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return pid }
        }
        return nil
    }

    /// The kind words of Ferry's temporaries (``temporaryOwner(ofName:)``).
    static let temporaryKinds: Set<String> = ["stage", "staging", "sort", "store", "journal"]

    /// Removes the temporaries Ferry processes that no longer run left directly inside
    /// `directory` (files, and folders with everything in them); those of live processes,
    /// this one's included, are left alone. Returns how many entries were removed.
    ///
    /// A process is judged by its ID alone (`kill(pid, 0)`), so a temporary made in another PID
    /// namespace (another container) sharing the folder may look stale.
    @discardableResult
    public static func removeStaleTemporaries(in directory: String) -> Int {
        let folder = directory.isEmpty ? "." : directory
        var removed = 0
        for name in entries(in: folder) {
            guard let pid = temporaryOwner(ofName: name), pid != processID, !isProcessAlive(pid) else { continue }
            removeTree(folder.hasSuffix("/") ? folder + name : folder + "/" + name)
            removed += 1
        }
        return removed
    }

    /// ``removeStaleTemporaries(in:)`` once per folder per process: outputs opened by the
    /// thousand in one folder (an extraction) read it once.
    package static func removeStaleTemporariesOnce(in directory: String) {
        let folder = directory.isEmpty ? "." : directory
        guard SweptFolders.shared.insert(folder) else { return }
        removeStaleTemporaries(in: folder)
    }

    /// Makes a temporary folder of this process (`prefix`, the process ID, `-XXXXXX`; `prefix`
    /// must end in `.ferry-KIND-`) that is removed, with the files in it, if the process is
    /// interrupted (``TemporaryFiles``), as Ferry's temporary files are, and by the next run in
    /// its folder if the process is killed (``removeStaleTemporaries(in:)``). Remove it with
    /// ``removeTemporaryFolder(_:)``. Returns `nil` (with `errno` set) when it cannot be made.
    public static func makeTemporaryFolder(prefix: String) -> String? {
        guard let folder = makeTemporaryDirectory(template: temporaryTemplate(prefix: prefix)) else { return nil }
        TemporaryFiles.shared.register(folder, isFolder: true)
        return folder
    }

    /// Removes a folder made by ``makeTemporaryFolder(prefix:)`` with everything in it.
    public static func removeTemporaryFolder(_ folder: String) {
        removeTree(folder)
        TemporaryFiles.shared.unregister(folder)
    }

    /// The process's file-creation mask (`umask`, read and restored).
    public static var currentUmask: mode_t { Syscall.currentUmask() }
}

/// The folders this process has already swept for stale temporaries.
private final class SweptFolders: @unchecked Sendable {
    static let shared = SweptFolders()
    private let lock = Lock()
    private var folders: Set<String> = []

    private init() {}

    /// Adds `folder`; whether it was new.
    func insert(_ folder: String) -> Bool {
        lock.withLock { folders.insert(folder).inserted }
    }
}
