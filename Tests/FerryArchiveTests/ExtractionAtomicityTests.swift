import Foundation
import Testing
@testable import FerryArchive
import FerryIO
import FerryRecords
import FerryTestSupport

/// `extract` moves members into place only once the whole archive checked out; these archives
/// check out but cannot be placed (their members clash with each other or with the target), and
/// the target must then hold exactly what it held before.
@Suite("Extraction places every member or none")
struct ExtractionAtomicityTests {
    /// Extracts `archive` (bytes) into `scratch/target` and returns the error it must throw.
    static func failedExtraction(_ archive: [UInt8], in scratch: ScratchDirectory) throws -> ArchiveError {
        try #require(archiveError { try ArchiveReader(source: MemorySource(archive)).extract(to: scratch.file("target")) })
    }

    /// Every entry under `scratch/target` (relative), with each regular file's contents.
    static func snapshot(_ scratch: ScratchDirectory) -> [String: String] {
        let target = scratch.file("target")
        let paths = ((try? FileManager.default.subpathsOfDirectory(atPath: target)) ?? [])
        var result: [String: String] = [:]
        for path in paths {
            switch Syscall.kind(target + "/" + path) {
            case .regular: result[path] = (try? String(contentsOfFile: target + "/" + path, encoding: .utf8)) ?? "?"
            case .directory: result[path] = "<dir>"
            case .symlink: result[path] = "<link>"
            default: result[path] = "<other>"
            }
        }
        return result
    }

    @Test("Members that clash with each other place nothing", arguments: [
        ["x", "x/y"], ["p/q", "p"], ["a", "b/c", "b"], ["a", String(repeating: "n", count: 300)],
        ["a", "d/" + String(repeating: "n", count: 300) + "/f"],
    ])
    func clashingMembers(names: [String]) throws {
        let scratch = try ScratchDirectory()
        let archive = try TarBuilder.tarGzip(names.map { .file($0, Array("member \($0)\n".utf8)) })
        let error = try Self.failedExtraction(archive, in: scratch)
        #expect(error.member != nil, "\(error)")
        #expect(Self.snapshot(scratch).isEmpty, "\(Self.snapshot(scratch))")
    }

    @Test("A symbolic link in the target stops extraction before any member is placed")
    func symlinkInTarget() throws {
        let scratch = try ScratchDirectory()
        _ = try runTool("mkdir", ["-p", scratch.file("target"), scratch.file("outside")])
        _ = try runTool("ln", ["-s", "../outside", scratch.file("target/z")])
        let archive = try TarBuilder.tarGzip([.file("a", Array("a\n".utf8)), .file("z", Array("z\n".utf8))])
        let error = try Self.failedExtraction(archive, in: scratch)
        #expect(error.code == .unsafePath)
        #expect(Self.snapshot(scratch) == ["z": "<link>"])
        #expect(scratch.listing().filter { $0.hasPrefix("outside/") }.isEmpty)
    }

    @Test("A symbolic link where the manifest goes stops extraction before any member is placed")
    func symlinkAtManifest() throws {
        let scratch = try ScratchDirectory()
        var generator = RecordGenerator(seed: 9)
        let archive = scratch.file("store.tar.gz")
        _ = try ArchiveRoundTripTests.writeArchive((0..<20).map { _ in generator.record() }, to: archive)
        _ = try runTool("mkdir", ["-p", scratch.file("target"), scratch.file("outside")])
        try Array("victim\n".utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: scratch.file("outside/victim"))) }
        _ = try runTool("ln", ["-s", "../outside/victim", scratch.file("target/manifest.json")])
        let error = try #require(archiveError { try ArchiveReader(path: archive).extract(to: scratch.file("target")) })
        #expect(error.code == .unsafePath)
        #expect(Self.snapshot(scratch) == ["manifest.json": "<link>"])
        #expect(try String(contentsOfFile: scratch.file("outside/victim"), encoding: .utf8) == "victim\n")
    }

    @Test("A failed extraction keeps the files and folders the target held")
    func targetKeptAsItWas() throws {
        let scratch = try ScratchDirectory()
        _ = try runTool("mkdir", ["-p", scratch.file("target/sub")])
        try "old a\n".write(toFile: scratch.file("target/a"), atomically: false, encoding: .utf8)
        try "old f\n".write(toFile: scratch.file("target/sub/f"), atomically: false, encoding: .utf8)
        let before = Self.snapshot(scratch)
        // `a` and `sub/f` replace files, `sub/g` and `new/h` are new, `x` and `x/y` clash.
        let archive = try TarBuilder.tarGzip(["a", "sub/f", "sub/g", "new/h", "x", "x/y"].map { .file($0, Array("new \($0)\n".utf8)) })
        _ = try Self.failedExtraction(archive, in: scratch)
        #expect(Self.snapshot(scratch) == before)
    }

    @Test("A successful extraction replaces files the target held and keeps the others")
    func replacesFiles() throws {
        let scratch = try ScratchDirectory()
        _ = try runTool("mkdir", ["-p", scratch.file("target/sub")])
        try "old a\n".write(toFile: scratch.file("target/a"), atomically: false, encoding: .utf8)
        try "mine\n".write(toFile: scratch.file("target/sub/mine"), atomically: false, encoding: .utf8)
        let archive = try TarBuilder.tarGzip(["a", "sub/f", "new/h"].map { .file($0, Array("new \($0)\n".utf8)) })
        #expect(try ArchiveReader(source: MemorySource(archive)).extract(to: scratch.file("target")) == 3)
        #expect(Self.snapshot(scratch) == [
            "a": "new a\n", "sub": "<dir>", "sub/f": "new sub/f\n", "sub/mine": "mine\n", "new": "<dir>", "new/h": "new new/h\n",
        ])
    }
}
