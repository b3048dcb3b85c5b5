import FerryIO
import FerryInternals

/// A source that decompresses gzip read from another source.
///
/// Reads every member of a multi-member stream (concatenated `.gz` files, as `gzip -d` does),
/// checks each member's CRC-32 and ISIZE, and rejects bad headers, truncated input and trailing
/// bytes that are not another member, with the member index and compressed byte offset. Limits in
/// ``Configuration`` stop decompression bombs.
///
/// zlib: raw `inflate` (`inflateInit2` with window bits -15) decompresses straight into the
/// caller's buffer; the gzip header and trailer are parsed here and the CRC-32 is computed with
/// `crc32_z` over each piece of output. Memory: the source owns one z_stream (freed with
/// `inflateEnd` when it is released) and one input buffer of ``Configuration/inputBufferSize``
/// bytes; the buffer passed to ``read(into:)`` is borrowed only for the call.
public final class GzipSource: ByteSource {
    /// Limits and buffer sizes.
    public struct Configuration: Sendable, Equatable {
        /// Decompressed bytes allowed in total (all members), or `nil` for no limit; 64 GiB by default.
        public var maximumOutputBytes: Int?
        /// Decompressed bytes allowed per compressed byte read so far, or `nil` for no limit;
        /// 1000 by default (deflate cannot exceed about 1032:1, reached only by runs such as zeros).
        public var maximumRatio: Int?
        /// Output up to this many bytes is never rejected for its ratio; 1 MiB by default.
        public var ratioGraceBytes: Int
        /// Bytes read from the wrapped source at a time; 256 KiB by default, at least 1 KiB.
        public var inputBufferSize: Int

        /// Creates a configuration.
        public init(
            maximumOutputBytes: Int? = 64 << 30,
            maximumRatio: Int? = 1000,
            ratioGraceBytes: Int = 1 << 20,
            inputBufferSize: Int = 256 << 10
        ) {
            self.maximumOutputBytes = maximumOutputBytes
            self.maximumRatio = maximumRatio
            self.ratioGraceBytes = ratioGraceBytes
            self.inputBufferSize = inputBufferSize
        }

        /// No output or ratio limit, for trusted input.
        public static var unlimited: Configuration {
            Configuration(maximumOutputBytes: nil, maximumRatio: nil)
        }
    }

    private enum State {
        case header, body, trailer, finished
    }

    /// The wrapped source's name followed by ` (gzip)`.
    public let name: String
    /// The limits this source enforces.
    public let configuration: Configuration
    private let source: any ByteSource
    private let inflater: InflateStream
    private let input: InputBuffer
    private var state = State.header
    private var failure: (any Error)?
    private var memberIndex = 0
    private var memberCRC: UInt32 = 0
    private var memberLength: UInt32 = 0
    private var totalOutput = 0

    /// Creates a source that decompresses `source`.
    ///
    /// - Throws: ``CompressionError`` with code `.invalidConfiguration` for negative or zero
    ///   limits or an input buffer below 1 KiB, or `.zlibFailure` when `inflateInit2` fails.
    public init(wrapping source: any ByteSource, configuration: Configuration = Configuration()) throws {
        func invalid(_ message: String) -> CompressionError {
            CompressionError(.invalidConfiguration, message, source: source.name)
        }
        if let limit = configuration.maximumOutputBytes, limit < 0 {
            throw invalid("expected maximumOutputBytes of 0 or more, found \(limit)")
        }
        if let ratio = configuration.maximumRatio, ratio < 1 {
            throw invalid("expected maximumRatio of 1 or more, found \(ratio)")
        }
        guard configuration.inputBufferSize >= 1024 else {
            throw invalid("expected inputBufferSize of at least 1024, found \(configuration.inputBufferSize)")
        }
        name = source.name + " (gzip)"
        self.source = source
        self.configuration = configuration
        inflater = try InflateStream(name: source.name)
        input = InputBuffer(capacity: configuration.inputBufferSize)
    }

    /// Decompresses up to `buffer.count` bytes into `buffer` (`inflate` writes there directly)
    /// and returns how many; `0` at the end of the last member.
    ///
    /// - Throws: ``CompressionError`` for bad, truncated or corrupt input and exceeded limits
    ///   (after which every read throws the same error), and whatever the wrapped source throws.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let failure { throw failure }
        guard buffer.count > 0 else { return 0 }
        do {
            return try decompress(into: buffer)
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: - Members

    private func decompress(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            switch state {
            case .finished:
                return 0
            case .header:
                guard try readHeader() else {
                    state = .finished
                    return 0
                }
                try inflater.reset()
                memberCRC = 0
                memberLength = 0
                state = .body
            case .body:
                // Inflate first: zlib may still hold output from input it has already consumed.
                let before = input.offset
                let progress: InflateStream.Progress
                do {
                    progress = try inflater.inflate(from: input.available, into: buffer)
                } catch var error {
                    error.compressedOffset = before + (error.compressedOffset ?? 0)
                    error.memberIndex = memberIndex
                    throw error
                }
                input.consume(progress.consumed)
                if progress.isEnd { state = .trailer }
                if progress.produced > 0 {
                    let output = UnsafeRawBufferPointer(rebasing: buffer[..<progress.produced])
                    memberCRC = Zlib.crc32(memberCRC, output)
                    memberLength &+= UInt32(truncatingIfNeeded: progress.produced)
                    totalOutput += progress.produced
                    try checkLimits()
                    return progress.produced
                }
                if !progress.isEnd, try !refill() {
                    throw error(.truncated, "expected more deflate data, found the end of the input")
                }
            case .trailer:
                try readTrailer()
                memberIndex += 1
                state = .header
            }
        }
    }

    /// Parses a member header; returns `false` at a clean end of input after a member.
    private func readHeader() throws -> Bool {
        let start = input.offset
        if memberIndex > 0 {
            guard try ensure(1) else { return false }
            let hasTwo = try ensure(2)
            let head = input.available.prefix(2)
            if head.first != GzipFormat.magic.0 || (hasTwo && head.last != GzipFormat.magic.1) {
                let shown = Hex.string(input.available.prefix(4), separator: " ")
                throw error(
                    .trailingGarbage,
                    "expected another gzip member (1f 8b) or the end of the input, found \(shown)",
                    at: start
                )
            }
        }
        guard try ensure(10) else {
            let count = input.available.count
            if count == 0 {
                throw error(.truncated, "expected a gzip header, found an empty input", at: start)
            }
            if input.available.first != GzipFormat.magic.0 {
                throw error(
                    .badHeader, "expected gzip magic bytes 1f 8b, found \(Hex.string(input.available.prefix(2), separator: " "))",
                    at: start
                )
            }
            throw error(.truncated, "expected a 10-byte gzip header, found \(count) bytes", at: start)
        }
        let fixed = UnsafeRawBufferPointer(rebasing: input.available[..<10])
        guard fixed[0] == GzipFormat.magic.0, fixed[1] == GzipFormat.magic.1 else {
            throw error(
                .badHeader, "expected gzip magic bytes 1f 8b, found \(Hex.string(fixed[..<2], separator: " "))", at: start
            )
        }
        guard fixed[2] == GzipFormat.methodDeflate else {
            throw error(
                .badHeader, "expected compression method 8 (deflate), found \(fixed[2])", at: start + 2
            )
        }
        let flags = fixed[3]
        guard flags & GzipFormat.Flag.reserved == 0 else {
            throw error(
                .badHeader, "expected reserved header flag bits to be 0, found flags \(Hex.string([flags], separator: " "))",
                at: start + 3
            )
        }
        var headerCRC = Zlib.crc32(0, fixed)
        input.consume(10)
        if flags & GzipFormat.Flag.extra != 0 {
            guard try ensure(2) else {
                throw error(.truncated, "expected the 2-byte length of the header's extra field, found the end of the input")
            }
            let lengthBytes = UnsafeRawBufferPointer(rebasing: input.available[..<2])
            let extraLength = Int(lengthBytes[0]) | Int(lengthBytes[1]) << 8
            headerCRC = Zlib.crc32(headerCRC, lengthBytes)
            input.consume(2)
            try skip(extraLength, crc: &headerCRC, field: "extra field")
        }
        if flags & GzipFormat.Flag.name != 0 {
            try skipZeroTerminated(crc: &headerCRC, field: "file name")
        }
        if flags & GzipFormat.Flag.comment != 0 {
            try skipZeroTerminated(crc: &headerCRC, field: "comment")
        }
        if flags & GzipFormat.Flag.headerCRC != 0 {
            guard try ensure(2) else {
                throw error(.truncated, "expected the 2-byte header CRC, found the end of the input")
            }
            let stored = UInt16(input.available[0]) | UInt16(input.available[1]) << 8
            let computed = UInt16(truncatingIfNeeded: headerCRC)
            guard stored == computed else {
                throw error(.badHeader, "expected header CRC \(Hex.prefixed(computed)), found \(Hex.prefixed(stored))")
            }
            input.consume(2)
        }
        return true
    }

    private func readTrailer() throws {
        guard try ensure(8) else {
            throw error(
                .truncated,
                "expected an 8-byte trailer (CRC-32 and length), found \(input.available.count) bytes"
            )
        }
        let trailer = input.available
        func word(_ at: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(trailer[at + $1]) << (8 * UInt32($1)) }
        }
        let storedCRC = word(0)
        let storedLength = word(4)
        guard storedCRC == memberCRC else {
            throw error(.checksumMismatch, "expected CRC-32 \(Hex.prefixed(storedCRC)) from the trailer, found \(Hex.prefixed(memberCRC)) in the data")
        }
        guard storedLength == memberLength else {
            throw error(
                .lengthMismatch,
                "expected \(storedLength) bytes (modulo 2^32) from the trailer, found \(memberLength)",
                at: input.offset + 4
            )
        }
        input.consume(8)
    }

    private func checkLimits() throws {
        if let limit = configuration.maximumOutputBytes, totalOutput > limit {
            throw error(
                .outputLimitExceeded,
                "expected at most \(limit) decompressed bytes (GzipSource.Configuration.maximumOutputBytes), "
                    + "found more"
            )
        }
        if let ratio = configuration.maximumRatio, totalOutput > configuration.ratioGraceBytes {
            let compressed = max(1, input.offset)
            let (allowed, overflow) = compressed.multipliedReportingOverflow(by: ratio)
            if !overflow && totalOutput > allowed {
                throw error(
                    .ratioLimitExceeded,
                    "expected at most \(ratio) decompressed bytes per compressed byte "
                        + "(GzipSource.Configuration.maximumRatio), found \(totalOutput) bytes from \(compressed)"
                )
            }
        }
    }

    // MARK: - Input

    /// Reads more input; `false` at the end of the wrapped source.
    private func refill() throws -> Bool {
        try input.fill { try source.read(into: $0) }
    }

    /// Makes `count` bytes available; `false` if the input ends first.
    private func ensure(_ count: Int) throws -> Bool {
        while input.available.count < count {
            guard try refill() else { return false }
        }
        return true
    }

    private func skip(_ count: Int, crc: inout UInt32, field: String) throws {
        var remaining = count
        while remaining > 0 {
            if input.isEmpty, try !refill() {
                throw error(.truncated, "expected \(remaining) more bytes of the header's \(field), found the end of the input")
            }
            let piece = UnsafeRawBufferPointer(rebasing: input.available.prefix(remaining))
            crc = Zlib.crc32(crc, piece)
            input.consume(piece.count)
            remaining -= piece.count
        }
    }

    private func skipZeroTerminated(crc: inout UInt32, field: String) throws {
        while true {
            if input.isEmpty, try !refill() {
                throw error(.truncated, "expected the header's \(field) to end with a zero byte, found the end of the input")
            }
            let available = input.available
            let end = available.firstIndex(of: 0).map { $0 + 1 } ?? available.count
            crc = Zlib.crc32(crc, UnsafeRawBufferPointer(rebasing: available[..<end]))
            input.consume(end)
            if available[end - 1] == 0 { return }
        }
    }

    private func error(_ code: CompressionError.Code, _ message: String, at offset: Int? = nil) -> CompressionError {
        CompressionError(
            code, message, source: source.name,
            compressedOffset: offset ?? input.offset, memberIndex: memberIndex
        )
    }

}
