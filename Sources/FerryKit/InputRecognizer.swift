import FerryArchive
import FerryCompression
import FerryIO
import FerryJSON
import FerryStore

/// Opens inputs by path (`-` is standard input) and recognizes what they hold, in one place:
/// every input's first bytes are peeked once, here, and every command reads what this says.
///
/// gzip is recognized by its magic bytes and an archive by its first tar header, whatever the
/// name; a store by SQLite's header and Ferry's `application_id`; otherwise the declared format
/// (``Configuration/format``, `--from`), or else the first non-blank byte, decides: `<` is XML,
/// anything else NDJSON. An empty input whose name or declared format promises content (a gzip
/// stream, an archive, XML, a store) is a truncated download, refused rather than read as no
/// records.
///
/// ```swift
/// let recognizer = InputRecognizer()
/// switch try recognizer.open("export.ndjson.gz") {
/// case .ndjson(_, let bytes): …
/// case .store(_, let reader): …
/// default: …
/// }
/// ```
public struct InputRecognizer: Sendable {
    /// How inputs are opened.
    public struct Configuration: Sendable {
        /// The format when the content should not decide (`--from`); `nil` lets it decide.
        public var format: RecordFormat?
        /// The longest line (and pretty-printed document read from a stream) accepted.
        public var maximumLineBytes: Int

        /// A configuration; by default the content decides and lines may be 64 MiB.
        public init(format: RecordFormat? = nil, maximumLineBytes: Int = 64 << 20) {
            self.format = format
            self.maximumLineBytes = maximumLineBytes
        }
    }

    /// How inputs are opened.
    public var configuration: Configuration

    /// A recognizer opening inputs as `configuration` says.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// What an input is opened for, which decides how far it is recognized.
    enum Purpose {
        /// Records read by a pipeline: small gzip documents are handed to decoding threads whole.
        case pipeline
        /// Records read one at a time by a ``RecordReader``.
        case reader
        /// A change history: a file's bytes (any format: the change-log reader decides) or an archive.
        case history
    }

    // MARK: Opening

    /// Opens `path` for a record pipeline and recognizes it (``OpenedInput``).
    ///
    /// - Throws: ``FerryError``: the file cannot be opened; it is empty but promised content; it
    ///   is a SQLite database of another program, or not a store though declared one; a store
    ///   met as a stream (standard input, a compressed file).
    public func open(_ path: String) throws(FerryError) -> OpenedInput {
        try FerryError.catching { try recognize(path, for: .pipeline) }
    }

    /// Opens `path` (`-` is standard input) for reading its bytes, as every command that reads
    /// does: an empty input whose name or declared format promises content
    /// (``promisedContent(of:declared:)``, or `expecting` when the caller reads only some
    /// formats) is refused.
    public func openFile(_ path: String, expecting: String? = nil) throws(FerryError) -> PeekableSource {
        try FerryError.catching { try openBytes(path, declared: configuration.format, expecting: expecting) }
    }

    /// What `path`'s name or declared format promises its bytes are, when that cannot be
    /// nothing: a gzip stream (a name ending in `.gz` or `.tgz`), else the format's
    /// ``RecordFormat/Entry/promisedContent``. `nil` for NDJSON and an unknown name: empty
    /// NDJSON is valid.
    public static func promisedContent(of path: String, declared: RecordFormat?) -> String? {
        let lower = path.lowercased()
        if path != "-" && (lower.hasSuffix(".gz") || lower.hasSuffix(".tgz")) { return "a gzip stream" }
        return (declared ?? (path == "-" ? nil : RecordFormat(path: path)))?.entry.promisedContent
    }

    /// The data error for a store met as a stream (standard input, a compressed file), found by
    /// its SQLite header or declared: SQLite reads a store from its file.
    public static func storeOnStream(_ path: String) -> FerryError {
        .data("\(path): a store is read from its file, not from a stream (standard input or a compressed file): "
              + "give the store's path")
    }

    // MARK: The one recognition

    /// Opens and recognizes `path` for `purpose`: the one place an input's first bytes are
    /// looked at.
    func recognize(_ path: String, for purpose: Purpose) throws -> OpenedInput {
        let declared = purpose == .history ? nil : configuration.format
        // One open per input (a folder may hold thousands): the store check looks at the bytes
        // the format detection peeks at anyway.
        let peekable = try openBytes(path, declared: declared)
        if purpose != .history && path != "-" {
            let kind = StoreFile.kind(ofPrefix: try peekable.peek(100))
            switch kind {
            case .store:
                return .store(path: path, reader: try StoreRecordReader(path: path))
            case .otherSQLite:
                throw FerryError.data("\(path): " + StoreFile.notAStoreMessage(kind))
            default:
                if declared == .store { throw FerryError.data("\(path): " + StoreFile.notAStoreMessage(kind)) }
            }
        }
        let input: ArchiveDetection.Input
        let format: RecordFormat
        do {
            input = try ArchiveDetection.openInput(peekable)
            format = purpose == .history ? (input.isArchive ? .archive : .ndjson)
                : try Self.format(of: input.source, isArchive: input.isArchive, declared: declared)
        } catch is CompressionError where purpose == .pipeline && path != "-" && (declared == nil || declared == .ndjson)
                    && (peekable.sizeHint ?? .max) <= Self.largestWholeGzip {
            // A small gzip file whose first bytes do not inflate (a truncated download of a saved
            // response): handed to the workers whole, like the others, whose reading fails with
            // this error in its place in the input order, where `--on-error skip` skips the file.
            return .ndjson(path: path, source: GzipFile(path: path))
        }
        switch format {
        case .store: throw Self.storeOnStream(path)
        case .archive: return .archive(path: path, source: input.source)
        case .xml: return .xml(path: path, source: input.source)
        case .ndjson:
            guard purpose != .reader else { return .ndjson(path: path, source: input.source) }
            return .ndjson(path: path, source: try Self.wholeIfSmallGzipDocument(input.source, path: path, size: peekable.sizeHint))
        }
    }

    /// Opens the bytes of `path`, refusing an empty input that promised content.
    private func openBytes(_ path: String, declared: RecordFormat?, expecting: String? = nil) throws -> PeekableSource {
        let source = PeekableSource(try InputFile(path: path))
        let promised = Self.promisedContent(of: path, declared: declared)
        if let expected = promised == "a gzip stream" ? promised : expecting ?? promised, try source.peek(1).isEmpty {
            throw FerryError.data("\(path): expected \(expected), found an empty \(path == "-" ? "input" : "file")")
        }
        return source
    }

    /// The format of opened bytes: an archive when they are one, else `declared` when given,
    /// else what the first non-blank byte (after a UTF-8 byte order mark) says: `<` is XML.
    /// SQLite's header means a store (which callers refuse on a stream).
    private static func format(of source: any ByteSource, isArchive: Bool, declared: RecordFormat?) throws -> RecordFormat {
        if isArchive { return declared ?? .archive }
        if let declared { return declared }
        guard let peekable = source as? PeekableSource else { return .ndjson }
        let prefix = try peekable.peek(4096)
        if StoreFile.isSQLite(prefix: prefix) { return .store }
        var index = 0
        if prefix.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        while index < prefix.count, [0x20, 0x09, 0x0A, 0x0D].contains(prefix[index]) { index += 1 }
        return index < prefix.count && prefix[index] == UInt8(ascii: "<") ? .xml : .ndjson
    }

    /// The largest gzip file read whole by a worker (see
    /// ``wholeIfSmallGzipDocument(_:path:size:)``): a saved response page is a few dozen KiB gzipped.
    package static let largestWholeGzip = 1 << 20

    /// `source` (opened, nothing consumed), or, for a small gzip file holding a JSON document (a
    /// saved response), a `GzipFile` that the workers of a conversion or a replay read and
    /// inflate whole, so that a folder of `.json.gz` pages is inflated on every core.
    package static func wholeIfSmallGzipDocument(_ source: any ByteSource, path: String, size: Int?) throws -> any ByteSource {
        guard path != "-", let size, size <= largestWholeGzip else { return source }
        let peekable: PeekableSource
        if let opened = source as? PeekableSource, opened.wrapped is GzipSource {
            peekable = opened
        } else if let gzip = source as? GzipSource {
            peekable = PeekableSource(gzip)
        } else {
            return source
        }
        let head = try peekable.peek(4096)
        guard head.withUnsafeBytes({ JSONFramer.opensDocument(head: $0) }) else { return peekable }
        return GzipFile(path: path)
    }
}
