import FerryIO
import FerryRecords

/// Ferry's one record pipeline: sources → transform → (sort) → (limit) → a writer, with the run's
/// statistics counted here and nowhere else.
///
/// ```swift
/// let pipeline = RecordPipeline(writer: NDJSONWriter(sink: file), transform: RecordTransform(types: ["Message"]))
/// for source in sources { try pipeline.read(source) }
/// let statistics = try pipeline.finish()
/// ```
///
/// Every format plugs in as a ``RecordSource`` and a ``RecordWriter``; the pipeline neither knows
/// nor asks which. Errors in the data follow ``policy``: under `.fail` the first bad input stops
/// the run; under `.skip` it is reported (``onReject``) and the run goes on. A record the
/// predicate cannot be evaluated on is no error of the data: it does not match, and is counted.
public final class RecordPipeline {
    /// What every record goes through before it is kept.
    public let transform: RecordTransform
    /// What to do with bad input.
    public let policy: RecordErrorPolicy
    /// The first record the predicate could not be evaluated on, if any.
    public private(set) var firstTransformFailure: TransformFailure?
    /// Threads sources may decode on.
    public let threads: Int
    /// Called for every input skipped under `.skip` (sources pass it to their readers).
    public var onReject: ((any Error) -> Void)?
    /// Called with every record the predicate could not be evaluated on (``transformFailed(_:count:)``),
    /// for callers that report each.
    public var onTransformFailure: ((TransformFailure) -> Void)?
    /// Called for each response read that lists zones and holds no records (`zones/list`,
    /// `changes/database`…): nothing to convert, but worth telling.
    public var onZoneListing: ((ZoneListing) -> Void)?
    /// Called now and then with the statistics so far (when set; sources check ``wantsProgress``).
    public var onProgress: ((RunStatistics) -> Void)?

    private let writer: any RecordWriter
    private let buffer: (any RecordBuffer)?
    private var remaining: Int?
    private var counts = RunStatistics()
    private var isFinished = false

    /// A pipeline into `writer`; `buffer` (a sorter) reorders records before the limit applies.
    public init(writer: any RecordWriter, transform: RecordTransform = RecordTransform(), policy: RecordErrorPolicy = .fail,
                threads: Int = 1, buffer: (any RecordBuffer)? = nil, limit: Int? = nil) {
        self.writer = writer
        self.transform = transform
        self.policy = policy
        self.threads = Processors.clampedThreads(threads)
        self.buffer = buffer
        remaining = limit
    }

    // MARK: Reading

    /// Reads `source` into the pipeline (nothing when no more records are wanted).
    public func read(_ source: any RecordSource) throws {
        guard wantsMore else { return }
        try source.run(into: self)
    }

    /// Whether more records are wanted (the limit is not reached). Sources stop reading when not.
    public var wantsMore: Bool { buffer != nil || remaining.map { $0 > 0 } ?? true }

    /// How many more records are wanted, when there is a limit and nothing reorders records.
    public var remainingRecords: Int? { buffer == nil ? remaining : nil }

    /// Applies ``transform`` to a record of `source`: `false` drops it. A record the predicate
    /// cannot be evaluated on does not match, and is counted (``transformFailed(_:count:)``).
    /// `filterMatched` says the source already found that the predicate matches.
    public func transform(_ record: inout Record, filterMatched: Bool = false, source: String, recordIndex: Int,
                          line: Int? = nil) throws -> Bool {
        do {
            return try transform.apply(&record, filterMatched: filterMatched)
        } catch {
            transformFailed(TransformFailure(source: source, line: line, recordIndex: recordIndex, underlying: error))
            return false
        }
    }

    /// Records the predicate could not be evaluated on (`count` of them, `failure` the first):
    /// they do not match, as in a CloudKit query and in a store's, whatever the input's format.
    /// Not an error of the data: a source may rule a record out before evaluating anything (a
    /// line without the predicate's literals), so an error could not be raised alike on every
    /// path. They are counted, and the first is kept for the summary (``firstTransformFailure``).
    public func transformFailed(_ failure: TransformFailure, count: Int = 1) {
        onTransformFailure?(failure)
        counts.transformFailures += count
        if firstTransformFailure == nil { firstTransformFailure = failure }
    }

    // MARK: Taking records

    /// Takes a record that passed the transform (from `database`, when the source knows it);
    /// returns `false` once no more records are wanted.
    public func take(_ record: Record, database: String? = nil) throws -> Bool {
        if let buffer {
            try buffer.add(record)
            return true
        }
        if let left = remaining {
            guard left > 0 else { return false }
            remaining = left - 1
        }
        try writer.write(record, database: database)
        return remaining.map { $0 > 0 } ?? true
    }

    /// Whether sources may hand over records encoded as NDJSON lines (``takeEncodedLines(_:records:)``):
    /// the writer takes them and nothing reorders records.
    public var takesEncodedLines: Bool { buffer == nil && writer.acceptsEncodedLines }

    /// Takes `records` records encoded as compact NDJSON lines, as `RecordJSON.encode` writes
    /// them (at most ``remainingRecords``).
    public func takeEncodedLines(_ bytes: UnsafeRawBufferPointer, records: Int) throws {
        precondition(takesEncodedLines && records <= remaining ?? .max)
        if let left = remaining { remaining = left - records }
        try writer.write(encodedLines: bytes, records: records)
    }

    /// Counts what a source read: records (those a prefilter dropped included), rejects and bytes.
    public func countInput(records: Int, rejected: Int, bytes: Int) {
        counts.recordsIn += records
        counts.rejected += rejected
        counts.bytesIn += bytes
        if let onProgress { onProgress(statistics) }
    }

    /// Handles an input of a source that is not a record, by ``policy``: under `.fail`, throws
    /// `error`; under `.skip`, counts it, writes it to the rejects sink with `write` (when the
    /// policy has a sink and `write` is given: the source knows how its format's rejects are
    /// written) and reports it (``onReject``). Sources whose readers count their own rejects
    /// report them with ``countInput(records:rejected:bytes:)`` instead.
    public func reject(_ error: any Error, writing write: ((any ByteSink) throws -> Void)? = nil) throws {
        guard case .skip(let rejects) = policy else { throw error }
        counts.rejected += 1
        if let rejects, let write { try write(rejects) }
        onReject?(error)
    }

    /// Notes a response that lists zones and holds no records (`zones/list`, `changes/database`…):
    /// counts it and hands it to ``onZoneListing``.
    public func noteZoneListing(_ listing: ZoneListing) {
        counts.zoneListings += 1
        onZoneListing?(listing)
    }

    /// Whether anyone listens to progress (sources may skip counting often when not).
    public var wantsProgress: Bool { onProgress != nil }

    /// The statistics so far.
    public var statistics: RunStatistics {
        var current = counts
        current.recordsOut = writer.recordCount
        current.bytesOut = writer.bytesWritten
        return current
    }

    // MARK: Finishing

    /// Hands on what the buffer holds, finishes the writer (committing its output), and returns
    /// the statistics. Nothing appears under the output's name unless this succeeds.
    public func finish() throws -> RunStatistics {
        precondition(!isFinished)
        isFinished = true
        if let buffer {
            try buffer.finish { record in
                if let left = remaining {
                    guard left > 0 else { return false }
                    remaining = left - 1
                }
                try writer.write(record)
                return true
            }
        }
        try writer.finish()
        return statistics
    }
}
