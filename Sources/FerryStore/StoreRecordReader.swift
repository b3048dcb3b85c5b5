import FerryPipeline
import FerryPredicate
import FerryRecords

/// Reads a store's records: a ``RecordReader`` whose input is a store file (export).
///
/// Records come in the order they were stored (a replaced record keeps its place), or in the
/// order of ``restrict(to:)``'s sort keys. ``restrict(to:)`` narrows the records read with a
/// query — types, zones, a predicate pushed into SQL — so an export of a few records reads only
/// those. The store is read in one transaction: a concurrent import or replay is not seen.
public final class StoreRecordReader: RecordReader {
    /// The store.
    public let store: RecordStore
    public var sourceName: String { store.path }
    public private(set) var recordIndex = 0
    public private(set) var recordCount = 0
    public var rejectedCount: Int { 0 }
    public private(set) var bytesRead = 0
    public var onReject: ((any Error) -> Void)?
    /// Records the predicate could not be evaluated on (they were left out).
    public var evaluationFailures: Int { execution?.evaluationFailures ?? 0 }
    /// The first of them: which record, and why.
    public var firstEvaluationFailure: String? { execution?.firstEvaluationFailure }
    /// The same, as the record's name and the evaluation's message.
    public var firstEvaluationFailureParts: (recordName: String, message: String)? { execution?.firstFailure }

    private var query = StoreQuery()
    private var execution: QueryExecution?
    /// The database of each zone, by row id (read with the first record).
    private var zoneDatabases: [Int64: Int64] = [:]

    /// The database (`public`, `private`, `shared`) of the record ``next()`` returned last.
    public var currentDatabase: String? {
        guard let execution, let database = zoneDatabases[execution.zoneRowID] else { return nil }
        return StoreCodec.databaseName(database)
    }
    private var isReading = false

    /// Opens the store at `path` for reading.
    public convenience init(path: String, configuration: RecordStore.Configuration = .init()) throws {
        try self.init(store: RecordStore(path: path, access: .readOnly, configuration: configuration))
    }

    /// Reads `store`.
    public init(store: RecordStore) throws {
        self.store = store
    }

    /// Reads only what `query` selects (before the first ``next()``); its limit and cursor apply too.
    public func restrict(to query: StoreQuery) throws {
        guard !isReading else { throw StoreError(.invalidArgument, "restrict(to:) must come before the first record is read", path: store.path) }
        self.query = query
    }

    /// The zones of the store being read (for tokens carried into an archive).
    public func zones() throws -> [StoreZone] { try store.zones() }

    public func next() throws -> Record? {
        if execution == nil {
            isReading = true
            try store.connection.execute("BEGIN")
            let zones = try store.connection.prepare("SELECT id, database_id FROM zones")
            while try zones.step() { zoneDatabases[zones.int64(at: 0)] = zones.int64(at: 1) }
            execution = try QueryExecution(plan: QueryPlan(query), store: store)
        }
        guard let execution, recordCount < (query.limit ?? Int.max), try execution.next() else {
            finishReading()
            return nil
        }
        bytesRead += execution.body.count
        recordIndex += 1
        recordCount += 1
        let record = try execution.record()
        return query.desiredKeys.map { RecordStore.projected(record, keys: $0) } ?? record
    }

    private func finishReading() {
        if execution != nil, !store.connection.isAutocommit { try? store.connection.execute("COMMIT") }
    }

    deinit {
        execution = nil
        if !store.connection.isAutocommit { try? store.connection.execute("ROLLBACK") }
    }
}

/// A store as a pipeline source: the pipeline's types, zones and predicate are pushed into the
/// store's query (``StoreRecordReader/restrict(to:)``), which hands over only records that match
/// — SQL narrows, the compiled predicate decides — so the predicate is evaluated once per record.
/// Projection (`keys`), sorting and the limit stay with the pipeline.
public final class StoreRecordSource: RecordSource {
    /// The reader.
    public let reader: StoreRecordReader
    private let transform: RecordTransform

    /// A source reading `reader` restricted by `transform`'s types, zones and predicate.
    public init(_ reader: StoreRecordReader, transform: RecordTransform) throws {
        self.reader = reader
        self.transform = transform
        try reader.restrict(to: StoreQuery(recordTypes: transform.types.sorted(), zoneNames: transform.zones.sorted(),
                                           predicate: transform.filter?.predicate))
    }

    public var name: String { reader.sourceName }

    public func run(into pipeline: RecordPipeline) throws {
        var counted = 0
        var countedBytes = 0
        func count() {
            pipeline.countInput(records: reader.recordCount - counted, rejected: 0, bytes: reader.bytesRead - countedBytes)
            (counted, countedBytes) = (reader.recordCount, reader.bytesRead)
        }
        defer { count() }
        while var record = try reader.next() {
            guard try pipeline.transform(&record, filterMatched: true, source: name, recordIndex: reader.recordIndex) else { continue }
            guard try pipeline.take(record, database: reader.currentDatabase) else { break }
            if pipeline.wantsProgress && reader.recordCount & 0x3FF == 0 { count() }
        }
        // (Also when --limit ended the reading: the records met so far count.)
        if reader.evaluationFailures > 0 {
            let first = reader.firstEvaluationFailureParts
            pipeline.transformFailed(TransformFailure(source: name, line: nil, recordIndex: 0, recordName: first?.recordName,
                                                      underlying: PredicateError(.evaluation, first?.message ?? "")),
                                     count: reader.evaluationFailures)
        }
    }
}
