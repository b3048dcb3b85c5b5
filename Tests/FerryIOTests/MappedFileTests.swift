import FerryIO
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of `bytes` in a new temporary directory.
func temporaryFile(_ bytes: [UInt8]) throws -> String {
    let path = temporaryDirectory() + "/input"
    let file = try OutputFile(path: path)
    try file.write(bytes)
    try file.commit()
    return path
}

@Suite("Mapping input files")
struct MappedFileTests {
    private let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    @Test("A regular file maps whole, from where it was read to, without moving its position")
    func mapsFromPosition() throws {
        let file = try InputFile(path: try temporaryFile(bytes))
        let whole = try #require(file.mapRemaining(maximumSize: .max))
        #expect(whole.withBytes(Array.init) == bytes)
        var head = [UInt8](repeating: 0, count: 123)
        #expect(try head.withUnsafeMutableBytes { try file.read(into: $0) } == 123)
        let rest = try #require(file.mapRemaining(maximumSize: .max))
        #expect(rest.withBytes(Array.init) == Array(bytes[123...]))
        #expect(rest.file.bytes.count == bytes.count)
        // Mapping did not consume anything.
        #expect(try file.readAll() == Array(bytes[123...]))
    }

    @Test("Files over the size limit, empty files, pipes and memory are not mapped")
    func notMapped() throws {
        #expect(try InputFile(path: try temporaryFile(bytes)).mapRemaining(maximumSize: bytes.count - 1) == nil)
        #expect(try InputFile(path: try temporaryFile(bytes)).mapRemaining(maximumSize: bytes.count) != nil)
        #expect(try InputFile(path: try temporaryFile([])).mapRemaining(maximumSize: .max) == nil)
        #expect(MemorySource(bytes).mapRemaining(maximumSize: .max) == nil)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        #expect(try InputFile(path: "/dev/fd/\(fds[0])").mapRemaining(maximumSize: .max) == nil)
    }

    @Test("A mapping outlives the file's name and descriptor")
    func outlivesFile() throws {
        let path = try temporaryFile(bytes)
        var mapped: MappedInput?
        do {
            let file = try InputFile(path: path)
            mapped = file.mapRemaining(maximumSize: .max)
        }
        try FileSystem.remove(path)
        #expect(try #require(mapped).withBytes(Array.init) == bytes)
    }
}
