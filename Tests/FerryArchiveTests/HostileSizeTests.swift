import Testing
@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryJSON
import FerryRecords

/// A source made on the fly, never held whole: `prefix`, then `repeated` over and over until
/// `count` bytes of it were handed out. It counts what was read from it.
final class GeneratedSource: ByteSource {
    let name: String
    private let prefix: [UInt8]
    private let repeated: [UInt8]
    private let total: Int
    /// Bytes handed out so far.
    private(set) var consumed = 0

    init(name: String, prefix: [UInt8] = [], repeating repeated: [UInt8], count: Int) {
        self.name = name
        self.prefix = prefix
        self.repeated = repeated
        total = prefix.count + count
    }

    var totalBytes: Int { total }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var written = 0
        while written < buffer.count && consumed < total {
            let (piece, start) = consumed < prefix.count
                ? (prefix, consumed) : (repeated, (consumed - prefix.count) % repeated.count)
            let n = min(buffer.count - written, piece.count - start, total - consumed)
            piece.withUnsafeBytes { source in
                (buffer.baseAddress! + written).copyMemory(from: source.baseAddress! + start, byteCount: n)
            }
            written += n
            consumed += n
        }
        return written
    }

    func mapRemaining(maximumSize: Int) -> MappedInput? { nil }
}

/// Hostile inputs far larger than memory, generated as they are read, are refused at a limit
/// having read little of them, or streamed. How much memory that takes is measured on a `ferry`
/// process of its own (`BoundedMemoryTests` in FerryCLITests): a test process's resident size
/// counts every test running alongside, and moved by 250 MiB in a full run.
@Suite("Hostile sizes are refused at a limit or streamed")
struct HostileSizeTests {
    static let tenGiB = 10 << 30

    /// One gzip member of 64 MiB of zeros (about 64 KiB, at about 1030:1), compressed in 1 MiB
    /// pieces; repeated, it is any multiple of 64 MiB of zeros.
    static let zerosMember: [UInt8] = {
        let memory = MemorySink()
        do {
            let sink = try GzipSink(wrapping: memory, configuration: .init(level: 9, threads: 1, blockSize: 64 << 20, engine: .zlib))
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            for _ in 0..<64 { try sink.write(zeros) }
            try sink.commit()
        } catch {
            return []
        }
        return memory.bytes
    }()

    /// 10 GiB of zeros as a gzip stream (about 10 MB compressed), made as it is read.
    static func tenGiBOfZeros() -> GeneratedSource {
        GeneratedSource(name: "zeros.gz", repeating: zerosMember, count: zerosMember.count * (tenGiB >> 26))
    }

    /// Reads `source` to its end through a 64 KiB buffer; returns the bytes read before it threw.
    static func drain(_ source: any ByteSource) -> (bytes: Int, error: (any Error)?) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        do {
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { return (total, nil) }
                total += n
            }
        } catch {
            return (total, error)
        }
    }

    @Test("10 GiB of gzip-compressed zeros stop at the output limit (--max-bytes), little of them read")
    func gzipOutputLimit() throws {
        #expect(Self.zerosMember.count > 60 << 10 && Self.zerosMember.count < 70 << 10)
        let limit = 512 << 20
        let compressed = Self.tenGiBOfZeros()
        let source = try GzipSource(wrapping: compressed, configuration: .init(maximumOutputBytes: limit, maximumRatio: nil))
        let (delivered, error) = Self.drain(source)
        #expect((error as? CompressionError)?.code == .outputLimitExceeded, "\(String(describing: error))")
        #expect(delivered <= limit && delivered > limit - (1 << 20))
        #expect(compressed.consumed < compressed.totalBytes / 16, "read \(compressed.consumed) of \(compressed.totalBytes)")
    }

    @Test("10 GiB of gzip-compressed zeros stop at the default ratio limit (--max-ratio) soon after the first MiB")
    func gzipRatioLimit() throws {
        let compressed = Self.tenGiBOfZeros()
        let (delivered, error) = Self.drain(try GzipSource(wrapping: compressed))
        #expect((error as? CompressionError)?.code == .ratioLimitExceeded, "\(String(describing: error))")
        #expect(delivered < 512 << 20)
        #expect(compressed.consumed < 1 << 20)
    }

    @Test("An archive that is 10 GiB of compressed zeros is refused at --max-bytes, and at --max-ratio by default")
    func archiveOfZeros() throws {
        // Zeros are an empty tar (two zero blocks) followed by padding the reader reads to the end
        // so that the gzip trailer is checked: the limits must stop it.
        let limited = ArchiveReader.Configuration(gzip: .init(maximumOutputBytes: 256 << 20, maximumRatio: nil),
                                                  maximumTotalBytes: 256 << 20)
        for configuration in [limited, ArchiveReader.Configuration()] {
            let compressed = Self.tenGiBOfZeros()
            let error = archiveError { _ = try ArchiveReader(source: compressed, configuration: configuration) }
            #expect(error?.code == .decompressionFailed, "\(String(describing: error))")
            #expect([CompressionError.Code.outputLimitExceeded, .ratioLimitExceeded]
                .contains((error?.underlying as? CompressionError)?.code))
            #expect(compressed.consumed < compressed.totalBytes / 16)
        }
    }

    /// The headers of a tar member `name` that declares `size` bytes (a pax `size` record, as
    /// for any member over 8 GiB).
    static func header(name: String, size: Int) throws -> [UInt8] {
        let sink = MemorySink()
        try TarWriter(sink: sink, modificationTime: 0).beginMember(name: name, size: size)
        return sink.bytes
    }

    @Test("A tar member declaring 10 GiB is refused by the member limit before any of its data is read")
    func tarMemberOverLimit() throws {
        let header = try Self.header(name: "exports/huge.ndjson", size: Self.tenGiB)
        #expect(header.count == 1536) // pax header, its record block, the ustar header
        let input = GeneratedSource(name: "huge.tar", prefix: header, repeating: [UInt8](repeating: 0x20, count: 4096),
                                    count: Self.tenGiB)
        let error = archiveError {
            _ = try readArchive(try ArchiveReader(source: input, configuration: .init(maximumMemberBytes: 1 << 30)))
        }
        #expect(error?.code == .limitExceeded && error?.member == "exports/huge.ndjson")
        #expect(error?.message.contains("\(Self.tenGiB)") == true)
        #expect(input.consumed < 1 << 20, "read \(input.consumed) bytes")
    }

    @Test("A record member declaring 10 GiB of one endless line is refused at the line limit")
    func tarMemberEndlessLine() throws {
        let header = try Self.header(name: "exports/huge.ndjson", size: Self.tenGiB)
        let input = GeneratedSource(name: "huge.tar", prefix: header,
                                    repeating: Array(String(repeating: "{\"recordName\":", count: 300).utf8), count: Self.tenGiB)
        var configuration = ArchiveReader.Configuration()
        configuration.records.maximumLineBytes = 8 << 20
        let error = archiveError { _ = try readArchive(try ArchiveReader(source: input, configuration: configuration)) }
        #expect(error?.code == .invalidRecord && error?.member == "exports/huge.ndjson")
        #expect((error?.underlying as? RecordFormatError)?.code == .tooLarge)
        #expect(input.consumed < 16 << 20, "read \(input.consumed) bytes")
    }

    @Test("An asset member declaring 10 GiB is handed on as a stream, and the input ending early is found")
    func tarMemberStreamed() throws {
        let streamedBytes = 4 << 20
        let header = try Self.header(name: "assets/huge", size: Self.tenGiB)
        let input = GeneratedSource(name: "huge.tar", prefix: header, repeating: [UInt8](repeating: 7, count: 4096),
                                    count: streamedBytes)
        let reader = try ArchiveReader(source: input)
        var streamed = 0
        reader.onMember = { member, source in
            #expect(member.kind == .asset && member.size == Self.tenGiB && member.fileChecksum == "huge")
            streamed = Self.drain(source).bytes
        }
        let error = archiveError { _ = try readArchive(reader) }
        #expect(error?.code == .truncated && error?.member == "assets/huge", "\(String(describing: error))")
        #expect(streamed == streamedBytes)
    }
}

extension HostileSizeTests {
    @Test("Compressed record members inside an archive are held to the gzip limits, which they share")
    func compressedMembers() throws {
        // 64 MiB of zeros as an .ndjson.gz member: the default ratio limit stops it.
        let bomb = try TarBuilder.tar([.file("exports/zeros.ndjson.gz", Self.zerosMember)])
        let error = archiveError { _ = try readArchive(try ArchiveReader(source: MemorySource(bomb, name: "bomb.tar"))) }
        #expect(error?.code == .decompressionFailed && error?.member == "exports/zeros.ndjson.gz")
        #expect((error?.underlying as? CompressionError)?.code == .ratioLimitExceeded)

        // Three members of 400 KiB each pass a 1 MiB output limit one by one, not together.
        let line = Array("{\"recordName\":\"x\"}\n".utf8)
        let text = Array([[UInt8]](repeating: line, count: 400 << 10 / line.count).joined())
        let member = try TarBuilder.gzip(text)
        let three = try TarBuilder.tar((1...3).map { .file("part-\($0).ndjson.gz", member) })
        let limits = ArchiveReader.Configuration(gzip: .init(maximumOutputBytes: 1 << 20, maximumRatio: nil))
        let shared = archiveError { _ = try readArchive(try ArchiveReader(source: MemorySource(three), configuration: limits)) }
        #expect(shared?.member == "part-3.ndjson.gz")
        #expect((shared?.underlying as? CompressionError)?.code == .outputLimitExceeded)
        let two = try TarBuilder.tar((1...2).map { .file("part-\($0).ndjson.gz", member) })
        #expect(try readArchive(try ArchiveReader(source: MemorySource(two), configuration: limits)).count == 2 * (text.count / line.count))
    }
}
