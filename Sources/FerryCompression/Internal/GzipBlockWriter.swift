import FerryIO

/// Writes a gzip stream compressed in blocks of `blockSize` bytes, on worker threads
/// (``OrderedWorkers``) or, with one thread, on the caller's; the output is the same bytes
/// either way, since the blocks are cut and compressed alike.
///
/// With libdeflate each block becomes a gzip member of its own and the stream is their
/// concatenation (``LibDeflateMemberDeflater``); with zlib each block is a piece of one member,
/// primed with the 32 KiB before it (``ZlibBlockDeflater``), and this writer adds the one header
/// and the trailer, joining the blocks' CRC-32s with `crc32_combine`.
///
/// Memory: at most ``OrderedWorkers/maximumInFlight`` blocks are compressing or waiting to be
/// written, plus the one being filled; their buffers are allocated once and reused. Output goes
/// to `sink` in block order, on the caller's thread.
final class GzipBlockWriter {
    private let sink: any ByteSink
    private let level: Int
    private let blockSize: Int
    private let engine: GzipSink.Configuration.Engine
    private let outputCapacity: Int
    /// `nil` with one thread: blocks are compressed by `deflater` on the caller's thread.
    private let workers: OrderedWorkers<DeflateBlock>?
    private let deflater: (any BlockDeflater)?
    /// The block being filled.
    private var current: DeflateBlock
    /// Blocks written out, ready for reuse.
    private var spare: [DeflateBlock] = []
    /// Whether any block has been handed out (the one-member layout's header is written before it).
    private var hasStarted = false
    private var crc: UInt32 = 0
    private var length: UInt64 = 0

    init(sink: any ByteSink, level: Int, threads: Int, blockSize: Int,
         engine: GzipSink.Configuration.Engine) throws(CompressionError) {
        self.sink = sink
        self.level = level
        self.blockSize = blockSize
        self.engine = engine
        outputCapacity = engine.outputCapacity(blockSize: blockSize)
        current = DeflateBlock(capacity: blockSize, outputCapacity: outputCapacity)
        if threads == 1 {
            workers = nil
            deflater = try engine.makeDeflater(level: level, name: sink.name)
        } else {
            let deflaters = WorkerDeflaters(count: Processors.clampedThreads(threads))
            let name = sink.name
            workers = OrderedWorkers(threads: threads) { block, worker in
                do {
                    try deflaters.deflater(worker, engine: engine, level: level, name: name).compress(block)
                } catch {
                    block.error = error
                }
            }
            deflater = nil
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            let take = min(blockSize - current.count, rest.count)
            current.append(UnsafeRawBufferPointer(rebasing: rest[..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if current.count == blockSize { try dispatch(isLast: false) }
        }
    }

    /// Compresses what is left and ends the stream: an empty input still gives one member.
    func finish() throws {
        if current.count > 0 || !hasStarted || !engine.writesMembers {
            try dispatch(isLast: true)
        }
        if let workers {
            while let block = workers.takeHead() { try collect(block) }
        }
        if !engine.writesMembers {
            try sink.write(GzipFormat.trailer(crc: crc, length: length))
        }
    }

    /// Hands the current block to a worker (or compresses it here) and starts the next one.
    private func dispatch(isLast: Bool) throws {
        if !hasStarted {
            hasStarted = true
            if !engine.writesMembers { try sink.write(GzipFormat.header(level: level)) }
        }
        current.isLast = isLast
        guard let workers else {
            try deflater!.compress(current)
            try collect(current)
            current.restart(after: engine.writesMembers ? nil : current)
            return
        }
        // Write whatever has finished at the head without waiting, then make room.
        while workers.isHeadDone, let done = workers.takeHead() { try collect(done) }
        if workers.isFull, let done = workers.takeHead() { try collect(done) }
        let next = spare.popLast() ?? DeflateBlock(capacity: blockSize, outputCapacity: outputCapacity)
        next.restart(after: engine.writesMembers || isLast ? nil : current)
        workers.submit(current)
        current = next
    }

    /// Writes a compressed block out (the block has been taken back from its worker) and keeps
    /// it for reuse.
    private func collect(_ block: DeflateBlock) throws {
        if let error = block.error { throw error }
        if !engine.writesMembers {
            crc = Zlib.crc32Combine(crc, block.crc, lengthB: block.count)
            length += UInt64(block.count)
        }
        try sink.write(block.compressed)
        if workers != nil { spare.append(block) }
    }
}

/// One deflater per worker, made by the worker on first use: slot `i` is touched only by worker
/// `i`, whose jobs run one at a time on its own serial queue. The slots live in one heap
/// allocation, written through a pointer (not an array, whose in-place mutation from two threads
/// would be two overlapping accesses to the same property), freed in deinit.
///
/// `@unchecked Sendable`: each slot has a single thread using it (see above).
private final class WorkerDeflaters: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<(any BlockDeflater)?>
    private let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil, count: count)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    func deflater(_ worker: Int, engine: GzipSink.Configuration.Engine, level: Int,
                  name: String) throws(CompressionError) -> any BlockDeflater {
        if let deflater = slots[worker] { return deflater }
        let deflater = try engine.makeDeflater(level: level, name: name)
        slots[worker] = deflater
        return deflater
    }
}
