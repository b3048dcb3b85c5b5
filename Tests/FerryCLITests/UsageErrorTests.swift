import ArgumentParser
@testable import FerryCLI
import FerryIO
import FerryTestSupport
import Foundation
import Testing

/// Usage errors: an option given where it does not apply is refused (exit 2) rather than ignored,
/// the message names the option and what it needs, the usage shown is the subcommand's, and
/// nothing is written.
@Suite("Usage errors")
struct UsageErrorTests {
    let samples = samplesDirectory()

    struct Case: Sendable, CustomTestStringConvertible {
        /// Arguments; `D/` stands for a scratch folder holding `s.sqlite` (a store of chat),
        /// `S/` for Samples/.
        var arguments: [String]
        /// What the message must name (the option, and what it needs).
        var mentions: [String]
        /// The command whose usage line is shown (`ferry convert`).
        var usage: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let history = "S/chat-history.ndjson"

    @Test("An option given where it does not apply is a usage error naming it, with the subcommand's usage", arguments: [
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--mode", "replace"], mentions: ["--mode", "store"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.tar.gz", "--mode", "upsert"], mentions: ["--mode", "store"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--busy-timeout", "1"], mentions: ["--busy-timeout", "store"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.sqlite", "--busy-timeout", "-1"], mentions: ["--busy-timeout"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--database", "shared"], mentions: ["--database", "archive", "store"],
             usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.xml", "--database", "shared"], mentions: ["--database", "archive"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--level", "9"], mentions: ["--level", "gzip"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.sqlite", "--gzip"], mentions: ["--gzip", "store"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.sqlite", "--level", "9"], mentions: ["--level", "gzip"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.tar", "--level", "1"], mentions: ["--level", "gzip"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--args", "[1]"], mentions: ["--args", "--where"], usage: "ferry convert"),
        Case(arguments: ["query", "D/s.sqlite", "--type", "Message", "--args", "[1]"], mentions: ["--args", "--where"], usage: "ferry query"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--sort-memory", "1M"], mentions: ["--sort-memory", "--sort"],
             usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--keys", ""], mentions: ["--keys", "field"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--keys", " , "], mentions: ["--keys", "field"], usage: "ferry convert"),
        Case(arguments: ["query", "D/s.sqlite", "--type", "Message", "--keys", ""], mentions: ["--keys", "field"], usage: "ferry query"),
        Case(arguments: ["fetch", "D/s.sqlite", "x", "--keys", ""], mentions: ["--keys", "field"], usage: "ferry fetch"),
        Case(arguments: ["replay", history, "--out", "D/o.ndjson", "--transaction", "checkpoint"], mentions: ["--transaction", "--into"],
             usage: "ferry replay"),
        Case(arguments: ["replay", history, "--out", "D/o.ndjson", "--busy-timeout", "1"], mentions: ["--busy-timeout", "--into"],
             usage: "ferry replay"),
        Case(arguments: ["replay", history, "--out", "D/o.ndjson", "--database", "shared"], mentions: ["--database", "archive", "--into"],
             usage: "ferry replay"),
        // C3: usage errors that were data errors, or showed the root command's usage.
        Case(arguments: ["replay", history, "--into", "-"], mentions: ["--into", "file"], usage: "ferry replay"),
        Case(arguments: ["replay", history, "--out", "D/o.ndjson", "--to", "store"], mentions: ["--out", "--into"], usage: "ferry replay"),
        Case(arguments: ["replay", history, "--out", "D/o.sqlite"], mentions: ["--out", "--into"], usage: "ferry replay"),
        Case(arguments: ["replay", history, "--out", "D/s.sqlite"], mentions: ["--out", "--into"], usage: "ferry replay"),
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--assets", "D"], mentions: ["--assets", "archive"], usage: "ferry convert"),
        Case(arguments: ["convert", "S/chat.ndjson", "-", "--to", "store"], mentions: ["store", "standard output"], usage: "ferry convert"),
        Case(arguments: ["predicate", "eval", "a == 1", "--object", "nope"], mentions: ["--object"], usage: "ferry predicate eval"),
        Case(arguments: ["verify", "D/s.sqlite", "--max-ratio", "5"], mentions: ["--max-ratio", "archive"], usage: "ferry verify"),
        Case(arguments: ["verify", "D/s.sqlite", "--allow-missing-manifest"], mentions: ["--allow-missing-manifest", "archive"], usage: "ferry verify"),
        Case(arguments: ["verify", "S/chat.ndjson", "--deep"], mentions: ["--deep", "store"], usage: "ferry verify"),
        Case(arguments: ["index", "D/s.sqlite", "--quiet"], mentions: ["--quiet", "--schema"], usage: "ferry index"),
        Case(arguments: ["predicate", "eval", "a == 1", "--object", "{}", "--var", "x"], mentions: ["--var"], usage: "ferry predicate eval"),
        // --changes-since writes the journal whole: record options would be ignored.
        Case(arguments: ["convert", "D/s.sqlite", "D/c.ndjson", "--changes-since", "0", "--where", "v > 5"], mentions: ["--where", "--changes-since"], usage: "ferry convert"),
        Case(arguments: ["convert", "D/s.sqlite", "D/c.ndjson", "--changes-since", "0", "--type", "Nope"], mentions: ["--type", "--changes-since"], usage: "ferry convert"),
        Case(arguments: ["convert", "D/s.sqlite", "D/c.ndjson", "--changes-since", "0", "--zone", "Z"], mentions: ["--zone", "--changes-since"], usage: "ferry convert"),
        Case(arguments: ["convert", "D/s.sqlite", "D/c.ndjson", "--changes-since", "0", "--limit", "0"], mentions: ["--limit", "--changes-since"], usage: "ferry convert"),
        Case(arguments: ["convert", "D/s.sqlite", "D/c.ndjson", "--changes-since", "0", "--keys", "text"], mentions: ["--keys", "--changes-since"], usage: "ferry convert"),
        Case(arguments: ["convert", "D/s.sqlite", "D/c.ndjson", "--changes-since", "0", "--sort", "text"], mentions: ["--sort", "--changes-since"], usage: "ferry convert"),
        // A store is a file: not a device or pipe.
        Case(arguments: ["convert", "S/chat.ndjson", "/dev/null", "--to", "store"], mentions: ["store", "device or pipe"], usage: "ferry convert"),
        Case(arguments: ["replay", history, "--into", "/dev/null"], mentions: ["--into", "device or pipe"], usage: "ferry replay"),
        // extract writes a folder: not standard output.
        Case(arguments: ["extract", "D/a.tar.gz", "-"], mentions: ["DIRECTORY", "folder"], usage: "ferry extract"),
        // Options that do nothing with the others given.
        Case(arguments: ["query", "D/s.sqlite", "--explain", "--response"], mentions: ["--response", "--explain"], usage: "ferry query"),
        Case(arguments: ["query", "D/s.sqlite", "--explain", "--json"], mentions: ["--json", "--explain"], usage: "ferry query"),
        Case(arguments: ["replay", history, "--base", "D/a.tar.gz", "--out", "D/o.ndjson"], mentions: ["--base", "archive", "--since"],
             usage: "ferry replay"),
        // A mistyped option followed by its value: the value reads as one more path, and the
        // command's own checks (an output that is not an input) ran before the unknown option was
        // reported, which then went unsaid.
        Case(arguments: ["convert", "S/chat.ndjson", "D/o.ndjson", "--levle", "9"], mentions: ["Unknown option '--levle'"], usage: "ferry convert"),
        Case(arguments: ["inspect", "S/chat.ndjson", "--formt", "x"], mentions: ["Unknown option '--formt'"], usage: "ferry inspect"),
        Case(arguments: ["replay", history, "--outt", "D/o.ndjson"], mentions: ["Unknown option '--outt'"], usage: "ferry replay"),
        Case(arguments: ["verify", "D/s.sqlite", "--max-ratoi", "5"], mentions: ["Unknown option '--max-ratoi'"], usage: "ferry verify"),
        Case(arguments: ["validate", "S/chat.ndjson", "--schma", "x"], mentions: ["Unknown option '--schma'"], usage: "ferry validate"),
    ])
    func refused(_ c: Case) throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/a.tar.gz", "--quiet"]) == 0)
        let store = try Data(contentsOf: URL(fileURLWithPath: directory + "/s.sqlite"))
        let before = Set(FileSystem.entries(in: directory))
        let arguments = c.arguments.map { argument in
            argument == "D" ? directory
                : argument.hasPrefix("D/") ? directory + "/" + argument.dropFirst(2)
                : argument.hasPrefix("S/") ? samples + "/" + argument.dropFirst(2) : argument
        }
        let (code, out, error) = try runBinary(arguments)
        #expect(code == 2, "\(error)")
        for mention in c.mentions { #expect(error.contains(mention), "\(error)") }
        #expect(error.contains("Usage: \(c.usage) "), "\(error)")
        #expect(!error.contains("<subcommand>"), "\(error)")
        #expect(out.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/s.sqlite")) == store)
        #expect(Set(FileSystem.entries(in: directory)) == before)
    }

    @Test("Options given where they apply still work")
    func accepted() throws {
        let directory = scratchDirectory()
        let chat = samples + "/chat.ndjson"
        let runs: [[String]] = [
            ["convert", chat, directory + "/a.ndjson.gz", "--level", "9"],
            ["convert", chat, directory + "/b.ndjson", "--gzip", "--level", "1"],
            ["convert", chat, directory + "/c.tar.gz", "--level", "9", "--database", "shared"],
            ["convert", chat, directory + "/d.sqlite", "--mode", "upsert", "--database", "public"],
            ["convert", chat, directory + "/e.ndjson", "--sort", "recordName", "--sort-memory", "1M"],
            ["convert", chat, directory + "/f.ndjson", "--where", "count > %@", "--args", "[1]", "--keys", "text"],
            ["convert", chat, directory + "/g.db", "--to", "store", "--mode", "replace"],
            ["query", directory + "/d.sqlite", "--type", "Message", "--where", "count > %@", "--args", "[1]", "--keys", "text"],
            ["replay", samples + "/chat-history.ndjson", "--into", directory + "/h.sqlite", "--transaction", "checkpoint",
             "--busy-timeout", "1", "--database", "shared"],
            ["replay", samples + "/chat-history.ndjson", "--out", directory + "/i.tar.gz", "--database", "shared"],
            ["replay", samples + "/chat-history.ndjson", "--out", directory + "/j.xml", "--to", "xml"],
        ]
        for arguments in runs {
            let (code, _, error) = try runBinary(arguments + ["--quiet"])
            #expect(code == 0, "\(arguments.joined(separator: " ")): \(error)")
        }
    }

    @Test("A store on standard input, plain or gzipped, is refused as a data error saying stores are read from files",
          arguments: [["convert", "-", "D/o.ndjson"], ["convert", "-", "-"], ["inspect", "-"]])
    func storeOnStandardInput(_ arguments: [String]) throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        let bytes = try InputFile(path: directory + "/s.sqlite").readAll()
        let gzipped = directory + "/s.sqlite.gz.bin"
        try Data(BoundedMemoryTests.gzip(bytes)).write(to: URL(fileURLWithPath: gzipped))
        let before = Set(FileSystem.entries(in: directory))
        for input in [directory + "/s.sqlite", gzipped] {
            let (code, out, error) = try runBinary(arguments.map { $0.hasPrefix("D/") ? directory + "/" + $0.dropFirst(2) : $0 }, stdinFile: input)
            #expect(code == 1, "\(error)")
            #expect(error.contains("store") && error.contains("file") && !error.contains("found 'S'"), "\(error)")
            #expect(out.isEmpty)
            #expect(Set(FileSystem.entries(in: directory)) == before)
        }
    }

    @Test("Store commands say what a path is when it is no store: another program's database, a stream, a folder")
    func notAStore() throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        let store = try InputFile(path: directory + "/s.sqlite").readAll()
        // Another program's SQLite database: its application_id named, by verify as by the others.
        var other = store
        for offset in 68..<72 { other[offset] = 0 }
        try Data(other).write(to: URL(fileURLWithPath: directory + "/other.sqlite"))
        for arguments in [["verify", "D/other.sqlite"], ["verify", "D/other.sqlite", "--json"], ["query", "D/other.sqlite"],
                          ["fetch", "D/other.sqlite", "x"], ["inspect", "D/other.sqlite"]] {
            let (code, out, error) = try runBinary(arguments.map { $0.hasPrefix("D/") ? directory + "/" + $0.dropFirst(2) : $0 })
            #expect(code == 1, "\(arguments): \(error)")
            #expect((error + out).contains("another program") && !(error + out).contains("tar"), "\(arguments): \(error)\(out)")
        }
        // A store on standard input, or gzipped: read it from its file.
        let gzipped = directory + "/s.sqlite.gz"
        try Data(BoundedMemoryTests.gzip(store)).write(to: URL(fileURLWithPath: gzipped))
        for (arguments, stdin) in [(["query", "-"], directory + "/s.sqlite"), (["fetch", "-", "x"], directory + "/s.sqlite"),
                                   (["index", "-"], directory + "/s.sqlite"), (["query", gzipped], nil), (["fetch", gzipped, "x"], nil)] {
            let (code, _, error) = try runBinary(arguments, stdinFile: stdin)
            #expect(code == 1, "\(arguments): \(error)")
            #expect(error.contains("read from its file"), "\(arguments): \(error)")
        }
        // A folder.
        try FileManager.default.createDirectory(atPath: directory + "/d.sqlite", withIntermediateDirectories: true)
        for arguments in [["query", directory + "/d.sqlite"], ["fetch", directory + "/d.sqlite", "x"], ["index", directory + "/d.sqlite"]] {
            let (code, _, error) = try runBinary(arguments)
            #expect(code == 1, "\(arguments): \(error)")
            #expect(error.contains("folder"), "\(arguments): \(error)")
        }
    }

    @Test("--quiet means nothing printed on success, even with --json, where its help says so", arguments: [
        ["diff", "S/chat.ndjson", "S/chat.ndjson"], ["verify", "D/a.tar.gz"], ["verify", "D/s.sqlite"], ["extract", "D/a.tar.gz", "D/x"],
        ["query", "D/s.sqlite", "--type", "Nope"], ["predicate", "check", "a == 1"],
    ])
    func quietWinsOverJSON(_ arguments: [String]) throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/a.tar.gz", "--quiet"]) == 0)
        let resolved = arguments.map { $0.hasPrefix("D/") ? directory + "/" + $0.dropFirst(2) : $0.hasPrefix("S/") ? samples + "/" + $0.dropFirst(2) : $0 }
        let (code, out, error) = try runBinary(resolved + ["--quiet", "--json"])
        #expect(code == 0, "\(error)")
        #expect(out.isEmpty && error.isEmpty, "\(arguments): \(out)\(error)")
    }

    @Test("inspect --on-error skip says what it skipped, as convert does; --quiet silences it")
    func inspectSkipped() throws {
        let directory = scratchDirectory()
        let input = directory + "/bad.ndjson"
        let lines = try String(contentsOfFile: samples + "/chat.ndjson", encoding: .utf8).split(separator: "\n")
        try write(lines[0] + "\n{\"recordName\": 5}\n" + lines[1] + "\n", to: input)
        let (convertCode, _, convertError) = try runBinary(["convert", input, directory + "/o.ndjson", "--on-error", "skip"])
        #expect(convertCode == 0)
        let skippedLine = try #require(convertError.split(separator: "\n").first { $0.hasPrefix("ferry: skipped: ") })
        #expect(skippedLine.contains("bad.ndjson:2:"))
        let (code, _, error) = try runBinary(["inspect", input, "--on-error", "skip"])
        #expect(code == 0, "\(error)")
        #expect(error.split(separator: "\n").contains(skippedLine), "\(error)")
        let (quietCode, _, quietError) = try runBinary(["inspect", input, "--on-error", "skip", "--quiet"])
        #expect(quietCode == 0)
        #expect(!quietError.contains("skipped"), "\(quietError)")
    }

    /// Every command type, with the words that run it (`ferry predicate eval`).
    static func commands(_ type: any ParsableCommand.Type = Ferry.self, path: String = "ferry") -> [(String, any ParsableCommand.Type)] {
        [(path, type)] + type.configuration.subcommands.flatMap { commands($0, path: path + " " + $0._commandName) }
    }

    @Test("No option's help lists its values twice, and replay's --to lists only the formats it writes")
    func helpSaysValuesOnce() throws {
        for (path, type) in Self.commands() {
            let help = Ferry.helpMessage(for: type, columns: 10_000)
            for line in help.split(separator: "\n") {
                guard let range = line.range(of: "(values: ") else { continue }
                let values = line[range.upperBound...].prefix { $0 != ")" && $0 != ";" }
                #expect(!line[..<range.lowerBound].contains(values), "\(path): \(line)")
            }
        }
        let replay = Ferry.helpMessage(for: Replay.self, columns: 10_000)
        let to = try #require(replay.split(separator: "\n").first { $0.contains("--to <") })
        #expect(to.contains("(values: ndjson, xml, archive)"), "\(to)")
        #expect(!to.contains("store"), "\(to)")
        let convert = Ferry.helpMessage(for: Convert.self, columns: 10_000)
        for option in ["--from <", "--to <"] {
            let line = try #require(convert.split(separator: "\n").first { $0.contains(option) })
            #expect(line.contains("(values: ndjson, xml, archive, store)"), "\(line)")
        }
    }
}
