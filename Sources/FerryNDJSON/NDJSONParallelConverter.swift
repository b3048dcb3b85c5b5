import Dispatch
import FerryIO
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Converts NDJSON to NDJSON on several threads, keeping the input order: the reading thread cuts
/// the input into chunks of whole lines, workers decode, filter, transform and encode them
/// (exactly as ``NDJSONReader`` and ``NDJSONWriter`` would, through ``NDJSONLineDecoder``), and
/// the reading thread writes each chunk's output, rejects and reports in input order.
///
/// Memory is bounded: at most `2 × threads` chunks are in flight. Errors are reported as the
/// sequential reader reports them (file, line, column, record index); under
/// ``RecordErrorPolicy/fail`` the first bad input stops the run.
///
/// For line-delimited input only: a first line that does not hold a complete JSON value (a
/// pretty-printed response) needs ``NDJSONReader``'s document mode — see ``canConvert(_:)``.
public final class NDJSONParallelConverter {
    /// Threads and chunking.
    public struct Configuration: Sendable {
        /// Worker threads.
        public var threads: Int
        /// Bytes of input per chunk (whole lines; a longer line makes a longer chunk).
        public var chunkSize: Int
        /// The longest line accepted.
        public var maximumLineBytes: Int
        /// Deepest JSON nesting accepted.
        public var maximumDepth: Int
        /// Whether a source that can be mapped (a regular file) is read in place rather than
        /// copied in with `read` (on Linux; elsewhere inputs are always read). Chunks are then cut
        /// from the mapping, and its pages are given back behind the writer, so memory stays
        /// bounded as with `read`. A file truncated while
        /// it is mapped raises `SIGBUS` (the CLI turns that into an error; see
        /// ``TemporaryFiles``); one modified in place is reported by ``run()`` before it returns.
        public var mapsInput: Bool

        public init(threads: Int = Processors.available, chunkSize: Int = 1 << 20,
                    maximumLineBytes: Int = 64 << 20, maximumDepth: Int = 512, mapsInput: Bool = true) {
            self.threads = max(1, threads)
            self.chunkSize = max(1 << 12, chunkSize)
            self.maximumLineBytes = maximumLineBytes
            self.maximumDepth = maximumDepth
            self.mapsInput = mapsInput
        }
    }

    /// What to do with each record: `false` drops it; it may be changed (projection). Runs on
    /// worker threads.
    public typealias Transform = @Sendable (inout Record) throws -> Bool

    /// A transform that threw for one record.
    public struct TransformFailure: Error, CustomStringConvertible {
        /// The input's name.
        public var source: String
        /// 1-based line of the record.
        public var line: Int
        /// 1-based index of the record in the input.
        public var recordIndex: Int
        /// What the transform threw.
        public var underlying: any Error

        public var description: String { "\(source):\(line): record \(recordIndex): \(underlying)" }
    }

    /// Counts of a run.
    public struct Statistics: Sendable {
        /// Records read, including those the prefilter dropped.
        public var recordsRead = 0
        /// Records the prefilter dropped without a full decode.
        public var recordsDropped = 0
        /// Records written.
        public var recordsWritten = 0
        /// Inputs rejected.
        public var rejected = 0
        /// Records whose transform threw (skipped under ``RecordErrorPolicy/skip(rejects:)``).
        public var transformFailures = 0
        /// Bytes read from the source.
        public var bytesRead = 0
        /// Bytes written to the sink.
        public var bytesWritten = 0
    }

    private let source: any ByteSource
    private let sink: any ByteSink
    private let policy: RecordErrorPolicy
    private let configuration: Configuration
    private let decoder: NDJSONLineDecoder
    private let transform: Transform?
    /// The most records to write, or `nil` for all.
    public var limit: Int?
    /// Called (on the calling thread, in input order) for every input skipped.
    public var onReject: ((any Error) -> Void)?
    /// Called (on the calling thread, in input order) for every record whose transform threw,
    /// under ``RecordErrorPolicy/skip(rejects:)``; under `.fail` the failure is thrown.
    public var onTransformFailure: ((TransformFailure) -> Void)?
    /// Called after each chunk is written, with the statistics so far (for progress).
    public var onProgress: ((Statistics) -> Void)?

    private var statistics = Statistics()
    /// Input lines of the chunks written so far (chunks count their own lines, on the workers).
    private var linesDone = 0
    /// Where the pages of a mapped input already given back end.
    private var releasedUpTo: UnsafeRawPointer?
    /// Input arrays of written chunks, kept for the next chunks: a fresh megabyte per chunk was
    /// given back to the system and faulted in again (on Linux, more system time than the copy
    /// it saves).
    private var spareInputs: [[UInt8]] = []

    /// Creates a converter from `source` to `sink`; nothing is read before ``run()``.
    public init(source: any ByteSource, sink: any ByteSink, policy: RecordErrorPolicy = .fail,
                prefilter: NDJSONPrefilter? = nil, transform: Transform? = nil, configuration: Configuration = .init()) {
        self.source = source
        self.sink = sink
        self.policy = policy
        self.configuration = configuration
        self.transform = transform
        decoder = NDJSONLineDecoder(configuration: RecordJSON.Configuration(maximumDepth: configuration.maximumDepth),
                                    prefilter: prefilter)
    }

    /// Whether `firstBytes` (the start of an input) can be converted line by line: the first
    /// line, after a byte order mark, is not blank and is a complete JSON value or not JSON at
    /// all. Otherwise ``NDJSONReader`` must read it (it reads such inputs as whole documents).
    public static func canConvert(_ firstBytes: [UInt8], maximumDepth: Int = 512) -> Bool {
        guard let newline = firstBytes.firstIndex(of: 0x0A) else { return false }
        var start = 0
        if firstBytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        var end = newline
        if end > start && firstBytes[end - 1] == 0x0D { end -= 1 }
        guard start <= end else { return false }
        return Array(firstBytes[start..<end]).withUnsafeBytes { line -> Bool in
            if NDJSONLineDecoder.isBlank(line) { return false }
            guard let first = line.first(where: { $0 != 0x20 && $0 != 0x09 }),
                  first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return true }
            do throws(RecordFormatError) {
                _ = try RecordJSON.parseValue(line, configuration: .init(maximumDepth: maximumDepth))
                return true
            } catch {
                return error.code != .truncated
            }
        }
    }

    // MARK: Running

    /// Converts everything (or up to ``limit`` records) and returns the counts. The sink is
    /// written but not committed.
    public func run() throws -> Statistics {
        let workers = (0..<configuration.threads).map { DispatchQueue(label: "ferry.ndjson.worker.\($0)") }
        var nextWorker = 0
        var inFlight: [ChunkJob] = []
        let maximumInFlight = 2 * configuration.threads
        defer {
            // Let workers finish what they hold before the jobs are released.
            for job in inFlight { job.done.wait() }
        }
        /// Hands `job` to the next worker, then writes what has finished, in order.
        func submit(_ job: ChunkJob, _ stopped: inout Bool) throws {
            let decoder = self.decoder, transform = self.transform, failsFast = !policy.skips
            let maximumLineBytes = configuration.maximumLineBytes
            workers[nextWorker].async {
                job.process(decoder: decoder, transform: transform, failsFast: failsFast,
                            maximumLineBytes: maximumLineBytes)
            }
            nextWorker = (nextWorker + 1) % workers.count
            inFlight.append(job)
            while inFlight.count >= maximumInFlight && !stopped {
                try collect(inFlight.removeFirst(), &stopped)
            }
            // Write what has finished at the head without waiting.
            while !stopped, let head = inFlight.first, head.done.wait(timeout: .now()) == .success {
                head.done.signal() // `collect` waits again
                try collect(inFlight.removeFirst(), &stopped)
            }
        }
        func drainAll(_ stopped: inout Bool) throws { try drain(&inFlight, &stopped) }
        if configuration.mapsInput, Self.releasesMappedPages, let mapped = source.mapRemaining(maximumSize: Int.max) {
            try runMapped(mapped, submit: submit, drain: drainAll)
            return statistics
        }
        var carry: [UInt8] = []
        // The first bytes of `carry` known to hold no newline: a line longer than a chunk is
        // searched once, not again after every read (which would be quadratic).
        var searched = 0
        var isFirstChunk = true
        var isEOF = false
        var readBuffer = [UInt8](repeating: 0, count: configuration.chunkSize)
        var stopped = false

        while !stopped {
            // Fill `carry` to a chunk's worth of bytes (or the end of the input).
            if carry.count < configuration.chunkSize && !isEOF {
                try fill(&carry, to: configuration.chunkSize, &isEOF)
            }
            if carry.isEmpty { break }
            // Whole lines go to the job; the partial last line stays for the next chunk.
            var cut: Int
            if isEOF {
                cut = carry.count
            } else if let lastNewline = carry[searched...].lastIndex(of: 0x0A) {
                cut = lastNewline + 1
            } else {
                // No newline yet: the line is longer than a chunk. Read on, up to the limit.
                searched = carry.count
                if carry.count > configuration.maximumLineBytes {
                    searched = 0
                    try drain(&inFlight, &stopped)
                    if stopped { break }
                    try rejectOversizedLine(&carry, &isEOF, readBuffer: &readBuffer)
                    isFirstChunk = false // a byte order mark counts only at the start of the input
                    continue
                }
                let n = try readBuffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { isEOF = true } else {
                    carry.append(contentsOf: readBuffer[..<n])
                    statistics.bytesRead += n
                }
                continue
            }
            // The chunk takes `carry`'s storage; only the partial last line is copied out.
            var input: [UInt8] = []
            swap(&input, &carry)
            if cut < input.count {
                carry = Array(input[cut...])
                input.removeSubrange(cut...)
            }
            searched = 0
            try submit(ChunkJob(input: .array(input), stripsByteOrderMark: isFirstChunk), &stopped)
            isFirstChunk = false
        }
        try drain(&inFlight, &stopped)
        return statistics
    }

    /// ``run()`` on a mapped input: chunks of whole lines are cut from the mapping in place (no
    /// copy into the process), and the pages of each chunk are given back once it is written.
    private func runMapped(_ mapped: MappedInput, submit: (ChunkJob, inout Bool) throws -> Void,
                           drain: (inout Bool) throws -> Void) throws {
        let bytes = mapped.bytes
        guard let base = bytes.baseAddress else { return }
        let total = bytes.count
        let chunkSize = configuration.chunkSize, maximumLineBytes = configuration.maximumLineBytes
        releasedUpTo = base
        var offset = 0
        var stopped = false
        while offset < total && !stopped {
            var cut = min(offset + chunkSize, total)
            if cut < total {
                // Back to the chunk's last newline; past a line longer than a chunk, on to its end.
                var back = cut
                while back > offset && base.load(fromByteOffset: back - 1, as: UInt8.self) != 0x0A { back -= 1 }
                if back > offset {
                    cut = back
                } else {
                    // The line's end, if it is within the limit (it may already be past it).
                    let searchEnd = total - offset > maximumLineBytes ? offset + maximumLineBytes + 1 : total
                    if searchEnd > cut, let newline = memchr(base + cut, 0x0A, searchEnd - cut) {
                        cut = UnsafeRawPointer(newline) - base + 1
                    } else if searchEnd == total {
                        cut = total
                    } else {
                        try drain(&stopped)
                        if stopped { break }
                        offset = try rejectOversizedLine(mapped, from: offset)
                        continue
                    }
                }
            }
            let chunk = UnsafeRawBufferPointer(start: base + offset, count: cut - offset)
            statistics.bytesRead += chunk.count
            try submit(ChunkJob(input: .mapped(chunk, mapped.file), stripsByteOrderMark: offset == 0), &stopped)
            offset = cut
        }
        try drain(&stopped)
        try mapped.file.checkUnchanged()
    }

    /// Whether pages of a mapped input can be given back as it is read (Linux's `MADV_DONTNEED`);
    /// elsewhere inputs are read with `read`, so that memory stays bounded.
    #if os(Linux)
    static let releasesMappedPages = true
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    static let releasesMappedPages = false
    #endif

    /// Gives back the pages of a mapped input before `end` (written, never read again), so that
    /// they no longer count towards the process's memory. They stay in the page cache.
    private func releaseMapped(upTo end: UnsafeRawPointer) {
        #if os(Linux)
        guard let start = releasedUpTo else { return }
        let page = Self.pageSize
        let from = Int(bitPattern: start) & ~(page - 1), to = Int(bitPattern: end) & ~(page - 1)
        guard to > from else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, MADV_DONTNEED)
        releasedUpTo = UnsafeRawPointer(bitPattern: to)
        #endif
    }

    /// Reads into `carry` until it holds `size` bytes or the input ends: straight into an array
    /// (a spare one when there is one) that starts with what `carry` held (the partial line a
    /// chunk left), so input bytes are copied once, by `read`, not again from a read buffer.
    private func fill(_ carry: inout [UInt8], to size: Int, _ isEOF: inout Bool) throws {
        var buffer = spareInputs.popLast() ?? []
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: carry)
        let start = buffer.count
        // Arrays cannot be read into past their count: extend with zeros, read, cut to what came.
        if start < size { buffer.append(contentsOf: repeatElement(0, count: size - start)) }
        var filled = start
        defer {
            buffer.removeSubrange(filled...)
            carry = buffer
        }
        try buffer.withUnsafeMutableBytes { bytes in
            while filled < size {
                let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled..<size]))
                if n == 0 {
                    isEOF = true
                    break
                }
                filled += n
                statistics.bytesRead += n
            }
        }
    }

    /// Collects every job in flight, in order.
    private func drain(_ inFlight: inout [ChunkJob], _ stopped: inout Bool) throws {
        while !inFlight.isEmpty {
            let job = inFlight.removeFirst()
            if stopped {
                job.done.wait()
            } else {
                try collect(job, &stopped)
            }
        }
    }

    /// Waits for `job`, then reports its events and writes its output, in order.
    private func collect(_ job: ChunkJob, _ stopped: inout Bool) throws {
        job.done.wait()
        let base = statistics.recordsRead + statistics.rejected // records and rejects before this chunk
        var written = 0 // bytes of the job's output already handed to the sink
        var recordsWritten = 0
        for event in job.events {
            // Output before this event goes first, so rejects and output interleave in order.
            try writeOutput(job, upTo: event.recordsBefore, written: &written, recordsWritten: &recordsWritten, &stopped)
            if stopped { break }
            switch event.kind {
            case .reject(var error, let raw):
                error.source = source.name
                error.line = linesDone + event.line
                error.recordIndex = base + event.localIndex
                switch policy {
                case .fail:
                    throw error
                case .skip(let rejects):
                    statistics.rejected += 1
                    if let rejects { try raw.withUnsafeBytes { try NDJSONLineDecoder.writeReject($0, to: rejects) } }
                    onReject?(error)
                }
            case .transformFailure(let underlying):
                let failure = TransformFailure(source: source.name, line: linesDone + event.line,
                                               recordIndex: base + event.localIndex, underlying: underlying)
                statistics.transformFailures += 1
                if !policy.skips { throw failure }
                onTransformFailure?(failure)
            case .oversizedLine(let range):
                let error = NDJSONLineDecoder.oversizedLineError(
                    limit: configuration.maximumLineBytes, source: source.name, line: linesDone + event.line,
                    recordIndex: base + event.localIndex)
                guard case .skip(let rejects) = policy else { throw error }
                statistics.rejected += 1
                try job.writeRawLine(range, to: rejects)
                onReject?(error)
            }
        }
        try writeOutput(job, upTo: job.recordEnds.count, written: &written, recordsWritten: &recordsWritten, &stopped)
        statistics.recordsRead += job.recordsRead
        statistics.recordsDropped += job.recordsDropped
        linesDone += job.lineCount
        switch job.takeInput() {
        case .array(let input): if spareInputs.count < 2 { spareInputs.append(input) }
        case .mapped(let chunk, _): releaseMapped(upTo: chunk.baseAddress! + chunk.count)
        }
        onProgress?(statistics)
    }

    /// Writes the job's records up to record number `count` (respecting the limit).
    private func writeOutput(_ job: ChunkJob, upTo count: Int, written: inout Int, recordsWritten: inout Int,
                             _ stopped: inout Bool) throws {
        guard !stopped, count > recordsWritten else { return }
        var upTo = count
        if let limit {
            let remaining = limit - statistics.recordsWritten
            if upTo - recordsWritten >= remaining {
                upTo = recordsWritten + remaining
                stopped = true
            }
        }
        guard upTo > recordsWritten else { return }
        let end = job.recordEnds[upTo - 1]
        try sink.write(UnsafeRawBufferPointer(rebasing: job.output.bytes[written..<end]))
        statistics.bytesWritten += end - written
        statistics.recordsWritten += upTo - recordsWritten
        written = end
        recordsWritten = upTo
    }

    /// A line longer than the limit, found by the reading thread once every chunk before it is
    /// written: throws under ``RecordErrorPolicy/fail``; otherwise counts and reports it and
    /// returns where it goes (the caller streams it there without holding it).
    private func rejectOversizedLine() throws -> ByteSink? {
        linesDone += 1
        let error = NDJSONLineDecoder.oversizedLineError(
            limit: configuration.maximumLineBytes, source: source.name, line: linesDone,
            recordIndex: statistics.recordsRead + statistics.rejected + 1)
        guard case .skip(let rejects) = policy else { throw error }
        statistics.rejected += 1
        onReject?(error)
        return rejects
    }

    /// The line longer than the limit that starts at `offset` of a mapped input: rejected as
    /// ``rejectOversizedLine()`` says, streamed to the rejects file a chunk at a time, its pages
    /// given back behind. Returns the offset after it.
    private func rejectOversizedLine(_ mapped: MappedInput, from offset: Int) throws -> Int {
        let rejects = try rejectOversizedLine()
        let base = mapped.bytes.baseAddress!, total = mapped.bytes.count
        var start = offset
        while start < total {
            let piece = min(configuration.chunkSize, total - start)
            let newline = memchr(base + start, 0x0A, piece).map { UnsafeRawPointer($0) - base }
            let end = newline.map { $0 + 1 } ?? start + piece
            statistics.bytesRead += end - start
            try rejects?.write(UnsafeRawBufferPointer(start: base + start, count: end - start))
            releaseMapped(upTo: base + end)
            start = end
            if newline != nil { return start }
        }
        try rejects?.write([0x0A])
        return start
    }

    /// A line longer than the limit, found by the reading thread: fail, or stream it to the
    /// rejects file without holding it.
    private func rejectOversizedLine(_ carry: inout [UInt8], _ isEOF: inout Bool,
                                     readBuffer: inout [UInt8]) throws {
        let rejects = try rejectOversizedLine()
        while true {
            if let newline = carry.firstIndex(of: 0x0A) {
                try rejects?.write(Array(carry[...newline]))
                carry.removeFirst(newline + 1)
                return
            }
            try rejects?.write(carry)
            carry.removeAll(keepingCapacity: true)
            if isEOF {
                try rejects?.write([0x0A])
                return
            }
            let n = try readBuffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { isEOF = true } else {
                carry.append(contentsOf: readBuffer[..<n])
                statistics.bytesRead += n
            }
        }
    }
}

/// One chunk of whole lines and, once `done` is signalled, what a worker made of it.
///
/// `@unchecked Sendable`: the results are written only by the worker before it signals `done`
/// and read only by the owner after waiting on `done`, which orders the accesses.
private final class ChunkJob: @unchecked Sendable {
    enum EventKind {
        case reject(RecordFormatError, raw: [UInt8])
        case transformFailure(any Error)
        /// The line's bytes in the chunk, without its newline.
        case oversizedLine(Range<Int>)
    }

    /// Something to report, with where it happened.
    struct Event {
        var kind: EventKind
        /// 1-based line in the chunk (the converter adds the lines of the chunks before).
        var line: Int
        /// 1-based index among the chunk's records and rejects.
        var localIndex: Int
        /// Records written to `output` before it.
        var recordsBefore: Int
    }

    /// A chunk's bytes: read into an array, or a piece of a mapped input (kept mapped by `file`).
    enum Input {
        case array([UInt8])
        case mapped(UnsafeRawBufferPointer, MappedFile)
    }

    private(set) var input: Input
    /// Lines of the chunk, counted by the worker (all of them, unless it stopped at a failure).
    private(set) var lineCount = 0
    let stripsByteOrderMark: Bool
    let done = DispatchSemaphore(value: 0)
    var output = JSONOutput(capacity: 64)
    /// The end offset in `output` of each record written.
    var recordEnds: [Int] = []
    var events: [Event] = []
    var recordsRead = 0
    var recordsDropped = 0

    init(input: Input, stripsByteOrderMark: Bool) {
        self.input = input
        self.stripsByteOrderMark = stripsByteOrderMark
    }

    /// Gives the input away once the chunk is written: an array for reuse, or the piece of the
    /// mapping, for its pages to be given back.
    func takeInput() -> Input {
        defer { input = .array([]) }
        return input
    }

    /// Calls `body` with the chunk's bytes.
    func withInput<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch input {
        case .array(let bytes): try bytes.withUnsafeBytes(body)
        case .mapped(let bytes, let file): try withExtendedLifetime(file) { try body(bytes) }
        }
    }

    /// Writes the chunk's bytes in `range` (a line without its newline) to `sink`, then a newline.
    func writeRawLine(_ range: Range<Int>, to sink: ByteSink?) throws {
        guard let sink else { return }
        try withInput { bytes in try sink.write(UnsafeRawBufferPointer(rebasing: bytes[range])) }
        try sink.write([0x0A])
    }

    func process(decoder: NDJSONLineDecoder, transform: NDJSONParallelConverter.Transform?, failsFast: Bool,
                 maximumLineBytes: Int) {
        defer { done.signal() }
        let inputCount = withInput { $0.count }
        var out = JSONOutput(capacity: inputCount + inputCount / 8 + 64)
        var localIndex = 0
        var line = 0
        defer { lineCount = line }
        // Plain record lines are decoded into this one value, line after line (see
        // ``NDJSONLineDecoder/decodeRecord(_:into:)``); other lines go through `decode`.
        var reused = Record(recordName: "")
        /// A decoded record: transformed, encoded, counted.
        func take(_ record: inout Record, into out: inout JSONOutput) throws {
            recordsRead += 1
            if let transform {
                do {
                    guard try transform(&record) else { return }
                } catch {
                    events.append(Event(kind: .transformFailure(error), line: line, localIndex: localIndex,
                                        recordsBefore: recordEnds.count))
                    if failsFast { throw StopChunk() }
                    return
                }
            }
            RecordJSON.encode(record, into: &out)
            out.append(0x0A)
            recordEnds.append(out.count)
        }
        withInput { bytes in
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while start < bytes.count {
                line += 1
                let newline = memchr(base + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - base } ?? bytes.count
                let rawEnd = min(newline + 1, bytes.count)
                var contentStart = start, contentEnd = newline
                defer { start = rawEnd }
                if contentEnd > contentStart && bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
                if line == 1 && stripsByteOrderMark && contentEnd - contentStart >= 3
                    && bytes[contentStart] == 0xEF && bytes[contentStart + 1] == 0xBB && bytes[contentStart + 2] == 0xBF {
                    contentStart += 3
                }
                if newline - start > maximumLineBytes {
                    localIndex += 1
                    events.append(Event(kind: .oversizedLine(start..<newline), line: line, localIndex: localIndex,
                                        recordsBefore: recordEnds.count))
                    if failsFast { return }
                    continue
                }
                let content = UnsafeRawBufferPointer(rebasing: bytes[contentStart..<contentEnd])
                if NDJSONLineDecoder.isBlank(content) { continue }
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
                var failed = false
                do {
                    if decoder.decodeRecord(content, into: &reused) {
                        localIndex += 1
                        try take(&reused, into: &out)
                        continue
                    }
                    try decoder.decode(content, raw: raw) { item in
                        localIndex += 1
                        switch consume item {
                        case .record(var record):
                            try take(&record, into: &out)
                        case .dropped:
                            recordsRead += 1
                            recordsDropped += 1
                        case .zonesOnly:
                            localIndex -= 1
                        case .reject(let error, let rawBytes):
                            events.append(Event(kind: .reject(error, raw: Array(rawBytes)), line: line, localIndex: localIndex,
                                                recordsBefore: recordEnds.count))
                            if failsFast { throw StopChunk() }
                        }
                    }
                } catch {
                    failed = true
                }
                if failed { return }
            }
        }
        output = out
    }
}

/// Thrown inside a worker to stop a chunk at its first failure under `.fail`.
private struct StopChunk: Error {}
