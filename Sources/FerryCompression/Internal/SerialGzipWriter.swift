import FerryIO

/// Writes one gzip member on the caller's thread: one raw deflate stream, Ferry's header, and a
/// CRC-32 computed over the input as it passes. Output goes to `sink` in pieces of up to 64 KiB.
final class SerialGzipWriter {
    private let sink: any ByteSink
    private let level: Int
    private let deflater: DeflateStream
    private var crc: UInt32 = 0
    private var length: UInt64 = 0
    private var isHeaderWritten = false

    init(sink: any ByteSink, level: Int) throws(CompressionError) {
        self.sink = sink
        self.level = level
        deflater = try DeflateStream(level: level, name: sink.name)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        try writeHeaderIfNeeded()
        crc = Zlib.crc32(crc, bytes)
        length += UInt64(bytes.count)
        try deflater.deflate(bytes, flush: .none) { try sink.write($0) }
    }

    func finish() throws {
        try writeHeaderIfNeeded()
        try deflater.deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish) {
            try sink.write($0)
        }
        try sink.write(GzipFormat.trailer(crc: crc, length: length))
    }

    private func writeHeaderIfNeeded() throws {
        guard !isHeaderWritten else { return }
        isHeaderWritten = true
        try sink.write(GzipFormat.header(level: level))
    }
}
