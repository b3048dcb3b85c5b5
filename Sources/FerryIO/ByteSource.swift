/// Something bytes are read from: a file, standard input, a decompressor.
///
/// Sources are pull-based and synchronous; readers built on them stream with bounded memory.
public protocol ByteSource: AnyObject {
    /// A name for messages: the path, `-` for standard input, or `a.ndjson.gz (gzip)`.
    var name: String { get }

    /// Reads up to `buffer.count` bytes into `buffer` and returns how many were read;
    /// `0` means the end of the input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int

    /// The rest of the input as a read-only mapping, when it is a regular file of at most
    /// `maximumSize` bytes; `nil` otherwise (the default). The source's position does not move;
    /// a caller that takes the mapping reads it instead of the source.
    func mapRemaining(maximumSize: Int) -> MappedInput?
    /// The size of the whole input in bytes when it is known (a regular file), else `nil`: for
    /// choosing how to read it, never for reading (the file may change).
    var sizeHint: Int? { get }
}

/// Something bytes are written to: a file (committed atomically), standard output, a compressor.
public protocol ByteSink: AnyObject {
    /// A name for messages.
    var name: String { get }

    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws

    /// Finishes the output: flushes buffers, and for files renames the temporary file into place.
    /// Nothing written becomes visible under the final name before this succeeds.
    func commit() throws
}

extension ByteSink {
    /// Writes the bytes of an array.
    @inlinable
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes the UTF-8 bytes of a string.
    @inlinable
    public func write(_ string: String) throws {
        var copy = string
        try copy.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }
}

extension ByteSource {
    /// Reads everything that is left, up to `limit` bytes.
    ///
    /// - Throws: ``FerryIOError`` when the input is longer than `limit`.
    public func readAll(limit: Int = Int.max) throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try read(into: $0) }
            if n == 0 { break }
            if result.count + n > limit {
                throw FerryIOError(.read, path: name, detail: "input is larger than the \(limit)-byte limit")
            }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }
}

/// An input a worker thread can read in full on its own, from the start: a small gzip file,
/// inflated off the thread that hands out inputs (``JSONFramer`` passes it on whole when asked).
/// Read through ``ByteSource/read(into:)`` it is an ordinary stream.
package protocol WholeInput: ByteSource {
    /// The whole content, read anew from the start into memory allocated with
    /// `UnsafeMutableRawBufferPointer.allocate(byteCount:alignment:)` (alignment 1), which the
    /// caller then owns; `nil` when the content is longer than `limit` bytes.
    func readWhole(limit: Int) throws -> (storage: UnsafeMutableRawBufferPointer, count: Int)?
}
