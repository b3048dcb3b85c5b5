import FerryChangeLog
import FerryIO
import FerryInternals
import FerryPipeline
import FerryRecords
import FerryStore

/// One replay of change histories into a store, as `ferry replay --into` runs it: each zone
/// continues after the last checkpoint the store applied to it, so replaying a history again
/// changes nothing and a later history applies what is new. History files are decoded on
/// several threads; an archive's history members are read in order from its stream.
///
/// ```swift
/// let summary = try StoreReplay(configuration: .init(histories: ["responses/"], store: "chat.sqlite")).run()
/// ```
public final class StoreReplay {
    /// What to replay, and how.
    public struct Configuration: Sendable {
        /// Which histories, and how they are read.
        public var reading: HistoryReading
        /// The store (made when missing).
        public var store: String
        /// The database of the history's zones.
        public var database: String
        /// Deleting a record deletes the records pointing at it with `DELETE_SELF`.
        public var cascade: Bool
        /// What one transaction covers.
        public var transaction: StoreReplayer.Configuration.TransactionUnit
        /// Seconds to wait for another process writing to the store.
        public var busyTimeout: Double
        /// Where the anomalies go, as JSON.
        public var report: String?

        /// A replay of `histories` into the store at `store`.
        public init(histories: [String], store: String, database: String = "private", cascade: Bool = false,
                    transaction: StoreReplayer.Configuration.TransactionUnit = .run, busyTimeout: Double = 5,
                    report: String? = nil, defaultZone: String? = nil, threads: Int? = nil, maximumLineBytes: Int = 64 << 20) {
            reading = HistoryReading(histories: histories, defaultZone: defaultZone, threads: threads, maximumLineBytes: maximumLineBytes)
            self.store = store
            self.database = database
            self.cascade = cascade
            self.transaction = transaction
            self.busyTimeout = busyTimeout
            self.report = report
        }
    }

    /// What to replay, and how.
    public let configuration: Configuration
    /// Told of entries a folder's listing skipped, as sentences.
    public var onNote: ((String) -> Void)?
    /// Told now and then of the events applied and the bytes read so far.
    public var onProgress: ((_ events: Int, _ bytes: Int) -> Void)?

    /// A replay as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The files the run reads and writes, as a command line names them (`HISTORY`, `--into`,
    /// `--report`): checked before anything is opened.
    public var files: RunFiles {
        RunFiles(inputs: configuration.reading.files,
                 sideOutputs: [.init(role: "--into", path: configuration.store)]
                    + (configuration.report.map { [.init(role: "--report", path: $0)] } ?? []))
    }

    /// Replays into the store, writes the report, and returns what was done.
    ///
    /// - Throws: ``FerryError``: usage when the files clash; data for bad history, a file that is
    ///   not a store, and failures to read or write (the store is then left as it was, or at its
    ///   last checkpoint with ``Configuration/transaction`` `checkpoint`).
    @discardableResult
    public func run() throws(FerryError) -> Summary {
        try files.check()
        let clock = Stopwatch()
        let reader = configuration.reading.reader
        var reportFile: OutputFile?
        do {
            if let report = configuration.report { reportFile = try OutputFile(path: report) }
            let replayer = try StoreReplayer(path: configuration.store, configuration: .init(
                database: configuration.database, cascade: configuration.cascade, transaction: configuration.transaction,
                busyTimeout: configuration.busyTimeout, reader: reader))
            if let onProgress { replayer.onProgress = { onProgress($0.eventCount, $0.bytesRead) } }
            try apply(try InputPaths.expand(configuration.reading.histories, onNote: onNote), to: replayer)
            try replayer.finish()
            if let reportFile {
                try reportFile.write(replayer.anomalies.json() + "\n")
                try reportFile.commit()
            }
            return Summary(replayer, seconds: clock.seconds)
        } catch {
            reportFile?.abandon()
            throw FerryError(wrapping: error)
        }
    }

    /// Applies the histories at `paths`: runs of files decoded on several threads, an archive's
    /// members (and standard input) read in order.
    private func apply(_ paths: [String], to replayer: StoreReplayer) throws {
        var files: [String] = []
        func applyFiles() throws {
            guard !files.isEmpty else { return }
            try replayer.apply(files: files, threads: configuration.reading.threads) { try HistoryInput.openFile($0) }
            files = []
        }
        for path in paths {
            if path != "-", try !HistoryInput.isArchive(path) {
                files.append(path)
                continue
            }
            try applyFiles()
            switch try HistoryInput(path: path) {
            case .file(let source):
                try replayer.apply(source)
            case .archive(let archive):
                while let member = try archive.nextHistoryMember() { try replayer.apply(member.source) }
            }
        }
        try applyFiles()
    }
}

extension StoreReplay {
    /// What a replay into a store did, with the summary `ferry replay --into` prints.
    public struct Summary: Sendable {
        /// Events read.
        public var eventCount: Int
        /// Events applied.
        public var appliedCount: Int
        /// Events the store had applied already.
        public var skippedCount: Int
        /// Records created, modified, unchanged and deleted.
        public var statistics: StoreReplayer.Statistics
        /// The anomalies met.
        public var anomalies: AnomalyReport
        /// The store's token at the end.
        public var token: StoreToken?
        /// Wall-clock seconds.
        public var seconds: Double

        init(_ replayer: StoreReplayer, seconds: Double) {
            eventCount = replayer.eventCount
            appliedCount = replayer.appliedCount
            skippedCount = replayer.skippedCount
            statistics = replayer.statistics
            anomalies = replayer.anomalies
            token = replayer.token
            self.seconds = seconds
        }

        /// `N events, M applied, K already in the store; c created, m modified, d deleted; S s; token T`.
        public var line: String {
            let s = statistics
            return "\(Plural.count(eventCount, "event")), \(appliedCount) applied, \(skippedCount) already in the store; "
                + "\(s.created) created, \(s.modified) modified, \(s.deleted) deleted; \(format(seconds, 2)) s; token \(token?.description ?? "-")"
        }

        /// The same as one JSON object.
        public var json: String {
            let s = statistics
            let object: JSONObject = [
                "events": eventCount.json, "applied": appliedCount.json, "skipped": skippedCount.json,
                "created": s.created.json, "modified": s.modified.json, "unchanged": s.unchanged.json, "deleted": s.deleted.json,
                "anomalies": anomalies.total.json,
                "token": .string(token?.description ?? ""),
                "seconds": .number(JSONNumber(text: format(seconds, 3))),
            ]
            return JSONValue.object(object).compactText
        }
    }
}
