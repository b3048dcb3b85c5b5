import FerryIO
import FerryTestSupport
import Foundation
import Testing

@Suite("Folder inputs")
struct FolderListingTests {
    /// Makes `files` (relative paths, parents created) under a new folder.
    static func folder(_ files: [String]) throws -> String {
        let root = TestScratch.directory()
        for file in files {
            let path = root + "/" + file
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(file.utf8).write(to: URL(fileURLWithPath: path))
        }
        return root
    }

    @Test("Subfolders are read depth-first, each folder's entries sorted by name")
    func descendsIntoSubfolders() throws {
        let root = try Self.folder(["b.ndjson", "a/z.ndjson", "a/y/x.ndjson", "c/d.json", "a0.ndjson"])
        let listing = try FileSystem.listFiles(in: root)
        #expect(listing.files == ["a/y/x.ndjson", "a/z.ndjson", "a0.ndjson", "b.ndjson", "c/d.json"].map { root + "/" + $0 })
        #expect(listing.skipped.isEmpty)
    }

    @Test("Hidden entries and a store's SQLite sidecar files are skipped, and counted")
    func skipsHiddenAndSidecars() throws {
        let root = try Self.folder([".hidden.ndjson", ".git/config", "s.sqlite", "s.sqlite-wal", "s.sqlite-shm",
                                    "s.sqlite-journal", "sub/.DS_Store", "sub/r.ndjson", "lonely-wal"])
        let listing = try FileSystem.listFiles(in: root)
        #expect(listing.files == ["lonely-wal", "s.sqlite", "sub/r.ndjson"].map { root + "/" + $0 })
        #expect(listing.skipped.sorted() == [".git", ".hidden.ndjson", "s.sqlite-journal", "s.sqlite-shm", "s.sqlite-wal",
                                             "sub/.DS_Store"].map { root + "/" + $0 })
    }

    @Test("A symbolic link back up the tree is read once, not followed round")
    func guardsAgainstSymlinkLoops() throws {
        let root = try Self.folder(["a/r.ndjson"])
        try FileManager.default.createSymbolicLink(atPath: root + "/a/loop", withDestinationPath: root)
        try FileManager.default.createSymbolicLink(atPath: root + "/link.ndjson", withDestinationPath: root + "/a/r.ndjson")
        let listing = try FileSystem.listFiles(in: root)
        #expect(listing.files == [root + "/a/r.ndjson", root + "/link.ndjson"])
        #expect(listing.skipped == [root + "/a/loop"])
    }

    @Test("A link to a folder of the tree is skipped, and the folder read in its own place; a link out of the tree is followed")
    func linksIntoTheTree() throws {
        let root = try Self.folder(["a.json", "m.json", "z-real/p.json"])
        let outside = try Self.folder(["o.json"])
        try FileManager.default.createSymbolicLink(atPath: root + "/b-link", withDestinationPath: root + "/z-real")
        try FileManager.default.createSymbolicLink(atPath: root + "/n-out", withDestinationPath: outside)
        let listing = try FileSystem.listFiles(in: root)
        #expect(listing.files == ["a.json", "m.json", "n-out/o.json", "z-real/p.json"].map { root + "/" + $0 })
        #expect(listing.skipped == [root + "/b-link"])
    }

    @Test("A folder that cannot be listed is an error naming it")
    func missingFolder() throws {
        #expect(throws: FerryIOError.self) { try FileSystem.listFiles(in: TestScratch.directory() + "/missing") }
    }
}
