import FerryArchive
import FerryIO
import FerryInternals
import FerryJSON
import FerryPipeline
import FerryRecords

/// One conversion, as `ferry convert` runs it: the inputs read in order (files, folders, `-`;
/// any format, recognized by content), the transform applied (types, zones, predicate, keys),
/// sorted and limited when asked, and written to one output in the format its name or the
/// configuration gives. Bad input fails the run, or is skipped (and copied to a rejects file).
///
/// ```swift
/// let conversion = Conversion(configuration: .init(inputs: ["responses/"], output: "chat.sqlite"))
/// let statistics = try conversion.run()
/// ```
///
/// Nothing appears under the output's name (or the rejects file's) unless the run succeeds; the
/// output may be one of the inputs (it replaces it at the end) unless it is a store, which is
/// written in place. A run refuses to start when its files clash (``files``).
public final class Conversion {
    /// What to convert, and how.
    public struct Configuration {
        /// The inputs, in order: files, folders (every file under them), `-` for standard input.
        public var inputs: [String]
        /// The output (`-` is standard output).
        public var output: String
        /// How inputs are opened (their format when the content should not decide, line limit).
        public var reading: InputRecognizer.Configuration
        /// How the output is written (its format when the name does not say, compression, the
        /// database and mode of a store or an archive).
        public var writing: RecordOutput.Configuration
        /// What every record goes through: types, zones, predicate, keys.
        public var transform: RecordTransform
        /// The sort order, stable; large inputs sort on disk.
        public var sort: RecordSortKey?
        /// Memory for records before sorted runs spill to disk.
        public var sortMemory: Int
        /// The most records written.
        public var limit: Int?
        /// Whether bad input is skipped (reported to ``Conversion/onReject``) rather than fatal.
        public var skipsBadInput: Bool
        /// With ``skipsBadInput``: where every rejected input is copied, verbatim.
        public var rejects: String?
        /// With an archive output: a folder whose files are added as assets.
        public var assets: String?
        /// Threads decoding inputs (compression takes ``RecordOutput/Configuration/threads``);
        /// `nil` for one per core available.
        public var threads: Int?
        /// With one store input: ``Conversion/exportChanges()`` writes its journal after this store
        /// token (`0` for all) as a change log.
        public var changesSince: String?

        /// A conversion of `inputs` into `output`, keeping every record as it is.
        public init(inputs: [String], output: String, reading: InputRecognizer.Configuration = .init(),
                    writing: RecordOutput.Configuration = .init(), transform: RecordTransform = RecordTransform(),
                    sort: RecordSortKey? = nil, sortMemory: Int = 512 << 20, limit: Int? = nil, skipsBadInput: Bool = false,
                    rejects: String? = nil, assets: String? = nil, threads: Int? = nil, changesSince: String? = nil) {
            self.inputs = inputs
            self.output = output
            self.reading = reading
            self.writing = writing
            self.transform = transform
            self.sort = sort
            self.sortMemory = sortMemory
            self.limit = limit
            self.skipsBadInput = skipsBadInput
            self.rejects = rejects
            self.assets = assets
            self.threads = threads
            self.changesSince = changesSince
        }
    }

    /// What to convert, and how.
    public let configuration: Configuration
    /// Told what is worth saying on the way, as sentences: entries a folder's listing skipped,
    /// members an archive's reading skipped, and at the end, records the predicate could not be
    /// evaluated on, or inputs that held only zones.
    public var onNote: ((String) -> Void)?
    /// Told of each response that lists zones and holds no records (``ZoneListing/warning``).
    public var onWarning: ((String) -> Void)?
    /// Told of each input skipped under ``Configuration/skipsBadInput`` (``SkippedInputNotes``
    /// says it).
    public var onReject: ((any Error) -> Void)?
    /// Told now and then of the statistics so far (a few times per MiB or thousand records).
    public var onProgress: ((RunStatistics) -> Void)?
    /// The first record the predicate could not be evaluated on, after ``run()``.
    public private(set) var firstTransformFailure: TransformFailure?

    /// A conversion as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The files the run reads and writes, as a command line names them (`INPUT`, `OUTPUT`,
    /// `--rejects`, `--assets`): checked before anything is opened.
    public var files: RunFiles {
        get throws(FerryError) {
            let output = configuration.output
            // With `changesSince` the output is a change log, renamed into place.
            var inPlace = false
            if configuration.changesSince == nil {
                inPlace = try RecordOutput.format(of: output, declared: configuration.writing.format).entry.isWrittenInPlace
            }
            return RunFiles(inputs: configuration.inputs.map { .init(role: "INPUT", path: $0) }
                                + (configuration.assets.map { [.init(role: "--assets", path: $0)] } ?? []),
                            output: .init(role: "OUTPUT", path: output), outputIsWrittenInPlace: inPlace,
                            sideOutputs: configuration.rejects.map { [.init(role: "--rejects", path: $0)] } ?? [])
        }
    }

    /// Converts, and returns the run's statistics (its time included).
    ///
    /// - Throws: ``FerryError``: usage when the files clash or the output's format cannot be
    ///   told; data for bad input (under `fail`) and for any failure to read or write.
    @discardableResult
    public func run() throws(FerryError) -> RunStatistics {
        try files.check()
        let clock = Stopwatch()
        var rejectsFile: OutputFile?
        var output: RecordOutput?
        var statistics: RunStatistics
        do {
            if let rejects = configuration.rejects { rejectsFile = try OutputFile(path: rejects) }
            let out = try RecordOutput.open(configuration.output, configuration: configuration.writing)
            output = out
            if let assets = configuration.assets, let archive = out.archive { try archive.archive.addAssets(fromDirectory: assets) }
            let pipeline = makePipeline(into: out.writer, rejects: rejectsFile)
            let sources = RecordSources(paths: try InputPaths.expand(configuration.inputs, onNote: onNote),
                                        recognizer: InputRecognizer(configuration: configuration.reading),
                                        policy: pipeline.policy, transform: pipeline.transform)
            sources.output = out
            sources.onNote = onNote
            while pipeline.wantsMore, let source = try sources.next() {
                try pipeline.read(source)
            }
            // The rejects are written out before the output is committed (a rejects file that
            // cannot be written fails the run with no output), and committed after it.
            try rejectsFile?.flush()
            statistics = try pipeline.finish()
            firstTransformFailure = pipeline.firstTransformFailure
            out.markFinished()
            try rejectsFile?.commit()
        } catch {
            output?.abandon()
            rejectsFile?.abandon()
            throw FerryError(wrapping: error)
        }
        statistics.seconds = clock.seconds
        if statistics.recordsIn == 0 && statistics.zoneListings > 0 && statistics.rejected == 0 {
            // The warnings said which responses list zones; nothing else was read.
            onNote?("no records: the inputs hold only zones (see `ferry inspect`)")
        }
        if let firstTransformFailure {
            onNote?("\(Plural.count(statistics.transformFailures, "record")) the predicate could not be evaluated on did not match; "
                    + "the first: \(firstTransformFailure)")
        }
        return statistics
    }

    /// The pipeline of this run: the transform, the sort and the limit, the error policy, and
    /// the callbacks.
    private func makePipeline(into writer: any RecordWriter, rejects: OutputFile?) -> RecordPipeline {
        let sorter = configuration.sort.map { RecordSorter(key: $0, memoryBudget: configuration.sortMemory) }
        let pipeline = RecordPipeline(writer: writer, transform: configuration.transform,
                                      policy: configuration.skipsBadInput ? .skip(rejects: rejects) : .fail,
                                      threads: configuration.threads ?? Processors.available, buffer: sorter, limit: configuration.limit)
        pipeline.onReject = onReject
        if let onWarning { pipeline.onZoneListing = { onWarning($0.warning) } }
        pipeline.onProgress = onProgress
        return pipeline
    }
}
