import FerryArchive
import FerryCompression
import FerryIO
import FerryJSON
import FerryPipeline
import FerryStore
import FerryXML

/// An output being written: the records writer, and the archive or store when the output is one.
/// Nothing appears under the output's name unless ``finish()`` succeeds (or the pipeline that
/// finished the writer says so, ``markFinished()``); dropped unfinished, it leaves nothing.
///
/// ```swift
/// let output = try RecordOutput.open("messages.sqlite")
/// let pipeline = RecordPipeline(writer: output.writer)
/// ```
public final class RecordOutput {
    /// How outputs are written.
    public struct Configuration: Sendable {
        /// The format when the name does not say (`--to`); `nil` lets the name decide.
        public var format: RecordFormat?
        /// Compress with gzip even when the name does not end in `.gz`.
        public var gzip: Bool
        /// The gzip level, 0–9.
        public var level: Int
        /// Threads compressing; `nil` for one per core available.
        public var threads: Int?
        /// The database archive and store records go to when their input does not say.
        public var database: String
        /// What a store output does with records it holds (`--mode`).
        public var storeMode: StoreWriter.Mode
        /// Seconds a store output waits for another process writing to it (`--busy-timeout`).
        public var busyTimeout: Double

        /// A configuration; by default NDJSON, XML and archives are compressed when their name
        /// says, at level 6, into the private database; a store takes new records only.
        public init(format: RecordFormat? = nil, gzip: Bool = false, level: Int = 6, threads: Int? = nil,
                    database: String = "private", storeMode: StoreWriter.Mode = .insert, busyTimeout: Double = 5) {
            self.format = format
            self.gzip = gzip
            self.level = level
            self.threads = threads
            self.database = database
            self.storeMode = storeMode
            self.busyTimeout = busyTimeout
        }
    }

    /// The records writer.
    public let writer: any RecordWriter
    /// Set when the output is an archive (for tokens, assets and change logs).
    public let archive: ArchiveRecordWriter?
    /// Set when the output is a store (for databases and tokens).
    public let store: StoreWriter?
    private let file: OutputFile?
    private var isDone = false

    private init(writer: any RecordWriter, archive: ArchiveRecordWriter? = nil, file: OutputFile? = nil, store: StoreWriter? = nil) {
        self.writer = writer
        self.archive = archive
        self.file = file
        self.store = store
    }

    /// The writer was finished by a pipeline: the output is committed.
    public func markFinished() { isDone = true }

    /// Finishes the writer, committing the output.
    public func finish() throws(FerryError) {
        isDone = true
        try FerryError.catching { try writer.finish() }
    }

    /// Drops the output: no file appears.
    public func abandon() {
        guard !isDone else { return }
        isDone = true
        archive?.archive.abandon()
        store?.abandon()
        file?.abandon()
    }

    deinit { abandon() }

    // MARK: Opening

    /// The format an output is written in: `declared`, else a store for an existing store file,
    /// else the one its name implies (``RecordFormat/init(path:)``); NDJSON for standard output
    /// (`-`) and for a device or pipe written through (`/dev/null`, a named pipe), as for a stream.
    ///
    /// - Throws: a usage ``FerryError`` for a name whose extension Ferry does not know, without
    ///   `declared`.
    public static func format(of path: String, declared: RecordFormat?) throws(FerryError) -> RecordFormat {
        if let format = declared ?? (StoreFile.isStore(path) ? .store : nil) ?? RecordFormat(path: path) { return format }
        guard path != "-" && !Syscall.isSpecialFile(path) else { return .ndjson }
        throw .usage("cannot tell the format of \(path) from its name: expected one of "
                     + "\(RecordFormat.knownExtensions), or --to FORMAT")
    }

    /// Usage error when an output of `format` cannot go to `path`: a store is written in place
    /// (``RecordFormat/Entry/isWrittenInPlace``), to a file, not to standard output or through a
    /// device or pipe.
    public static func checkTarget(_ path: String, format: RecordFormat) throws(FerryError) {
        guard format.entry.isWrittenInPlace else { return }
        if path == "-" { throw .usage("a store is written to a file, not to standard output") }
        if Syscall.isSpecialFile(path) { throw .usage("a store is written to a file, not to a device or pipe, found \(path)") }
    }

    /// Opens `path` (`-` is standard output) for writing records in the format the
    /// configuration or the name gives (``format(of:declared:)``); an archive is gzip-compressed
    /// unless its name ends in `.tar` (and no ``Configuration/gzip``).
    public static func open(_ path: String, configuration: Configuration = Configuration()) throws(FerryError) -> RecordOutput {
        let format = try format(of: path, declared: configuration.format)
        try checkTarget(path, format: format)
        return try FerryError.catching { try open(path, format: format, configuration: configuration) }
    }

    private static func open(_ path: String, format: RecordFormat, configuration: Configuration) throws -> RecordOutput {
        let compression = GzipSink.Configuration(level: configuration.level, threads: configuration.threads)
        switch format {
        case .store:
            let writer = try StoreWriter(path: path, configuration: .init(mode: configuration.storeMode, database: configuration.database,
                                                                          busyTimeout: configuration.busyTimeout))
            return RecordOutput(writer: writer, store: writer)
        case .archive:
            var archiveConfiguration = ArchiveWriter.Configuration(compression: compression, ferryVersion: FerryVersion.current)
            archiveConfiguration.isCompressed = format.compresses(path, gzip: configuration.gzip)
            let archive = path == "-"
                ? try ArchiveWriter(sink: try OutputFile(path: "-"), configuration: archiveConfiguration)
                : try ArchiveWriter(path: path, configuration: archiveConfiguration)
            let writer = ArchiveRecordWriter(archive, database: configuration.database)
            return RecordOutput(writer: writer, archive: writer)
        case .ndjson, .xml:
            let file = try OutputFile(path: path)
            let sink: ByteSink = format.compresses(path, gzip: configuration.gzip)
                ? try GzipSink(wrapping: file, configuration: compression) : file
            let writer: any RecordWriter = format == .xml ? try XMLRecordWriter(sink: sink) : NDJSONWriter(sink: sink)
            return RecordOutput(writer: writer, file: file)
        }
    }
}
