import FerryCompression
import FerryIO
import Testing

@Suite("gzip round trips")
struct GzipRoundTripTests {
    static let levels = [0, 1, 6, 9]
    static let kinds = ["random", "text"]

    @Test("Compressing then decompressing gives back the input on one thread", arguments: kinds, levels)
    func singleThreadedRoundTrip(kind: String, level: Int) throws {
        let input = TestData.named(kind, count: 300_000)
        let compressed = try Gzip.compress(input, .init(level: level, threads: 1))
        #expect(try Gzip.decompress(compressed) == input)
    }

    @Test(
        "Compressing in parallel then decompressing gives back the input at every block size",
        arguments: kinds, [(0, 32 << 10), (1, 64 << 10), (6, 32 << 10), (6, 128 << 10), (9, 64 << 10), (9, 128 << 10)]
    )
    func parallelRoundTrip(kind: String, settings: (level: Int, blockSize: Int)) throws {
        let input = TestData.named(kind, count: 300_000)
        let configuration = GzipSink.Configuration(level: settings.level, threads: 2, blockSize: settings.blockSize)
        let compressed = try Gzip.compress(input, configuration, writeSize: 7_777)
        #expect(try Gzip.decompress(compressed) == input)
    }

    @Test("Inputs of block-boundary sizes round-trip", arguments: [1, 2, 3], [0, 1, 32767, 32768, 32769, 65536, 98304])
    func boundarySizes(threads: Int, count: Int) throws {
        let input = TestData.text(count: count)
        let configuration = GzipSink.Configuration(level: 6, threads: threads, blockSize: 32 << 10)
        let compressed = try Gzip.compress(input, configuration, writeSize: 4096)
        #expect(try Gzip.decompress(compressed) == input)
    }

    @Test("An empty input gives a valid gzip member of an empty file")
    func emptyInput() throws {
        for threads in [1, 2] {
            let compressed = try Gzip.compress([], .init(threads: threads))
            #expect(compressed.prefix(3) == [0x1f, 0x8b, 8])
            #expect(try Gzip.decompress(compressed) == [])
        }
    }

    @Test("The same input and settings always give the same bytes", arguments: [1, 2])
    func reproducibleOutput(threads: Int) throws {
        let input = TestData.text(count: 200_000)
        let configuration = GzipSink.Configuration(level: 6, threads: threads, blockSize: 32 << 10)
        #expect(try Gzip.compress(input, configuration) == Gzip.compress(input, configuration, writeSize: 1000))
    }

    @Test("Feeding the decompressor every chunk size from 1 to 64 bytes gives the same result")
    func everyChunkSize() throws {
        let first = TestData.text(count: 20_000, seed: 7)
        let second = TestData.random(count: 3_000, seed: 8)
        let stream = try Gzip.compress(first, .init(level: 6, threads: 1))
            + Gzip.compress(second, .init(level: 1, threads: 2, blockSize: 32 << 10))
        for chunkSize in 1...64 {
            #expect(try Gzip.decompress(stream, chunkSize: chunkSize) == first + second, "chunk size \(chunkSize)")
        }
    }

    @Test("Reading into tiny caller buffers gives the same result", arguments: [1, 7], [1, 5, Int.max])
    func tinyReadBuffers(bufferSize: Int, chunkSize: Int) throws {
        let input = TestData.text(count: 30_000) + [UInt8](repeating: 0x61, count: 5_000)
        let source = try GzipSource(wrapping: MemorySource(try Gzip.compress(input), chunkSize: chunkSize))
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            output += buffer[..<n]
        }
        #expect(output == input)
    }

    @Test("A header with extra field, name, comment and header CRC is read")
    func fullHeader() throws {
        let input = TestData.text(count: 10_000)
        let plain = try Gzip.compress(input)
        var header: [UInt8] = [0x1f, 0x8b, 8, 0x02 | 0x04 | 0x08 | 0x10, 0, 0, 0, 0, 0, 3]
        header += [5, 0, 1, 2, 3, 4, 5]
        header += Array("records.ndjson".utf8) + [0]
        header += Array("a comment".utf8) + [0]
        let crc = referenceCRC32(header)
        header += [UInt8(crc & 0xff), UInt8((crc >> 8) & 0xff)]
        let stream = header + plain[10...]
        for chunkSize in [1, 3, 1000] {
            #expect(try Gzip.decompress(stream, chunkSize: chunkSize) == input)
        }
    }

    @Test("GzipSink commits the wrapped sink and refuses writes afterwards")
    func commitSemantics() throws {
        let memory = MemorySink()
        let sink = try GzipSink(wrapping: memory, configuration: .init(threads: 2))
        try sink.write("hello")
        #expect(!memory.isCommitted)
        try sink.commit()
        #expect(memory.isCommitted)
        try sink.commit()
        #expect(throws: CompressionError.self) { try sink.write("more") }
        #expect(try Gzip.decompress(memory.bytes) == Array("hello".utf8))
        #expect(sink.name == "<memory> (gzip)")
    }

    @Test("More compression threads than Processors.maximumThreads are clamped to it, and compress as usual")
    func threadsClamped() throws {
        let memory = MemorySink()
        let sink = try GzipSink(wrapping: memory, configuration: .init(threads: 4096, blockSize: GzipSink.Configuration.minimumBlockSize))
        #expect(sink.configuration.threads == Processors.maximumThreads)
        let input = TestData.named("text", count: 300_000)
        try input.withUnsafeBytes { try sink.write($0) }
        try sink.commit()
        #expect(try Gzip.decompress(memory.bytes) == input)
    }

    @Test("Invalid configurations are rejected", arguments: [
        GzipSink.Configuration(level: -1), .init(level: 10), .init(threads: 0), .init(blockSize: 1024),
    ])
    func invalidConfiguration(configuration: GzipSink.Configuration) {
        #expect {
            _ = try GzipSink(wrapping: MemorySink(), configuration: configuration)
        } throws: { ($0 as? CompressionError)?.code == .invalidConfiguration }
    }
}
