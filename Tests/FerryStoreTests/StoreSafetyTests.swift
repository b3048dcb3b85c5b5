import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FerryIO
import FerryRecords
import FerryStore
import FerryTestSupport

@Suite("Store safety")
struct StoreSafetyTests {
    @Test("A reader queries the store while an import writes to it, and sees the state before the import")
    func readerDuringImport() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 200, seed: 1), into: path)
        let writer = try StoreWriter(path: path, configuration: .init(batchSize: 16))
        let more = StoreFixture.records(count: 300, seed: 2).map { record -> Record in
            var copy = record
            copy.recordName = "new-" + record.recordName
            return copy
        }
        for record in more.prefix(150) { try writer.write(record) }
        // The import holds its transaction open; a reader (another connection) runs meanwhile.
        let reader = try RecordStore(path: path)
        for _ in 0..<5 {
            #expect(try reader.recordCount() == 200)
            let page = try reader.query(StoreQuery(limit: 50))
            #expect(page.recordsJSON.count == 50)
        }
        for record in more.suffix(150) { try writer.write(record) }
        try writer.finish()
        #expect(try reader.recordCount() == 500)
    }

    @Test("A second writer waits for the busy timeout, then fails saying another process writes")
    func secondWriterFails() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 10, seed: 3), into: path)
        let first = try StoreWriter(path: path)
        try first.write(Record(recordName: "x", recordType: "T"))
        let clock = ContinuousClock()
        let start = clock.now
        #expect {
            _ = try StoreWriter(path: path, configuration: .init(busyTimeout: 0.3))
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .busy && error.message.contains("another process is writing")
        }
        #expect(clock.now - start >= .milliseconds(250))
        try first.finish()
        // Once the first is done, the second gets its turn.
        let second = try StoreWriter(path: path, configuration: .init(mode: .replace, busyTimeout: 0.3))
        try second.write(Record(recordName: "x", recordType: "U"))
        try second.finish()
    }

    @Test("A second replay waits, then fails; the store stays as the first left it")
    func secondReplayFails() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords([], into: path)
        let first = try StoreReplayer(path: path)
        try first.apply(.recordSaved(Record(recordName: "a", recordType: "T")))
        #expect(throws: StoreError.self) { _ = try StoreReplayer(path: path, configuration: .init(busyTimeout: 0.2)) }
        try first.finish()
        #expect(try RecordStore(path: path).recordCount() == 1)
    }

    @Test("An empty file becomes a new store: by an import, a replay and create", arguments: ["import", "replay", "create"])
    func emptyFileBecomesStore(way: String) throws {
        let path = StoreFixture.newPath()
        try write([], to: path)
        // A private empty file stays private once it is a store.
        #expect(chmod(path, 0o600) == 0)
        let records = (0..<20).map { Record(recordName: "r\($0)", recordType: "T") }
        switch way {
        case "import":
            try StoreFixture.importRecords(records, into: path)
        case "replay":
            let replayer = try StoreReplayer(path: path)
            for record in records { try replayer.apply(.recordSaved(record)) }
            try replayer.finish()
        default:
            try RecordStore.create(at: path)
        }
        #expect(StoreFile.kind(at: path) == .store)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try RecordStore(path: path).recordCount() == (way == "create" ? 0 : records.count))
        // Nothing of Ferry's is left beside it.
        let directory = String(path[..<path.lastIndex(of: "/")!])
        #expect(Syscall.directoryEntries(directory)?.filter { $0.contains("ferry-store") } == [])
    }

    @Test("A symbolic link to an empty file: the store replaces the file, the link stays; a link to nothing is refused")
    func linkToEmptyFile() throws {
        let path = StoreFixture.newPath()
        let directory = String(path[..<path.lastIndex(of: "/")!])
        try write([], to: directory + "/real.sqlite")
        #expect(symlink("real.sqlite", path) == 0)
        try StoreFixture.importRecords([Record(recordName: "a", recordType: "T")], into: path)
        #expect(Syscall.kind(path) == .symlink)
        #expect(try RecordStore(path: directory + "/real.sqlite").recordCount() == 1)
        let dangling = directory + "/dangling.sqlite"
        #expect(symlink("nowhere/x.sqlite", dangling) == 0)
        #expect(throws: StoreError.self) { try StoreFixture.importRecords([Record(recordName: "a", recordType: "T")], into: dangling) }
        #expect(Syscall.kind(dangling) == .symlink)
    }

    @Test("An empty file that is filled while a store is built is left alone")
    func emptyFileFilledMeanwhile() throws {
        let path = StoreFixture.newPath()
        try write([], to: path)
        let writer = try StoreWriter(path: path)
        try writer.write(Record(recordName: "a", recordType: "T"))
        try write(Array("someone else's\n".utf8), to: path)
        #expect(throws: StoreError.self) { try writer.finish() }
        #expect(Array(try InputFile(path: path).readAll()) == Array("someone else's\n".utf8))
    }

    @Test("A store whose format version no Ferry wrote (0) is refused by readers and writers alike, untouched")
    func versionZero() throws {
        let made = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 5, seed: 4), into: made)
        var bytes = try InputFile(path: made).readAll()
        bytes.replaceSubrange(60..<64, with: [0, 0, 0, 0]) // PRAGMA user_version
        let path = StoreFixture.newPath()
        try write(bytes, to: path)
        let opens: [(String, () throws -> Void)] = [
            ("read", { _ = try RecordStore(path: path) }),
            ("write", { _ = try RecordStore(path: path, access: .readWrite) }),
            ("import", { try StoreWriter(path: path).finish() }),
            ("replay", { try StoreReplayer(path: path).finish() }),
        ]
        for (name, open) in opens {
            #expect("\(name)", performing: open, throws: { "\($0)".contains("format version 0") })
        }
        #expect(try InputFile(path: path).readAll() == bytes)
    }

    @Test("Files that are not Ferry stores are refused with a message naming what they are")
    func notAStore() throws {
        let directory = TestScratch.directory()
        let text = directory + "/text.sqlite"
        try write(Array("{\"recordName\":\"a\"}\n".utf8), to: text)
        #expect { try RecordStore(path: text) } throws: { "\($0)".contains("does not start with SQLite's header") }
        #expect { try StoreWriter(path: text) } throws: { "\($0)".contains("does not start with SQLite's header") }

        // A SQLite database of another program.
        let other = directory + "/other.sqlite"
        try makeForeignDatabase(at: other)
        #expect { try RecordStore(path: other) } throws: { "\($0)".contains("application_id") }
        #expect { try StoreWriter(path: other) } throws: { "\($0)".contains("another program") }

        #expect { try RecordStore(path: directory + "/missing.sqlite") } throws: { "\($0)".contains("no such file") }
    }

    @Test("A store whose pages are damaged fails verification, naming SQLite's findings")
    func corruptStore() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 400, seed: 4), into: path)
        #expect(try RecordStore(path: path).verify().isIntact)
        // Overwrite a page in the middle of the file with garbage.
        var bytes = try InputFile(path: path).readAll()
        let page = 4096 * (bytes.count / 4096 / 2)
        for i in page..<(page + 4096) { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        let damaged = path + ".damaged.sqlite"
        try write(bytes, to: damaged)
        let result = try? RecordStore(path: damaged).verify()
        if let result {
            #expect(!result.isIntact)
        }
        // Either opening or verifying finds it; reading everything never succeeds silently.
        #expect(throws: (any Error).self) {
            let records = try StoreFixture.readAll(damaged)
            if records.count == 400 && result?.isIntact == true { return }
            throw StoreError(.corrupt, "found")
        }
    }

    @Test("Ferry's invariants catch a store edited behind its back")
    func invariants() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 50, seed: 5), into: path)
        let store = try RecordStore(path: path, access: .readWrite)
        try store.execute(sql: "UPDATE zones SET record_count = record_count + 1 WHERE id = (SELECT min(id) FROM zones)")
        try store.execute(sql: "DELETE FROM journal WHERE seq = (SELECT max(seq) FROM journal WHERE kind = 'created')")
        let result = try store.verify()
        #expect(result.problems.contains { $0.contains("record_count") })
        #expect(result.problems.contains { $0.contains("journal") })
    }

    @Test("A killed import leaves a temporary beside the store, which the next import removes")
    func staleTemporaryRemoved() throws {
        let directory = TestScratch.directory()
        let path = directory + "/s.sqlite"
        // A temporary of a process that no longer exists (PID 2^22 + 1 is beyond Linux's default limit).
        let stale = directory + "/.s.sqlite.ferry-store-4194305-00000abc"
        let file = try OutputFile(path: stale)
        try file.commit()
        try StoreFixture.importRecords(StoreFixture.records(count: 3, seed: 6), into: path)
        #expect(!FileSystem.exists(stale))
        #expect(FileSystem.exists(path))
    }
}

/// Writes `bytes` to a new file at `path`.
func write(_ bytes: [UInt8], to path: String) throws {
    let file = try OutputFile(path: path)
    try bytes.withUnsafeBytes { try file.write($0) }
    try file.commit()
}

/// A SQLite database of another program: a store with another `application_id` (the 4 bytes at
/// offset 68 of the header).
func makeForeignDatabase(at path: String) throws {
    let store = StoreFixture.newPath()
    try StoreFixture.importRecords([], into: store)
    var bytes = try InputFile(path: store).readAll()
    bytes.replaceSubrange(68..<72, with: [0x12, 0x34, 0x56, 0x78])
    try write(bytes, to: path)
}
