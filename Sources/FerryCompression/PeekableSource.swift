import FerryIO

/// A source that can look at its next bytes without consuming them, then hands them out again.
///
/// Pure Swift, no C calls. It owns the wrapped source and a buffer holding the peeked bytes.
public final class PeekableSource: ByteSource {
    /// The wrapped source's name.
    public var name: String { source.name }
    private let source: any ByteSource
    /// The source it wraps.
    package var wrapped: any ByteSource { source }
    private var peeked: [UInt8] = []
    private var peekedStart = 0
    private var isAtEnd = false

    /// Wraps `source`; read only through this object afterwards.
    public init(_ source: any ByteSource) {
        self.source = source
    }

    /// Returns up to the next `count` bytes without consuming them; fewer only when the input
    /// ends first.
    public func peek(_ count: Int) throws -> [UInt8] {
        if peekedStart > 0 {
            peeked.removeFirst(peekedStart)
            peekedStart = 0
        }
        var chunk = [UInt8](repeating: 0, count: max(0, count - peeked.count))
        while peeked.count < count && !isAtEnd {
            let wanted = count - peeked.count
            let n = try chunk.withUnsafeMutableBytes {
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
            }
            if n == 0 {
                isAtEnd = true
            } else {
                peeked.append(contentsOf: chunk[..<n])
            }
        }
        return Array(peeked.prefix(count))
    }

    /// Hands out peeked bytes first, then reads the wrapped source directly into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let pending = peeked.count - peekedStart
        if pending > 0 {
            let n = min(pending, buffer.count)
            peeked.withUnsafeBytes { bytes in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[peekedStart..<(peekedStart + n)]))
            }
            peekedStart += n
            if peekedStart == peeked.count {
                peeked = []
                peekedStart = 0
            }
            return n
        }
        if isAtEnd { return 0 }
        return try source.read(into: buffer)
    }

    /// The wrapped source's size.
    public var sizeHint: Int? { source.sizeHint }

    /// The wrapped source's mapping, from the first byte not yet handed out.
    public func mapRemaining(maximumSize: Int) -> MappedInput? {
        guard let rest = source.mapRemaining(maximumSize: maximumSize) else { return nil }
        return peeked.withUnsafeBytes { bytes in
            rest.extended(backBy: peeked.count - peekedStart, matching: UnsafeRawBufferPointer(rebasing: bytes[peekedStart...]))
        }
    }
}
