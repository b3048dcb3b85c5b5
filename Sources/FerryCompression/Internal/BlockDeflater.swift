/// Compresses one ``DeflateBlock`` at a time into its output and sets its CRC-32. Each worker
/// thread owns one; a deflater is never used by two threads at once.
protocol BlockDeflater: AnyObject {
    func compress(_ block: DeflateBlock) throws
}

extension GzipSink.Configuration.Engine {
    /// Whether each block is a whole gzip member (libdeflate) rather than a piece of the one
    /// member the stream is (zlib).
    package var writesMembers: Bool { self == .libdeflate }

    /// Whether this engine can be used in this build.
    package var isAvailable: Bool {
        switch self {
        case .zlib: true
        case .libdeflate:
            #if os(Linux) && canImport(CLibDeflate)
            true
            #else
            false
            #endif
        }
    }

    /// The output buffer a block of up to `blockSize` bytes needs in the worst case.
    func outputCapacity(blockSize: Int) -> Int {
        switch self {
        case .zlib:
            // Plus the empty stored block of a sync flush and its partial byte.
            return Zlib.deflateBound(blockSize) + 16
        case .libdeflate:
            #if os(Linux) && canImport(CLibDeflate)
            return LibDeflateCompressor.bound(blockSize) + GzipFormat.headerSize + GzipFormat.trailerSize
            #else
            return 0
            #endif
        }
    }

    /// A new deflater at `level` for a worker.
    func makeDeflater(level: Int, name: String) throws(CompressionError) -> any BlockDeflater {
        switch self {
        case .zlib:
            return try ZlibBlockDeflater(level: level, name: name)
        case .libdeflate:
            #if os(Linux) && canImport(CLibDeflate)
            return try LibDeflateMemberDeflater(level: level, name: name)
            #else
            throw CompressionError(.invalidConfiguration, "expected zlib, found libdeflate, which this build lacks", source: name)
            #endif
        }
    }
}

#if os(Linux) && canImport(CLibDeflate)
/// Compresses each block into a gzip member of its own: Ferry's header, the block as one raw
/// deflate stream by libdeflate (``LibDeflateCompressor``, level for level), and the block's
/// CRC-32 and length.
final class LibDeflateMemberDeflater: BlockDeflater {
    private let compressor: LibDeflateCompressor
    private let header: [UInt8]

    init(level: Int, name: String) throws(CompressionError) {
        compressor = try LibDeflateCompressor(level: level, name: name)
        header = GzipFormat.header(level: level)
    }

    func compress(_ block: DeflateBlock) throws {
        let output = block.output
        let headerSize = GzipFormat.headerSize, trailerSize = GzipFormat.trailerSize
        header.withUnsafeBytes { output.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: headerSize) }
        let body = UnsafeMutableRawBufferPointer(rebasing: output[headerSize..<(output.count - trailerSize)])
        let count = try compressor.compress(block.bytes, into: body)
        block.crc = Zlib.crc32(0, block.bytes)
        let trailer = GzipFormat.trailer(crc: block.crc, length: UInt64(block.count))
        trailer.withUnsafeBytes {
            (output.baseAddress! + headerSize + count).copyMemory(from: $0.baseAddress!, byteCount: trailerSize)
        }
        block.outputCount = headerSize + count + trailerSize
    }
}
#endif

/// Compresses each block as pigz does, into a piece of one deflate stream: raw deflate primed
/// with the block's dictionary (``DeflateStream/setDictionary(_:)``) and ended with
/// `Z_SYNC_FLUSH` (byte-aligned, not final), the last block with `Z_FINISH`.
final class ZlibBlockDeflater: BlockDeflater {
    private let stream: DeflateStream
    private let name: String

    init(level: Int, name: String) throws(CompressionError) {
        stream = try DeflateStream(level: level, name: name)
        self.name = name
    }

    func compress(_ block: DeflateBlock) throws {
        try stream.reset()
        try stream.setDictionary(block.dictionary)
        let output = block.output
        var written = 0
        try stream.deflate(block.bytes, flush: block.isLast ? .finish : .sync) { piece in
            guard written + piece.count <= output.count else {
                throw CompressionError(
                    .zlibFailure, "expected deflate to write at most \(output.count) bytes for a block, found more", source: name
                )
            }
            (output.baseAddress! + written).copyMemory(from: piece.baseAddress!, byteCount: piece.count)
            written += piece.count
        }
        block.outputCount = written
        block.crc = Zlib.crc32(0, block.bytes)
    }
}
