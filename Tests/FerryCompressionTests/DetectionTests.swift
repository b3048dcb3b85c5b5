import FerryCompression
import FerryIO
import FerryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Detecting compressed input by its magic bytes")
struct DetectionTests {
    @Test("Gzip is detected by 1f 8b and nothing else is", arguments: [
        ([0x1f, 0x8b], CompressionFormat.gzip),
        ([0x1f, 0x8b, 8, 0], .gzip),
        ([], nil),
        ([0x1f], nil),
        ([0x8b, 0x1f], nil),
        (Array("{\"a\":1}".utf8), nil),
    ] as [([UInt8], CompressionFormat?)])
    func detect(prefix: [UInt8], expected: CompressionFormat?) {
        #expect(Compression.detect(prefix) == expected)
    }

    @Test("openInput decompresses gzip whatever the name, at every chunk size", arguments: [1, 2, 3, 1000])
    func openInputDecompressesGzip(chunkSize: Int) throws {
        let input = TestData.text(count: 20_000)
        let compressed = try Gzip.compress(input)
        let source = try Compression.openInput(MemorySource(compressed, name: "data.ndjson", chunkSize: chunkSize))
        #expect(source is GzipSource)
        #expect(try source.readAll() == input)
    }

    @Test("openInput passes other input through unchanged, including short and empty input", arguments: [
        [], [0x1f], Array("plain text that is not compressed".utf8), Array(repeating: 0x1f, count: 100),
    ] as [[UInt8]])
    func openInputPassesPlainInput(bytes: [UInt8]) throws {
        for chunkSize in [1, 2, 5, 1000] {
            let source = try Compression.openInput(MemorySource(bytes, name: "x.gz", chunkSize: chunkSize))
            #expect(!(source is GzipSource))
            #expect(source.name == "x.gz")
            #expect(try source.readAll() == bytes)
        }
    }

    @Test("PeekableSource hands the peeked bytes out again, then the rest")
    func peekThenRead() throws {
        let bytes = Array(0..<200).map { UInt8($0) }
        let source = PeekableSource(MemorySource(bytes, chunkSize: 3))
        #expect(try source.peek(2) == [0, 1])
        #expect(try source.peek(10) == Array(bytes[..<10]))
        var one = [UInt8](repeating: 0, count: 4)
        let n = try one.withUnsafeMutableBytes { try source.read(into: $0) }
        #expect(Array(one[..<n]) == Array(bytes[..<n]))
        #expect(try source.peek(5) == Array(bytes[n..<(n + 5)]))
        #expect(try source.readAll() == Array(bytes[n...]))
        #expect(try source.peek(1) == [])
    }

    @Test("PeekableSource maps its file from the first byte it has not handed out")
    func mapAfterPeek() throws {
        let bytes = Array(0..<5000).map { UInt8(truncatingIfNeeded: $0) }
        let path = temporaryDirectory() + "/input"
        let out = try OutputFile(path: path)
        try out.write(bytes)
        try out.commit()
        let source = try Compression.openInput(InputFile(path: path))
        #expect(try #require(source.mapRemaining(maximumSize: .max)).withBytes(Array.init) == bytes)
        let peekable = PeekableSource(try InputFile(path: path))
        _ = try peekable.peek(100)
        var head = [UInt8](repeating: 0, count: 30)
        #expect(try head.withUnsafeMutableBytes { try peekable.read(into: $0) } == 30)
        #expect(try #require(peekable.mapRemaining(maximumSize: .max)).withBytes(Array.init) == Array(bytes[30...]))
        #expect(PeekableSource(MemorySource(bytes)).mapRemaining(maximumSize: .max) == nil)
    }
}

/// A new temporary directory.
private func temporaryDirectory() -> String { TestScratch.directory() }
