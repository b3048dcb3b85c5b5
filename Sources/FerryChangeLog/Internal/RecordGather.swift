import CFerrySystem
import Dispatch
import FerryIO
import FerryJSON
import FerryRecords

/// Writes records held as compact JSON as NDJSON lines, in order, their bytes gathered on two
/// threads.
///
/// In name order the records lie all over memory (or the mapped history), so gathering them is
/// bound by memory latency, not by copying. The records are cut into chunks; two helper threads
/// gather them, each every other chunk into one of its two buffers, while the calling thread
/// writes them in order.
enum RecordGather {
    /// Records per chunk: about 700 KB of output for records of 700 bytes, which the writing
    /// thread's cache keeps until the kernel copies it.
    static let chunkRecords = 1024
    /// How many records ahead gathering loads a record's JSON (its header twice as far).
    private static let prefetchDistance = 8

    /// A chunk: records `range` of list `list`.
    private struct Chunk {
        var list: Int
        var range: Range<Int>
    }

    /// A buffer its helper fills and the writer empties.
    ///
    /// `@unchecked Sendable`: `output` is written by the helper between `free` and `ready`, read
    /// by the writer between `ready` and `free`.
    private final class Buffer: @unchecked Sendable {
        var output = JSONOutput(capacity: 1 << 20)
        var records = 0
        let ready = DispatchSemaphore(value: 0)
        let free = DispatchSemaphore(value: 0)
        init() { free.signal() }
    }

    /// Writes the lines of every blob of `lists`, list after list, through `writer` (not finished).
    static func write(_ lists: [[RecordBlob]], to writer: NDJSONWriter) throws {
        let chunks = lists.indices.flatMap { i in
            stride(from: 0, to: lists[i].count, by: chunkRecords).map { Chunk(list: i, range: $0..<min(lists[i].count, $0 + chunkRecords)) }
        }
        guard chunks.count >= 4 && Processors.available > 1 else {
            var own = JSONOutput(capacity: 1 << 20)
            for chunk in chunks {
                own.removeAll()
                gather(lists[chunk.list], chunk.range, into: &own)
                try writer.write(encodedLines: own.bytes, records: chunk.range.count)
            }
            return
        }
        // Two helpers gather, the calling thread only writes: the kernel's copy of the output
        // (as long as the gathering, for a state in memory) overlaps both. Chunk k goes through
        // buffer k % 4, which only the helper of its parity fills.
        let shared = Lists(lists)
        let buffers = (0..<4).map { _ in Buffer() }
        let stop = Flag()
        let helpers = DispatchGroup()
        for parity in 0..<2 {
            // Queues of their own (each gets a thread): the global queue runs only as many
            // blocks at once as there are cores, and the reference check may hold one.
            DispatchQueue(label: "ferry.replay.gather-\(parity)").async(group: helpers) {
                for k in stride(from: parity, to: chunks.count, by: 2) {
                    let buffer = buffers[k % 4]
                    buffer.free.wait()
                    if stop.isSet { return }
                    buffer.output.removeAll()
                    gather(shared.lists[chunks[k].list], chunks[k].range, into: &buffer.output)
                    buffer.records = chunks[k].range.count
                    buffer.ready.signal()
                }
            }
        }
        defer {
            stop.set()
            for buffer in buffers { buffer.free.signal() }
            helpers.wait()
        }
        for k in chunks.indices {
            let buffer = buffers[k % 4]
            buffer.ready.wait()
            try writer.write(encodedLines: buffer.output.bytes, records: buffer.records)
            buffer.free.signal()
        }
    }

    /// Appends the JSON of `list[range]`, a line each, to `output`, loading each record's header,
    /// then its JSON, ahead of the copy.
    private static func gather(_ list: [RecordBlob], _ range: Range<Int>, into output: inout JSONOutput) {
        list.withUnsafeBufferPointer { blobs in
            for k in range {
                if k + 2 * prefetchDistance < range.upperBound { CFerrySystem_prefetch(blobs[k + 2 * prefetchDistance].raw) }
                if k + prefetchDistance < range.upperBound {
                    let json = blobs[k + prefetchDistance].json
                    CFerrySystem_prefetch(json.baseAddress!)
                    CFerrySystem_prefetch(json.baseAddress! + min(64, json.count))
                    CFerrySystem_prefetch(json.baseAddress! + min(128, json.count))
                }
                blobs[k].appendCompactJSON(to: &output)
                output.append(0x0A)
            }
        }
    }
}

/// The lists of blobs the helper reads.
///
/// `@unchecked Sendable`: nothing changes the blobs or the state they belong to while the lists
/// are written.
private final class Lists: @unchecked Sendable {
    let lists: [[RecordBlob]]
    init(_ lists: [[RecordBlob]]) { self.lists = lists }
}

/// A flag one thread sets and others read.
///
/// `@unchecked Sendable`: guarded by a lock.
private final class Flag: @unchecked Sendable {
    private let lock = Lock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
