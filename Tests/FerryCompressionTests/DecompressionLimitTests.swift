import FerryCompression
import FerryIO
import Testing

/// 1 GiB of zeros, compressed in memory by streaming through our own compressor (about 1 MB): one
/// member by zlib, which packs zeros densest (about 1030:1; libdeflate's members about 960:1).
let gzipBomb: [UInt8] = {
    let memory = MemorySink()
    do {
        let sink = try GzipSink(wrapping: memory, configuration: .init(level: 6, threads: 2, blockSize: 1 << 20, engine: .zlib))
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<1024 { try sink.write(zeros) }
        try sink.commit()
    } catch {
        return []
    }
    return memory.bytes
}()

@Suite("Decompression bomb limits")
struct DecompressionLimitTests {
    /// Reads `source` to the end through a 64 KiB buffer, counting bytes; memory stays bounded.
    private func drain(_ source: GzipSource) throws -> Int {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { return total }
            total += n
        }
    }

    @Test("The default ratio limit stops a 1 GiB bomb soon after the first MiB")
    func ratioLimitStopsBomb() throws {
        #expect(gzipBomb.count > 0 && gzipBomb.count < 2 << 20)
        let source = try GzipSource(wrapping: MemorySource(gzipBomb, name: "bomb.gz"))
        let error = try #require(throws: CompressionError.self) { _ = try drain(source) }
        #expect(error.code == .ratioLimitExceeded)
        #expect(error.message.contains("maximumRatio"))
        #expect(error.source == "bomb.gz")
        #expect((error.compressedOffset ?? .max) < gzipBomb.count)
    }

    @Test("The output limit stops a bomb at the limit when the ratio limit is off")
    func outputLimitStopsBomb() throws {
        let limit = 10 << 20
        let configuration = GzipSource.Configuration(maximumOutputBytes: limit, maximumRatio: nil)
        let source = try GzipSource(wrapping: MemorySource(gzipBomb), configuration: configuration)
        var delivered = 0
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let error = try #require(throws: CompressionError.self) {
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { break }
                delivered += n
            }
        }
        #expect(error.code == .outputLimitExceeded)
        #expect(error.message.contains("maximumOutputBytes"))
        #expect(delivered <= limit)
    }

    @Test("The bomb is a valid stream: with no limits it decompresses to 1 GiB of zeros")
    func bombIsValid() throws {
        let source = try GzipSource(wrapping: MemorySource(gzipBomb), configuration: .unlimited)
        #expect(try drain(source) == 1 << 30)
    }

    /// 1 GiB of zeros as 1024 members of 1 MiB each (about 1 KiB each, 990:1 with their headers).
    static let memberBomb: [UInt8] = {
        guard let member = try? Gzip.compress([UInt8](repeating: 0, count: 1 << 20), .init(threads: 1, engine: .zlib)) else { return [] }
        return Array([[UInt8]](repeating: member, count: 1024).joined())
    }()

    @Test("The ratio limit counts the output and input of every member so far: a bomb of small members stops in the second")
    func ratioLimitAcrossMembers() throws {
        let bomb = Self.memberBomb
        #expect(bomb.count > 0 && bomb.count < 2 << 20)
        let source = try GzipSource(wrapping: MemorySource(bomb, name: "members.gz"), configuration: .init(maximumRatio: 900))
        let error = try #require(throws: CompressionError.self) { _ = try drain(source) }
        #expect(error.code == .ratioLimitExceeded)
        #expect(error.memberIndex == 1, "\(error)")
        let unlimited = try GzipSource(wrapping: MemorySource(bomb), configuration: .unlimited)
        #expect(try drain(unlimited) == 1 << 30)
    }

    @Test("The output limit counts every member", arguments: availableEngines)
    func outputLimitAcrossMembers(engine: GzipSink.Configuration.Engine) throws {
        let input = TestData.text(count: 3 << 20)
        let compressed = try Gzip.compress(input, .init(level: 6, threads: 2, blockSize: 256 << 10, engine: engine))
        let limit = (1 << 20) + 5
        let source = try GzipSource(wrapping: MemorySource(compressed), configuration: .init(maximumOutputBytes: limit))
        var delivered = 0
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let error = try #require(throws: CompressionError.self) {
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { break }
                delivered += n
            }
        }
        #expect(error.code == .outputLimitExceeded)
        #expect(delivered <= limit)
        if engine.writesMembers { #expect(error.memberIndex == 4, "\(error)") }
    }

    @Test("Ordinary text is well within the default limits")
    func ordinaryTextPasses() throws {
        let input = TestData.text(count: 3 << 20)
        for engine in availableEngines {
            let compressed = try Gzip.compress(input, .init(level: 9, threads: 2, engine: engine))
            #expect(try Gzip.decompress(compressed) == input)
        }
    }

    @Test("A lower ratio limit applies once output passes the grace bytes")
    func customRatio() throws {
        let input = TestData.text(count: 2 << 20)
        let compressed = try Gzip.compress(input)
        let strict = GzipSource.Configuration(maximumRatio: 2, ratioGraceBytes: 64 << 10)
        #expect { _ = try Gzip.decompress(compressed, strict) } throws: {
            ($0 as? CompressionError)?.code == .ratioLimitExceeded
        }
    }

    @Test("Invalid limits are rejected", arguments: [
        GzipSource.Configuration(maximumOutputBytes: -1), .init(maximumRatio: 0), .init(inputBufferSize: 10),
    ])
    func invalidLimits(configuration: GzipSource.Configuration) {
        #expect {
            _ = try GzipSource(wrapping: MemorySource([]), configuration: configuration)
        } throws: { ($0 as? CompressionError)?.code == .invalidConfiguration }
    }
}
