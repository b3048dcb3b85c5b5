import FerryIO

/// Detecting compressed input by its content, not its file name.
public enum Compression {
    /// The number of leading bytes ``detect(_:)`` needs to recognize every format.
    public static let detectionPrefixLength = 2

    /// The format whose magic bytes `prefix` starts with, or `nil` for anything else (including
    /// a prefix too short to tell). Pure Swift; no zlib call.
    public static func detect(_ prefix: [UInt8]) -> CompressionFormat? {
        if prefix.count >= 2 && prefix[0] == GzipFormat.magic.0 && prefix[1] == GzipFormat.magic.1 {
            return .gzip
        }
        return nil
    }

    /// Looks at the first bytes of `source` and returns a source of its decompressed bytes: a
    /// ``GzipSource`` when it starts with `1f 8b`, else the bytes unchanged.
    ///
    /// The returned source owns `source` (wrapped in a ``PeekableSource`` so the peeked bytes are
    /// read again); read only from the returned source afterwards.
    ///
    /// - Throws: what reading `source` throws, or ``CompressionError`` from creating the
    ///   ``GzipSource``.
    public static func openInput(
        _ source: any ByteSource,
        configuration: GzipSource.Configuration = GzipSource.Configuration()
    ) throws -> any ByteSource {
        let peekable = source as? PeekableSource ?? PeekableSource(source)
        let prefix = try peekable.peek(detectionPrefixLength)
        switch detect(prefix) {
        case .gzip:
            return try GzipSource(wrapping: peekable, configuration: configuration)
        case nil:
            return peekable
        }
    }
}
