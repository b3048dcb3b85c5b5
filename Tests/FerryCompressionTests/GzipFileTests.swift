@testable import FerryCompression
import FerryIO
import FerryTestSupport
import Foundation
import Testing

/// ``GzipFile/readWhole(limit:)`` (libdeflate on Linux, then zlib for what it does not decode
/// cleanly) against a ``GzipSource`` stream of the same bytes: the same content, or the same
/// error.
@Suite("Gzip files read whole")
struct GzipFileTests {
    /// What reading `bytes` whole gives: the content, `nil` past `limit`, or the error's code.
    static func readWhole(_ bytes: [UInt8], limit: Int = .max,
                          configuration: GzipSource.Configuration = .init()) -> Result<[UInt8]?, CompressionError> {
        let path = TestScratch.directory() + "/file.gz"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        do {
            guard let (storage, count) = try GzipFile(path: path, configuration: configuration).readWhole(limit: limit) else {
                return .success(nil)
            }
            defer { storage.deallocate() }
            return .success(Array(UnsafeRawBufferPointer(rebasing: storage[..<count])))
        } catch let error as CompressionError {
            return .failure(error)
        } catch {
            return .failure(CompressionError(.zlibFailure, "unexpected error \(error)", source: path))
        }
    }

    static func content(_ result: Result<[UInt8]?, CompressionError>) -> [UInt8]? {
        if case .success(let bytes) = result { return bytes }
        return nil
    }

    static func code(_ result: Result<[UInt8]?, CompressionError>) -> CompressionError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    @Test("One member of every size class reads as the stream reads it", arguments: [0, 1, 100, 4_095, 4_097, 70_000, 1_500_000])
    func oneMember(size: Int) throws {
        let text = TestData.text(count: size, seed: UInt64(size) + 3)
        let stream = try Gzip.compress(text)
        #expect(Self.content(Self.readWhole(stream)) == text)
        #expect(try Gzip.decompress(stream) == text)
    }

    #if os(Linux) && canImport(CLibDeflate)
    @Test("On Linux libdeflate reads clean files; damaged ones are left to the stream")
    func libdeflateReads() throws {
        let path = TestScratch.directory() + "/file.gz"
        let stream = try Gzip.compress(TestData.text(count: 100_000, seed: 4)) + Gzip.compress(Array("tail".utf8))
        _ = FileManager.default.createFile(atPath: path, contents: Data(stream))
        guard case .read(let storage, let count) = try GzipFile(path: path).inflateWhole(limit: .max) else {
            Issue.record("a clean file was not read by libdeflate")
            return
        }
        storage.deallocate()
        #expect(count == 100_004)
        _ = FileManager.default.createFile(atPath: path, contents: Data(stream.dropLast(3)))
        guard case .notClean = try GzipFile(path: path).inflateWhole(limit: .max) else {
            Issue.record("a truncated file was not left to the stream")
            return
        }
    }
    #endif

    @Test("Ferry's own output, a member per block, is read whole by libdeflate on every worker, as one member was",
          .enabled(if: GzipSink.Configuration.Engine.libdeflate.isAvailable))
    func ferrysMembersReadWhole() throws {
        let text = TestData.text(count: 5 * 32_768 + 123, seed: 13)
        let stream = try Gzip.compress(text, .init(level: 6, threads: 2, blockSize: 32_768, engine: .libdeflate))
        #if os(Linux) && canImport(CLibDeflate)
        let path = TestScratch.directory() + "/members.gz"
        _ = FileManager.default.createFile(atPath: path, contents: Data(stream))
        guard case .read(let storage, let count) = try GzipFile(path: path).inflateWhole(limit: .max) else {
            Issue.record("Ferry's multi-member output was left to the stream")
            return
        }
        defer { storage.deallocate() }
        #expect(Array(UnsafeRawBufferPointer(rebasing: storage[..<count])) == text)
        #endif
        #expect(Self.content(Self.readWhole(stream)) == text)
        #expect(Self.content(Self.readWhole(stream, limit: text.count)) == text)
        #expect(try Self.readWhole(stream, limit: text.count - 1).get() == nil)
    }

    @Test("Members one after the other (the last one small) read as one content")
    func members() throws {
        let parts = [TestData.text(count: 200_000, seed: 5), TestData.random(count: 30_000, seed: 6), [], Array("end".utf8)]
        let stream = try parts.flatMap { try Gzip.compress($0) }
        #expect(Self.content(Self.readWhole(stream)) == parts.flatMap { $0 })
    }

    @Test("Damage is the stream's error: truncation, a flipped CRC or length, trailing bytes")
    func damage() throws {
        let stream = try Gzip.compress(TestData.text(count: 50_000, seed: 7))
        for length in stride(from: 0, to: stream.count, by: 97) {
            let truncated = Array(stream[..<length])
            #expect(Self.code(Self.readWhole(truncated)) == Gzip.decompressionError(truncated)?.code, "length \(length)")
            #expect(Self.code(Self.readWhole(truncated)) == .truncated, "length \(length)")
        }
        var crc = stream
        crc[crc.count - 8] ^= 1
        #expect(Self.code(Self.readWhole(crc)) == .checksumMismatch)
        var length = stream
        length[length.count - 4] ^= 1
        #expect(Self.code(Self.readWhole(length)) == .lengthMismatch)
        #expect(Self.code(Self.readWhole(stream + Array("garbage".utf8))) == Gzip.decompressionError(stream + Array("garbage".utf8))?.code)
        #expect(Self.code(Self.readWhole(stream + Array("garbage".utf8))) == .trailingGarbage)
    }

    @Test("A header CRC is checked: a wrong one is the stream's bad header, a right one reads")
    func headerCRC() throws {
        let text = TestData.text(count: 20_000, seed: 12)
        let plain = try Gzip.compress(text)
        // The same member with FHCRC set: the CRC-32 of the 10 header bytes, low 16 bits, after them.
        var header = Array(plain[..<10])
        header[3] |= 0x02
        let crc = referenceCRC32(header)
        let good = header + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF)] + plain[10...]
        #expect(Self.content(Self.readWhole(good)) == text)
        #expect(try Gzip.decompress(good) == text)
        var bad = good
        bad[10] ^= 0xFF
        #expect(Self.code(Self.readWhole(bad)) == .badHeader)
        #expect(Self.code(Self.readWhole(plain + bad)) == .badHeader, "in a later member too")
    }

    @Test("The caller's limit: exactly the limit reads, one byte over gives nil")
    func callersLimit() throws {
        let text = TestData.text(count: 10_000, seed: 8)
        let stream = try Gzip.compress(text)
        #expect(Self.content(Self.readWhole(stream, limit: 10_000)) == text)
        #expect(try Self.readWhole(stream, limit: 9_999).get() == nil)
        let two = try Gzip.compress(text) + Gzip.compress(text)
        #expect(try Self.readWhole(two, limit: 19_999).get() == nil)
        #expect(Self.content(Self.readWhole(two, limit: 20_000)) == text + text)
    }

    @Test("The output and ratio limits fail as the stream fails")
    func decompressionLimits() throws {
        let text = TestData.text(count: 10_000, seed: 9)
        let output = GzipSource.Configuration(maximumOutputBytes: 1_000)
        #expect(Self.code(Self.readWhole(try Gzip.compress(text), configuration: output)) == .outputLimitExceeded)
        let zeros = [UInt8](repeating: 0, count: 2_000_000)
        let ratio = GzipSource.Configuration(maximumRatio: 10, ratioGraceBytes: 1_024)
        #expect(Self.code(Self.readWhole(try Gzip.compress(zeros), configuration: ratio)) == .ratioLimitExceeded)
        #expect(Self.code(Self.readWhole(try Gzip.compress(zeros))) == Gzip.decompressionError(try Gzip.compress(zeros))?.code,
                "2 MB of zeros pass 1000:1 by default, streamed or whole")
        #expect(Self.content(Self.readWhole(try Gzip.compress(zeros), configuration: .unlimited)) == zeros)
    }
}
