@testable import FerryCompression
import FerryIO
import Testing

/// The blocks a ``GzipSink`` cuts its input into: their layout (a member each with libdeflate, one
/// member with zlib), round trips at every block boundary, and output that does not depend on the
/// thread count.
@Suite("Block compression")
struct GzipBlockTests {
    static let blockSize = 32 << 10
    static let text = TestData.text(count: 8 << 20)

    /// The members of a stream Ferry wrote with libdeflate: each block compressed alone is exactly
    /// its member, so the members' bounds are the running sums of their sizes.
    static func members(of input: [UInt8], blockSize: Int, level: Int = 6) throws -> [(start: Int, end: Int)] {
        var bounds: [(start: Int, end: Int)] = []
        var start = 0
        for offset in stride(from: 0, to: max(input.count, 1), by: blockSize) {
            let block = Array(input[offset..<min(input.count, offset + blockSize)])
            let member = try Gzip.compress(block, .init(level: level, threads: 1, blockSize: blockSize, engine: .libdeflate))
            bounds.append((start, start + member.count))
            start += member.count
        }
        return bounds
    }

    @Test("Output is no more than 1% larger than one zlib stream at the same level", arguments: availableEngines, [1, 6, 9])
    func ratioCloseToOneStream(engine: GzipSink.Configuration.Engine, level: Int) throws {
        let oneStream = try Gzip.compress(Self.text, .init(level: level, threads: 1, blockSize: 1 << 30, engine: .zlib), writeSize: 1 << 20)
        let blocks = try Gzip.compress(Self.text, .init(level: level, threads: 2, engine: engine), writeSize: 1 << 20)
        let growth = Double(blocks.count - oneStream.count) / Double(oneStream.count)
        #expect(growth < 0.01, "\(engine) level \(level): \(blocks.count) B against one zlib stream's \(oneStream.count) B")
        #expect(try Gzip.decompress(blocks) == Self.text)
    }

    @Test("The same input gives the same bytes on any number of threads, written in any pieces",
          arguments: availableEngines, [0, 1, 6, 9])
    func sameBytesOnEveryThreadCount(engine: GzipSink.Configuration.Engine, level: Int) throws {
        let input = TestData.text(count: 300_000) + TestData.random(count: 40_000) + TestData.text(count: 50_000, seed: 9)
        let reference = try Gzip.compress(input, .init(level: level, threads: 1, blockSize: Self.blockSize, engine: engine))
        for (threads, writeSize) in [(1, 1_000), (2, 7_777), (3, Self.blockSize), (4, Self.blockSize + 1), (8, 1 << 20)] {
            let configuration = GzipSink.Configuration(level: level, threads: threads, blockSize: Self.blockSize, engine: engine)
            #expect(try Gzip.compress(input, configuration, writeSize: writeSize) == reference,
                    "\(threads) threads, writes of \(writeSize)")
        }
        #expect(try Gzip.decompress(reference) == input)
    }

    @Test("Inputs at every block boundary round-trip, on one thread and on several",
          arguments: availableEngines, [0, 1, 32767, 32768, 32769, 65535, 65536, 65537, 98304, 10 * 32768 + 7])
    func blockBoundaries(engine: GzipSink.Configuration.Engine, count: Int) throws {
        let input = TestData.text(count: count)
        for threads in [1, 2, 3] {
            for writeSize in [4096, 32768, 100_000] {
                let configuration = GzipSink.Configuration(level: 6, threads: threads, blockSize: Self.blockSize, engine: engine)
                let compressed = try Gzip.compress(input, configuration, writeSize: writeSize)
                #expect(try Gzip.decompress(compressed) == input, "\(threads) threads, writes of \(writeSize)")
            }
        }
    }

    @Test("Every level round-trips, and higher levels never compress worse than level 1", arguments: availableEngines)
    func everyLevel(engine: GzipSink.Configuration.Engine) throws {
        let input = TestData.text(count: 200_000) + TestData.random(count: 20_000)
        var sizes: [Int] = []
        for level in 0...9 {
            let compressed = try Gzip.compress(input, .init(level: level, threads: 2, blockSize: 64 << 10, engine: engine))
            #expect(try Gzip.decompress(compressed) == input, "level \(level)")
            sizes.append(compressed.count)
        }
        #expect(sizes[0] > input.count, "level 0 stores")
        #expect(sizes[2...].allSatisfy { $0 <= sizes[1] }, "\(sizes)")
    }

    @Test("With libdeflate each block is a gzip member of its own, with its block's CRC-32 and length",
          .enabled(if: GzipSink.Configuration.Engine.libdeflate.isAvailable))
    func memberPerBlock() throws {
        let input = TestData.text(count: 3 * Self.blockSize + 1_000)
        let compressed = try Gzip.compress(input, .init(level: 6, threads: 2, blockSize: Self.blockSize, engine: .libdeflate))
        let members = try Self.members(of: input, blockSize: Self.blockSize)
        #expect(members.count == 4)
        #expect(members.last?.end == compressed.count)
        for (index, member) in members.enumerated() {
            let block = input[(index * Self.blockSize)..<min(input.count, (index + 1) * Self.blockSize)]
            #expect(compressed[member.start..<(member.start + 4)] == [0x1f, 0x8b, 8, 0], "member \(index)")
            let trailer = Array(compressed[(member.end - 8)..<member.end])
            let crc = referenceCRC32(block)
            #expect(trailer[0..<4] == [UInt8(crc & 0xff), UInt8(crc >> 8 & 0xff), UInt8(crc >> 16 & 0xff), UInt8(crc >> 24)])
            let length = UInt32(block.count)
            #expect(trailer[4..<8] == [UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16 & 0xff), 0])
            #expect(try Gzip.decompress(Array(compressed[member.start..<member.end])) == Array(block))
        }
    }

    @Test("With zlib the output is one gzip member with a single header and trailer")
    func zlibSingleMember() throws {
        let input = TestData.text(count: 1 << 20)
        let compressed = try Gzip.compress(input, .init(level: 6, threads: 4, blockSize: Self.blockSize, engine: .zlib))
        #expect(compressed.prefix(4) == [0x1f, 0x8b, 8, 0])
        let crc = referenceCRC32(input)
        let trailer = Array(compressed.suffix(8))
        #expect(trailer[0..<4] == [UInt8(crc & 0xff), UInt8(crc >> 8 & 0xff), UInt8(crc >> 16 & 0xff), UInt8(crc >> 24)])
        #expect(trailer[4..<8] == [0, 0, 0x10, 0])
        // One member: a reader that stops after the first member still gets everything.
        let source = try GzipSource(wrapping: MemorySource(compressed))
        #expect(try source.readAll() == input)
    }

    @Test("An empty input is one member holding nothing", arguments: availableEngines, [1, 2])
    func emptyInput(engine: GzipSink.Configuration.Engine, threads: Int) throws {
        let compressed = try Gzip.compress([], .init(threads: threads, engine: engine))
        #expect(compressed.prefix(3) == [0x1f, 0x8b, 8])
        #expect(compressed.suffix(8) == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(try Gzip.decompress(compressed) == [])
    }

    @Test("A corrupt member is reported with its member index and a byte offset inside it",
          .enabled(if: GzipSink.Configuration.Engine.libdeflate.isAvailable))
    func corruptMember() throws {
        let input = TestData.text(count: 4 * Self.blockSize)
        let compressed = try Gzip.compress(input, .init(level: 6, threads: 2, blockSize: Self.blockSize, engine: .libdeflate))
        let members = try Self.members(of: input, blockSize: Self.blockSize)
        let third = members[2]
        // Damage in the deflate data: invalid data, or data that inflates to other bytes.
        for position in stride(from: third.start + 10, to: third.end - 8, by: 401) {
            var damaged = compressed
            damaged[position] ^= 0x55
            let error = try #require(Gzip.decompressionError(damaged), "byte \(position)")
            #expect(error.memberIndex == 2, "byte \(position): \(error)")
            #expect((third.start...third.end).contains(error.compressedOffset ?? -1), "byte \(position): \(error)")
        }
        // A wrong CRC-32 in its trailer: named at the trailer.
        var crc = compressed
        crc[third.end - 8] ^= 1
        let error = try #require(Gzip.decompressionError(crc))
        #expect(error.code == .checksumMismatch)
        #expect(error.memberIndex == 2)
        #expect(error.compressedOffset == third.end - 8)
        #expect(error.description.contains("gzip member 2, compressed byte \(third.end - 8):"))
    }

    @Test("A failing inner sink fails the gzip sink, which then refuses to commit", arguments: availableEngines)
    func failingSink(engine: GzipSink.Configuration.Engine) throws {
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
            let sink = try GzipSink(wrapping: FailingSink(), configuration: .init(threads: threads, blockSize: 32 << 10, engine: engine))
            let input = TestData.random(count: 1 << 20)
            #expect(throws: FerryIOError.self) { try sink.write(input); try sink.commit() }
            #expect(throws: CompressionError.self) { try sink.commit() }
        }
    }
}
