import FerryIO
import FerryPipeline
import FerryRecords

/// Reads JSON record inputs on worker threads and hands each record to a closure, in input
/// order: a thin adapter over ``JSONRecordSource`` and a ``RecordPipeline``, for callers that do
/// not run a pipeline of their own yet (`ferry inspect`). New code reads through a pipeline.
public final class NDJSONParallelConverter {
    /// How the inputs are cut and what they may hold.
    public typealias Configuration = JSONFraming

    /// Where the records go.
    public enum Destination {
        /// Each record handed over in order; returning `false` stops the run.
        case records((Record) throws -> Bool)
    }

    /// Counts of a run.
    public struct Statistics: Sendable {
        /// Records read.
        public var recordsRead = 0
        /// Inputs rejected.
        public var rejected = 0
        /// Bytes read from the sources.
        public var bytesRead = 0

        init(_ run: RunStatistics) {
            recordsRead = run.recordsIn
            rejected = run.rejected
            bytesRead = run.bytesIn
        }
    }

    private let nextSource: () throws -> (any ByteSource)?
    private let destination: Destination
    private let policy: RecordErrorPolicy
    private let configuration: Configuration
    private let threads: Int
    /// Called (on the calling thread, in input order) for every input skipped.
    public var onReject: ((any Error) -> Void)?
    /// Called (on the calling thread, in input order) for every response that lists zones only.
    public var onZoneListing: ((ZoneListing) -> Void)?
    /// Called now and then with the statistics so far (for progress).
    public var onProgress: ((Statistics) -> Void)?

    /// Reads the inputs `nextSource` opens, one after another, until it returns `nil`, on
    /// `threads` workers; nothing is read before ``run()``.
    public init(sources nextSource: @escaping () throws -> (any ByteSource)?, destination: Destination,
                policy: RecordErrorPolicy = .fail, configuration: Configuration = .init(), threads: Int = Processors.available) {
        self.nextSource = nextSource
        self.destination = destination
        self.policy = policy
        self.configuration = configuration
        self.threads = threads
    }

    /// Reads everything (until the destination says stop) and returns the counts.
    public func run() throws -> Statistics {
        let writer = switch destination {
        case .records(let take): ClosureWriter(take)
        }
        let pipeline = RecordPipeline(writer: writer, policy: policy, threads: threads)
        pipeline.onReject = onReject
        pipeline.onZoneListing = onZoneListing
        if let onProgress { pipeline.onProgress = { onProgress(Statistics($0)) } }
        do {
            try pipeline.read(JSONRecordSource(name: "", inputs: nextSource, configuration: configuration))
        } catch is ClosureWriter.Stop {}
        return Statistics(try pipeline.finish())
    }
}

/// Hands each record written to a closure; stops the run (by throwing ``Stop``) when it says so.
private final class ClosureWriter: RecordWriter {
    struct Stop: Error {}
    private let take: (Record) throws -> Bool
    private(set) var recordCount = 0
    var bytesWritten: Int { 0 }

    init(_ take: @escaping (Record) throws -> Bool) { self.take = take }

    func write(_ record: Record) throws {
        recordCount += 1
        if try !take(record) { throw Stop() }
    }

    func finish() throws {}
}
