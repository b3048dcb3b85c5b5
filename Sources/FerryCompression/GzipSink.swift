import FerryIO

/// A sink that gzip-compresses everything written to it into another sink: a standard RFC 1952
/// stream that any `gunzip` reads.
///
/// Input is cut into blocks of ``Configuration/blockSize`` bytes, compressed on
/// ``Configuration/threads`` worker threads (with one thread, on the caller's) and written in
/// order; the same input and settings give the same bytes whatever the thread count (see
/// `Docs/Compression.md`).
///
/// - With libdeflate (Linux, the default there), each block is a gzip member of its own:
///   header, the block as one raw deflate stream (`libdeflate_deflate_compress`, at the same
///   level), its CRC-32 and length. The stream is these members one after the other (a
///   multi-member gzip file, as `cat a.gz b.gz` makes), which `gzip -d`, `pigz -d`, `zcat`,
///   Python's `gzip` and ``GzipSource`` read as one content.
/// - With zlib (elsewhere), the stream is one member compressed as pigz does: each block is
///   primed with the 32 KiB before it (`deflateSetDictionary`), ended with `Z_SYNC_FLUSH` (the
///   last with `Z_FINISH`), and the CRC-32s are joined with `crc32_combine`.
///
/// Headers have no file name and MTIME 0, so output is reproducible.
///
/// Memory: the sink owns its compressors (freed when it is released) and at most
/// 2 × `threads` + 1 blocks with their output buffers, reused from block to block. Bytes passed
/// to ``write(_:)`` are borrowed only for the call. The wrapped sink is written only from the
/// thread that calls ``write(_:)`` and ``commit()``.
public final class GzipSink: ByteSink {
    /// How to compress.
    public struct Configuration: Sendable, Equatable {
        /// The smallest block size accepted: one deflate window (32 KiB).
        public static let minimumBlockSize = 32 << 10

        /// The library that deflates, and so the layout of the stream.
        package enum Engine: Sendable, Hashable {
            /// libdeflate, a gzip member per block (Linux).
            case libdeflate
            /// zlib, one member of blocks joined by sync flushes.
            case zlib

            /// libdeflate where this build has it (Linux), else zlib.
            package static var preferred: Engine {
                #if os(Linux) && canImport(CLibDeflate)
                .libdeflate
                #else
                .zlib
                #endif
            }
        }

        /// The compression level, 0 (stored) to 9 (smallest); 6 by default, like gzip. With
        /// libdeflate, level N is libdeflate's level N, which on NDJSON is both faster and smaller
        /// than zlib's level N (level 6: about 1.8 times as fast, 0.4% smaller; see
        /// `Docs/Compression.md`).
        public var level: Int
        /// Compression threads; 1 compresses on the caller's thread. Defaults to the processors
        /// this process may run on (``Processors/available``); more than
        /// ``Processors/maximumThreads`` are clamped to it. The output does not depend on it.
        public var threads: Int
        /// Bytes per block; 1 MiB by default, at least ``minimumBlockSize``. Each block is
        /// compressed on its own (with libdeflate, as a member of its own), so smaller blocks
        /// compress a little worse; up to 2 × `threads` + 1 blocks and their output are in memory
        /// at once.
        public var blockSize: Int
        /// The library that deflates; ``Engine/preferred`` by default.
        package var engine: Engine = .preferred

        /// Creates a configuration; `threads: nil` means one thread per available processor.
        public init(level: Int = 6, threads: Int? = nil, blockSize: Int = 1 << 20) {
            self.level = level
            self.threads = threads ?? Processors.available
            self.blockSize = blockSize
        }

        /// Creates a configuration that deflates with `engine` (tests, and a stream that must be
        /// zlib's: one member, densest on runs of one byte).
        package init(level: Int = 6, threads: Int? = nil, blockSize: Int = 1 << 20, engine: Engine) {
            self.init(level: level, threads: threads, blockSize: blockSize)
            self.engine = engine
        }
    }

    private enum State {
        case open, committed, failed
    }

    /// The wrapped sink's name followed by ` (gzip)`.
    public let name: String
    /// The settings this sink compresses with.
    public let configuration: Configuration
    private let sink: any ByteSink
    private let writer: GzipBlockWriter
    private var state = State.open

    /// Creates a sink that compresses into `sink`, which it commits on ``commit()``.
    ///
    /// - Throws: ``CompressionError`` with code `.invalidConfiguration` for a level outside 0–9,
    ///   fewer than one thread, or a block size below ``Configuration/minimumBlockSize``; or
    ///   `.zlibFailure` / `.libdeflateFailure` when a compressor cannot be made.
    public init(wrapping sink: any ByteSink, configuration: Configuration = Configuration()) throws {
        name = sink.name + " (gzip)"
        self.sink = sink
        var configuration = configuration
        configuration.threads = min(configuration.threads, Processors.maximumThreads)
        self.configuration = configuration
        func invalid(_ message: String) -> CompressionError {
            CompressionError(.invalidConfiguration, message, source: sink.name)
        }
        guard (0...9).contains(configuration.level) else {
            throw invalid("expected a compression level from 0 to 9, found \(configuration.level)")
        }
        guard configuration.threads >= 1 else {
            throw invalid("expected at least 1 compression thread, found \(configuration.threads)")
        }
        guard configuration.blockSize >= Configuration.minimumBlockSize,
              configuration.blockSize <= 1 << 30 else {
            throw invalid(
                "expected a block size from \(Configuration.minimumBlockSize) to \(1 << 30) bytes, "
                    + "found \(configuration.blockSize)"
            )
        }
        guard configuration.engine.isAvailable else {
            throw invalid("expected zlib, found \(configuration.engine), which this build lacks")
        }
        writer = try GzipBlockWriter(sink: sink, level: configuration.level, threads: configuration.threads,
                                     blockSize: configuration.blockSize, engine: configuration.engine)
    }

    /// Compresses `bytes` (borrowed for the call). Output reaches the wrapped sink in pieces.
    ///
    /// - Throws: ``CompressionError`` after ``commit()`` or an earlier failure, zlib or libdeflate
    ///   failures, and whatever the wrapped sink throws.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkOpen()
        do {
            try writer.write(bytes)
        } catch {
            state = .failed
            throw error
        }
    }

    /// Compresses the last block, ends the stream (with zlib, `Z_FINISH` and the CRC-32/ISIZE
    /// trailer) and commits the wrapped sink. Calling it again does nothing.
    public func commit() throws {
        if state == .committed { return }
        try checkOpen()
        do {
            try writer.finish()
            try sink.commit()
            state = .committed
        } catch {
            state = .failed
            throw error
        }
    }

    private func checkOpen() throws(CompressionError) {
        switch state {
        case .open:
            return
        case .committed:
            throw CompressionError(
                .invalidState, "expected an open gzip stream, found one already committed",
                source: sink.name
            )
        case .failed:
            throw CompressionError(
                .invalidState, "expected an open gzip stream, found one that failed earlier",
                source: sink.name
            )
        }
    }
}
