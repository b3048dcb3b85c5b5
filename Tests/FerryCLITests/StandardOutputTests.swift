@testable import FerryCLI
import FerryTestSupport
import Foundation
import Testing

/// A command whose report or records could not be written to standard output has failed.
@Suite("Writes to standard output")
struct StandardOutputTests {
    @Test("A named pipe as an output is written NDJSON, and as an input read whole, by every command (none reads it to sniff a store)")
    func namedPipes() throws {
        let directory = scratchDirectory()
        let chat = samplesDirectory() + "/chat.ndjson"
        let (_, expected, _) = try runBinary(["convert", chat, "-", "--quiet"])
        // Output: a FIFO read by another process.
        let fifo = directory + "/out.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [fifo]
        let pipe = Pipe()
        reader.standardOutput = pipe
        try reader.run()
        let (code, _, error) = try runBinary(["convert", chat, fifo, "--quiet"])
        let written = pipe.fileHandleForReading.readDataToEndOfFile()
        reader.waitUntilExit()
        #expect(code == 0, "\(error)")
        #expect(String(decoding: written, as: UTF8.self) == expected)
        // Input: a FIFO fed by another process, to diff and to verify.
        let archive = directory + "/chat.tar.gz"
        #expect(Ferry.execute(["convert", chat, archive, "--quiet"]) == 0)
        for (arguments, source) in [(["diff", fifo, chat, "--quiet"], chat), (["verify", fifo, "--quiet"], archive)] {
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "cat \"$0\" > \"$1\"", source, fifo]
            try writer.run()
            let (status, _, message) = try runBinary(arguments)
            writer.waitUntilExit()
            #expect(status == 0, "\(arguments): \(message)")
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        /// Arguments; `S/` stands for Samples/, `STORE` for a store of chat, `OUT` for a new file.
        var arguments: [String]
        var code: Int32 = 1
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test("A failed write to standard output exits 1 (diff: 2) with a message", arguments: [
        Case(arguments: ["inspect", "S/chat.ndjson"]),
        Case(arguments: ["inspect", "S/chat.ndjson", "--json"]),
        Case(arguments: ["verify", "STORE", "--json"]),
        Case(arguments: ["diff", "S/chat.ndjson", "S/shopping.ndjson"], code: 2),
        Case(arguments: ["diff", "S/chat.ndjson", "S/chat.ndjson", "--json"], code: 2),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--tokens-only"]),
        Case(arguments: ["predicate", "format", "a == 1"]),
        Case(arguments: ["predicate", "filterby", "a == 1"]),
        Case(arguments: ["index", "STORE", "--json"]),
        Case(arguments: ["convert", "S/chat.ndjson", "OUT", "--json"]),
        Case(arguments: ["convert", "S/chat.ndjson", "-"]),
        Case(arguments: ["inspect", "--help"]),
    ])
    func fullDevice(_ c: Case) throws {
        let directory = scratchDirectory()
        let samples = samplesDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        let arguments = c.arguments.map { argument in
            argument == "STORE" ? directory + "/s.sqlite" : argument == "OUT" ? directory + "/o.ndjson"
                : argument.hasPrefix("S/") ? samples + "/" + argument.dropFirst(2) : argument
        }
        let command = ([try ferryBinary()] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        let (status, _, error) = try runShell(command + " > /dev/full")
        #expect(status == c.code)
        #expect(error.contains("standard output") || error.contains("-: cannot write"), "\(error)")
    }
}
