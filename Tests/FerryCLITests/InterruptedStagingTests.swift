import FerryRecords
import FerryTestSupport
import Foundation
import Testing

/// Runs interrupted while they hold a staging folder: the signal handler removes it, as it
/// removes Ferry's temporary files.
@Suite("Staging folders on SIGTERM and SIGINT")
struct InterruptedStagingTests {
    /// A `.tar.gz` of generated records, big enough that part of it starts the records member.
    static func archiveBytes(in dir: String) throws -> [UInt8] {
        var generator = RecordGenerator(seed: 77)
        let lines = (0..<3000).map { _ in RecordJSON.encodedString(generator.record()) + "\n" }.joined()
        try write(lines, to: dir + "/in.ndjson")
        let (status, _, error) = try runBinary(["convert", dir + "/in.ndjson", dir + "/in.tar.gz", "--quiet"])
        #expect(status == 0, "\(error)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/in.tar.gz")))
    }

    /// Names in `directory` that are Ferry temporaries (`.….ferry-…`).
    static func temporaries(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".") && $0.contains(".ferry-") }
    }

    /// Starts `ferry arguments` reading `input`'s first part from a pipe (it then waits for the
    /// rest), waits until it made a staging folder in `watched`, sends `signal`, and returns how
    /// it ended.
    static func interrupt(_ arguments: [String], input: [UInt8], watched: String, signal: Int32) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ferryBinary())
        process.arguments = arguments
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardError = FileHandle.nullDevice
        Foundation.signal(SIGPIPE, SIG_IGN)
        try process.run()
        pipe.fileHandleForWriting.write(Data(input[..<(input.count * 3 / 4)]))
        var polls = 0
        while temporaries(in: watched).isEmpty && process.isRunning && polls < 2000 {
            usleep(10_000)
            polls += 1
        }
        #expect(!temporaries(in: watched).isEmpty, "no staging folder appeared in \(watched)")
        #expect(process.isRunning, "the run ended before it could be interrupted")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        try? pipe.fileHandleForWriting.close()
        return process
    }

    @Test("An interrupted convert to .tar.gz leaves no staging folder beside the output", arguments: [SIGTERM, SIGINT])
    func convertToArchive(signal: Int32) throws {
        let dir = scratchDirectory()
        _ = try Self.archiveBytes(in: dir)
        let input = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/in.ndjson")))
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        let process = try Self.interrupt(["convert", "-", dir + "/out/out.tar.gz", "--quiet"], input: input,
                                         watched: dir + "/out", signal: signal)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out").isEmpty)
    }

    @Test("An interrupted extract leaves no staging folder in the target", arguments: [SIGTERM, SIGINT])
    func extract(signal: Int32) throws {
        let dir = scratchDirectory()
        let input = try Self.archiveBytes(in: dir)
        let process = try Self.interrupt(["extract", "-", dir + "/out", "--quiet"], input: input, watched: dir + "/out",
                                         signal: signal)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out").isEmpty)
    }
}
