import ArgumentParser
import FerryArchive
import FerryCompression
import FerryIO
import FerryInternals
import FerryNDJSON
import FerryPipeline
import FerryRecords
import FerryStore
import FerryXML

/// The record formats Ferry reads and writes.
enum RecordFormat: String, CaseIterable, ExpressibleByArgument {
    /// One CKWS record dictionary per line (also reads saved CKWS responses).
    case ndjson
    /// Ferry's XML format (`Docs/XMLFormat.md`).
    case xml
    /// A self-describing archive of a record store: tar + gzip + manifest (`Docs/ArchiveLayout.md`).
    case archive
    /// A record store: one SQLite file (`Docs/StoreFormat.md`).
    case store

    /// The extensions that name a format (in any case); NDJSON's and XML's may be followed by
    /// `.gz`. An archive is gzip-compressed unless its name ends in `.tar`.
    static let extensions: [(suffix: String, format: RecordFormat)] = [
        (".ndjson", .ndjson), (".jsonl", .ndjson), (".json", .ndjson), (".xml", .xml),
        (".tar.gz", .archive), (".tgz", .archive), (".tar", .archive),
        (".sqlite", .store), (".sqlite3", .store), (".store", .store),
    ]

    /// The extensions Ferry knows, for messages.
    static var knownExtensions: String {
        extensions.map(\.suffix).joined(separator: ", ") + " (.ndjson, .jsonl, .json and .xml also followed by .gz)"
    }

    /// The format a path's name implies (``extensions``), or `nil`.
    static func from(path: String) -> RecordFormat? {
        let lower = path.lowercased()
        if let known = extensions.first(where: { lower.hasSuffix($0.suffix) }) { return known.format }
        guard lower.hasSuffix(".gz") else { return nil }
        let inner = lower.dropLast(3)
        return extensions.first { ($0.format == .ndjson || $0.format == .xml) && inner.hasSuffix($0.suffix) }?.format
    }

    /// Whether a path's name asks for gzip compression (an archive's name says whether it is
    /// compressed: see ``archiveIsCompressed(_:)``).
    static func impliesGzip(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".gz") && from(path: path) != .archive
    }

    /// Whether an archive written to `path` is gzip-compressed: unless its name ends in `.tar`.
    static func archiveIsCompressed(_ path: String) -> Bool {
        !path.lowercased().hasSuffix(".tar")
    }
}

/// What to do with bad input.
enum ErrorMode: String, CaseIterable, ExpressibleByArgument {
    case fail, skip
}

/// How inputs are opened.
struct RecordInputOptions {
    /// The format when the content should not decide (`--from`).
    var format: RecordFormat?
    var policy: RecordErrorPolicy = .fail
    var maximumLineBytes: Int = 64 << 20
}

/// What `path`'s name or `--from` promises its bytes are, when that cannot be nothing: a gzip
/// stream (a name ending in `.gz` or `.tgz`), else an XML document, a tar archive or a store
/// (`--from`, else the name). `nil` for NDJSON and an unknown name: empty NDJSON is valid.
func promisedContent(of path: String, declared: RecordFormat?) -> String? {
    let lower = path.lowercased()
    if path != "-" && (lower.hasSuffix(".gz") || lower.hasSuffix(".tgz")) { return "a gzip stream" }
    switch declared ?? (path == "-" ? nil : RecordFormat.from(path: path)) {
    case .xml: return "an XML document"
    case .archive: return "a tar archive"
    case .store: return "a Ferry store"
    case .ndjson, nil: return nil
    }
}

/// Opens `path` (`-` is standard input) for reading, as every command that reads records does:
/// an empty input whose name or `--from` promises content (``promisedContent(of:declared:)``,
/// or `expecting` when the command reads only some formats) is a truncated download, refused
/// here rather than read as no records.
///
/// - Throws: ``CommandFailure`` for such an empty input; what opening the file throws.
func openInputFile(_ path: String, declared: RecordFormat?, expecting: String? = nil) throws -> PeekableSource {
    let source = PeekableSource(try InputFile(path: path))
    let promised = promisedContent(of: path, declared: declared)
    if let expected = promised == "a gzip stream" ? promised : expecting ?? promised, try source.peek(1).isEmpty {
        throw CommandFailure(message: "\(path): expected \(expected), found an empty \(path == "-" ? "input" : "file")")
    }
    return source
}

/// Opens `path` (`-` is standard input) as a record reader.
///
/// gzip is recognized by its magic bytes and an archive by its first tar header, whatever the
/// name; otherwise `--from`, or else the first non-blank byte, decides: `<` is XML, anything
/// else NDJSON.
func openRecordReader(_ path: String, options: RecordInputOptions) throws -> any RecordReader {
    if let store = try openStoreReader(path, declared: options.format) { return store }
    let input = try ArchiveDetection.openInput(try openInputFile(path, declared: options.format))
    return try openRecordReader(input.source, name: path, options: options, isArchive: input.isArchive)
}

/// Opens a path as one reader: a folder as its files one after the other, in the order
/// ``expandInputs(_:quiet:)`` lists them (`convert`'s order); anything else as
/// ``openRecordReader(_:options:)`` does.
func openRecordReader(_ path: String, options: RecordInputOptions, quiet: Bool) throws -> any RecordReader {
    guard path != "-" && FileSystem.isDirectory(path) else { return try openRecordReader(path, options: options) }
    return FolderRecordReader(name: path, files: try expandInputs([path], quiet: quiet)) { try openRecordReader($0, options: options) }
}

/// The records of a folder's files, each file opened when the one before it ends.
final class FolderRecordReader: RecordReader {
    private let name: String
    private var files: IndexingIterator<[String]>
    private let open: (String) throws -> any RecordReader
    private var current: (any RecordReader)?
    /// Indexes, records, rejects, bytes and listings of the files finished.
    private var indexBase = 0, recordBase = 0, rejectedBase = 0, bytesBase = 0
    private var listingsBefore: [ZoneListing] = []
    var onReject: ((any Error) -> Void)?

    init(name: String, files: [String], open: @escaping (String) throws -> any RecordReader) {
        self.name = name
        self.files = files.makeIterator()
        self.open = open
    }

    var sourceName: String { current?.sourceName ?? name }
    var recordIndex: Int { indexBase + (current?.recordIndex ?? 0) }
    var recordCount: Int { recordBase + (current?.recordCount ?? 0) }
    var rejectedCount: Int { rejectedBase + (current?.rejectedCount ?? 0) }
    var bytesRead: Int { bytesBase + (current?.bytesRead ?? 0) }
    var zoneListings: [ZoneListing] { listingsBefore + (current?.zoneListings ?? []) }
    var currentDatabase: String? { current?.currentDatabase }
    var recordLine: Int? { current?.recordLine }

    func next() throws -> Record? {
        while true {
            if let reader = current {
                if let record = try reader.next() { return record }
                indexBase += reader.recordIndex
                recordBase += reader.recordCount
                rejectedBase += reader.rejectedCount
                bytesBase += reader.bytesRead
                listingsBefore += reader.zoneListings
                current = nil
            }
            guard let path = files.next() else { return nil }
            let reader = try open(path)
            reader.onReject = onReject
            current = reader
        }
    }
}

/// Opens an already decompressed input (from ``ArchiveDetection/openInput(_:configuration:)``).
func openRecordReader(_ source: any ByteSource, name path: String, options: RecordInputOptions,
                      isArchive: Bool = false) throws -> any RecordReader {
    let input = (source: source, isArchive: isArchive)
    switch try inputFormat(of: source, isArchive: isArchive, declared: options.format) {
    case .archive:
        let configuration = ArchiveReader.Configuration(
            records: NDJSONReader.Configuration(maximumLineBytes: options.maximumLineBytes))
        return ArchiveRecordReader(try ArchiveReader(source: input.source, configuration: configuration, policy: options.policy))
    case .xml:
        return XMLRecordReader(source: input.source, policy: options.policy)
    case .ndjson:
        return NDJSONReader(source: input.source, policy: options.policy,
                            configuration: .init(maximumLineBytes: options.maximumLineBytes))
    case .store:
        throw storeOnStream(path)
    }
}

/// The data error for a store met as a stream (standard input, a compressed file), found by its
/// SQLite header or named by `--from store`: SQLite reads a store from its file.
func storeOnStream(_ path: String) -> CommandFailure {
    CommandFailure(message: "\(path): a store is read from its file, not from a stream (standard input or a compressed file): "
                   + "give the store's path")
}

/// An input opened and recognized: its decompressed bytes (none consumed) and its format, or the
/// store it is.
struct OpenedInput {
    let path: String
    /// The bytes, for every format but a store.
    let source: (any ByteSource)?
    let format: RecordFormat
    /// The store, when the input is one.
    var store: StoreRecordReader? = nil
}

/// Opens `path` (`-` is standard input), decompressing gzip, and recognizes its format: a store
/// by its SQLite header and Ferry's marker, an archive by its first tar header, else `declared`
/// (`--from`), else the first non-blank byte.
func openInput(_ path: String, declared: RecordFormat?) throws -> OpenedInput {
    // One open per input (a folder may hold thousands): the store check looks at the bytes the
    // format detection peeks at anyway.
    let peekable = try openInputFile(path, declared: declared)
    if path != "-" {
        let kind = StoreFile.kind(ofPrefix: try peekable.peek(100))
        switch kind {
        case .store:
            return OpenedInput(path: path, source: nil, format: .store, store: try StoreRecordReader(path: path))
        case .otherSQLite:
            throw CommandFailure(message: "\(path): " + StoreFile.notAStoreMessage(kind))
        default:
            if declared == .store { throw CommandFailure(message: "\(path): " + StoreFile.notAStoreMessage(kind)) }
        }
    }
    let input: (source: any ByteSource, isArchive: Bool)
    let format: RecordFormat
    do {
        let opened = try ArchiveDetection.openInput(peekable)
        input = (opened.source, opened.isArchive)
        format = try inputFormat(of: input.source, isArchive: input.isArchive, declared: declared)
    } catch is CompressionError where path != "-" && (declared == nil || declared == .ndjson)
                && (peekable.sizeHint ?? .max) <= largestWholeGzip {
        // A small gzip file whose first bytes do not inflate (a truncated download of a saved
        // response): handed to the workers whole, like the others, whose reading fails with this
        // error in its place in the input order, where `--on-error skip` skips the file.
        return OpenedInput(path: path, source: GzipFile(path: path), format: .ndjson)
    }
    if format == .store { throw storeOnStream(path) }
    let source = format == .ndjson ? try wholeIfSmallGzipDocument(input.source, path: path, size: peekable.sizeHint) : input.source
    return OpenedInput(path: path, source: source, format: format)
}

/// The largest gzip file read whole by a worker (see ``wholeIfSmallGzipDocument(_:path:size:)``):
/// a saved response page is a few dozen KiB gzipped.
let largestWholeGzip = 1 << 20

/// `source` (opened, nothing consumed), or, for a small gzip file holding a JSON document (a
/// saved response), a ``GzipFile`` that the workers of `convert` and `replay` read and inflate
/// whole, so that a folder of `.json.gz` pages is inflated on every core.
func wholeIfSmallGzipDocument(_ source: any ByteSource, path: String, size: Int?) throws -> any ByteSource {
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

/// A history input as `replay` opens it: a file's bytes, decompressed, or an archive, read as the
/// history members it holds (``ArchiveReader/nextHistoryMember()``). Both are recognized by
/// content, as `convert` recognizes them.
enum HistoryInput {
    /// A change log or saved change responses; a small gzipped response is handed to the decoding
    /// threads whole (``wholeIfSmallGzipDocument(_:path:size:)``).
    case file(any ByteSource)
    /// An archive (a tar stream, gzip-compressed or not).
    case archive(ArchiveReader)
}

/// Opens a history input (``HistoryInput``).
func openHistory(_ path: String) throws -> HistoryInput {
    let file = try openInputFile(path, declared: nil)
    let input = try ArchiveDetection.openInput(file)
    if input.isArchive { return .archive(try ArchiveReader(source: input.source)) }
    return .file(try wholeIfSmallGzipDocument(input.source, path: path, size: file.sizeHint))
}

/// Whether the file at `path` holds an archive, by content (its first bytes, decompressed).
func isArchiveFile(_ path: String) throws -> Bool {
    try ArchiveDetection.openInput(try openInputFile(path, declared: nil)).isArchive
}

/// Opens a history input that must be a file, for the decoding threads of a replay into a store
/// (which checked beforehand that it is not an archive).
func openHistoryFile(_ path: String) throws -> any ByteSource {
    switch try openHistory(path) {
    case .file(let source):
        return source
    case .archive:
        throw CommandFailure(message: "\(path): expected a change log or saved CloudKit change responses, found an archive")
    }
}

/// The histories of a replay as one sequence of sources, opened as they are reached: each file,
/// and each history member of each archive, in order.
final class HistorySources {
    private let paths: FileReadahead
    private var archive: ArchiveReader?
    /// Told what an archive's reading skipped (``skippedMembersNote(_:)``).
    var onNote: ((String) -> Void)?

    init(_ paths: [String]) {
        self.paths = FileReadahead(paths)
    }

    /// The next history, or `nil` after the last.
    func next() throws -> (any ByteSource)? {
        while true {
            if let reader = archive {
                if let member = try reader.nextHistoryMember() { return member.source }
                if let note = skippedMembersNote(reader) { onNote?(note) }
                archive = nil
            }
            guard let path = paths.next() else { return nil }
            switch try openHistory(path) {
            case .file(let source): return source
            case .archive(let reader): archive = reader
            }
        }
    }
}

/// What reading an archive skipped, to say on stderr: its hidden members and those that are not
/// record files by name (a folder's reading would try those), or `nil` when it skipped none.
func skippedMembersNote(_ reader: ArchiveReader) -> String? {
    let skipped = reader.skippedMembers
    guard !skipped.isEmpty else { return nil }
    let shown = skipped.prefix(3).map(\.path).joined(separator: ", ") + (skipped.count > 3 ? ", …" : "")
    return "\(reader.name): skipped \(Plural.count(skipped.count, "member")) (\(shown)): "
        + (skipped.count == 1 ? skipped[0].reason : "hidden, or not record files by name (.ndjson, .jsonl, .json, each optionally .gz)")
}

/// The record sources of a list of inputs, in order, for a ``RecordPipeline``: consecutive
/// NDJSON and response inputs (files, a folder's files, gzip or not) form one
/// ``JSONRecordSource``, decoded on every core across file boundaries; each XML file, each
/// archive and each store is a source of its own. Inputs are opened one at a time, as they are
/// reached.
///
/// This, with ``openRecordOutput(_:options:)``, is where formats are registered: a new format
/// adds a case to each.
final class RecordSources {
    /// The inputs, the next ones read ahead (a folder may hold thousands of files on disk).
    private let paths: FileReadahead
    private let options: RecordInputOptions
    /// The pipeline's transform: a store input runs its types, zones and predicate as SQL.
    private let transform: RecordTransform
    /// An input opened to see its format, not yet handed out.
    private var pending: OpenedInput?
    /// Told what an archive's reading skipped (``skippedMembersNote(_:)``).
    var onNote: ((String) -> Void)?
    /// The output, when it keeps more than records: archives and stores read are carried over
    /// into an archive (tokens, assets, change logs, a store's journal), archives into a store.
    var output: RecordOutput?

    init(paths: [String], options: RecordInputOptions, transform: RecordTransform = RecordTransform()) {
        self.paths = FileReadahead(paths)
        self.options = options
        self.transform = transform
    }

    private func openNext() throws -> OpenedInput? {
        if let input = pending {
            pending = nil
            return input
        }
        guard let path = paths.next() else { return nil }
        return try openInput(path, declared: options.format)
    }

    /// The next source, or `nil` after the last input.
    func next() throws -> (any RecordSource)? {
        guard let first = try openNext() else { return nil }
        switch first.format {
        case .ndjson:
            var given: OpenedInput? = first
            let configuration = NDJSONParallelConverter.Configuration(maximumLineBytes: options.maximumLineBytes)
            return JSONRecordSource(name: first.path, inputs: { [self] in
                if let input = given {
                    given = nil
                    return input.source
                }
                guard let input = try openNext() else { return nil }
                guard input.format == .ndjson else {
                    pending = input
                    return nil
                }
                return input.source
            }, configuration: configuration)
        case .xml:
            return ReaderSource(XMLRecordReader(source: first.source!, policy: options.policy))
        case .archive:
            let configuration = ArchiveReader.Configuration(
                records: NDJSONReader.Configuration(maximumLineBytes: options.maximumLineBytes))
            let reader = ArchiveRecordReader(try ArchiveReader(source: first.source!, configuration: configuration, policy: options.policy))
            let source = ArchiveRecordSource(reader, carryingOverInto: output?.archive)
            let note = { [onNote] in if let text = skippedMembersNote(reader.archive) { onNote?(text) } }
            guard let store = output?.store else { return CarryingSource(source, before: {}, after: note) }
            return CarryingSource(source, before: { StoreCarryOver.begin(from: reader, into: store) },
                                  after: { try StoreCarryOver.finish(from: reader, into: store); note() })
        case .store:
            let reader = first.store!
            let source = try StoreRecordSource(reader, transform: transform)
            guard let archive = output?.archive else { return source }
            return CarryingSource(source, before: {}, after: { try StoreCarryOver.finish(from: reader, into: archive) })
        }
    }
}

/// A source with what is carried over between formats, besides records, before and after it.
final class CarryingSource: RecordSource {
    private let source: any RecordSource
    private let before: () throws -> Void
    private let after: () throws -> Void

    init(_ source: any RecordSource, before: @escaping () throws -> Void, after: @escaping () throws -> Void) {
        self.source = source
        self.before = before
        self.after = after
    }

    var name: String { source.name }

    func run(into pipeline: RecordPipeline) throws {
        try before()
        try source.run(into: pipeline)
        try after()
    }
}

/// The format an opened input is read as: an archive when it is one, else `--from` when given,
/// else what ``sniffFormat(_:)`` sees.
func inputFormat(of source: any ByteSource, isArchive: Bool, declared: RecordFormat?) throws -> RecordFormat {
    if isArchive { return declared ?? .archive }
    return try declared ?? sniffFormat(source)
}

/// Looks at the first non-blank byte (after a UTF-8 byte order mark): `<` means XML. SQLite's
/// header means a store (which callers refuse on a stream, ``storeOnStream(_:)``).
private func sniffFormat(_ source: any ByteSource) throws -> RecordFormat {
    guard let peekable = source as? PeekableSource else { return .ndjson }
    let prefix = try peekable.peek(4096)
    if StoreFile.isSQLite(prefix: prefix) { return .store }
    var index = 0
    if prefix.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    while index < prefix.count, [0x20, 0x09, 0x0A, 0x0D].contains(prefix[index]) { index += 1 }
    return index < prefix.count && prefix[index] == UInt8(ascii: "<") ? .xml : .ndjson
}

/// How outputs are written.
struct RecordOutputOptions {
    /// The format when the name does not say (`--to`).
    var format: RecordFormat?
    /// Compress with gzip even when the name does not end in `.gz`.
    var gzip = false
    var level = 6
    var threads: Int?
    /// The database archive records go to.
    var database = "private"
    /// What a store output does with records it holds (`--mode`).
    var storeMode: StoreWriter.Mode = .insert
    /// Seconds a store output waits for another process writing to it (`--busy-timeout`).
    var busyTimeout: Double = 5
}

/// An output being written: the records writer, and the archive when the output is one.
/// Nothing appears under the output's name unless ``finish()`` succeeds.
final class RecordOutput {
    let writer: any RecordWriter
    /// Set when the output is an archive (for tokens, assets and change logs).
    let archive: ArchiveRecordWriter?
    /// Set when the output is a store (for databases and tokens).
    let store: StoreWriter?
    private let file: OutputFile?
    private var isDone = false

    init(writer: any RecordWriter, archive: ArchiveRecordWriter?, file: OutputFile?, store: StoreWriter? = nil) {
        self.writer = writer
        self.archive = archive
        self.file = file
        self.store = store
    }

    /// The writer was finished by a pipeline: the output is committed.
    func markFinished() { isDone = true }

    func finish() throws {
        isDone = true
        try writer.finish()
    }

    /// Drops the output: no file appears.
    func abandon() {
        guard !isDone else { return }
        isDone = true
        archive?.archive.abandon()
        store?.abandon()
        file?.abandon()
    }

    deinit { abandon() }
}

/// The format an output is written in: `declared` (`--to`), else a store for an existing store
/// file, else the one its name implies; NDJSON for standard output (`-`) and for a device or pipe
/// written through (`/dev/null`, a named pipe), as for a stream.
///
/// - Throws: a usage error for a name whose extension Ferry does not know, without `--to`.
func outputFormat(of path: String, declared: RecordFormat?) throws -> RecordFormat {
    if let format = declared ?? (StoreFile.isStore(path) ? .store : nil) ?? RecordFormat.from(path: path) { return format }
    guard path != "-" && !Syscall.isSpecialFile(path) else { return .ndjson }
    throw ValidationError("cannot tell the format of \(path) from its name: expected one of "
                          + "\(RecordFormat.knownExtensions), or --to FORMAT")
}

/// Opens `path` (`-` is standard output) for writing records in the format `--to` or the name
/// gives (``outputFormat(of:declared:)``); an archive is gzip-compressed unless its name ends in
/// `.tar` (and no `--gzip`).
func openRecordOutput(_ path: String, options: RecordOutputOptions) throws -> RecordOutput {
    let format = try outputFormat(of: path, declared: options.format)
    if format == .store {
        guard path != "-" else { throw ValidationError("a store is written to a file, not to standard output") }
        let writer = try StoreWriter(path: path, configuration: .init(mode: options.storeMode, database: options.database,
                                                                      busyTimeout: options.busyTimeout))
        return RecordOutput(writer: writer, archive: nil, file: nil, store: writer)
    }
    let compression = GzipSink.Configuration(level: options.level, threads: options.threads)
    if format == .archive {
        var configuration = ArchiveWriter.Configuration(compression: compression, ferryVersion: FerryVersion.current)
        configuration.isCompressed = options.gzip || RecordFormat.archiveIsCompressed(path)
        let archive = path == "-"
            ? try ArchiveWriter(sink: try OutputFile(path: "-"), configuration: configuration)
            : try ArchiveWriter(path: path, configuration: configuration)
        let writer = ArchiveRecordWriter(archive, database: options.database)
        return RecordOutput(writer: writer, archive: writer, file: nil)
    }
    let file = try OutputFile(path: path)
    var sink: ByteSink = file
    if options.gzip || RecordFormat.impliesGzip(path) {
        sink = try GzipSink(wrapping: file, configuration: compression)
    }
    switch format {
    case .xml:
        return RecordOutput(writer: try XMLRecordWriter(sink: sink), archive: nil, file: file)
    case .ndjson, .archive, .store:
        return RecordOutput(writer: NDJSONWriter(sink: sink), archive: nil, file: file)
    }
}

/// Turns a library error into the command's data failure (exit 1) with its description;
/// usage errors and failures already made pass through.
func dataFailure(_ error: any Error) -> any Error {
    switch error {
    case is CommandFailure, is ValidationError, is ExitCode, is CleanExit: error
    default: CommandFailure(message: String(describing: error))
    }
}

/// Usage error unless every input (other than `-`) is an existing file or folder, and `-` is
/// named at most once.
func checkInputsExist(_ inputs: [String]) throws {
    if inputs.filter({ $0 == "-" }).count > 1 {
        throw ValidationError("standard input (-) can be read only once")
    }
    for input in inputs where input != "-" && !FileSystem.exists(input) && !FileSystem.isDirectory(input) {
        throw ValidationError("no such input: \(input)")
    }
}

/// The field names of a `--keys` list (comma-separated, spaces around names ignored, empty items
/// dropped), or `nil` without `--keys`.
///
/// - Throws: a usage error for a list that names no field: it would keep no field, or be ignored.
func keyList(_ text: String?) throws -> [String]? {
    guard let text else { return nil }
    let names = text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
    guard !names.isEmpty else {
        throw ValidationError("--keys expects field names separated by commas, found '\(text)'")
    }
    return names
}
