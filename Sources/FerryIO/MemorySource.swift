/// A byte source over bytes in memory, optionally handing them out in fixed-size pieces
/// (tests use this to feed readers at every chunk boundary).
public final class MemorySource: ByteSource {
    public let name: String
    private let bytes: [UInt8]
    private var offset = 0
    private let maximumChunk: Int

    /// Creates a source over `bytes`, returning at most `chunkSize` bytes per read.
    public init(_ bytes: [UInt8], name: String = "<memory>", chunkSize: Int = .max) {
        precondition(chunkSize > 0)
        self.bytes = bytes
        self.name = name
        self.maximumChunk = chunkSize
    }

    /// Creates a source over the UTF-8 bytes of `text`.
    public convenience init(_ text: String, name: String = "<memory>", chunkSize: Int = .max) {
        self.init(Array(text.utf8), name: name, chunkSize: chunkSize)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, maximumChunk, bytes.count - offset)
        if n <= 0 { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}

/// A byte sink that collects everything in memory.
public final class MemorySink: ByteSink {
    public let name: String
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether ``commit()`` was called.
    public private(set) var isCommitted = false

    public init(name: String = "<memory>") {
        self.name = name
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        self.bytes.append(contentsOf: bytes)
    }

    public func commit() throws {
        isCommitted = true
    }

    /// The bytes as UTF-8 text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
