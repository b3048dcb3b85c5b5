import FerryInternals
import FerryIO

/// A member being staged: bytes go to a file in the staging directory (through an `OutputFile`,
/// committed on ``close()``) while their SHA-256 and size are computed on the way.
final class StagedFile {
    /// The file in the staging directory.
    let path: String
    private let output: OutputFile
    private var hasher = SHA256()
    /// Bytes written so far.
    private(set) var size = 0
    /// The SHA-256 once closed.
    private(set) var sha256: String?

    init(path: String) throws {
        self.path = path
        output = try OutputFile(path: path, bufferCapacity: 64 << 10)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try output.write(bytes)
        hasher.update(bytes)
        size += bytes.count
    }

    /// Copies everything `source` has left into the file.
    func write(contentsOf source: any ByteSource) throws {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            try chunk.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
    }

    /// Commits the file and fixes its checksum. Calling it again does nothing.
    func close() throws {
        guard sha256 == nil else { return }
        try output.commit()
        sha256 = hasher.finalizeHex()
    }

    /// Drops the file if it was never committed.
    func abandon() {
        if sha256 == nil { output.abandon() }
    }
}
