/// The raw bytes read from a given offset on: the record being decoded (for verbatim rejects and
/// positions inside it) and libxml2's read-ahead. Owns its buffer; dropping bytes only moves a
/// head index, and the kept bytes are moved to the front only when appending needs the room, so
/// each byte is copied about once.
final class ByteWindow {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var head = 0
    /// Bytes held.
    private(set) var count = 0
    /// The input offset of the first byte held.
    private(set) var startOffset = 0

    init(capacity: Int = 1 << 16) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if head + count + bytes.count > capacity {
            if count + bytes.count <= capacity / 2 || (head > 0 && count + bytes.count <= capacity) {
                storage.copyMemory(from: storage + head, byteCount: count)
            } else {
                var newCapacity = capacity * 2
                while newCapacity < count + bytes.count { newCapacity *= 2 }
                let newStorage = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
                newStorage.copyMemory(from: storage + head, byteCount: count)
                storage.deallocate()
                storage = newStorage
                capacity = newCapacity
            }
            head = 0
        }
        (storage + head + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    /// Drops the bytes before input offset `offset`.
    func discard(before offset: Int) {
        let drop = min(offset - startOffset, count)
        guard drop > 0 else { return }
        head += drop
        count -= drop
        startOffset += drop
        if count == 0 { head = 0 }
    }

    /// The bytes from input offset `from` up to `to` (or the end), if they are all held; valid until
    /// the window changes.
    func bytes(from: Int, to: Int? = nil) -> UnsafeRawBufferPointer? {
        let end = to ?? (startOffset + count)
        guard from >= startOffset, end <= startOffset + count, from <= end else { return nil }
        return UnsafeRawBufferPointer(start: storage + head + (from - startOffset), count: end - from)
    }
}
