import CFerrySystem
import FerryIO
import FerryJSON
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Something replay takes events from, in history order.
protocol RawEventSource: AnyObject {
    /// The next event, or `nil` at the end. Its blob is valid until the next call.
    func nextRaw() throws -> RawEvent?
    /// Bytes read from the sources so far.
    var bytesRead: Int { get }
}

/// Reads histories — one or many inputs, Ferry's change log or saved CloudKit change responses,
/// lines or pretty-printed documents — as replay's events, in order.
///
/// Each input is cut by ``JSONFramer`` into units (chunks of whole lines, or whole documents);
/// with `threads > 0`, units are decoded on worker threads (``OrderedWorkers``) into their own
/// event buffers while the caller applies the events of earlier units, across input boundaries;
/// with `threads == 0`, on the calling thread. Either way events come out exactly as one decoder
/// reading everything in order would give them, with the same errors (file, line, column).
final class EventReader: RawEventSource {
    /// One unit of history and, once decoded, its events.
    ///
    /// `@unchecked Sendable`: the worker writes the results before the job is handed back; the
    /// reader reads them only after ``OrderedWorkers/takeHead()``.
    final class Job: @unchecked Sendable {
        let unit: InputUnit
        let arena = BlobArena()
        let events = EventBuffer()
        /// Lines in a line unit (blank ones too).
        var lineCount = 0
        var error: ChangeLogError?
        /// ``error``, located, to throw once the events decoded before it are handed out: a
        /// replay that stops at an earlier checkpoint (`--until`) never reads what follows.
        var pendingError: ChangeLogError?
        /// Why a whole input could not be read (a ``Kind/whole`` unit, read by the worker).
        var readFailure: (any Error)?
        /// Whether a page naming no zone took the zone given from before the unit.
        var usedGivenPageZone = false
        /// The zone of the unit's last page, if it had one.
        var finalPageZone: ZoneID?
        /// A line longer than the limit starts where this job's unit ended (the framer's verdict).
        var oversizedLine = false

        init(unit: InputUnit) { self.unit = unit }
    }

    /// A worker's own decoder. `@unchecked Sendable`: used only by jobs on that worker's queue.
    final class DecoderBox: @unchecked Sendable {
        var decoder: EventDecoder
        init(_ decoder: EventDecoder) { self.decoder = decoder }
    }

    private let nextSource: () throws -> (any ByteSource)?
    private let configuration: ChangeLogReader.Configuration
    private var framing: JSONFramer.Configuration
    private var mainDecoder: EventDecoder
    private let workers: OrderedWorkers<Job>?
    private var framer: JSONFramer?
    private var sourceCount = 0
    private var inputsDone = false
    private var finishedBytes = 0
    /// The bytes the mappings taken so far may still add up to.
    private var mappingBudget: Int
    /// The files that may still be mapped (each mapping is one of the process's limited areas).
    private var mappedFileBudget: Int
    /// Whether records of a mapped input may point at pretty-printed JSON there (else they are
    /// compacted into their blobs as they are read).
    private let pointsAtWhitespace: Bool
    /// The job whose events are being handed out.
    private var current: Job?
    /// Per input, as jobs come back in order: lines before the job and the zone of the last page.
    private var collected = (sourceIndex: -1, lines: 0, pageZone: ZoneID?.none)

    /// Called with the saved record (and its zone number) ``lookahead`` + 1 places after each
    /// event returned, while the job holds it: replay uses it to prefetch the table slot that
    /// save will need.
    var upcoming: ((RecordBlob, Int) -> Void)?
    /// How far ahead ``upcoming`` looks: enough events to cover a memory access's latency.
    static let lookahead = 8
    /// Called before the events of a unit are handed out, with the mapping its bytes lie in when
    /// its saved records may keep pointing at it (lines or documents of a mapped input), else
    /// `nil`: their blobs are then copied when applied.
    var onUnit: ((MappedFile?) -> Void)?

    /// A reader of the inputs `nextSource` opens, one after another, until it returns `nil`.
    /// Inputs of at least `minimumMappedSize` bytes, up to `mappingBudget` bytes and
    /// `mappedFileBudget` files in all, are read in place.
    init(sources nextSource: @escaping () throws -> (any ByteSource)?, configuration: ChangeLogReader.Configuration,
         decoder: EventDecoder, threads: Int, mapsInput: Bool = true, minimumMappedSize: Int = 8 << 20,
         mappingBudget: Int = .max, mappedFileBudget: Int = .max, pointsAtWhitespace: Bool = true, unitSize: Int = 4 << 20) {
        self.nextSource = nextSource
        self.configuration = configuration
        self.mappingBudget = mapsInput ? mappingBudget : 0
        self.mappedFileBudget = mappedFileBudget
        self.pointsAtWhitespace = pointsAtWhitespace
        framing = JSONFramer.Configuration(chunkSize: unitSize, maximumLineBytes: configuration.maximumLineBytes,
                                           maximumDocumentBytes: configuration.maximumDocumentBytes,
                                           maximumDepth: configuration.maximumDepth, mapsInput: mapsInput,
                                           minimumMappedSize: minimumMappedSize, minimumSplitSize: .max)
        // Small gzipped responses (``WholeInput``) are inflated by the worker that decodes them.
        framing.passesWholeInputs = threads > 0
        mainDecoder = decoder.forAnotherThread()
        if threads > 0 {
            let threads = Processors.clampedThreads(threads)
            let boxes = (0..<threads).map { _ in DecoderBox(decoder.forAnotherThread()) }
            let framing = framing
            workers = OrderedWorkers(threads: threads, jobsPerWorker: 4) { job, worker in
                Self.read(job, framing: framing)
                Self.decode(job, with: &boxes[worker].decoder, sourceName: job.unit.sourceName,
                            maximumLineBytes: framing.maximumLineBytes, givenPageZone: nil, pointsAtWhitespace: pointsAtWhitespace)
            }
        } else {
            workers = nil
        }
    }

    deinit { workers?.drain() }

    /// The number of workers worth running here: one more than the processors available (the
    /// applying thread is busy only part of the time, and waits whenever the next unit is not
    /// decoded yet), at most `limit`; one on a single processor.
    ///
    /// On 2 cores, 2M events in saved responses replayed in 3.26–3.53 s with 3 workers against
    /// 3.51–3.81 s with 2 (five alternating rounds).
    static func defaultThreads(limit: Int = 4) -> Int {
        Processors.available > 1 ? min(limit, Processors.available + 1) : 1
    }

    var bytesRead: Int { finishedBytes + (framer?.bytesRead ?? 0) }

    /// The decoder's zones (after reading, those the history named).
    var zones: ZoneRegistry { mainDecoder.zones }

    func nextRaw() throws -> RawEvent? {
        while true {
            if let job = current {
                if let event = job.events.take() {
                    if let upcoming {
                        // Two stages: the record's header now, so that its name hash is at hand
                        // when `upcoming` reads it, half the distance later.
                        if let (blob, _) = job.events.savedRecord(ahead: 2 * Self.lookahead) {
                            CFerrySystem_prefetch(blob.raw + 24) // the name hash, then the name
                        }
                        if let (blob, zone) = job.events.savedRecord(ahead: Self.lookahead) { upcoming(blob, zone) }
                    }
                    return event
                }
                current = nil
                if let error = job.pendingError { throw error }
            }
            guard let job = try nextJob() else { return nil }
            try collect(job)
            // Records of a mapped input keep pointing at it.
            onUnit?(job.unit.mapping)
            current = job
        }
    }

    // MARK: Jobs

    /// The next decoded job in order, cutting more units while there is room; `nil` at the end.
    private func nextJob() throws -> Job? {
        guard let workers else {
            guard let job = try cut() else { return nil }
            Self.decode(job, with: &mainDecoder, sourceName: job.unit.sourceName, maximumLineBytes: configuration.maximumLineBytes,
                        givenPageZone: nil, sequential: true)
            return job
        }
        while !workers.isFull, let job = try cut() { workers.submit(job) }
        return workers.takeHead()
    }

    /// Cuts the next unit of history, opening inputs as they are reached; `nil` after the last.
    private func cut() throws -> Job? {
        while !inputsDone {
            if framer == nil {
                guard let source = try nextSource() else {
                    inputsDone = true
                    return nil
                }
                var framing = self.framing
                if let size = source.sizeHint, size > mappingBudget || mappedFileBudget <= 0 { framing.mapsInput = false }
                framer = JSONFramer(source: source, configuration: framing, sourceIndex: sourceCount)
                sourceCount += 1
            }
            guard let current = framer, let piece = try current.next() else {
                finishedBytes += framer?.bytesRead ?? 0
                if let mapping = framer?.mapping {
                    mappingBudget -= mapping.bytes.count
                    mappedFileBudget -= 1
                }
                framer = nil
                continue
            }
            switch piece {
            case .unit(let unit):
                return Job(unit: unit)
            case .oversizedLine:
                // Reported when its turn comes: a job with nothing but that.
                let job = Job(unit: InputUnit(kind: .lines, owning: .allocate(byteCount: 1, alignment: 16), count: 0,
                                              sourceName: current.sourceName, sourceIndex: current.sourceIndex, offset: 1,
                                              skipsByteOrderMark: false))
                job.oversizedLine = true
                inputsDone = true
                return job
            }
        }
        return nil
    }

    /// Checks a decoded job in order: decodes it again when it depended on an earlier page's
    /// zone, and throws its error with the line counted from the start of its input.
    private func collect(_ job: Job) throws {
        let unit = job.unit
        if unit.sourceIndex != collected.sourceIndex {
            // Lines count per input; the latest page's zone carries over to the next input (a
            // folder of saved pages has the empty last page of a fetch in a file of its own).
            collected = (unit.sourceIndex, 0, collected.pageZone)
        }
        if job.oversizedLine {
            throw ChangeLogError(.tooLarge, "expected a line of at most \(configuration.maximumLineBytes) bytes, found a longer one",
                                 source: unit.sourceName, line: collected.lines + 1, column: 1)
        }
        if let failure = job.readFailure { throw failure }
        if unit.wasReadWhole { finishedBytes += unit.bytes.count }
        if workers != nil && job.usedGivenPageZone && collected.pageZone != nil {
            job.events.reset()
            job.arena.reset()
            job.error = nil
            Self.decode(job, with: &mainDecoder, sourceName: unit.sourceName, maximumLineBytes: configuration.maximumLineBytes,
                        givenPageZone: collected.pageZone, pointsAtWhitespace: pointsAtWhitespace)
        }
        if var error = job.error {
            if unit.kind == .lines {
                error.line = (error.line ?? 0) + collected.lines
                error.underlying?.line = error.line
            }
            job.pendingError = error
            return
        }
        collected.lines += job.lineCount
        if let zone = job.finalPageZone { collected.pageZone = zone }
    }

    // MARK: Decoding

    /// Reads a ``InputUnit/Kind/whole`` unit's input (a small gzip file, inflated here), which
    /// makes it a unit of documents, as the framer would have read it from a stream: up to
    /// ``JSONFramer/Configuration/maximumStreamedDocumentBytes``.
    static func read(_ job: Job, framing: JSONFramer.Configuration) {
        do {
            try job.unit.readWhole(as: framing)
        } catch {
            job.readFailure = error
        }
    }

    /// Decodes `job`'s unit into its events with `decoder`, stopping at the first bad line or
    /// document. Line units report lines counted within the unit; document units, within the input.
    static func decode(_ job: Job, with decoder: inout EventDecoder, sourceName: String, maximumLineBytes: Int,
                       givenPageZone: ZoneID?, pointsAtWhitespace: Bool = false, sequential: Bool = false) {
        if sequential {
            decoder.continueBlock() // on with the zone of the latest page, of this input or an earlier one
        } else {
            decoder.startBlock(pageZone: givenPageZone)
        }
        decoder.scanner.arena = job.arena
        decoder.scanner.referencesText = true // the unit outlives its events
        // Records of a mapped input may keep pointing at it, pretty-printed or not (see `onUnit`):
        // compacted when written, not when read.
        decoder.scanner.pointsAtWhitespace = pointsAtWhitespace && job.unit.mapping != nil
        defer {
            decoder.scanner.arena = nil
            decoder.scanner.referencesText = false
            decoder.scanner.pointsAtWhitespace = false
            job.usedGivenPageZone = decoder.usedGivenPageZone
            job.finalPageZone = decoder.ownPageZone
        }
        guard job.readFailure == nil else { return }
        job.unit.withBytes { _ in
            let text = job.unit.content
            if job.unit.kind == .documents {
                do throws(RecordFormatError) {
                    try decoder.decodeDocuments(text, into: job.events)
                } catch {
                    job.error = ChangeLogError.located(error, in: text, source: sourceName, line: 1)
                }
                return
            }
            guard let base = text.baseAddress else { return }
            var start = 0
            var line = 0
            defer { job.lineCount = line }
            while start < text.count {
                let newline = memchr(base + start, 0x0A, text.count - start)
                let end = newline.map { UnsafeRawPointer($0) - base } ?? text.count
                line += 1
                var stop = end
                if stop > start && text[stop - 1] == 0x0D { stop -= 1 }
                let content = UnsafeRawBufferPointer(rebasing: text[start..<stop])
                start = end + 1
                if content.count > maximumLineBytes {
                    job.error = ChangeLogError(.tooLarge, "expected a line of at most \(maximumLineBytes) bytes, found a longer one",
                                               source: sourceName, line: line, column: 1)
                    return
                }
                if RecordDocumentDecoder.isBlank(content) { continue }
                do throws(RecordFormatError) {
                    try decoder.decodeLine(content, into: job.events)
                } catch {
                    job.error = ChangeLogError.located(error, in: content, source: sourceName, line: line)
                    return
                }
            }
        }
    }
}
