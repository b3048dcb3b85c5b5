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

/// A serial queue with its own deflate stream, created on first use and reused (`deflateReset`)
/// for every block it compresses.
///
/// `@unchecked Sendable`: `stream` is touched only by blocks running on `queue`, which is serial.
final class DeflateWorker: @unchecked Sendable {
    private let queue: DispatchQueue
    private let level: Int
    private let name: String
    private var stream: DeflateStream?

    init(index: Int, level: Int, name: String) {
        queue = DispatchQueue(label: "ferry.gzip.deflate.\(index)")
        self.level = level
        self.name = name
    }

    /// Compresses `job` on this worker's queue and signals its `done` semaphore.
    func start(_ job: DeflateJob) {
        queue.async { self.compress(job) }
    }

    private func compress(_ job: DeflateJob) {
        defer { job.done.signal() }
        do {
            let stream = try self.stream ?? DeflateStream(level: level, name: name)
            self.stream = stream
            try stream.reset()
            try job.dictionary.withUnsafeBytes { try stream.setDictionary($0) }
            var output: [UInt8] = []
            output.reserveCapacity(job.input.count / 2 + 1024)
            try job.input.withUnsafeBytes { input in
                try stream.deflate(input, flush: job.isLast ? .finish : .sync) {
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
