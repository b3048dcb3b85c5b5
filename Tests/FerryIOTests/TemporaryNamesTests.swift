import FerryIO
import FerryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process ID no process has: above every system's `pid_max` (Linux allows at most 2²²).
let deadProcessID: Int32 = 999_999_999

@Suite("Crash safety: outputs and Ferry's own temporaries")
struct CrashSafetyTests {
    @Test("Committing over an existing target replaces it whole: a reader of the old file still sees the old bytes")
    func replacesExistingTarget() throws {
        let dir = temporaryDirectory()
        let path = dir + "/out.ndjson"
        let old = try OutputFile(path: path)
        try old.write(Array("old\n".utf8))
        try old.commit()
        let oldReader = open(path, O_RDONLY)
        #expect(oldReader >= 0)
        defer { close(oldReader) }

        let file = try OutputFile(path: path, bufferCapacity: 4)
        try file.write(Array("the new contents\n".utf8))
        try file.flush()
        #expect(try InputFile(path: path).readAll() == Array("old\n".utf8))
        try file.commit()

        #expect(try InputFile(path: path).readAll() == Array("the new contents\n".utf8))
        #expect(FileSystem.entries(in: dir) == ["out.ndjson"])
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = buffer.withUnsafeMutableBytes { read(oldReader, $0.baseAddress, 16) }
        #expect(Array(buffer.prefix(max(n, 0))) == Array("old\n".utf8))
    }

    @Test("A new output is created with the permissions the umask gives a new file")
    func permissions() throws {
        let dir = temporaryDirectory()
        let path = dir + "/out.ndjson"
        let file = try OutputFile(path: path)
        try file.write(Array("x\n".utf8))
        try file.commit()
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666 & ~FileSystem.currentUmask)
    }

    #if os(Linux)
    @Test("On Linux an output being written has no name at all (O_TMPFILE): nothing for a killed run to leave")
    func unnamedWhileWriting() throws {
        let dir = temporaryDirectory()
        let file = try OutputFile(path: dir + "/out.ndjson", bufferCapacity: 4)
        try file.write(Array("partial data".utf8))
        try file.flush()
        #expect(FileSystem.entries(in: dir).isEmpty)
        try file.commit()
        #expect(FileSystem.entries(in: dir) == ["out.ndjson"])
    }
    #endif

    @Test("A failed run leaves nothing: no target, no temporary, and an old target untouched")
    func failedRunLeavesNothing() throws {
        let dir = temporaryDirectory()
        do {
            let file = try OutputFile(path: dir + "/new.ndjson", bufferCapacity: 4)
            try file.write(Array("partial data".utf8))
            try file.flush()
            // dropped without commit, as a throwing run does
        }
        #expect(FileSystem.entries(in: dir).isEmpty)
        let file = try OutputFile(path: dir + "/new.ndjson")
        try file.write(Array("partial".utf8))
        file.abandon()
        #expect(FileSystem.entries(in: dir).isEmpty)
    }

    @Test("A replaced file keeps its permissions; a new one gets those of a new file")
    func replacedFileKeepsPermissions() throws {
        let dir = temporaryDirectory()
        try makeFile("old", to: dir + "/private.ndjson")
        #expect(chmod(dir + "/private.ndjson", 0o600) == 0)
        for path in [dir + "/private.ndjson", dir + "/new.ndjson"] {
            let file = try OutputFile(path: path)
            try file.write(Array("new\n".utf8))
            try file.commit()
        }
        var info = stat()
        #expect(stat(dir + "/private.ndjson", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let umask = Syscall_umask()
        #expect(stat(dir + "/new.ndjson", &info) == 0 && info.st_mode & 0o777 == 0o666 & ~umask)
    }

    @Test("The fallback temporary beside the target carries Ferry's prefix and this process's ID")
    func fallbackTemporaryName() throws {
        let name = FileSystem.temporaryName(prefix: ".out.ndjson.ferry-")
        #expect(name.hasPrefix(".out.ndjson.ferry-\(FileSystem.processID)-"))
        #expect(FileSystem.temporaryOwner(ofName: name) == FileSystem.processID)
    }

    @Test("Ferry's temporary names are recognised and their process read; other names are not", arguments: [
        (".out.ndjson.ferry-1234-abc123", Int32(1234)),
        (".out.ndjson.ferry-store-77-00009f3a", 77),
        (".out.ndjson.ferry-store-77-00009f3a-journal", 77),
        (".out.ndjson.ferry-store-77-00009f3a-wal", 77),
        (".backup.tar.gz.ferry-stage-5-Xy12Ab", 5),
        (".ferry-staging-42-AbCdEf", 42),
        (".ferry-sort-8-0000001f-0.ndjson", 8),
        (".ferry-sort-8-0000001f-12.ndjson", 8),
        (".ferry-journal-9-QwErTy", 9),
        (".a.ferry-1-2.ferry-3-x12345", 3),
    ] as [(String, Int32)])
    func recognisedNames(name: String, pid: Int32) {
        #expect(FileSystem.temporaryOwner(ofName: name) == pid)
    }

    @Test("Names that are not Ferry's temporaries are never taken for one", arguments: [
        "out.ndjson.ferry-1234-abc", // not hidden
        ".out.ndjson.ferry-abc123", // an old name without a process ID
        ".out.ndjson.ferry-1234", // no dash after the ID
        ".out.ndjson", ".ferry", ".ferry-", ".x.ferry--1-a", ".x.ferry-store-", ".x.ferry-99999999999-a",
        // A user's own hidden names that only look alike: never removed as stale.
        ".exports.ferry-2023-11", ".my.ferry-99999-notes", ".ferry-staging-99999-abc", ".x.ferry-12-abcdefg",
        ".x.ferry-bogus-12-abc123", ".x.ferry-12-abc123-old", ".x.ferry-store-12-0000001f-backup", ".x.ferry-sort-12-0000001g-0.ndjson",
    ])
    func otherNames(name: String) {
        #expect(FileSystem.temporaryOwner(ofName: name) == nil)
    }

    @Test("Stale temporaries of a dead process are removed, files and folders; a live process's are left alone")
    func staleRemoved() throws {
        let dir = temporaryDirectory()
        let dead = deadProcessID
        let live = FileSystem.processID
        let parent = getppid()
        let stale = [".out.ndjson.ferry-\(dead)-abc123", ".s.sqlite.ferry-store-\(dead)-0000001f-wal", ".ferry-sort-\(dead)-0000000a-0.ndjson"]
        let kept = [".out.ndjson.ferry-\(live)-abc123", ".out.ndjson.ferry-\(parent)-xyz789", "out.ndjson", ".hidden",
                    ".out.ndjson.ferry-abc123"]
        for name in stale + kept { try makeFile("x", to: dir + "/" + name) }
        #expect(Syscall_mkdir(dir + "/.ferry-staging-\(dead)-AbCdEf") == 0)
        try makeFile("member", to: dir + "/.ferry-staging-\(dead)-AbCdEf/1")
        #expect(Syscall_mkdir(dir + "/.ferry-staging-\(live)-AbCdEf") == 0)

        let removed = FileSystem.removeStaleTemporaries(in: dir)
        #expect(removed == 4)
        #expect(Set(FileSystem.entries(in: dir)) == Set(kept + [".ferry-staging-\(live)-AbCdEf"]))
    }

    @Test("Opening an output removes the stale temporaries of dead runs in its directory")
    func outputSweepsItsDirectory() throws {
        let dir = temporaryDirectory()
        try makeFile("partial", to: dir + "/.out.ndjson.ferry-\(deadProcessID)-abc123")
        let file = try OutputFile(path: dir + "/out.ndjson")
        try file.write(Array("whole\n".utf8))
        try file.commit()
        #expect(FileSystem.entries(in: dir) == ["out.ndjson"])
    }
}

/// Writes a file directly (`open`, `write`), not through `OutputFile`, which would sweep the folder.
private func makeFile(_ text: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    #expect(fd >= 0)
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    close(fd)
}

private func Syscall_mkdir(_ path: String) -> Int32 { mkdir(path, 0o755) }

/// The process's umask, read by setting it and setting it back.
private func Syscall_umask() -> mode_t {
    let mask = umask(0o022)
    umask(mask)
    return mask
}
