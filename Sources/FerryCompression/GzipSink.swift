import FerryIO

/// A sink that gzip-compresses everything written to it into another sink: one standard
/// RFC 1952 member that any `gunzip` reads.
///
/// With one thread it runs a single raw deflate stream (`deflateInit2`, `deflate`) on the
/// caller's thread. With more, it compresses blocks in parallel as pigz does (see
/// `Docs/Compression.md`): each block is primed with the previous 32 KiB
/// (`deflateSetDictionary`), ended with `Z_SYNC_FLUSH`, and the CRC-32s are joined with
/// `crc32_combine`; a bounded number of blocks is in flight. The header has no file name and
/// MTIME 0, so the same input and settings give the same bytes.
///
/// Memory: the sink owns its z_streams (freed with `deflateEnd` when it is released) and, with
/// threads, copies of the blocks in flight (at most 2 × threads blocks). Bytes passed to
/// ``write(_:)`` are borrowed only for the call. The wrapped sink is written only from the
/// thread that calls ``write(_:)`` and ``commit()``.
public final class GzipSink: ByteSink {
    /// How to compress.
    public struct Configuration: Sendable, Equatable {
        /// The smallest block size the parallel scheme accepts: one deflate window (32 KiB).
        public static let minimumBlockSize = 32 << 10

        /// The zlib compression level, 0 (store) to 9 (smallest); 6 by default, like gzip.
        public var level: Int
        /// Compression threads; 1 compresses on the caller's thread. Defaults to the processors
        /// this process may run on (``Processors/available``); more than
        /// ``Processors/maximumThreads`` are clamped to it.
        public var threads: Int
        /// Bytes per independently compressed block when `threads > 1`; 1 MiB by default (pigz
        /// uses 128 KiB: larger blocks spend less on priming each block's dictionary and on sync
        /// markers; see `Docs/Compression.md`). At least ``minimumBlockSize``. Up to
        /// 2 × `threads` blocks and their output are in memory at once.
        public var blockSize: Int

        /// Creates a configuration; `threads: nil` means one thread per available processor.
        public init(level: Int = 6, threads: Int? = nil, blockSize: Int = 1 << 20) {
            self.level = level
            self.threads = threads ?? Processors.available
            self.blockSize = blockSize
        }
    }

    private enum Writer {
        case serial(SerialGzipWriter)
        case parallel(ParallelGzipWriter)
    }

    private enum State {
        case open, committed, failed
    }

    /// The wrapped sink's name followed by ` (gzip)`.
    public let name: String
    /// The settings this sink compresses with.
    public let configuration: Configuration
    private let sink: any ByteSink
    private let writer: Writer
    private var state = State.open

    /// Creates a sink that compresses into `sink`, which it commits on ``commit()``.
    ///
    /// - Throws: ``CompressionError`` with code `.invalidConfiguration` for a level outside 0–9,
    ///   fewer than one thread, or a block size below ``Configuration/minimumBlockSize``; or
    ///   `.zlibFailure` when `deflateInit2` fails.
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
        if configuration.threads == 1 {
            writer = .serial(try SerialGzipWriter(sink: sink, level: configuration.level))
        } else {
            writer = .parallel(ParallelGzipWriter(
                sink: sink, level: configuration.level,
                threads: configuration.threads, blockSize: configuration.blockSize
            ))
        }
    }

    /// Compresses `bytes` (borrowed for the call). Output reaches the wrapped sink in pieces.
    ///
    /// - Throws: ``CompressionError`` after ``commit()`` or an earlier failure, zlib failures, and
    ///   whatever the wrapped sink throws.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkOpen()
        do {
            switch writer {
            case .serial(let writer): try writer.write(bytes)
            case .parallel(let writer): try writer.write(bytes)
            }
        } catch {
            state = .failed
            throw error
        }
    }

    /// Ends the gzip member (`deflate` with `Z_FINISH`, then the CRC-32/ISIZE trailer) and commits
    /// the wrapped sink. Calling it again does nothing.
    public func commit() throws {
        if state == .committed { return }
        try checkOpen()
        do {
            switch writer {
            case .serial(let writer): try writer.finish()
            case .parallel(let writer): try writer.finish()
            }
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
