// ferry-gzip: FerryCompression's gzip streams as a command, for timing against pigz and gzip.
//
//   ferry-gzip -c [-LEVEL] [-p THREADS] [-b KIB] INPUT OUTPUT   compress (in parallel blocks, as GzipSink does)
//   ferry-gzip -d INPUT OUTPUT                           decompress
// OUTPUT may be - for standard output.
import FerryCompression
import FerryIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String) -> Never {
    let text = "ferry-gzip: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var decompress = false
var level = 6
var threads: Int?
var blockKiB: Int?
var paths: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "-d": decompress = true
    case "-c": decompress = false
    case "-p":
        guard let value = arguments.first.flatMap({ Int($0) }) else { fail("-p expects a number") }
        threads = value
        arguments.removeFirst()
    case "-b":
        guard let value = arguments.first.flatMap({ Int($0) }) else { fail("-b expects a number of KiB") }
        blockKiB = value
        arguments.removeFirst()
    case _ where argument.count == 2 && argument.hasPrefix("-") && Int(argument.dropFirst()) != nil:
        level = Int(argument.dropFirst())!
    default: paths.append(argument)
    }
}
guard paths.count == 2 else { fail("usage: ferry-gzip (-c [-LEVEL] [-p THREADS] [-b KIB] | -d) INPUT OUTPUT") }

do {
    let input = try InputFile(path: paths[0])
    let output = try OutputFile(path: paths[1], bufferCapacity: 4 << 20)
    var configuration = GzipSink.Configuration(level: level, threads: threads)
    if let blockKiB { configuration.blockSize = blockKiB << 10 }
    let source: any ByteSource = decompress ? try GzipSource(wrapping: input) : input
    let sink: any ByteSink = decompress
        ? output : try GzipSink(wrapping: output, configuration: configuration)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        if n == 0 { break }
        try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }
    try sink.commit()
} catch {
    let text = "ferry-gzip: \(error)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(1)
}
