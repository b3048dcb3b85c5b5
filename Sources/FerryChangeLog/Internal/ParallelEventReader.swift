import CFerrySystem
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

/// Something replay takes events from, in history order.
protocol RawEventSource: AnyObject {
    /// The next event, or `nil` at the end. Its blob is valid until the next call.
    func nextRaw() throws -> RawEvent?
    /// Bytes read from the source so far.
    var bytesRead: Int { get }
}

extension ChangeLogReader: RawEventSource {}

/// Reads a line-oriented history (one document per line) with its lines decoded on worker
/// threads, block by block, while the caller applies the events of earlier blocks in order.
///
/// The input is cut into blocks of whole lines; each block is decoded on one of the workers into
/// its own ``EventBuffer``; blocks are handed out in input order, so events come out exactly as a
/// ``ChangeLogReader`` would give them, with the same errors (file, line, column). A source whose
/// first line is not a complete JSON value (pretty-printed responses) is read by a
/// ``ChangeLogReader`` instead.
final class ParallelEventReader: RawEventSource {
    /// One block of lines and, once `done` is signalled, its events.
    ///
    /// `@unchecked Sendable`: the worker writes the results before signalling `done`; the reader
    /// reads them only after waiting on `done`.
    final class Job: @unchecked Sendable {
        let text: UnsafeMutableRawBufferPointer
        let arena = BlobArena()
        let events = EventBuffer()
        let done = DispatchSemaphore(value: 0)
        /// Lines in the block (all of them, blank ones too).
        var lineCount = 0
        var error: ChangeLogError?
        /// An error found while cutting blocks (a line too long), after this block's lines.
        var readError: ChangeLogError?
        /// What reading the input threw while this block was being cut.
        var thrown: (any Error)?
        /// The block starts with a UTF-8 byte order mark, to be skipped.
        var skipsByteOrderMark = false
        var usedGivenPageZone = false
        var finalPageZone: ZoneID?

        /// The mapping `text` lies in, kept as long as the block (a worker may still decode it
        /// after the reader is gone); `nil` when `text` was allocated for the block.
        let mapping: MappedFile?

        init(text: UnsafeMutableRawBufferPointer, in mapping: MappedFile? = nil) {
            self.text = text
            self.mapping = mapping
        }

        deinit { if mapping == nil { text.deallocate() } }
    }

    /// A serial queue with its own decoder.
    ///
    /// `@unchecked Sendable`: `decoder` is used only by blocks running on `queue`, which is serial.
    final class Worker: @unchecked Sendable {
        let queue: DispatchQueue
        var decoder: EventDecoder
        let sourceName: String
        let maximumLineBytes: Int

        init(index: Int, decoder: EventDecoder, sourceName: String, maximumLineBytes: Int) {
            queue = DispatchQueue(label: "ferry.replay.decode.\(index)")
            self.decoder = decoder.forAnotherThread()
            self.sourceName = sourceName
            self.maximumLineBytes = maximumLineBytes
        }

        func start(_ job: Job) {
            queue.async { [self] in
                Self.decode(job, with: &decoder, sourceName: sourceName, maximumLineBytes: maximumLineBytes, givenPageZone: nil)
                job.done.signal()
            }
        }

        /// Decodes every line of `job.text` into `job.events`, stopping at the first bad line.
        static func decode(_ job: Job, with decoder: inout EventDecoder, sourceName: String, maximumLineBytes: Int,
                           givenPageZone: ZoneID?) {
            decoder.startBlock(pageZone: givenPageZone)
            decoder.scanner.arena = job.arena
            decoder.scanner.referencesText = true // the block outlives its events
            defer {
                decoder.scanner.arena = nil
                decoder.scanner.referencesText = false
            }
            let text = UnsafeRawBufferPointer(job.text)
            var start = job.skipsByteOrderMark ? 3 : 0
            var line = 0
            while start < text.count {
                let newline = memchr(text.baseAddress! + start, 0x0A, text.count - start)
                let end = newline.map { UnsafeRawPointer($0) - text.baseAddress! } ?? text.count
                line += 1
                var stop = end
                if stop > start && text[stop - 1] == 0x0D { stop -= 1 }
                let content = UnsafeRawBufferPointer(rebasing: text[start..<stop])
                start = end + 1
                if content.count > maximumLineBytes {
                    job.error = ChangeLogError(.tooLarge, "expected a line of at most \(maximumLineBytes) bytes, found a longer one",
                                               source: sourceName, line: line, column: 1)
                    break
                }
                if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                do throws(RecordFormatError) {
                    try decoder.decodeLine(content, into: job.events)
                } catch {
                    job.error = ChangeLogError.located(error, in: content, source: sourceName, line: line)
                    break
                }
            }
            job.lineCount = line
            job.usedGivenPageZone = decoder.usedGivenPageZone
            job.finalPageZone = decoder.ownPageZone
        }
    }

    /// Cuts the input into blocks of whole lines and hands them to the workers, on its own thread
    /// once started, at most two blocks per worker ahead of the reader (eight when the input is mapped).
    ///
    /// `@unchecked Sendable`: the source, carry-over and block state are used by one thread at a
    /// time (the caller before ``start()``, the cutting thread after); the queue of cut blocks and
    /// the byte count are guarded by `lock`.
    final class Cutter: @unchecked Sendable {
        let source: ByteSource
        /// The input mapped: blocks are cut from it in place, not read.
        let mapped: MappedInput?
        private var mappedOffset = 0
        private let configuration: ChangeLogReader.Configuration
        private let blockSize: Int
        private let workers: [Worker]
        private var nextWorker = 0
        private var carry: [UInt8] = []
        private var isEOF = false
        private let lock = Lock()
        private var ready: [Job?] = []
        private var readCount = 0
        private var isCancelled = false
        private let available = DispatchSemaphore(value: 0)
        private let slots: DispatchSemaphore

        init(source: ByteSource, mapped: MappedInput?, configuration: ChangeLogReader.Configuration, blockSize: Int, workers: [Worker]) {
            self.source = source
            self.mapped = mapped
            self.configuration = configuration
            self.blockSize = blockSize
            self.workers = workers
            // Start at 0 and signal: a semaphore created with a count must get it back before it
            // goes (libdispatch traps otherwise), and a cancelled read may not give slots back.
            slots = DispatchSemaphore(value: 0)
            // Blocks of a mapped input cost only their events: more of them in flight keep the
            // workers busy while the reader dwells on a slow block.
            for _ in 0..<((mapped == nil ? 2 : 8) * workers.count) { slots.signal() }
        }

        var bytesRead: Int { lock.withLock { readCount } }

        /// Cuts blocks on a thread of its own until the input ends, fails or the reader goes.
        func start() {
            DispatchQueue(label: "ferry.replay.read").async { [self] in
                while true {
                    slots.wait()
                    if lock.withLock({ isCancelled }) { return }
                    let job: Job?
                    do { job = try cutBlock() } catch {
                        let failed = Job(text: UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16))
                        failed.thrown = error
                        job = failed
                    }
                    guard let job else {
                        push(nil)
                        return
                    }
                    submit(job)
                    if job.readError != nil || job.thrown != nil {
                        push(nil)
                        return
                    }
                }
            }
        }

        /// Hands a block to a worker (a failed one needs none) and queues it for the reader.
        func submit(_ job: Job) {
            if job.readError == nil && job.thrown == nil {
                workers[nextWorker].start(job)
                nextWorker = (nextWorker + 1) % workers.count
            } else {
                job.done.signal()
            }
            push(job)
        }

        private func push(_ job: Job?) {
            lock.withLock { ready.append(job) }
            available.signal()
        }

        /// The next block in input order (`nil` at the end), waiting for it to be cut.
        func next() -> Job? {
            available.wait()
            return lock.withLock { ready.removeFirst() }
        }

        /// Takes a slot before the caller submits a block itself.
        func reserve() { slots.wait() }

        /// A block was read to its end: one more may be cut.
        func release() { slots.signal() }

        /// The input again from the start of `first` (the first block cut): for a reader that does
        /// not cut blocks. Only before ``start()``.
        func input(from first: Job) -> ByteSource {
            if let mapped { return MappedSource(mapped, name: source.name) }
            defer { carry.removeAll() }
            return PrefixedSource(Array(UnsafeRawBufferPointer(first.text)) + carry, then: source)
        }

        /// Stops cutting (the reader is gone).
        func cancel() {
            lock.withLock { isCancelled = true }
            slots.signal()
        }

        /// Reads the next block of whole lines (the last line of the input may lack its newline);
        /// `nil` at the end of the input.
        func cutBlock() throws -> Job? {
            if let mapped { return cutMappedBlock(mapped) }
            var capacity = max(blockSize, carry.count * 2)
            var block = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            var count = carry.count
            carry.withUnsafeBytes { if count > 0 { block.copyMemory(from: $0.baseAddress!, byteCount: count) } }
            carry.removeAll(keepingCapacity: true)
            var handedOff = false
            defer { if !handedOff { block.deallocate() } }
            func read() throws -> Bool {
                if isEOF { return false }
                if count == capacity {
                    capacity *= 2
                    let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
                    bigger.copyMemory(from: block, byteCount: count)
                    block.deallocate()
                    block = bigger
                }
                let n = try source.read(into: UnsafeMutableRawBufferPointer(start: block + count, count: capacity - count))
                if n == 0 {
                    isEOF = true
                    return false
                }
                count += n
                lock.withLock { readCount += n }
                return true
            }
            func lastNewline(from start: Int) -> Int? {
                var i = count - 1
                while i >= start {
                    if block.load(fromByteOffset: i, as: UInt8.self) == 0x0A { return i }
                    i -= 1
                }
                return nil
            }
            while count < blockSize, try read() {}
            guard count > 0 else { return nil }
            var cut = isEOF ? count : lastNewline(from: 0).map { $0 + 1 }
            var scanned = count
            while cut == nil && count <= configuration.maximumLineBytes {
                guard try read() else {
                    cut = count
                    break
                }
                cut = lastNewline(from: scanned).map { $0 + 1 }
                scanned = count
            }
            guard let end = cut else {
                let job = Job(text: UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16))
                job.readError = ChangeLogError(.tooLarge, "expected a line of at most \(configuration.maximumLineBytes) bytes, found a longer one",
                                               source: source.name, line: 1, column: 1)
                return job
            }
            if end < count { carry.append(contentsOf: UnsafeRawBufferPointer(start: block + end, count: count - end)) }
            handedOff = true
            return Job(text: UnsafeMutableRawBufferPointer(start: block, count: end))
        }

        /// The next block of whole lines of the mapped input, in place: about `blockSize` bytes,
        /// more when a line is longer (``Worker/decode(_:with:sourceName:maximumLineBytes:givenPageZone:)``
        /// refuses lines over the limit).
        private func cutMappedBlock(_ mapped: MappedInput) -> Job? {
            let bytes = mapped.bytes
            let start = mappedOffset
            guard start < bytes.count else { return nil }
            var end = bytes.count
            if start + blockSize < bytes.count {
                let base = bytes.baseAddress!
                var i = start + blockSize - 1
                while i >= start && base.load(fromByteOffset: i, as: UInt8.self) != 0x0A { i -= 1 }
                if i >= start {
                    end = i + 1
                } else if let newline = memchr(base + start + blockSize, 0x0A, bytes.count - start - blockSize) {
                    end = UnsafeRawPointer(newline) - base + 1
                }
            }
            mappedOffset = end
            lock.withLock { readCount = end }
            let text = UnsafeMutableRawBufferPointer(mutating: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            return Job(text: text, in: mapped.file)
        }
    }

    private let configuration: ChangeLogReader.Configuration
    private let cutter: Cutter
    private var isStarted = false
    private var isEnded = false
    private var current: Job?
    private var linesBefore = 0
    private var pageZone: ZoneID?
    private var mainDecoder: EventDecoder
    private var fallback: ChangeLogReader?

    var bytesRead: Int { fallback?.bytesRead ?? cutter.bytesRead }

    /// Called with the event ``lookahead`` + 1 places after each one returned, while the block
    /// holds it: replay uses it to prefetch the table slot that event will need.
    var upcoming: ((RawEvent) -> Void)?
    /// How far ahead ``upcoming`` looks: enough events to cover a memory access's latency.
    static let lookahead = 8

    /// The mapping events' JSON lies in, once reading started from it: their blobs may keep
    /// pointing at it as long as the mapping is kept.
    var textMapping: MappedFile? { isStarted && fallback == nil ? cutter.mapped?.file : nil }

    /// A reader of `source` — or of its mapping, `mapped`, in place — decoding on `threads` workers.
    init(source: ByteSource, mapped: MappedInput? = nil, configuration: ChangeLogReader.Configuration, decoder: EventDecoder,
         threads: Int, blockSize: Int = 4 << 20) {
        precondition(threads > 0)
        self.configuration = configuration
        mainDecoder = decoder.forAnotherThread()
        let workers = (0..<max(1, threads)).map {
            Worker(index: $0, decoder: decoder, sourceName: source.name, maximumLineBytes: configuration.maximumLineBytes)
        }
        cutter = Cutter(source: source, mapped: mapped, configuration: configuration, blockSize: blockSize, workers: workers)
    }

    deinit {
        if isStarted && !isEnded { cutter.cancel() }
    }

    /// The number of workers worth running here: the processors available, at most `limit`.
    static func defaultThreads(limit: Int = 4) -> Int {
        max(1, min(limit, Processors.available))
    }

    func nextRaw() throws -> RawEvent? {
        if let fallback { return try fallback.nextRaw() }
        while true {
            if let job = current {
                if let event = job.events.take() {
                    if let upcoming {
                        // Two stages: the record's header now, so that its name hash is at hand
                        // when `upcoming` reads it, half the distance later.
                        if case .recordSaved(let blob, _) = job.events.peek(ahead: 2 * Self.lookahead) {
                            CFerrySystem_prefetch(blob.raw + 24) // the name hash, then the name
                        }
                        if let later = job.events.peek(ahead: Self.lookahead) { upcoming(later) }
                    }
                    return event
                }
                current = nil
                cutter.release()
            }
            guard !isEnded else { return nil }
            if !isStarted {
                isStarted = true
                try startReading()
                if let fallback { return try fallback.nextRaw() }
                if isEnded { return nil } // an empty input: no cutting was started
            }
            guard let job = cutter.next() else {
                isEnded = true
                return nil
            }
            job.done.wait()
            current = job
            try collect(job)
        }
    }

    /// Reads the first block here: a first line that is not a complete JSON value sends the whole
    /// input to a ``ChangeLogReader``; otherwise cutting goes on on its own thread.
    private func startReading() throws {
        cutter.reserve()
        guard let first = try cutter.cutBlock() else {
            cutter.release()
            isEnded = true
            return
        }
        let text = UnsafeRawBufferPointer(first.text)
        var bom = 0
        if text.count >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF { bom = 3 }
        if startsWithIncompleteDocument(UnsafeRawBufferPointer(rebasing: text[bom...])) {
            let reader = ChangeLogReader(source: cutter.input(from: first), configuration: configuration)
            reader.decoder = mainDecoder
            fallback = reader
            cutter.release()
            isEnded = true
            return
        }
        if bom > 0 { first.skipsByteOrderMark = true }
        cutter.submit(first)
        cutter.start()
    }

    /// Checks a finished block in order: decodes it again when it depended on an earlier page's
    /// zone, and throws its error with the line counted from the start of the input.
    private func collect(_ job: Job) throws {
        if let thrown = job.thrown { throw thrown }
        if job.usedGivenPageZone && pageZone != nil {
            job.events.reset()
            job.error = nil
            Worker.decode(job, with: &mainDecoder, sourceName: cutter.source.name, maximumLineBytes: configuration.maximumLineBytes,
                          givenPageZone: pageZone)
        }
        if var error = job.error ?? job.readError {
            error.line = (error.line ?? 0) + linesBefore
            error.underlying?.line = error.line
            throw error
        }
        linesBefore += job.lineCount
        if let zone = job.finalPageZone { pageZone = zone }
    }

    /// Whether the first non-blank line opens a JSON value it does not close.
    private func startsWithIncompleteDocument(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        while start < bytes.count {
            let end = memchr(bytes.baseAddress! + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - bytes.baseAddress! } ?? bytes.count
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            start = end + 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            var s = JSONScanner(line, maximumDepth: configuration.maximumDepth)
            do throws(RecordFormatError) {
                try s.skipValueStructure()
                return false
            } catch {
                return error.code == .truncated
            }
        }
        return false
    }
}

/// A mutex (pthread) for the little state threads share here.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// Bytes already read, then the rest of a source.
final class PrefixedSource: ByteSource {
    private let prefix: [UInt8]
    private var offset = 0
    private let rest: ByteSource

    init(_ prefix: [UInt8], then rest: ByteSource) {
        self.prefix = prefix
        self.rest = rest
    }

    var name: String { rest.name }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset < prefix.count {
            let n = min(buffer.count, prefix.count - offset)
            prefix.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            offset += n
            return n
        }
        return try rest.read(into: buffer)
    }
}

/// The bytes of a mapping, read as a source (for a history read by a ``ChangeLogReader``).
final class MappedSource: ByteSource {
    let name: String
    private let input: MappedInput
    private var offset = 0

    init(_ input: MappedInput, name: String) {
        self.input = input
        self.name = name
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, input.bytes.count - offset)
        if n > 0 { buffer.baseAddress!.copyMemory(from: input.bytes.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
