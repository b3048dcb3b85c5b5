@testable import FerryCLI
import FerryIO
import FerryTestSupport
import Foundation
import Testing

/// Side outputs (`--rejects`, `--report`, `--log`, the tokens file beside a state) and stores
/// written in place are renamed over, or written into, their path at the end of a run: naming an
/// input, the output or another side output there would destroy it.
@Suite("Outputs never replace an input or each other")
struct OutputClashTests {
    let samples = samplesDirectory()

    /// A folder with `in.ndjson` (chat), `h.ndjson` (a history), `st.ndjson` (an old state) and
    /// `s.sqlite` (a store of chat), and the bytes of each.
    func fixture() throws -> (directory: String, bytes: [String: Data]) {
        let directory = scratchDirectory()
        try FileManager.default.copyItem(atPath: samples + "/chat.ndjson", toPath: directory + "/in.ndjson")
        try FileManager.default.copyItem(atPath: samples + "/chat-history.ndjson", toPath: directory + "/h.ndjson")
        try FileManager.default.copyItem(atPath: samples + "/shopping.ndjson", toPath: directory + "/st.ndjson")
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        var bytes: [String: Data] = [:]
        for name in ["in.ndjson", "h.ndjson", "st.ndjson", "s.sqlite"] {
            bytes[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return (directory, bytes)
    }

    struct Clash: Sendable, CustomTestStringConvertible {
        /// Arguments; `D/` stands for the fixture's folder.
        var arguments: [String]
        /// The two names the message must give.
        var names: [String]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test("A side output naming an input, the output, the store or another output is a usage error that changes nothing",
          arguments: [
              Clash(arguments: ["convert", "D/in.ndjson", "D/out.ndjson", "--on-error", "skip", "--rejects", "D/in.ndjson"],
                    names: ["INPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/in.ndjson", "D/st.ndjson", "--on-error", "skip", "--rejects", "D/st.ndjson"],
                    names: ["OUTPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/in.ndjson", "D/out.ndjson", "--on-error", "skip", "--rejects", "D/./sub/../in.ndjson"],
                    names: ["INPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/in.ndjson", "D/out.ndjson", "--on-error", "skip", "--rejects", "D/link.ndjson"],
                    names: ["INPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/in.ndjson", "D/new.ndjson", "--on-error", "skip", "--rejects", "D/sub/../new.ndjson"],
                    names: ["OUTPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/", "D/out.ndjson", "--on-error", "skip", "--rejects", "D/in.ndjson"],
                    names: ["INPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/in.ndjson", "-", "--on-error", "skip", "--rejects", "-"],
                    names: ["OUTPUT", "--rejects"]),
              Clash(arguments: ["convert", "D/s.sqlite", "D/s.sqlite", "--mode", "upsert"],
                    names: ["INPUT", "OUTPUT"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--into", "D/s.sqlite", "--report", "D/s.sqlite"],
                    names: ["--into", "--report"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--into", "D/h.ndjson"],
                    names: ["HISTORY", "--into"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--out", "D/out.ndjson", "--report", "D/h.ndjson"],
                    names: ["HISTORY", "--report"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--out", "D/st.ndjson", "--log", "D/st.ndjson"],
                    names: ["--out", "--log"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--out", "D/st.ndjson", "--report", "D/st.ndjson.tokens.json"],
                    names: ["--out's tokens file", "--report"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--out", "D/o.ndjson", "--report", "D/r.json", "--log", "D/r.json"],
                    names: ["--report", "--log"]),
              Clash(arguments: ["replay", "D/h.ndjson", "--out", "-", "--log", "-"],
                    names: ["--out", "--log"]),
          ])
    func clash(_ clash: Clash) throws {
        let (directory, bytes) = try fixture()
        try FileManager.default.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: false)
        try FileManager.default.linkItem(atPath: directory + "/in.ndjson", toPath: directory + "/link.ndjson")
        let arguments = clash.arguments.map { $0.hasPrefix("D/") ? directory + "/" + $0.dropFirst(2) : $0 }
        let (code, out, error) = try runBinary(arguments)
        #expect(code == 2)
        #expect(out.isEmpty)
        for name in clash.names { #expect(error.contains(name), "\(error)") }
        for (name, before) in bytes {
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)) == before, "\(name) changed")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/new.ndjson"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.ndjson"))
    }

    @Test("The main output may still replace an input: it is renamed into place after every input was read")
    func outputReplacesInput() throws {
        let (directory, _) = try fixture()
        let path = directory + "/in.ndjson"
        #expect(Ferry.execute(["convert", path, path, "--type", "Message", "--quiet"]) == 0)
        #expect(try records(at: path).map(\.recordType) == ["Message", "Message", "Message"])
    }
}
