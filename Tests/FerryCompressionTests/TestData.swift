import FerryCompression
import FerryIO
import Foundation

/// A small seeded generator (SplitMix64) so every run sees the same data.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum TestData {
    /// Incompressible bytes.
    static func random(count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word >> UInt64(shift))
                index += 1
            }
        }
        return bytes
    }

    /// NDJSON-like records: repeated keys, words from a vocabulary, numbers; compresses about 4:1.
    static func text(count: Int, seed: UInt64 = 2) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
            "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
            "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu",
        ].map { Array($0.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 256)
        var record = 0
        while bytes.count < count {
            record += 1
            bytes += Array("{\"recordName\":\"R\(record)\",\"recordType\":\"Note\",\"fields\":{\"title\":\"".utf8)
            for index in 0..<Int(generator.next() % 8 + 2) {
                if index > 0 { bytes.append(0x20) }
                bytes += words[Int(generator.next() % UInt64(words.count))]
            }
            bytes += Array("\",\"count\":\(generator.next() % 100_000),\"modified\":\(1_700_000_000 + generator.next() % 10_000_000)}}\n".utf8)
        }
        return Array(bytes.prefix(count))
    }

    static func named(_ kind: String, count: Int) -> [UInt8] {
        kind == "random" ? random(count: count) : text(count: count)
    }
}

enum Gzip {
    /// Compresses `bytes` with a ``GzipSink``, writing them in pieces of `writeSize`.
    static func compress(
        _ bytes: [UInt8],
        _ configuration: GzipSink.Configuration = .init(threads: 1),
        writeSize: Int = 100_000
    ) throws -> [UInt8] {
        let memory = MemorySink()
        let sink = try GzipSink(wrapping: memory, configuration: configuration)
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + writeSize)
            try bytes[offset..<end].withUnsafeBytes { try sink.write($0) }
            offset = end
        } while offset < bytes.count
        try sink.commit()
        return memory.bytes
    }

    /// Decompresses `bytes` with a ``GzipSource``, feeding it `chunkSize` bytes at a time.
    static func decompress(
        _ bytes: [UInt8],
        chunkSize: Int = .max,
        _ configuration: GzipSource.Configuration = .init()
    ) throws -> [UInt8] {
        let source = try GzipSource(wrapping: MemorySource(bytes, name: "test.gz", chunkSize: chunkSize), configuration: configuration)
        return try source.readAll()
    }

    /// The error decompressing `bytes` throws, if any.
    static func decompressionError(_ bytes: [UInt8], chunkSize: Int = .max) -> CompressionError? {
        do {
            _ = try decompress(bytes, chunkSize: chunkSize)
            return nil
        } catch let error as CompressionError {
            return error
        } catch {
            return CompressionError(.zlibFailure, "unexpected error \(error)", source: "test")
        }
    }
}

/// CRC-32 (IEEE) in plain Swift, independent of zlib, for building test headers.
func referenceCRC32<S: Sequence<UInt8>>(_ bytes: S, _ start: UInt32 = 0) -> UInt32 {
    var crc = ~start
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
        }
    }
    return ~crc
}

/// The engines this build has: both on Linux, zlib elsewhere.
let availableEngines: [GzipSink.Configuration.Engine] = GzipSink.Configuration.Engine.preferred == .libdeflate ? [.libdeflate, .zlib] : [.zlib]

/// A command-line peer (`gzip`, `pigz`, `zcat`, `python3`) run on a temporary file.
struct SystemTool {
    /// The tool's path, found on `PATH` (or in /usr/bin, /bin), or `nil` when it is not installed.
    let path: String?

    init(_ name: String) {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/bin", "/usr/local/bin"]
        path = directories.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let gzip = SystemTool("gzip")
    static let pigz = SystemTool("pigz")
    static let zcat = SystemTool("zcat")
    static let python = SystemTool("python3")

    struct Result {
        var status: Int32
        var output: [UInt8]
    }

    /// Writes `input` to a temporary file named `fileName` and runs `TOOL ARGUMENTS FILE`
    /// (`TOOL ARGUMENTS` alone, with the file on standard input, when `fileAsInput`).
    func run(_ arguments: [String], input: [UInt8], fileName: String = "input.gz", fileAsInput: Bool = false) throws -> Result {
        guard let path else { throw CocoaError(.fileNoSuchFile) }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-gzip-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(fileName)
        try Data(input).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = fileAsInput ? arguments : arguments + [file.path]
        if fileAsInput { process.standardInput = try FileHandle(forReadingFrom: file) }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: [UInt8](output))
    }
}

/// The system `gzip`.
enum SystemGzip {
    static let path = SystemTool.gzip.path

    static func run(_ arguments: [String], input: [UInt8], fileName: String = "input.gz") throws -> SystemTool.Result {
        try SystemTool.gzip.run(arguments, input: input, fileName: fileName)
    }
}
