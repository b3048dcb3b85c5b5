/// Byte copies for the short runs JSON is made of.
@usableFromInline
enum ByteCopy {
    /// Copies `count` bytes; short runs (the keys and most values of a record) with word moves
    /// instead of a call to `memmove`. Only `count` bytes are written.
    @inlinable @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
        let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
        if count >= 8 && count <= 16 {
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 && count < 8 {
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        } else if count < 4 {
            var i = 0
            while i < count {
                destination[i] = source[i]
                i += 1
            }
        } else {
            destination.update(from: source, count: count)
        }
    }
}
