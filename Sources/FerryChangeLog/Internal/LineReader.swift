import FerryIO
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte source into lines with one buffer that grows only to the longest line.
///
/// A line handed out is valid until the next call. A carriage return before the newline and a
/// UTF-8 byte order mark at the start are dropped.
final class LineReader {
    private let source: ByteSource
    private let chunkSize: Int
    private let maximumLineBytes: Int
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0
    private var end = 0
    private var scanFrom = 0
    private var isEOF = false
    private var isFirst = true
    /// 1-based number of the last line handed out.
    private(set) var lineNumber = 0
    /// Bytes read from the source.
    private(set) var bytesRead = 0

    init(source: ByteSource, chunkSize: Int, maximumLineBytes: Int) {
        self.source = source
        self.chunkSize = max(chunkSize, 4096)
        self.maximumLineBytes = maximumLineBytes
        capacity = self.chunkSize * 2
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    var name: String { source.name }

    /// The next line without its newline, or `nil` at the end of the input.
    func nextLine() throws -> UnsafeRawBufferPointer? {
        while true {
            if scanFrom < end, let found = memchr(buffer + scanFrom, 0x0A, end - scanFrom) {
                let newline = UnsafeRawPointer(found) - UnsafeRawPointer(buffer)
                let line = try take(upTo: newline)
                start = newline + 1
                scanFrom = start
                return line
            }
            scanFrom = end
            if isEOF {
                guard start < end else { return nil }
                let line = try take(upTo: end)
                start = end
                return line
            }
            if end - start > maximumLineBytes { throw tooLong() }
            try fill()
        }
    }

    private func take(upTo stop: Int) throws -> UnsafeRawBufferPointer {
        if stop - start > maximumLineBytes { throw tooLong() }
        lineNumber += 1
        var first = start
        var last = stop
        if last > first && buffer.load(fromByteOffset: last - 1, as: UInt8.self) == 0x0D { last -= 1 }
        if isFirst {
            isFirst = false
            if last - first >= 3 && buffer.load(fromByteOffset: first, as: UInt8.self) == 0xEF
                && buffer.load(fromByteOffset: first + 1, as: UInt8.self) == 0xBB
                && buffer.load(fromByteOffset: first + 2, as: UInt8.self) == 0xBF {
                first += 3
            }
        }
        return UnsafeRawBufferPointer(start: buffer + first, count: last - first)
    }

    private func tooLong() -> ChangeLogError {
        ChangeLogError(.tooLarge, "expected a line of at most \(maximumLineBytes) bytes, found a longer one",
                       source: source.name, line: lineNumber + 1, column: 1)
    }

    private func fill() throws {
        if start > 0 {
            let live = end - start
            if live > 0 { buffer.copyMemory(from: buffer + start, byteCount: live) }
            scanFrom -= start
            end = live
            start = 0
        }
        if capacity - end < chunkSize {
            let newCapacity = max(capacity * 2, end + chunkSize)
            let newBuffer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            newBuffer.copyMemory(from: buffer, byteCount: end)
            buffer.deallocate()
            buffer = newBuffer
            capacity = newCapacity
        }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer + end, count: capacity - end))
        if n == 0 { isEOF = true } else { end += n; bytesRead += n }
    }

    /// Everything not yet handed out (the rest of the current chunk and of the source), up to `limit`.
    func readRemaining(limit: Int) throws -> [UInt8] {
        var all = Array(UnsafeRawBufferPointer(start: buffer + start, count: end - start))
        start = end
        scanFrom = end
        while !isEOF {
            try fill()
            all.append(contentsOf: UnsafeRawBufferPointer(start: buffer + start, count: end - start))
            start = end
            scanFrom = end
            if all.count > limit {
                throw ChangeLogError(.tooLarge, "expected a multi-line JSON document of at most \(limit) bytes, found a larger one",
                                     source: source.name, line: lineNumber, column: 1)
            }
        }
        return all
    }
}
