@testable import FerryCLI
import FerryIO
import FerryTestSupport
import Foundation
import Testing

/// Numeric options are checked when they are parsed: a value out of range is a usage error
/// (exit 2) saying what was expected, never a trap, a hang or an allocation without bound.
@Suite("Numeric options")
struct NumericOptionTests {
    let samples = samplesDirectory()

    struct Case: Sendable, CustomTestStringConvertible {
        /// Arguments; `D/` stands for a folder holding `s.sqlite` (a store of chat), `S/` for Samples/.
        var arguments: [String]
        /// What the message names.
        var option: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let huge = String(Int.max)

    @Test("A value out of range is a usage error naming the option, and changes nothing", arguments: [
        Case(arguments: ["replay", "S/chat-history.ndjson", "--into", "D/s.sqlite", "--busy-timeout", "inf"], option: "--busy-timeout"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--into", "D/s.sqlite", "--busy-timeout", "nan"], option: "--busy-timeout"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--into", "D/s.sqlite", "--busy-timeout", "1e16"], option: "--busy-timeout"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--into", "D/new.sqlite", "--busy-timeout", "inf"], option: "--busy-timeout"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--into", "D/s.sqlite", "--busy-timeout", "-1"], option: "--busy-timeout"),
        Case(arguments: ["index", "D/s.sqlite", "--busy-timeout", "inf"], option: "--busy-timeout"),
        Case(arguments: ["index", "D/s.sqlite", "--busy-timeout", "-0.5"], option: "--busy-timeout"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--threads", huge], option: "--threads"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--threads", "4294967296"], option: "--threads"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--threads", "257"], option: "--threads"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--threads", "0"], option: "--threads"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--out", "D/o.ndjson", "--threads", huge], option: "--threads"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--into", "D/s.sqlite", "--threads", "4294967296"], option: "--threads"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--out", "D/o.ndjson", "--threads", "-1"], option: "--threads"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--limit", "-5"], option: "--limit"),
        Case(arguments: ["query", "D/s.sqlite", "--type", "Message", "--limit", "-5"], option: "--limit"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson.gz", "--level", "-1"], option: "--level"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--max-line-bytes", "-1"], option: "--max-line-bytes"),
        Case(arguments: ["replay", "S/chat-history.ndjson", "--out", "D/o.ndjson", "--max-line-bytes", "0"], option: "--max-line-bytes"),
        Case(arguments: ["diff", "S/chat.ndjson", "S/chat.ndjson", "--max-line-bytes", "-1"], option: "--max-line-bytes"),
        Case(arguments: ["verify", "S/chat.ndjson", "--max-ratio", "-1"], option: "--max-ratio"),
        Case(arguments: ["validate", "S/chat.ndjson", "--max-violations", "-1"], option: "--max-violations"),
    ])
    func outOfRange(_ c: Case) throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        let store = try Data(contentsOf: URL(fileURLWithPath: directory + "/s.sqlite"))
        let before = Set(FileSystem.entries(in: directory))
        let arguments = c.arguments.map { argument in
            argument.hasPrefix("D/") ? directory + "/" + argument.dropFirst(2)
                : argument.hasPrefix("S/") ? samples + "/" + argument.dropFirst(2) : argument
        }
        let (code, _, error) = try runBinary(arguments)
        #expect(code == 2)
        #expect(error.contains(c.option + " expects"), "\(error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/s.sqlite")) == store)
        #expect(Set(FileSystem.entries(in: directory)) == before)
    }

    @Test("A page limit as large as an Int returns every match")
    func hugeQueryLimit() throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        let (code, out, error) = try runBinary(["query", directory + "/s.sqlite", "--type", "Message", "--limit", Self.huge])
        #expect(code == 0, "\(error)")
        #expect(out.split(separator: "\n").count == 3)
        #expect(!error.contains("next page"))
    }

    @Test("The most threads allowed are accepted")
    func mostThreads() throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/o.ndjson.gz", "--threads", "256", "--quiet"]) == 0)
        #expect(Ferry.execute(["replay", samples + "/chat-history.ndjson", "--out", directory + "/s.ndjson", "--threads", "256", "--quiet"]) == 0)
        #expect(try records(at: directory + "/s.ndjson").count == 5)
    }
}
