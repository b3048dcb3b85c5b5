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
    /// The next event (its blob now the caller's), or `nil` at the end.
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
        let events: EventBuffer
        let done = DispatchSemaphore(value: 0)
        /// Lines in the block (all of them, blank ones too).
        var lineCount = 0
        var error: ChangeLogError?
        /// An error found while cutting blocks (a line too long), after this block's lines.
        var readError: ChangeLogError?
        var usedGivenPageZone = false
        var finalPageZone: ZoneID?

        init(text: UnsafeMutableRawBufferPointer) {
            self.text = text
            events = EventBuffer(arena: arena)
        }

        deinit { text.deallocate() }
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
            self.decoder = decoder
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
            defer { decoder.scanner.arena = nil }
            let text = UnsafeRawBufferPointer(job.text)
            var start = 0
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

    private let source: ByteSource
    private let configuration: ChangeLogReader.Configuration
    private let blockSize: Int
    private let workers: [Worker]
    private let maximumInFlight: Int
    private var nextWorker = 0
    private var inFlight: [Job] = []
    private var current: Job?
    private var carry: [UInt8] = []
    private var isEOF = false
    private var isFirstBlock = true
    private var linesBefore = 0
    private var pageZone: ZoneID?
    private var mainDecoder: EventDecoder
    private var fallback: ChangeLogReader?
    private var readCount = 0

    var bytesRead: Int { fallback?.bytesRead ?? readCount }

    /// A reader of `source` decoding on `threads` workers.
    init(source: ByteSource, configuration: ChangeLogReader.Configuration, decoder: EventDecoder, threads: Int,
         blockSize: Int = 4 << 20) {
        self.source = source
        self.configuration = configuration
        self.blockSize = blockSize
        mainDecoder = decoder
        workers = (0..<max(1, threads)).map {
            Worker(index: $0, decoder: decoder, sourceName: source.name, maximumLineBytes: configuration.maximumLineBytes)
        }
        maximumInFlight = 2 * max(1, threads)
    }

    deinit {
        // Let running workers finish before their jobs go.
        for job in inFlight { job.done.wait() }
    }

    /// The number of workers worth running here: the processors online, at most `limit`.
    static func defaultThreads(limit: Int = 4) -> Int {
        max(1, min(limit, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    func nextRaw() throws -> RawEvent? {
        if let fallback { return try fallback.nextRaw() }
        while true {
            if let job = current, let event = job.events.take() {
                // Keep the blob out of the block's arena, on this thread.
                if case .recordSaved(let blob, let zoneID) = event { return .recordSaved(blob.copy(), zoneID: zoneID) }
                return event
            }
            current = nil
            try fill()
            if let fallback { return try fallback.nextRaw() }
            guard !inFlight.isEmpty else { return nil }
            let job = inFlight.removeFirst()
            job.done.wait()
            try collect(job)
            current = job
            try fill()
        }
    }

    /// Checks a finished block in order: decodes it again when it depended on an earlier page's
    /// zone, and throws its error with the line counted from the start of the input.
    private func collect(_ job: Job) throws {
        if job.usedGivenPageZone && pageZone != nil {
            job.events.reset()
            job.error = nil
            Worker.decode(job, with: &mainDecoder, sourceName: source.name, maximumLineBytes: configuration.maximumLineBytes,
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

    /// Cuts and submits blocks until enough are in flight or the input ends.
    private func fill() throws {
        while inFlight.count < maximumInFlight && !(isEOF && carry.isEmpty) {
            guard let job = try cutBlock() else { return }
            inFlight.append(job)
            if job.readError != nil {
                isEOF = true // nothing after a line that is too long is read
                carry.removeAll()
                job.done.signal()
            } else {
                workers[nextWorker].start(job)
                nextWorker = (nextWorker + 1) % workers.count
            }
        }
    }

    /// Reads the next block of whole lines (the last line of the input may lack its newline);
    /// `nil` at the end of the input, or when the input turned out to need a ``ChangeLogReader``.
    private func cutBlock() throws -> Job? {
        var capacity = max(blockSize, carry.count * 2)
        var block = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var count = carry.count
        carry.withUnsafeBytes { if count > 0 { block.copyMemory(from: $0.baseAddress!, byteCount: count) } }
        carry.removeAll(keepingCapacity: true)
        var handedOff = false
        defer { if !handedOff { block.deallocate() } }
        func read() throws -> Bool {
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
            readCount += n
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
        if isFirstBlock {
            isFirstBlock = false
            if count >= 3 && block.load(as: UInt8.self) == 0xEF && block.load(fromByteOffset: 1, as: UInt8.self) == 0xBB
                && block.load(fromByteOffset: 2, as: UInt8.self) == 0xBF {
                count -= 3
                block.copyMemory(from: block + 3, byteCount: count)
            }
            let prefix = Array(UnsafeRawBufferPointer(start: block, count: count))
            if startsWithIncompleteDocument(prefix) {
                let reader = ChangeLogReader(source: PrefixedSource(prefix, then: source), configuration: configuration)
                reader.decoder = mainDecoder
                fallback = reader
                return nil
            }
        }
        guard count > 0 else { return nil }
        var cut = isEOF ? count : lastNewline(from: 0).map { $0 + 1 }
        var scanned = count
        while cut == nil && !isEOF && count <= configuration.maximumLineBytes {
            guard try read() else {
                cut = count
                break
            }
            cut = lastNewline(from: scanned).map { $0 + 1 }
            scanned = count
        }
        if cut == nil && !isEOF {
            let job = Job(text: UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16))
            job.readError = ChangeLogError(.tooLarge, "expected a line of at most \(configuration.maximumLineBytes) bytes, found a longer one",
                                           source: source.name, line: 1, column: 1)
            return job
        }
        let end = cut ?? count
        if end < count { carry.append(contentsOf: UnsafeRawBufferPointer(start: block + end, count: count - end)) }
        handedOff = true
        return Job(text: UnsafeMutableRawBufferPointer(start: block, count: end))
    }

    /// Whether the first non-blank line opens a JSON value it does not close.
    private func startsWithIncompleteDocument(_ buffer: [UInt8]) -> Bool {
        buffer.withUnsafeBytes { bytes in
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
