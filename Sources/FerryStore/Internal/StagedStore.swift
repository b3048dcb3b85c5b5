import FerryIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A new store built beside its target, under a name of Ferry's own (`.NAME.ferry-store-PID-XXXXXXXX`),
/// and published by linking it to the target's name: other processes see no store, or a
/// whole one. The file is written without a rollback journal or syncs (nothing else can see it),
/// then synced once before it is published; a process killed meanwhile leaves only its
/// temporary, which the next run of Ferry on the same target removes.
final class StagedStore {
    let target: String
    let temporaryPath: String
    private var isDone = false
    /// Bytes of records handed to SQLite since the device was last asked to write the file.
    private var unwritten = 0
    /// The temporary, open for ``noteWritten(_:)`` (Linux) until SQLite's connection is gone:
    /// closing a descriptor of the file earlier would drop SQLite's locks on it.
    private var writebackFD: Int32 = -1
    /// The empty file at the target when the build began (device, inode), which the new store
    /// replaces if it is still there, still empty, when the store is published.
    private let emptyTarget: EmptyFile?

    private struct EmptyFile: Equatable {
        var device: UInt64
        var inode: UInt64

        /// The empty regular file at `path` (not a link to one), if that is what is there.
        init?(at path: String) {
            guard Syscall.kind(path) == .regular, let identity = Syscall.identity(path: path), identity.size == 0 else { return nil }
            device = identity.device
            inode = identity.inode
        }
    }

    /// Prepares a temporary name beside `target` and removes the stale temporaries of dead
    /// Ferry processes there.
    init(target requested: String) throws {
        // A symbolic link to an empty file: the store replaces the file, and the link stays.
        var target = requested
        if Syscall.kind(requested) == .symlink {
            guard let resolved = Syscall.realPath(requested) else {
                throw StoreError(.conflict, "expected a new store's path, found a symbolic link to nothing: give the path it should name",
                                 path: requested)
            }
            target = resolved
        }
        self.target = target
        let slash = target.lastIndex(of: "/")
        let directory = slash.map { String(target[...$0]) } ?? ""
        let base = slash.map { String(target[target.index(after: $0)...]) } ?? target
        FileSystem.removeStaleTemporaries(in: directory)
        temporaryPath = FileSystem.temporaryName(prefix: directory + "." + base + ".ferry-store-")
        emptyTarget = EmptyFile(at: target)
        for suffix in ["", "-journal", "-wal", "-shm"] { TemporaryFiles.shared.register(temporaryPath + suffix) }
    }

    deinit {
        if !isDone { abandon() }
    }

    /// Notes `bytes` more of records handed to SQLite; every 64 MiB, has the device start writing
    /// what SQLite has written to the file so far (``FileSystem/startWriteback(fd:)``), so that
    /// ``publish()`` does not wait for the whole file (a 1 GB store took 0.35 s to sync at the end).
    func noteWritten(_ bytes: Int) {
        #if os(Linux)
        unwritten += bytes
        guard unwritten >= 64 << 20, !isDone else { return }
        unwritten = 0
        if writebackFD < 0 { writebackFD = Syscall.open(temporaryPath, flags: O_RDONLY | O_CLOEXEC) }
        if writebackFD >= 0 { FileSystem.startWriteback(fd: writebackFD) }
        #endif
    }

    /// Closes the descriptor ``noteWritten(_:)`` keeps (SQLite's connection is closed by then).
    private func closeWriteback() {
        if writebackFD >= 0 { _ = Syscall.close(writebackFD) }
        writebackFD = -1
    }

    /// Syncs the temporary, links it to the target's name and removes the temporary name. Fails
    /// without touching the target when the target exists by then, unless it is the empty file
    /// that was there when the build began, still empty: the store then replaces it. Every
    /// connection to the temporary must be closed before.
    func publish() throws {
        closeWriteback()
        do {
            try FileSystem.sync(temporaryPath)
            do {
                try FileSystem.link(temporaryPath, to: target)
            } catch let error as FerryIOError where error.errno == EEXIST {
                guard let emptyTarget, EmptyFile(at: target) == emptyTarget else {
                    throw StoreError(.conflict, "another process created or wrote the file while the store was being built; nothing was written",
                                     path: target)
                }
                // The empty file the store replaces gives it its permissions (a private file stays private).
                FileSystem.copyPermissions(of: target, to: temporaryPath)
                try FileSystem.rename(temporaryPath, to: target)
            }
            FileSystem.syncDirectory(of: target)
        } catch let error as StoreError {
            abandon()
            throw error
        } catch {
            abandon()
            throw StoreError(.io, "cannot publish the new store", path: target, underlying: error)
        }
        isDone = true
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileSystem.remove(temporaryPath + suffix)
            TemporaryFiles.shared.unregister(temporaryPath + suffix)
        }
    }

    /// Removes the temporary and its side files.
    func abandon() {
        isDone = true
        closeWriteback()
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileSystem.remove(temporaryPath + suffix)
            TemporaryFiles.shared.unregister(temporaryPath + suffix)
        }
    }
}
