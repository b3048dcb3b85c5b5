import FerryIO
import FerryPipeline
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads JSON record inputs on several threads, keeping the input order: ``JSONFramer`` cuts
/// each input into units (chunks of whole lines, or a whole pretty-printed document), worker
/// threads decode, filter and transform them — and, for an NDJSON destination, encode them —
/// exactly as ``NDJSONReader`` and ``NDJSONWriter`` would (through the same unit decoder), and
/// the calling thread hands out each unit's records, rejects and reports in input order.
///
/// Several inputs (a folder of saved responses) flow through one run, so the workers stay busy
/// across files. Memory is bounded: a few units per worker are in flight. Errors are reported
/// as the sequential reader reports them (file, line, column, record index); under
/// ``RecordErrorPolicy/fail`` the first bad input stops the run.
public final class NDJSONParallelConverter {
    /// Threads and chunking.
    public struct Configuration: Sendable {
        /// Worker threads.
        public var threads: Int
        /// Bytes of input per chunk of lines (whole lines; a longer line makes a longer chunk).
        public var chunkSize: Int
        /// The longest line accepted.
        public var maximumLineBytes: Int
        /// The largest multi-line document (pretty-printed response) read whole; from a source of
        /// unknown size (a pipe, a gzip stream), no more than ``maximumLineBytes``.
        public var maximumDocumentBytes: Int
        /// Deepest JSON nesting accepted.
        public var maximumDepth: Int
        /// Whether a source that can be mapped (a regular file) is read in place rather than
        /// copied in with `read` (on Linux; elsewhere inputs are always read). Chunks are then cut
        /// from the mapping, and its pages are given back behind the writer, so memory stays
        /// bounded as with `read`. A file truncated while it is mapped raises `SIGBUS` (the CLI
        /// turns that into an error; see ``TemporaryFiles``); one modified in place is reported
        /// by ``run()`` before it returns.
        public var mapsInput: Bool
        /// Files smaller than this are read, not mapped: for a small file, mapping, faulting in
        /// and unmapping costs more than the copy `read` makes.
        public var minimumMappedSize: Int
        /// Response documents at least this large are cut into runs of their records, decoded
        /// on every worker.
        public var minimumSplitSize: Int

        public init(threads: Int = Processors.available, chunkSize: Int = 1 << 20, maximumLineBytes: Int = 64 << 20,
                    maximumDocumentBytes: Int = 1 << 30, maximumDepth: Int = 512, mapsInput: Bool = true,
                    minimumMappedSize: Int = 8 << 20, minimumSplitSize: Int = 8 << 20) {
            self.minimumSplitSize = minimumSplitSize
            self.threads = Processors.clampedThreads(threads)
            self.chunkSize = max(1 << 12, chunkSize)
            self.maximumLineBytes = maximumLineBytes
            self.maximumDocumentBytes = maximumDocumentBytes
            self.maximumDepth = maximumDepth
            self.mapsInput = mapsInput
            self.minimumMappedSize = minimumMappedSize
        }

        var framing: JSONFramer.Configuration {
            var framing = JSONFramer.Configuration(chunkSize: chunkSize, maximumLineBytes: maximumLineBytes,
                                                   maximumDocumentBytes: maximumDocumentBytes, maximumDepth: maximumDepth,
                                                   mapsInput: mapsInput, minimumMappedSize: minimumMappedSize,
                                                   minimumSplitSize: minimumSplitSize)
            // Inputs a worker can read on its own (small gzip files) are read by the workers.
            framing.passesWholeInputs = true
            return framing
        }
    }

    /// Where the records go.
    public enum Destination {
        /// NDJSON lines, encoded on the workers, handed over in order with their record count.
        case encodedLines((UnsafeRawBufferPointer, Int) throws -> Void)
        /// Each record handed over in order (for writers that must see records: XML, archives,
        /// stores, sorting); returning `false` stops the run.
        case records((Record) throws -> Bool)
    }

    /// Counts of a run.
    public struct Statistics: Sendable {
        /// Records read, including those the prefilter dropped.
        public var recordsRead = 0
        /// Records the prefilter dropped without a full decode.
        public var recordsDropped = 0
        /// Records written (or handed over).
        public var recordsWritten = 0
        /// Inputs rejected.
        public var rejected = 0
        /// Records whose transform threw (skipped under ``RecordErrorPolicy/skip(rejects:)``).
        public var transformFailures = 0
        /// Bytes read from the sources.
        public var bytesRead = 0
        /// Bytes written to the sink.
        public var bytesWritten = 0
        /// Inputs read.
        public var inputs = 0
    }

    private var nextSource: () throws -> (any ByteSource)?
    private let destination: Destination
    private let policy: RecordErrorPolicy
    private let configuration: Configuration
    private let decoder: RecordUnitDecoder
    /// The most records to write, or `nil` for all.
    public var limit: Int?
    /// Called (on the calling thread, in input order) for every input skipped.
    public var onReject: ((any Error) -> Void)?
    /// Called (on the calling thread, in input order) for every record whose transform threw:
    /// such a record does not match, whatever the policy.
    public var onTransformFailure: ((TransformFailure) -> Void)?
    /// Called (on the calling thread, in input order) for every response that lists zones only.
    public var onZoneListing: ((ZoneListing) -> Void)?
    /// Called after each unit is written, with the statistics so far (for progress).
    public var onProgress: ((Statistics) -> Void)?
    /// Called when an input has been read to its end, with its name.
    public var onInputFinished: ((String) -> Void)?

    private var statistics = Statistics()
    /// Per input, as units come back in order: lines and items (records and rejects) before the
    /// unit, and its mapping (checked when the input is done, pages given back behind).
    private var collected = (sourceIndex: -1, lines: 0, items: 0, mapping: MappedFile?.none, releasedUpTo: UnsafeRawPointer?.none,
                             name: "")
    private var finishedBytes = 0
    private var stopped = false

    /// Creates a converter from `source` to `sink` (NDJSON); nothing is read before ``run()``.
    public convenience init(source: any ByteSource, sink: any ByteSink, policy: RecordErrorPolicy = .fail,
                            transform: RecordTransform = RecordTransform(), configuration: Configuration = .init()) {
        var given: (any ByteSource)? = source
        self.init(sources: {
            defer { given = nil }
            return given
        }, destination: .encodedLines { bytes, _ in try sink.write(bytes) }, policy: policy, transform: transform,
                  configuration: configuration)
    }

    /// Creates a converter reading the inputs `nextSource` opens, one after another, until it
    /// returns `nil`, applying `transform` on the workers (its predicate's literals and fields
    /// looked at first, on raw lines); nothing is read before ``run()``.
    public convenience init(sources nextSource: @escaping () throws -> (any ByteSource)?, destination: Destination,
                            policy: RecordErrorPolicy = .fail, transform: RecordTransform = RecordTransform(),
                            configuration: Configuration = .init()) {
        let apply: RecordUnitDecoder.Transform = { (record: inout Record, matched: Bool) throws -> Bool in
            try transform.apply(&record, filterMatched: matched)
        }
        let prefilter: NDJSONPrefilter? = transform.filter.flatMap { NDJSONPrefilter(for: $0) }
        self.init(sources: nextSource, destination: destination, policy: policy, prefilter: prefilter,
                  transform: transform.isIdentity ? nil : apply, configuration: configuration)
    }

    /// The designated initializer: `prefilter` and `transform` given as they run.
    package init(sources nextSource: @escaping () throws -> (any ByteSource)?, destination: Destination, policy: RecordErrorPolicy,
                 prefilter: NDJSONPrefilter?, transform: RecordUnitDecoder.Transform?, configuration: Configuration) {
        self.nextSource = nextSource
        self.destination = destination
        self.policy = policy
        self.configuration = configuration
        var encodes = false
        if case .encodedLines = destination { encodes = true }
        decoder = RecordUnitDecoder(
            decoder: RecordDocumentDecoder(configuration: RecordJSON.Configuration(maximumDepth: configuration.maximumDepth), prefilter: prefilter),
            transform: transform, encodes: encodes, failsFast: !policy.skips, maximumLineBytes: configuration.maximumLineBytes,
            framing: configuration.framing)
    }

    // MARK: Running

    /// Converts everything (or up to ``limit`` records) and returns the counts. The sink is
    /// written but not committed.
    public func run() throws -> Statistics {
        let decoder = self.decoder
        let workers = OrderedWorkers<RecordUnitResult>(threads: configuration.threads, jobsPerWorker: 4) { result, _ in
            decoder.decode(result)
        }
        defer { workers.drain() }
        var framer: JSONFramer?
        var sourceIndex = 0
        var inputsDone = false
        if limit == 0 { stopped = true }

        while !stopped {
            // Keep the workers fed.
            while !workers.isFull && !inputsDone && !stopped {
                if framer == nil {
                    guard let source = try nextSource() else {
                        inputsDone = true
                        break
                    }
                    framer = JSONFramer(source: source, configuration: configuration.framing, sourceIndex: sourceIndex)
                    sourceIndex += 1
                    statistics.inputs += 1
                }
                guard let current = framer else { continue }
                let next: JSONFramer.Piece?
                do {
                    next = try current.next()
                } catch where !(error is RecordFormatError) {
                    // An input that cannot be read further (a gzip stream damaged partway, a
                    // truncated download; a read error): under skip, the rest of it is skipped and
                    // named, in order, and the next input read. What it held past the damage
                    // cannot be recovered for the rejects file.
                    // What came before it first (its own errors, in order, included).
                    while let result = workers.takeHead() { try collect(result) }
                    if stopped { break } // --limit was reached before it
                    guard case .skip = policy else { throw error }
                    statistics.rejected += 1
                    onReject?(error)
                    finishedBytes += current.bytesRead
                    framer = nil
                    continue
                }
                guard let piece = next else {
                    finishedBytes += current.bytesRead
                    framer = nil
                    continue
                }
                switch piece {
                case .unit(let unit):
                    workers.submit(RecordUnitResult(unit: unit))
                case .oversizedLine:
                    // Reported in order: everything before it first.
                    while let result = workers.takeHead() { try collect(result) }
                    if stopped { break }
                    try rejectOversizedLine(current)
                }
            }
            if workers.count == 0 {
                if inputsDone || stopped { break }
                continue
            }
            // Write what is finished; wait for the oldest unit when nothing more can be cut.
            if workers.isFull || inputsDone {
                try collect(workers.takeHead()!)
            }
            while !stopped && workers.isHeadDone { try collect(workers.takeHead()!) }
        }
        finishedBytes += framer?.bytesRead ?? 0
        statistics.bytesRead = finishedBytes
        if !stopped || inputsDone { try finishCollectedInput() }
        return statistics
    }

    /// Reports a unit's events and writes (or hands over) its records, in order.
    private func collect(_ result: RecordUnitResult) throws {
        let unit = result.unit
        if unit.sourceIndex != collected.sourceIndex {
            try finishCollectedInput()
            collected = (unit.sourceIndex, 0, 0, unit.mapping, unit.mapping?.bytes.baseAddress, unit.sourceName)
        }
        guard !stopped else { return }
        let isLines = unit.kind == .lines
        var recordsDone = 0 // records of the unit handed over so far
        var written = 0 // bytes of its output written so far
        for event in result.events {
            try deliver(result, upTo: event.recordsBefore, done: &recordsDone, written: &written)
            if stopped { break }
            let line = isLines ? collected.lines + event.line : event.line
            let index = collected.items + event.localIndex
            switch event.kind {
            case .reject(var error, let raw):
                error.source = unit.sourceName
                error.line = line
                error.recordIndex = index
                switch policy {
                case .fail:
                    throw error
                case .skip(let rejects):
                    statistics.rejected += 1
                    if let rejects { try raw.withUnsafeBytes { try RecordDocumentDecoder.writeReject($0, to: rejects) } }
                    onReject?(error)
                }
            case .transformFailure(let underlying):
                let failure = TransformFailure(source: unit.sourceName, line: line, recordIndex: index, underlying: underlying)
                statistics.transformFailures += 1
                onTransformFailure?(failure)
            case .oversizedLine(let range):
                let error = RecordDocumentDecoder.oversizedLineError(limit: configuration.maximumLineBytes, source: unit.sourceName,
                                                                 line: line, recordIndex: index)
                guard case .skip(let rejects) = policy else { throw error }
                statistics.rejected += 1
                if let rejects {
                    try unit.withBytes { bytes in try rejects.write(UnsafeRawBufferPointer(rebasing: bytes[range])) }
                    try rejects.write([0x0A])
                }
                onReject?(error)
            case .zoneListing(let response):
                onZoneListing?(ZoneListing(source: unit.sourceName, line: line, response: response))
            case .inputFailure(let error):
                // A file its worker could not read whole (a damaged gzip layer, a file gone):
                // under skip, the file is skipped and named, as a document that does not parse
                // is; it holds no record text for the rejects file, and stays as it was.
                guard case .skip = policy else { throw error }
                statistics.rejected += 1
                onReject?(error)
            }
        }
        try deliver(result, upTo: result.keptCount, done: &recordsDone, written: &written)
        if unit.wasReadWhole { finishedBytes += unit.bytes.count }
        statistics.recordsRead += result.recordsRead
        statistics.recordsDropped += result.recordsDropped
        if isLines { collected.lines += result.lineCount }
        collected.items += result.itemCount
        releaseMapped(unit)
        onProgress?(statistics)
    }

    /// Writes (or hands over) the unit's records up to number `count`, respecting the limit.
    private func deliver(_ result: RecordUnitResult, upTo count: Int, done: inout Int, written: inout Int) throws {
        guard !stopped, count > done else { return }
        var upTo = count
        if let limit {
            let remaining = limit - statistics.recordsWritten
            if upTo - done >= remaining {
                upTo = done + remaining
                stopped = true
            }
        }
        guard upTo > done else { return }
        switch destination {
        case .encodedLines(let take):
            let end = result.recordEnds[upTo - 1]
            try take(UnsafeRawBufferPointer(rebasing: result.output.bytes[written..<end]), upTo - done)
            statistics.bytesWritten += end - written
            statistics.recordsWritten += upTo - done
            written = end
            done = upTo
        case .records(let take):
            while done < upTo {
                let record = result.records[done]
                done += 1
                statistics.recordsWritten += 1
                if try !take(record) {
                    stopped = true
                    return
                }
            }
        }
    }

    /// A line longer than the limit, found by the framer once every unit before it is written:
    /// throws under ``RecordErrorPolicy/fail``; otherwise counts and reports it and streams it to
    /// the rejects file without holding it.
    private func rejectOversizedLine(_ framer: JSONFramer) throws {
        if framer.sourceIndex != collected.sourceIndex {
            // The first piece of a new input: nothing of it was collected yet.
            try finishCollectedInput()
            collected = (framer.sourceIndex, 0, 0, framer.mapping, framer.mapping?.bytes.baseAddress, framer.sourceName)
        }
        collected.lines += 1
        collected.items += 1
        let error = RecordDocumentDecoder.oversizedLineError(limit: configuration.maximumLineBytes, source: framer.sourceName,
                                                         line: collected.lines, recordIndex: collected.items)
        guard case .skip(let rejects) = policy else { throw error }
        statistics.rejected += 1
        onReject?(error)
        try framer.streamOversizedLine(to: rejects)
    }

    /// The input whose units were being collected is done: checks that a mapped file was not
    /// modified in place while it was read.
    private func finishCollectedInput() throws {
        guard collected.sourceIndex >= 0 else { return }
        if let mapping = collected.mapping { try mapping.checkUnchanged() }
        onInputFinished?(collected.name)
        collected.mapping = nil
    }

    /// Gives back the pages of a mapped unit once it is written (never read again), so that they
    /// no longer count towards the process's memory. They stay in the page cache.
    private func releaseMapped(_ unit: InputUnit) {
        #if os(Linux)
        guard unit.mapping != nil, let start = collected.releasedUpTo, let base = unit.bytes.baseAddress else { return }
        let end = base + unit.bytes.count
        let page = Self.pageSize
        let from = Int(bitPattern: start) & ~(page - 1), to = Int(bitPattern: end) & ~(page - 1)
        guard to > from else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, MADV_DONTNEED)
        collected.releasedUpTo = UnsafeRawPointer(bitPattern: to)
        #endif
    }

    #if os(Linux)
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    #endif
}
