import FerryCompression
import FerryIO

/// Recognizing a Ferry archive (any tar stream, gzip-compressed or not) by its content,
/// whatever the file is named.
public enum ArchiveDetection {
    /// The number of decompressed leading bytes ``isArchive(prefix:)`` looks at: one tar header.
    public static let prefixLength = 512

    /// An input after detection: its decompressed bytes, none consumed, and what they are.
    public struct Input {
        /// The decompressed bytes (a `PeekableSource` that hands the peeked bytes out again).
        public let source: any ByteSource
        /// Whether the bytes start with a tar header.
        public let isArchive: Bool
    }

    /// Whether `prefix` (decompressed) starts with a ustar header: POSIX `ustar\0` or GNU
    /// `ustar  ` magic at byte 257 and a valid header checksum. Pure Swift.
    public static func isArchive(prefix: [UInt8]) -> Bool {
        guard prefix.count >= prefixLength else { return false }
        return prefix.withUnsafeBytes { TarHeader.looksLikeHeader($0) }
    }

    /// Decompresses `source` when it starts with gzip's magic bytes (`Compression.openInput`),
    /// peeks at the first 512 decompressed bytes and says whether they are a tar header. Read only
    /// from the returned ``Input/source`` afterwards; pass it to ``ArchiveReader`` or to a records
    /// reader.
    ///
    /// - Throws: what reading or decompressing `source` throws (`CompressionError`, `FerryIOError`).
    public static func openInput(_ source: any ByteSource,
                                 configuration: GzipSource.Configuration = GzipSource.Configuration()) throws -> Input {
        let decompressed = try Compression.openInput(source, configuration: configuration)
        let peekable = decompressed as? PeekableSource ?? PeekableSource(decompressed)
        let prefix = try peekable.peek(prefixLength)
        return Input(source: peekable, isArchive: isArchive(prefix: prefix))
    }
}
