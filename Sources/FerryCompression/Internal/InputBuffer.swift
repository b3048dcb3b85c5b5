/// A fixed heap buffer of compressed input with a window of unread bytes; it tracks the offset of
/// that window in the whole input. Owns its memory and frees it in deinit.
final class InputBuffer {
    private let storage: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var origin = 0
    private var isAtEnd = false

    init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// The unread bytes, borrowed until the next ``consume(_:)`` or ``fill(_:)``.
    var available: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[start..<end])
    }

    var isEmpty: Bool { start == end }

    /// The offset of the first unread byte in the whole input.
    var offset: Int { origin + start }

    func consume(_ count: Int) {
        start += count
    }

    /// Reads more bytes after the unread ones with `read`, moving unread bytes to the front when
    /// the buffer is full; `false` once `read` has returned 0.
    func fill(_ read: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> Bool {
        if isAtEnd { return false }
        if start == end {
            origin += start
            start = 0
            end = 0
        } else if end == storage.count {
            let count = end - start
            storage.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: count)
            origin += start
            start = 0
            end = count
        }
        let n = try read(UnsafeMutableRawBufferPointer(rebasing: storage[end...]))
        if n == 0 {
            isAtEnd = true
            return false
        }
        end += n
        return true
    }
}
