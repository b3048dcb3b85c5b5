import FerryCompression
import FerryIO
import Testing

@Suite("Parallel compression")
struct ParallelCompressionTests {
    static let text = TestData.text(count: 8 << 20)

    @Test("Parallel output is within 1% of single-threaded zlib at the same level", arguments: [1, 6, 9])
    func ratioCloseToSingleThreaded(level: Int) throws {
        let serial = try Gzip.compress(Self.text, .init(level: level, threads: 1), writeSize: 1 << 20)
        let parallel = try Gzip.compress(Self.text, .init(level: level, threads: 2), writeSize: 1 << 20)
        let growth = Double(parallel.count - serial.count) / Double(serial.count)
        print("level \(level): serial \(serial.count) B, parallel \(parallel.count) B, \(growth * 100)% larger, ratio \(Double(Self.text.count) / Double(parallel.count))")
        #expect(growth < 0.01)
        #expect(try Gzip.decompress(parallel) == Self.text)
    }

    @Test("Parallel output is one gzip member with a single header and trailer")
    func singleMember() throws {
        let input = TestData.text(count: 1 << 20)
        let compressed = try Gzip.compress(input, .init(level: 6, threads: 4, blockSize: 32 << 10))
        #expect(compressed.prefix(4) == [0x1f, 0x8b, 8, 0])
        let crc = referenceCRC32(input)
        let trailer = Array(compressed.suffix(8))
        #expect(trailer[0..<4] == [UInt8(crc & 0xff), UInt8(crc >> 8 & 0xff), UInt8(crc >> 16 & 0xff), UInt8(crc >> 24)])
        #expect(trailer[4..<8] == [0, 0, 0x10, 0])
        // One member: the header magic appears only at the start of what a member reader consumes.
        #expect(try Gzip.decompress(compressed) == input)
    }

    @Test("A failing inner sink fails the gzip sink, which then refuses to commit")
    func failingSink() throws {
        final class FailingSink: ByteSink {
            let name = "failing"
            var writes = 0
            func write(_ bytes: UnsafeRawBufferPointer) throws {
                writes += 1
                if writes > 2 { throw FerryIOError(.write, path: name, errno: 28) }
            }
            func commit() throws {}
        }
        for threads in [1, 2] {
            let sink = try GzipSink(wrapping: FailingSink(), configuration: .init(threads: threads, blockSize: 32 << 10))
            let input = TestData.random(count: 1 << 20)
            #expect(throws: FerryIOError.self) { try sink.write(input); try sink.commit() }
            #expect(throws: CompressionError.self) { try sink.commit() }
        }
    }
}
