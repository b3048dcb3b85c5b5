import Dispatch
import FerryChangeLog
import FerryIO
import FerryRecords

/// Replays change histories into a store, incrementally: each zone continues after the last
/// checkpoint the store applied to it, so replaying a history again changes nothing and a
/// history that continues the last one applies what is new. See `Docs/StoreFormat.md`
/// ("Replaying into a store").
///
/// A save replaces the record, a delete removes it, deleting or purging a zone removes its
/// records (a purge also forgets its tokens), a checkpoint stores the zone's token — in the same
/// transaction as the changes before it. By default one transaction covers the whole run (the
/// store holds the state before it or after it, never between); with
/// ``Configuration/TransactionUnit/checkpoint`` each checkpoint commits what came before it, so
/// a long replay that stops keeps its progress. A new store is built beside its name and linked
/// into place at the end, as ``StoreWriter`` does. Anomalies are those of `ferry replay`.
///
/// ```swift
/// let replayer = try StoreReplayer(path: "chat.sqlite")
/// for file in files { try replayer.apply(try Compression.openInput(try InputFile(path: file))) }
/// try replayer.finish()
/// print(replayer.anomalies.summary)
/// ```
public final class StoreReplayer {
    /// How the replay runs.
    public struct Configuration: Sendable {
        /// What one transaction covers.
        public enum TransactionUnit: String, Sendable, CaseIterable {
            /// The whole run.
            case run
            /// Each checkpoint, with the changes before it (the token written with them).
            case checkpoint
        }

        /// The database of the history's zones: `public`, `private` or `shared`.
        public var database: String
        /// Deleting a record deletes the records pointing at it with DELETE_SELF, recursively.
        public var cascade: Bool
        /// What one transaction covers (a new store is always built in one).
        public var transaction: TransactionUnit
        /// At the end, report parents and references of the records saved that name no record.
        public var checksReferences: Bool
        /// Seconds to wait for another writer before failing.
        public var busyTimeout: Double
        /// How histories are read.
        public var reader: ChangeLogReader.Configuration
        /// The most anomalies listed (all are counted).
        public var maximumListedAnomalies: Int

        /// Creates a configuration.
        public init(database: String = "private", cascade: Bool = false, transaction: TransactionUnit = .run,
                    checksReferences: Bool = true, busyTimeout: Double = 5, reader: ChangeLogReader.Configuration = .init(),
                    maximumListedAnomalies: Int = 10_000) {
            self.database = database
            self.cascade = cascade
            self.transaction = transaction
            self.checksReferences = checksReferences
            self.busyTimeout = busyTimeout
            self.reader = reader
            self.maximumListedAnomalies = maximumListedAnomalies
        }
    }

    /// The store file.
    public let path: String
    /// The configuration.
    public let configuration: Configuration
    /// Whether the replay makes a new store.
    public let isNewStore: Bool
    /// Events read from histories.
    public private(set) var eventCount = 0
    /// Bytes of history read (decompressed).
    public private(set) var bytesRead = 0
    /// Events applied (after ``finish()``).
    public private(set) var appliedCount = 0
    /// Events left out because an earlier run applied them (after ``finish()``).
    public private(set) var skippedCount = 0
    /// The anomalies (after ``finish()``).
    public private(set) var anomalies = AnomalyReport()
    /// Records created, modified, left unchanged and deleted (after ``finish()``).
    public private(set) var statistics = Statistics()
    /// The store's token after the replay (after ``finish()``).
    public private(set) var token: StoreToken?
    /// Called every 65,536 events read.
    public var onProgress: ((StoreReplayer) -> Void)?

    /// What a replay did to the records.
    public struct Statistics: Sendable, Equatable {
        public var created = 0, modified = 0, unchanged = 0, deleted = 0
    }

    private let staged: StagedStore?
    private var store: RecordStore?
    /// A new store's replay (not a restore): ``NewStoreReplay``, `ferry replay`'s engine.
    private var newStore: NewStoreReplay?
    private var pipeline: WritePipeline<ReplayApplier, ReplayBatch>?
    /// Events given one by one, not handed over yet.
    private var batch: [ReplayChange] = []
    private let encoder = StoreRowEncoder()
    private let startSequence: Int64
    private var isDone = false

    /// Opens the store at `path` for a replay, making a new one when there is no file.
    public convenience init(path: String, configuration: Configuration = .init()) throws {
        try self.init(path: path, configuration: configuration, restoringJournal: false)
    }

    init(path: String, configuration: Configuration, restoringJournal: Bool) throws {
        self.path = path
        self.configuration = configuration
        let database = try StoreCodec.databaseID(configuration.database)
        let kind = StoreFile.kind(at: path)
        // A new store only appends (the journal as changes come, the records at the end).
        let appends = kind == .missing || kind == .empty
        let storeConfiguration = RecordStore.Configuration(busyTimeout: configuration.busyTimeout,
                                                           cacheMiB: StoreWriter.cacheMiB(256, appending: appends), mapsFile: false)
        let store: RecordStore
        switch kind {
        case .missing, .empty:
            isNewStore = true
            let staged = try StagedStore(target: path)
            self.staged = staged
            do {
                store = try RecordStore(opening: staged.temporaryPath, access: .readWrite, configuration: storeConfiguration,
                                        creating: true, bulkLoad: true)
                try store.connection.execute("BEGIN")
            } catch let error as StoreError {
                staged.abandon()
                throw error.at(path)
            }
        case .store:
            isNewStore = false
            staged = nil
            store = try RecordStore(path: path, access: .readWrite, configuration: storeConfiguration)
            try StoreWriter.beginWriting(store)
        case .notSQLite, .otherSQLite, .folder, .standardInput, .compressed:
            throw StoreError(.notAStore, StoreFile.notAStoreMessage(kind), path: path)
        }
        self.store = store
        let mutator = try StoreMutator(connection: store.connection, path: path)
        startSequence = mutator.nextSeq - 1
        if isNewStore && !restoringJournal {
            // The final state is built in memory and its records written at the end, zone by zone
            // in name order: the name index grows at its end, and needs no sort afterwards.
            let replay = NewStoreReplay(mutator: mutator, database: database, configuration: configuration)
            replay.replayer.onProgress = { [unowned self] replayer in
                self.eventCount = replayer.eventCount
                self.bytesRead = replayer.bytesRead
                self.onProgress?(self)
            }
            replay.onRowsWritten = { [staged] bytes in staged?.noteWritten(bytes) }
            newStore = replay
            return
        }
        let applier = ReplayApplier(mutator: mutator, database: database, cascade: configuration.cascade,
                                    commitsEachCheckpoint: configuration.transaction == .checkpoint && staged == nil,
                                    restoresJournal: restoringJournal, maximumListedAnomalies: configuration.maximumListedAnomalies)
        pipeline = WritePipeline(context: applier) { applier, batch in
            for (offset, change) in batch.changes.enumerated() {
                try applier.take(ReplayItem(change: change, index: batch.firstIndex + offset))
            }
        }
    }

    deinit {
        if !isDone { abandon() }
    }

    /// Replays one history (decompressed): Ferry change-log lines or saved CloudKit change responses.
    public func apply(_ source: ByteSource) throws {
        if let newStore { return try applyNew { try newStore.replayer.apply(source) } }
        let reader = ChangeLogReader(source: source, configuration: configuration.reader)
        defer { bytesRead += reader.bytesRead }
        while let change = try reader.nextChange() {
            try submit(ReplayChange(change, encoder: encoder, cascade: configuration.cascade, defaultZone: configuration.reader.defaultZone))
        }
    }

    /// Replays history files in order, decoding several at a time on `threads` threads (default:
    /// one per processor available, at most 4) while their changes are applied in file order.
    /// Each file is read as ``apply(_:)`` reads it (a file's pages do not lend their zone to the
    /// next file's), so the result is that of applying the files one after the other.
    ///
    /// - Parameter open: makes a file's source (decompressed), on the decoding thread.
    public func apply(files: [String], threads: Int? = nil, open: @escaping @Sendable (String) throws -> ByteSource) throws {
        let readahead = FileReadahead(files)
        if let newStore {
            newStore.replayer.configuration.decodingThreads = threads
            return try applyNew {
                try newStore.replayer.apply(sources: {
                    guard let file = readahead.next() else { return nil }
                    return try open(file)
                })
            }
        }
        let workers = Processors.clampedThreads(min(threads ?? min(Processors.available, 4), files.count))
        guard workers > 1 else {
            while let file = readahead.next() { try apply(try open(file)) }
            return
        }
        guard !isDone, pipeline != nil else { throw StoreError(.invalidArgument, "the replay is finished", path: path) }
        let reader = configuration.reader
        let cascade = configuration.cascade
        let decoding = OrderedWorkers<FileDecoding>(threads: workers, jobsPerWorker: 2) { job, _ in
            job.result = Swift.Result {
                let changes = ChangeLogReader(source: try Self.readWholeIfAsked(try open(job.path), reader: reader), configuration: reader)
                let encoder = StoreRowEncoder()
                var decoded: [ReplayChange] = []
                while let change = try changes.nextChange() {
                    decoded.append(ReplayChange(change, encoder: encoder, cascade: cascade, defaultZone: reader.defaultZone))
                }
                return (decoded, changes.bytesRead)
            }
        }
        while true {
            while !decoding.isFull, let file = readahead.next() { decoding.submit(FileDecoding(path: file)) }
            guard let job = decoding.takeHead() else { break }
            let (changes, bytes) = try job.result.get()
            bytesRead += bytes
            try handOver()
            guard let pipeline else { return }
            try pipeline.submit([ReplayBatch(changes: changes, firstIndex: eventCount + 1)])
            let before = eventCount
            eventCount += changes.count
            if before >> 16 != eventCount >> 16 { onProgress?(self) }
        }
    }

    /// One history file decoded on a worker thread: its changes made ready for the store, and
    /// the bytes read. (Written by its worker before the pool hands it back.)
    private final class FileDecoding: @unchecked Sendable {
        let path: String
        var result: Swift.Result<(changes: [ReplayChange], bytes: Int), any Error> = .success(([], 0))

        init(path: String) {
            self.path = path
        }
    }

    /// `source`, or for an input a worker may read whole (a small gzipped response, see
    /// ``WholeInput``), its content read whole here, on the decoding thread, as a stream would
    /// hold it: up to the line limit (past it, the stream is read and refuses it).
    private static func readWholeIfAsked(_ source: any ByteSource, reader: ChangeLogReader.Configuration) throws -> any ByteSource {
        guard let whole = source as? any WholeInput,
              let (storage, count) = try whole.readWhole(limit: min(reader.maximumLineBytes, reader.maximumDocumentBytes)) else { return source }
        defer { storage.deallocate() }
        return MemorySource(Array(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[..<count])), name: whole.name)
    }

    /// Replays one event.
    public func apply(_ event: ChangeEvent) throws {
        if let newStore { return try applyNew { try newStore.replayer.apply(event) } }
        try submit(ReplayChange(event, encoder: encoder, cascade: configuration.cascade, defaultZone: configuration.reader.defaultZone))
    }

    /// Runs `body` on a new store's replay, keeping the counts; a failure abandons the replay.
    private func applyNew(_ body: () throws -> Void) throws {
        guard !isDone, let newStore else { throw StoreError(.invalidArgument, "the replay is finished", path: path) }
        do {
            try body()
        } catch {
            abandon()
            throw error
        }
        eventCount = newStore.replayer.eventCount
        bytesRead = newStore.replayer.bytesRead
    }

    /// Takes a change given alone; hands them to the applying thread 256 at a time.
    private func submit(_ change: ReplayChange) throws {
        guard !isDone, pipeline != nil else { throw StoreError(.invalidArgument, "the replay is finished", path: path) }
        eventCount += 1
        batch.append(change)
        if batch.count >= 256 { try handOver() }
        if eventCount & 0xFFFF == 0 { onProgress?(self) }
    }

    /// Hands the changes given alone to the applying thread.
    private func handOver() throws {
        guard !batch.isEmpty, let pipeline else { return }
        let changes = batch
        batch.removeAll(keepingCapacity: true)
        try pipeline.submit([ReplayBatch(changes: changes, firstIndex: eventCount - changes.count + 1)])
    }

    /// Applies what is held back, checks references, commits (a new store: syncs it and gives it
    /// its name). On failure the store is left as it was.
    public func finish() throws {
        if newStore != nil { return try finishNew() }
        guard !isDone, let pipeline, let store else { return }
        do {
            try handOver()
            let checks = configuration.checksReferences
            let start = startSequence
            let result = try pipeline.sync { applier -> (AnomalyReport, Int, Int, Statistics, Int64, String?) in
                try applier.finishHistory()
                if checks { try applier.checkReferences(since: start) }
                try applier.mutator.flush()
                let m = applier.mutator
                return (applier.anomalies, applier.applied, applier.skipped,
                        Statistics(created: m.created, modified: m.modified, unchanged: m.unchanged, deleted: m.deleted),
                        m.nextSeq - 1, applier.restoredStoreID)
            }
            (anomalies, appliedCount, skippedCount, statistics) = (result.0, result.1, result.2, result.3)
            var storeID = store.storeID
            if let restored = result.5 {
                let update = try store.connection.prepare("UPDATE ferry_store SET value = ?1 WHERE key = 'storeID'")
                try update.bind(restored, at: 1)
                try update.run()
                storeID = restored
            }
            token = StoreToken(storeID: storeID, sequence: result.4)
            self.pipeline = nil
            try commit(store)
        } catch {
            abandon()
            if let error = error as? StoreError, staged != nil { throw error.at(path) }
            throw error
        }
    }

    /// A new store's finish: the live records written, the name index built, references checked.
    private func finishNew() throws {
        guard !isDone, let newStore, let store else { return }
        do {
            let last = try newStore.finish()
            let replayer = newStore.replayer
            (eventCount, bytesRead, appliedCount) = (replayer.eventCount, replayer.bytesRead, replayer.appliedCount)
            anomalies = replayer.anomalies
            statistics = newStore.statistics
            token = StoreToken(storeID: store.storeID, sequence: last)
            self.newStore = nil
            try commit(store)
        } catch {
            abandon()
            if let error = error as? StoreError { throw error.at(path) }
            throw error
        }
    }

    /// Commits the replay's transaction; a new store is synced and given its name.
    private func commit(_ store: RecordStore) throws {
        try store.connection.execute("COMMIT")
        isDone = true
        if let staged {
            _ = try store.connection.text("PRAGMA journal_mode = WAL")
            self.store = nil
            try staged.publish()
        }
        self.store = nil
    }

    /// Drops the replay: the store stays as it was (with ``Configuration/TransactionUnit/checkpoint``,
    /// as of the last checkpoint committed); a new store is not made.
    public func abandon() {
        guard !isDone else { return }
        isDone = true
        pipeline?.drain()
        pipeline = nil
        newStore?.drain()
        newStore = nil
        if staged == nil, let store, !store.connection.isAutocommit { try? store.connection.execute("ROLLBACK") }
        store = nil
        staged?.abandon()
    }
}


