import Dispatch

/// One block of input and, once `done` is signalled, its compressed output and CRC-32.
///
/// `@unchecked Sendable`: the mutable fields are written only by the worker before it signals
/// `done`, and read only by the owner after it has waited on `done`, which orders the accesses.
final class DeflateJob: @unchecked Sendable {
    let input: [UInt8]
    let dictionary: [UInt8]
    let isLast: Bool
    let done = DispatchSemaphore(value: 0)
    var output: [UInt8] = []
    var crc: UInt32 = 0
    var error: (any Error)?

    init(input: [UInt8], dictionary: [UInt8], isLast: Bool) {
        self.input = input
        self.dictionary = dictionary
        self.isLast = isLast
    }
}

/// Worker threads that take blocks from one shared queue, in order, as each becomes free (as
/// pigz's do): a slow block on one worker never leaves another idle while work is queued. Each
/// worker owns a deflate stream, created on first use and reused (`deflateReset`). The workers
/// stop when the pool is released, after finishing what is queued.
final class DeflatePool {
    private let jobs = JobQueue()
    private let threads: Int
    private let level: Int
    private let name: String
    private var isStarted = false

    init(threads: Int, level: Int, name: String) {
        self.threads = threads
        self.level = level
        self.name = name
    }

    deinit {
        if isStarted { jobs.stop(workers: threads) }
    }

    /// Queues `job`; a free worker compresses it and signals its `done` semaphore.
    func start(_ job: DeflateJob) {
        if !isStarted {
            isStarted = true
            for index in 0..<threads {
                let jobs = self.jobs, level = self.level, name = self.name
                DispatchQueue(label: "ferry.gzip.deflate.\(index)").async {
                    var stream: DeflateStream?
                    while let job = jobs.next() {
                        Self.compress(job, stream: &stream, level: level, name: name)
                    }
                }
            }
        }
        jobs.append(job)
    }

    private static func compress(_ job: DeflateJob, stream: inout DeflateStream?, level: Int, name: String) {
        defer { job.done.signal() }
        do {
            let deflater = try stream ?? DeflateStream(level: level, name: name)
            stream = deflater
            try deflater.reset()
            try job.dictionary.withUnsafeBytes { try deflater.setDictionary($0) }
            var output: [UInt8] = []
            output.reserveCapacity(job.input.count / 2 + 1024)
            try job.input.withUnsafeBytes { input in
                try deflater.deflate(input, flush: job.isLast ? .finish : .sync) {
                    output.append(contentsOf: $0)
                }
                job.crc = Zlib.crc32(0, input)
            }
            job.output = output
        } catch {
            job.error = error
        }
    }
}

/// The jobs waiting for a worker, first in first out; `nil` tells one worker to stop.
///
/// `@unchecked Sendable`: `items` and `head` are touched only while holding `lock`.
private final class JobQueue: @unchecked Sendable {
    private let lock = DispatchSemaphore(value: 1)
    /// Counts the entries waiting in `items`.
    private let available = DispatchSemaphore(value: 0)
    private var items: [DeflateJob?] = []
    private var head = 0

    func append(_ job: DeflateJob) {
        put([job])
    }

    func stop(workers: Int) {
        put(Array(repeating: nil, count: workers))
    }

    /// Waits for the next job; `nil` means stop.
    func next() -> DeflateJob? {
        available.wait()
        lock.wait()
        defer { lock.signal() }
        let job = items[head]
        items[head] = nil
        head += 1
        return job
    }

    private func put(_ entries: [DeflateJob?]) {
        lock.wait()
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        items += entries
        lock.signal()
        for _ in entries { available.signal() }
    }
}
