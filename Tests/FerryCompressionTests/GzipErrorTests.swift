import FerryCompression
import FerryIO
import Testing

@Suite("Bad gzip input")
struct GzipErrorTests {
    static let input = TestData.text(count: 3_000, seed: 11)
    static let stream: [UInt8] = (try? Gzip.compress(input, .init(level: 6, threads: 1))) ?? []

    @Test("Every truncation of a stream is an error, never a crash or a success")
    func everyTruncation() {
        let stream = Self.stream
        for length in 0..<stream.count {
            let error = Gzip.decompressionError(Array(stream[..<length]))
            #expect(error?.code == .truncated, "length \(length): \(String(describing: error))")
            #expect(error?.memberIndex == 0)
            #expect((error?.compressedOffset ?? -1) <= length)
        }
    }

    @Test("A stream truncated in the trailer names the trailer and its offset")
    func truncatedTrailer() throws {
        let stream = Self.stream
        let error = try #require(Gzip.decompressionError(Array(stream.dropLast(3))))
        #expect(error.code == .truncated)
        #expect(error.compressedOffset == stream.count - 8)
        #expect(error.message.contains("8-byte trailer"))
    }

    @Test("Flipping any byte after the fixed header is detected")
    func everyFlippedByte() {
        let stream = Self.stream
        for position in 10..<stream.count {
            var damaged = stream
            damaged[position] ^= 0xff
            let error = Gzip.decompressionError(damaged)
            #expect(error != nil, "flipped byte \(position) was not detected")
            #expect(error?.memberIndex == 0)
        }
    }

    @Test("A wrong CRC-32 in the trailer is a checksum mismatch at the trailer's offset")
    func checksumMismatch() throws {
        var stream = Self.stream
        stream[stream.count - 8] ^= 0x01
        let error = try #require(Gzip.decompressionError(stream))
        #expect(error.code == .checksumMismatch)
        #expect(error.compressedOffset == stream.count - 8)
        #expect(error.memberIndex == 0)
        #expect(error.description.contains("CRC-32"))
    }

    @Test("A wrong ISIZE in the trailer is a length mismatch")
    func lengthMismatch() throws {
        var stream = Self.stream
        stream[stream.count - 1] ^= 0x01
        let error = try #require(Gzip.decompressionError(stream))
        #expect(error.code == .lengthMismatch)
        #expect(error.compressedOffset == stream.count - 4)
    }

    @Test("Corrupt deflate data is reported with zlib's message and an offset inside the data")
    func corruptData() throws {
        // A block with BTYPE 11 (reserved) is invalid deflate.
        let stream: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x07, 0, 0, 0]
        let error = try #require(Gzip.decompressionError(stream))
        #expect(error.code == .corruptData)
        #expect(error.zlibStatus == .dataError)
        #expect(error.compressedOffset == 10 || error.compressedOffset == 11)
        #expect(error.message.contains("invalid block type"))
    }

    @Test("Input without gzip magic bytes is a bad header at offset 0", arguments: [
        Array("PK\u{3}\u{4} not gzip at all".utf8), [0x1f], [0x1f, 0x8c, 8, 0, 0, 0, 0, 0, 0, 3, 0],
    ])
    func badMagic(bytes: [UInt8]) throws {
        let error = try #require(Gzip.decompressionError(bytes))
        #expect(error.code == (bytes.count == 1 ? .truncated : .badHeader))
        #expect(error.compressedOffset == 0)
    }

    @Test("An unknown method or reserved flag is a bad header at that byte")
    func badMethodAndFlags() throws {
        var method = Self.stream
        method[2] = 7
        let methodError = try #require(Gzip.decompressionError(method))
        #expect(methodError.code == .badHeader)
        #expect(methodError.compressedOffset == 2)

        var flags = Self.stream
        flags[3] = 0x20
        let flagError = try #require(Gzip.decompressionError(flags))
        #expect(flagError.code == .badHeader)
        #expect(flagError.compressedOffset == 3)
    }

    @Test("A wrong header CRC is a bad header")
    func badHeaderCRC() throws {
        var stream = Self.stream
        stream[3] = 0x02
        stream.insert(contentsOf: [0x12, 0x34], at: 10)
        let error = try #require(Gzip.decompressionError(stream))
        #expect(error.code == .badHeader)
        #expect(error.compressedOffset == 10)
    }

    @Test("Bytes after the last member are trailing garbage, named with the next member index and offset", arguments: [
        Array("garbage".utf8), [0], [0, 0, 0, 0], [0x1f, 0x8c],
    ])
    func trailingGarbage(tail: [UInt8]) throws {
        let stream = Self.stream + Self.stream
        let error = try #require(Gzip.decompressionError(stream + tail, chunkSize: 5))
        #expect(error.code == .trailingGarbage)
        #expect(error.memberIndex == 2)
        #expect(error.compressedOffset == stream.count)
    }

    @Test("A second member that starts but is cut short is truncated, not garbage")
    func truncatedSecondMember() throws {
        let stream = Self.stream + Self.stream.prefix(20)
        let error = try #require(Gzip.decompressionError(stream))
        #expect(error.code == .truncated)
        #expect(error.memberIndex == 1)
    }

    @Test("After an error every further read throws the same error")
    func stickyFailure() throws {
        let source = try GzipSource(wrapping: MemorySource(Array("not gzip".utf8), name: "x.gz"))
        var buffer = [UInt8](repeating: 0, count: 100)
        for _ in 0..<2 {
            #expect {
                try buffer.withUnsafeMutableBytes { _ = try source.read(into: $0) }
            } throws: { error in
                let error = error as? CompressionError
                return error?.code == .badHeader && error?.source == "x.gz"
            }
        }
    }

    @Test("Error descriptions say where, what was expected and what was found")
    func description() {
        let error = CompressionError(
            .checksumMismatch, "expected CRC-32 0x1, found 0x2",
            source: "a.gz", compressedOffset: 42, memberIndex: 1
        )
        #expect(error.description == "a.gz: gzip member 1, compressed byte 42: CRC-32 mismatch: expected CRC-32 0x1, found 0x2")
    }
}
