// The only file in FerryCompression that calls zlib.
//
// Each z_stream lives on the heap (a stable address across calls, as zlib requires) and is owned
// by exactly one final class whose deinit calls deflateEnd/inflateEnd once. Every return code is
// checked here and turned into a ``CompressionError``.
import CFerrySystem
import CZlib

/// Checksums from zlib (CRC-32 folded by carry-less multiplication where the processor allows).
enum Zlib {
    /// Whether ``crc32(_:_:)`` folds with carry-less multiplication here (x86-64 with PCLMULQDQ).
    static let foldsCRC = CFerrySystem_hasCRC32Fold() != 0

    /// The CRC-32 of `bytes` continuing from `crc`, as `crc32_z` computes it: by carry-less
    /// multiplication where the processor has it (four to five times zlib's speed), the last
    /// bytes and short inputs by zlib.
    static func crc32(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        var crc = crc
        var start = 0
        if bytes.count >= 64 && foldsCRC {
            start = bytes.count & ~15
            crc = CFerrySystem_crc32Fold(crc, base, UInt(start))
            if start == bytes.count { return crc }
        }
        return zlibCRC32(crc, UnsafeRawBufferPointer(rebasing: bytes[start...]))
    }

    /// The CRC-32 of `bytes` continuing from `crc`, by zlib alone (`crc32_z`).
    static func zlibCRC32(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        let result = CZlib.crc32_z(
            UInt(crc), base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count)
        )
        return UInt32(truncatingIfNeeded: result)
    }

    /// The CRC-32 of A followed by B, from the CRC-32 of each and B's length (`crc32_combine`).
    static func crc32Combine(_ crcA: UInt32, _ crcB: UInt32, lengthB: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: ferry_crc32_combine(UInt(crcA), UInt(crcB), Int64(lengthB)))
    }

    /// The most bytes deflate writes for `count` input bytes at Ferry's settings, whatever the
    /// level (`compressBound`, which also counts a zlib wrapper: a bound for raw deflate too).
    static func deflateBound(_ count: Int) -> Int {
        Int(CZlib.compressBound(uLong(count)))
    }

    /// The message zlib left in the stream, if any.
    fileprivate static func message(_ stream: UnsafeMutablePointer<z_stream>) -> String? {
        stream.pointee.msg.map { String(cString: $0) }
    }

    /// Allocates a zeroed z_stream on the heap, initializes it with `initialize`, and returns it;
    /// frees it and throws when initialization fails.
    fileprivate static func makeStream(
        name: String,
        call: String,
        _ initialize: (UnsafeMutablePointer<z_stream>) -> Int32
    ) throws(CompressionError) -> UnsafeMutablePointer<z_stream> {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = initialize(stream)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw CompressionError(
                .zlibFailure, "expected \(call) to return Z_OK, found \(ZlibStatus(rawValue: status))",
                source: name, zlibStatus: ZlibStatus(rawValue: status)
            )
        }
        return stream
    }
}

/// Zlib deflate calls never take more than this many bytes at once (avail_in is 32 bits).
private let maximumPiece = 1 << 30

/// A raw deflate compressor (no zlib or gzip wrapper): one heap z_stream from `deflateInit2`,
/// freed with `deflateEnd` in deinit, and an owned output buffer.
final class DeflateStream {
    /// How a ``deflate(_:flush:to:)`` call ends.
    enum Flush {
        /// Compress; output may stay buffered inside zlib (`Z_NO_FLUSH`).
        case none
        /// Emit everything and align to a byte with an empty stored block (`Z_SYNC_FLUSH`).
        case sync
        /// Emit everything and end the deflate stream (`Z_FINISH`).
        case finish
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer
    private let name: String

    /// Creates a compressor at `level` (0–9), window 32 KiB, memLevel 8, default strategy.
    init(level: Int, name: String, outputCapacity: Int = 64 << 10) throws(CompressionError) {
        self.name = name
        stream = try Zlib.makeStream(name: name, call: "deflateInit2") {
            ferry_deflateInit2($0, Int32(level), -15, 8, Z_DEFAULT_STRATEGY)
        }
        output = .allocate(byteCount: outputCapacity, alignment: 16)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Starts a new deflate stream with the same settings (`deflateReset`).
    func reset() throws(CompressionError) {
        try check(deflateReset(stream), call: "deflateReset")
    }

    /// Primes the compressor with up to 32 KiB of preceding data (`deflateSetDictionary`);
    /// call right after ``reset()``. zlib copies the bytes.
    func setDictionary(_ bytes: UnsafeRawBufferPointer) throws(CompressionError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let status = deflateSetDictionary(
            stream, base.assumingMemoryBound(to: Bytef.self), UInt32(bytes.count)
        )
        try check(status, call: "deflateSetDictionary")
    }

    /// Compresses `input` (`deflate`), handing each piece of output to `consume` (the piece is
    /// borrowed: valid only during the call).
    func deflate(
        _ input: UnsafeRawBufferPointer,
        flush: Flush,
        to consume: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var rest = input
        repeat {
            let piece = min(rest.count, maximumPiece)
            let isLastPiece = piece == rest.count
            stream.pointee.next_in = rest.baseAddress.map {
                UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
            }
            stream.pointee.avail_in = UInt32(piece)
            let mode: Flush = isLastPiece ? flush : .none
            try run(mode, consume)
            rest = UnsafeRawBufferPointer(rebasing: rest[piece...])
        } while !rest.isEmpty
        stream.pointee.next_in = nil
    }

    private func run(_ mode: Flush, _ consume: (UnsafeRawBufferPointer) throws -> Void) throws {
        let flag: Int32 = switch mode {
        case .none: Z_NO_FLUSH
        case .sync: Z_SYNC_FLUSH
        case .finish: Z_FINISH
        }
        while true {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = UInt32(output.count)
            let status = CZlib.deflate(stream, flag)
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 {
                try consume(UnsafeRawBufferPointer(rebasing: output[..<produced]))
            }
            switch status {
            case Z_STREAM_END:
                return
            case Z_OK:
                // Output space was left over, so zlib has emitted all it will for this mode.
                if mode != .finish && stream.pointee.avail_out != 0 { return }
            case Z_BUF_ERROR where mode != .finish && stream.pointee.avail_in == 0:
                // Nothing left to do: the previous call filled the buffer exactly.
                return
            default:
                throw failure(status, call: "deflate")
            }
        }
    }

    private func check(_ status: Int32, call: String) throws(CompressionError) {
        if status != Z_OK { throw failure(status, call: call) }
    }

    private func failure(_ status: Int32, call: String) -> CompressionError {
        let detail = Zlib.message(stream).map { " (\($0))" } ?? ""
        return CompressionError(
            .zlibFailure,
            "expected \(call) to succeed, found \(ZlibStatus(rawValue: status))\(detail)",
            source: name, zlibStatus: ZlibStatus(rawValue: status)
        )
    }
}

/// A raw inflate decompressor (no zlib or gzip wrapper): one heap z_stream from `inflateInit2`,
/// freed with `inflateEnd` in deinit. Input and output buffers are borrowed per call.
final class InflateStream {
    /// What one ``inflate(from:into:)`` call did.
    struct Progress {
        /// Input bytes consumed.
        var consumed: Int
        /// Output bytes written.
        var produced: Int
        /// Whether the deflate stream ended (`Z_STREAM_END`).
        var isEnd: Bool
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let name: String

    /// Creates a decompressor with a 32 KiB window.
    init(name: String) throws(CompressionError) {
        self.name = name
        stream = try Zlib.makeStream(name: name, call: "inflateInit2") {
            ferry_inflateInit2($0, -15)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts a new deflate stream (`inflateReset`).
    func reset() throws(CompressionError) {
        let status = inflateReset(stream)
        guard status == Z_OK else {
            throw CompressionError(
                .zlibFailure, "expected inflateReset to return Z_OK, found \(ZlibStatus(rawValue: status))",
                source: name, zlibStatus: ZlibStatus(rawValue: status)
            )
        }
    }

    /// Decompresses from `input` straight into `output` (`inflate` with `Z_NO_FLUSH`).
    /// Neither buffer is kept after the call. Stops at the end of the deflate stream, so bytes
    /// after it (the gzip trailer) are left unconsumed. A `.corruptData` error's
    /// `compressedOffset` is relative to the start of `input`.
    func inflate(
        from input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(CompressionError) -> Progress {
        let inCount = min(input.count, maximumPiece)
        let outCount = min(output.count, maximumPiece)
        stream.pointee.next_in = input.baseAddress.map {
            UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
        }
        stream.pointee.avail_in = UInt32(inCount)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = UInt32(outCount)
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        let progress = Progress(
            consumed: inCount - Int(stream.pointee.avail_in),
            produced: outCount - Int(stream.pointee.avail_out),
            isEnd: status == Z_STREAM_END
        )
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        switch status {
        case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
            // Z_BUF_ERROR only means no progress was possible; the caller supplies more input.
            return progress
        case Z_DATA_ERROR:
            // The offset is relative to `input`; the caller knows where `input` starts.
            let detail = Zlib.message(stream) ?? "invalid deflate data"
            throw CompressionError(
                .corruptData, "expected valid deflate data, found \(detail)",
                source: name, compressedOffset: progress.consumed, zlibStatus: .dataError
            )
        default:
            let detail = Zlib.message(stream).map { " (\($0))" } ?? ""
            throw CompressionError(
                .zlibFailure,
                "expected inflate to succeed, found \(ZlibStatus(rawValue: status))\(detail)",
                source: name, zlibStatus: ZlibStatus(rawValue: status)
            )
        }
    }
}
