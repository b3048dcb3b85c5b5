import FerryIO
import FerryPipeline
import FerryRecords

/// The engine of ``JSONRecordSource``: reads JSON record inputs on several threads into a
/// ``RecordPipeline``, keeping the input order.
///
/// ``JSONFramer`` cuts each input into units (chunks of whole lines, a whole pretty-printed
/// document, or runs of a large response's records); worker threads decode them, apply the
/// pipeline's transform (after the prefilter's look at raw bytes) and, when the pipeline takes
/// encoded lines, encode them, exactly as ``NDJSONReader`` and ``NDJSONWriter`` would (through
/// the same ``RecordUnitDecoder``); the calling thread hands each unit's records, rejects and
/// reports to the pipeline in input order. The pipeline holds everything else: the one count
/// (``RecordPipeline/countInput(records:rejected:bytes:)``), the one limit
/// (``RecordPipeline/remainingRecords``), the one rejects path (``RecordPipeline/reject(_:writing:)``).
///
/// Several inputs (a folder of saved responses) flow through one run, so the workers stay busy
/// across files. Memory is bounded: a few units per worker are in flight, and the pages of a
/// mapped input are given back behind the pipeline. Errors are reported as the sequential reader
/// reports them (file, line, column, record index); under ``RecordErrorPolicy/fail`` the first
/// bad input stops the run.
final class ParallelJSONReader {
    private let nextSource: () throws -> (any ByteSource)?
    private let pipeline: RecordPipeline
    private let framing: JSONFraming
    private let decoder: RecordUnitDecoder
    /// Whether the pipeline takes encoded lines (the workers encode the records), else records.
    private let encodes: Bool

    /// Per input, as units come back in order: lines and items (records and rejects) before the
    /// unit, and its mapping (checked when the input is done, pages given back behind).
    private var collected = (sourceIndex: -1, lines: 0, items: 0, mapping: MappedFile?.none, releasedUpTo: UnsafeRawPointer?.none)
    /// Bytes of the inputs read to their end (or cut off), and those already counted.
    private var finishedBytes = 0
    private var countedBytes = 0
    /// The framer of the input being cut.
    private var framer: JSONFramer?
    /// Whether the pipeline wants no more records.
    private var stopped = false

    /// A reader of the inputs `nextSource` opens, one after another, until it returns `nil`,
    /// into `pipeline`; `prefilter` looks at raw records before the pipeline's transform.
    init(sources nextSource: @escaping () throws -> (any ByteSource)?, framing: JSONFraming, pipeline: RecordPipeline,
         prefilter: NDJSONPrefilter?) {
        self.nextSource = nextSource
        self.pipeline = pipeline
        var framing = framing
        // Inputs a worker can read on its own (small gzip files) are read by the workers.
        framing.passesWholeInputs = true
        self.framing = framing
        encodes = pipeline.takesEncodedLines
        let transform = pipeline.transform
        let apply: RecordUnitDecoder.Transform = { (record: inout Record, matched: Bool) throws -> Bool in
            try transform.apply(&record, filterMatched: matched)
        }
        decoder = RecordUnitDecoder(
            decoder: RecordDocumentDecoder(configuration: RecordJSON.Configuration(maximumDepth: framing.maximumDepth), prefilter: prefilter),
            transform: transform.isIdentity ? nil : apply, encodes: encodes, failsFast: !pipeline.policy.skips,
            maximumLineBytes: framing.maximumLineBytes, framing: framing)
    }

    // MARK: Running

    /// Reads everything (or until the pipeline wants no more records) into the pipeline.
    func run() throws {
        let decoder = self.decoder
        let workers = OrderedWorkers<RecordUnitResult>(threads: pipeline.threads, jobsPerWorker: 4) { result, _ in
            decoder.decode(result)
        }
        defer { workers.drain() }
        var sourceIndex = 0
        var inputsDone = false
        if pipeline.remainingRecords == 0 { stopped = true }

        while !stopped {
            // Keep the workers fed.
            while !workers.isFull && !inputsDone && !stopped {
                if framer == nil {
                    guard let source = try nextSource() else {
                        inputsDone = true
                        break
                    }
                    framer = JSONFramer(source: source, configuration: framing, sourceIndex: sourceIndex)
                    sourceIndex += 1
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
                    if stopped { break } // the limit was reached before it
                    finishedBytes += current.bytesRead
                    framer = nil
                    try pipeline.reject(error)
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
            // Hand on what is finished; wait for the oldest unit when nothing more can be cut.
            if workers.isFull || inputsDone {
                try collect(workers.takeHead()!)
            }
            while !stopped && workers.isHeadDone { try collect(workers.takeHead()!) }
        }
        finishedBytes += framer?.bytesRead ?? 0
        framer = nil
        countInput(records: 0)
        if !stopped || inputsDone { try finishCollectedInput() }
    }

    /// Counts records read and the bytes read since the last count.
    private func countInput(records: Int) {
        let bytes = finishedBytes + (framer?.bytesRead ?? 0)
        pipeline.countInput(records: records, rejected: 0, bytes: bytes - countedBytes)
        countedBytes = bytes
    }

    /// Reports a unit's events and hands its records to the pipeline, in order.
    private func collect(_ result: RecordUnitResult) throws {
        let unit = result.unit
        if unit.sourceIndex != collected.sourceIndex {
            try finishCollectedInput()
            collected = (unit.sourceIndex, 0, 0, unit.mapping, unit.mapping?.bytes.baseAddress)
        }
        guard !stopped else { return }
        let isLines = unit.kind == .lines
        var recordsDone = 0 // records of the unit handed over so far
        var written = 0 // bytes of its output handed over so far
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
                try pipeline.reject(error) { rejects in try raw.withUnsafeBytes { try RecordDocumentDecoder.writeReject($0, to: rejects) } }
            case .transformFailure(let underlying):
                pipeline.transformFailed(TransformFailure(source: unit.sourceName, line: line, recordIndex: index, underlying: underlying))
            case .oversizedLine(let range):
                let error = RecordDocumentDecoder.oversizedLineError(limit: framing.maximumLineBytes, source: unit.sourceName,
                                                                     line: line, recordIndex: index)
                try pipeline.reject(error) { rejects in
                    try unit.withBytes { bytes in try rejects.write(UnsafeRawBufferPointer(rebasing: bytes[range])) }
                    try rejects.write([0x0A])
                }
            case .zoneListing(let response):
                pipeline.noteZoneListing(ZoneListing(source: unit.sourceName, line: line, response: response))
            case .inputFailure(let error):
                // A file its worker could not read whole (a damaged gzip layer, a file gone):
                // under skip, the file is skipped and named, as a document that does not parse
                // is; it holds no record text for the rejects file, and stays as it was.
                try pipeline.reject(error)
            }
        }
        try deliver(result, upTo: result.keptCount, done: &recordsDone, written: &written)
        if unit.wasReadWhole { finishedBytes += unit.bytes.count }
        if isLines { collected.lines += result.lineCount }
        collected.items += result.itemCount
        releaseMapped(unit)
        countInput(records: result.recordsRead)
    }

    /// Hands the unit's records up to number `count` to the pipeline, as many as it wants.
    private func deliver(_ result: RecordUnitResult, upTo count: Int, done: inout Int, written: inout Int) throws {
        guard !stopped, count > done else { return }
        if encodes {
            var upTo = count
            if let remaining = pipeline.remainingRecords, upTo - done >= remaining {
                upTo = done + remaining
                stopped = true
            }
            guard upTo > done else { return }
            let end = result.recordEnds[upTo - 1]
            try pipeline.takeEncodedLines(UnsafeRawBufferPointer(rebasing: result.output.bytes[written..<end]), records: upTo - done)
            written = end
            done = upTo
        } else {
            while done < count {
                let record = result.records[done]
                done += 1
                if try !pipeline.take(record) {
                    stopped = true
                    return
                }
            }
        }
    }

    /// A line longer than the limit, found by the framer once every unit before it is handed
    /// on: fails the run under ``RecordErrorPolicy/fail``; otherwise it is counted, reported and
    /// streamed to the rejects file without being held.
    private func rejectOversizedLine(_ framer: JSONFramer) throws {
        if framer.sourceIndex != collected.sourceIndex {
            // The first piece of a new input: nothing of it was collected yet.
            try finishCollectedInput()
            collected = (framer.sourceIndex, 0, 0, framer.mapping, framer.mapping?.bytes.baseAddress)
        }
        collected.lines += 1
        collected.items += 1
        let error = RecordDocumentDecoder.oversizedLineError(limit: framing.maximumLineBytes, source: framer.sourceName,
                                                             line: collected.lines, recordIndex: collected.items)
        var streamed = false
        try pipeline.reject(error) { rejects in
            streamed = true
            try framer.streamOversizedLine(to: rejects)
        }
        if !streamed { try framer.streamOversizedLine(to: nil) } // skipped without a rejects file
    }

    /// The input whose units were being collected is done: checks that a mapped file was not
    /// modified in place while it was read.
    private func finishCollectedInput() throws {
        guard collected.sourceIndex >= 0 else { return }
        if let mapping = collected.mapping { try mapping.checkUnchanged() }
        collected.mapping = nil
    }

    /// Gives back the pages of a mapped unit once it is handed on (never read again), so that
    /// they no longer count towards the process's memory. They stay in the page cache.
    private func releaseMapped(_ unit: InputUnit) {
        #if os(Linux)
        guard unit.mapping != nil, let start = collected.releasedUpTo, let base = unit.bytes.baseAddress,
              let released = Syscall.discardPages(from: start, to: base + unit.bytes.count) else { return }
        collected.releasedUpTo = released
        #endif
    }
}
