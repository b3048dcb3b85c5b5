/// The record formats Ferry reads and writes, and the one table that says, for each, the file
/// names that imply it, whether it may be gzip-compressed, and what an input named for it
/// promises to hold.
///
/// How each format is read and written lives beside this table, one switch each: opening
/// (``InputRecognizer``), reading (``RecordSources``) and writing (``RecordOutput``).
public enum RecordFormat: String, CaseIterable, Sendable {
    /// One CKWS record dictionary per line (also reads saved CKWS responses).
    case ndjson
    /// Ferry's XML format (`Docs/XMLFormat.md`).
    case xml
    /// A self-describing archive of a record store: tar + gzip + manifest (`Docs/ArchiveLayout.md`).
    case archive
    /// A record store: one SQLite file (`Docs/StoreFormat.md`).
    case store

    /// How a format's files are compressed with gzip.
    public enum Compression: Sendable, Hashable {
        /// Compressed when the name ends in `.gz` after one of the format's extensions (or when asked).
        case nameSuffix
        /// Compressed unless the name ends in `.tar` (the format's own extensions say it).
        case unlessTar
        /// Never: the file is read and written in place (SQLite).
        case never
    }

    /// One row of the registry: what names, compresses and promises a format, and how it is written.
    public struct Entry: Sendable {
        /// The format.
        public var format: RecordFormat
        /// The extensions that name it (in any case), tried in this order.
        public var extensions: [String]
        /// How its files are compressed.
        public var compression: Compression
        /// What an input named for it (or declared it) must hold, for messages about an empty one;
        /// `nil` when an empty input is valid (NDJSON: no records).
        public var promisedContent: String?
        /// Whether it is written in place (a SQLite file, read and written by path) rather than
        /// streamed to a temporary file renamed into place: never to or from standard output, a
        /// device or a pipe, and never over one of the run's inputs.
        public var isWrittenInPlace: Bool
    }

    /// This format's row of the ``registry``: the one table of formats.
    public var entry: Entry {
        switch self {
        case .ndjson:
            Entry(format: self, extensions: [".ndjson", ".jsonl", ".json"], compression: .nameSuffix, promisedContent: nil, isWrittenInPlace: false)
        case .xml:
            Entry(format: self, extensions: [".xml"], compression: .nameSuffix, promisedContent: "an XML document", isWrittenInPlace: false)
        case .archive:
            Entry(format: self, extensions: [".tar.gz", ".tgz", ".tar"], compression: .unlessTar, promisedContent: "a tar archive",
                  isWrittenInPlace: false)
        case .store:
            Entry(format: self, extensions: [".sqlite", ".sqlite3", ".store"], compression: .never, promisedContent: "a Ferry store",
                  isWrittenInPlace: true)
        }
    }

    /// The registry, in the order extensions are tried.
    public static var registry: [Entry] { allCases.map(\.entry) }

    /// The extensions Ferry knows, for messages.
    public static var knownExtensions: String {
        let suffixed = registry.filter { $0.compression == .nameSuffix }.flatMap(\.extensions)
        let list = suffixed.dropLast().joined(separator: ", ") + (suffixed.count > 1 ? " and " : "") + (suffixed.last ?? "")
        return registry.flatMap(\.extensions).joined(separator: ", ") + " (\(list) also followed by .gz)"
    }

    /// The format a path's name implies (``registry``), or `nil`.
    public init?(path: String) {
        let lower = path.lowercased()
        if let known = Self.registry.first(where: { $0.extensions.contains { lower.hasSuffix($0) } }) {
            self = known.format
            return
        }
        guard lower.hasSuffix(".gz") else { return nil }
        let inner = lower.dropLast(3)
        guard let known = Self.registry.first(where: { $0.compression == .nameSuffix && $0.extensions.contains { inner.hasSuffix($0) } })
        else { return nil }
        self = known.format
    }

    /// Whether a path's name asks for gzip compression (an archive's name says whether it is
    /// compressed: see ``archiveIsCompressed(_:)``).
    public static func impliesGzip(_ path: String) -> Bool {
        path.lowercased().hasSuffix(".gz") && RecordFormat(path: path) != .archive
    }

    /// Whether an archive written to `path` is gzip-compressed: unless its name ends in `.tar`.
    public static func archiveIsCompressed(_ path: String) -> Bool {
        !path.lowercased().hasSuffix(".tar")
    }

    /// Whether a file of this format written to `path` is gzip-compressed, `gzip` saying whether
    /// compression was asked for whatever the name.
    public func compresses(_ path: String, gzip: Bool) -> Bool {
        switch entry.compression {
        case .never: false
        case .unlessTar: gzip || Self.archiveIsCompressed(path)
        case .nameSuffix: gzip || Self.impliesGzip(path)
        }
    }
}
