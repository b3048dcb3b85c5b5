import FerryIO

/// Splits a byte source into lines (without their `\n`), reading 1 MiB at a time.
final class LineSplitter {
    private let source: any ByteSource
    private let chunkSize: Int

    init(source: any ByteSource, chunkSize: Int = 1 << 20) {
        self.source = source
        self.chunkSize = chunkSize
    }

    /// Calls `body` with each line and its 1-based number; a last line without `\n` counts.
    func forEachLine(_ body: (UnsafeRawBufferPointer, Int) throws -> Void) throws {
        var buffer: [UInt8] = []
        var number = 0
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            buffer.append(contentsOf: chunk[..<n])
            var start = 0
            try buffer.withUnsafeBytes { bytes in
                while let newline = bytes[start...].firstIndex(of: 0x0A) {
                    number += 1
                    try body(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]), number)
                    start = newline + 1
                }
            }
            buffer.removeFirst(start)
        }
        if !buffer.isEmpty {
            number += 1
            try buffer.withUnsafeBytes { try body($0, number) }
        }
    }
}
