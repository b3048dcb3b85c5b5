import Dispatch
import FerryIO

/// Writes one gzip member compressed on several threads, as pigz does.
///
/// Input is cut into blocks of `blockSize` bytes. Each block is compressed independently on a
/// worker with raw deflate, primed with the 32 KiB before it (`deflateSetDictionary`) so the ratio
/// stays close to single-threaded deflate, and ended with `Z_SYNC_FLUSH` (the last with
/// `Z_FINISH`), so the pieces end on byte boundaries and concatenate into one deflate stream. The
/// per-block CRC-32s are joined with `crc32_combine`. Workers take blocks from one queue as they
/// become free (``DeflatePool``). At most `maximumInFlight` blocks are queued
/// or compressing at once; their output is written to `sink` in order on the caller's thread.
final class ParallelGzipWriter {
    private let sink: any ByteSink
    private let level: Int
    private let blockSize: Int
    private let pool: DeflatePool
    private let maximumInFlight: Int
    private var inFlight: [DeflateJob] = []
    private var block: [UInt8] = []
    private var dictionary: [UInt8] = []
    private var crc: UInt32 = 0
    private var length: UInt64 = 0
    private var isHeaderWritten = false

    init(sink: any ByteSink, level: Int, threads: Int, blockSize: Int) {
        self.sink = sink
        self.level = level
        self.blockSize = blockSize
        pool = DeflatePool(threads: threads, level: level, name: sink.name)
        maximumInFlight = 2 * threads
        block.reserveCapacity(blockSize)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            let take = min(blockSize - block.count, rest.count)
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if block.count == blockSize {
                try submit(isLast: false)
            }
        }
    }

    func finish() throws {
        try submit(isLast: true)
        while !inFlight.isEmpty {
            try collectOldest()
        }
        try writeHeaderIfNeeded()
        try sink.write(GzipFormat.trailer(crc: crc, length: length))
    }

    private func submit(isLast: Bool) throws {
        while inFlight.count >= maximumInFlight {
            try collectOldest()
        }
        let input = block
        let job = DeflateJob(input: input, dictionary: dictionary, isLast: isLast)
        if !isLast {
            if input.count >= GzipFormat.dictionarySize {
                dictionary = Array(input.suffix(GzipFormat.dictionarySize))
            } else {
                dictionary = Array((dictionary + input).suffix(GzipFormat.dictionarySize))
            }
            block = []
            block.reserveCapacity(blockSize)
        } else {
            block = []
        }
        pool.start(job)
        inFlight.append(job)
        // Write whatever has finished at the head without waiting, to keep memory low.
        while let head = inFlight.first, head.done.wait(timeout: .now()) == .success {
            try collect(inFlight.removeFirst())
        }
    }

    private func collectOldest() throws {
        let job = inFlight.removeFirst()
        job.done.wait()
        try collect(job)
    }

    /// Writes a finished job's output; the job's `done` semaphore has been waited on.
    private func collect(_ job: DeflateJob) throws {
        if let error = job.error { throw error }
        try writeHeaderIfNeeded()
        crc = Zlib.crc32Combine(crc, job.crc, lengthB: job.input.count)
        length += UInt64(job.input.count)
        try sink.write(job.output)
    }

    private func writeHeaderIfNeeded() throws {
        guard !isHeaderWritten else { return }
        isHeaderWritten = true
        try sink.write(GzipFormat.header(level: level))
    }
}
