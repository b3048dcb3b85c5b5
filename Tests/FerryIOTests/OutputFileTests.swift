import FerryIO
import FerryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func temporaryDirectory() -> String { TestScratch.directory() }

@Suite("Atomic output files")
struct OutputFileTests {
    @Test("Nothing appears under the target name until commit")
    func atomicCommit() throws {
        let dir = temporaryDirectory()
        let path = dir + "/out.ndjson"
        let file = try OutputFile(path: path, bufferCapacity: 8)
        try file.write(Array("hello, world\n".utf8))
        #expect(!FileSystem.exists(path))
        try file.commit()
        #expect(try InputFile(path: path).readAll() == Array("hello, world\n".utf8))
        #expect(try FileSystem.files(in: dir) == [path])
    }

    @Test("Pieces of every size around the buffer's capacity and half of it come out whole and in order")
    func piecesInOrder() throws {
        let dir = temporaryDirectory()
        let path = dir + "/out.bin"
        let capacity = 64
        let file = try OutputFile(path: path, bufferCapacity: capacity)
        var expected: [UInt8] = []
        var generator = SystemRandomNumberGenerator()
        // Sizes 0...2×capacity+1, twice over in a shuffled order, then each after a small piece.
        var sizes = Array(0...(2 * capacity + 1)) + Array(0...(2 * capacity + 1))
        sizes.shuffle(using: &generator)
        for size in (0...(2 * capacity + 1)) { sizes += [3, size] }
        for (k, size) in sizes.enumerated() {
            let piece = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ k &* 31) }
            try file.write(piece)
            expected += piece
        }
        try file.commit()
        #expect(try InputFile(path: path).readAll() == expected)
    }

    @Test("An abandoned output leaves neither the target nor a temporary file, and keeps an old target")
    func abandon() throws {
        let dir = temporaryDirectory()
        let path = dir + "/out.ndjson"
        let old = try OutputFile(path: path)
        try old.write(Array("old\n".utf8))
        try old.commit()
        do {
            let file = try OutputFile(path: path, bufferCapacity: 4)
            try file.write(Array("partial data".utf8))
            // dropped without commit
        }
        #expect(try FileSystem.files(in: dir) == [path])
        #expect(try InputFile(path: path).readAll() == Array("old\n".utf8))
    }

    @Test("Opening a missing input names the file and the reason")
    func missingInput() {
        let error = #expect(throws: FerryIOError.self) { try InputFile(path: "/nonexistent/ferry.ndjson") }
        #expect(error?.description.contains("/nonexistent/ferry.ndjson: cannot open") == true)
    }
}

@Suite("Output to devices and pipes")
struct OutputToSpecialFilesTests {
    @Test("Writing to a FIFO writes through it and leaves it a FIFO (no temporary file renamed over it)")
    func fifo() throws {
        let dir = temporaryDirectory()
        let path = dir + "/pipe"
        #expect(mkfifo(path, 0o600) == 0)
        // A reader first, so that opening the FIFO for writing does not block.
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let file = try OutputFile(path: path)
        try file.write(Array("through the pipe\n".utf8))
        try file.commit()
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, 64) }
        #expect(Array(buffer.prefix(max(n, 0))) == Array("through the pipe\n".utf8))
        var info = stat()
        #expect(stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
        #expect(try FileSystem.files(in: dir).isEmpty) // no temporary file left beside it
    }
}
