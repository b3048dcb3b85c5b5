// The gzip reader with its decompression limits: no crash on any input, and never more output
// than the limit allows; the detection path (`Compression.openInput`) too.
import FerryCompression
import FerryIO
import FuzzDriver

let limit = 1 << 20
let configuration = GzipSource.Configuration(maximumOutputBytes: limit, maximumRatio: 100, ratioGraceBytes: 4096,
                                             inputBufferSize: 1024)

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let input = fuzzInput(data, size) else { return 0 }
    let bytes = Array(input)
    if let gzip = try? GzipSource(wrapping: MemorySource(bytes, chunkSize: 333), configuration: configuration) {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            guard let count = try? buffer.withUnsafeMutableBytes({ try gzip.read(into: $0) }), count > 0 else { break }
            total += count
            fuzzCheck(total <= limit, "gzip gave \(total) bytes, over the limit of \(limit)")
        }
    }
    if let opened = try? Compression.openInput(MemorySource(bytes), configuration: configuration) {
        _ = try? opened.readAll(limit: 2 * limit)
    }
    return 0
}

runFuzzer(testOneInput)
