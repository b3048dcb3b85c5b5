import FerryCompression
import FerryIO

/// Recognizing an archive (any tar stream, gzip-compressed or not, with or without a Ferry
/// manifest) by its content, whatever the file is named.
public enum ArchiveDetection {
    /// The number of decompressed leading bytes ``isArchive(prefix:)`` looks at: a tar header, or
    /// the two zero blocks of an empty archive.
    public static let prefixLength = 1024

    /// An input after detection: its decompressed bytes, none consumed, and what they are.
    public struct Input {
        /// The decompressed bytes (a `PeekableSource` that hands the peeked bytes out again).
        public let source: any ByteSource
        /// Whether the bytes start with a tar header.
        public let isArchive: Bool
    }

    /// Whether `prefix` (decompressed) starts with a ustar header — POSIX `ustar\0` or GNU
    /// `ustar  ` magic at byte 257 and a valid header checksum — or with the two zero blocks that
    /// are all of an empty archive (`tar czf empty.tar.gz -T /dev/null`). Pure Swift.
    public static func isArchive(prefix: [UInt8]) -> Bool {
        let block = TarHeader.blockSize
        guard prefix.count >= block else { return false }
        if prefix.count >= 2 * block && !prefix[..<(2 * block)].contains(where: { $0 != 0 }) { return true }
        return prefix.withUnsafeBytes { TarHeader.looksLikeHeader(UnsafeRawBufferPointer(rebasing: $0[..<block])) }
    }

    /// Decompresses `source` when it starts with gzip's magic bytes (`Compression.openInput`),
    /// peeks at the first 1024 decompressed bytes and says whether they start an archive. Read only
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
