@testable import FerryCLI
import FerryTestSupport
import Foundation
import Testing

/// The command line's promises kept as golden files: every command's `--help`, and the exit code,
/// standard output and standard error of a table of usage and data errors
/// (`Golden/error-cases.txt`). A change that alters any of them fails here; to accept a change
/// made on purpose, run the tests with `FERRY_UPDATE_GOLDEN=1` and review the diff of `Golden/`.
@Suite("Golden command-line output", .serialized)
struct GoldenOutputTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden").path
    static var updates: Bool { ProcessInfo.processInfo.environment["FERRY_UPDATE_GOLDEN"] == "1" }

    @Test("every command's --help is what Golden/help holds", arguments: CommandDiscussion.all)
    func help(_ command: CommandDiscussion) throws {
        let words = command.path.split(separator: " ").dropFirst().map(String.init)
        let (code, out, err) = try runBinary(words + ["--help"])
        let text = "exit \(code)\n" + out + (err.isEmpty ? "" : "--- stderr\n" + err)
        let file = Self.golden + "/help/" + command.path.replacingOccurrences(of: " ", with: "-") + ".txt"
        try Self.compare(text, with: file)
    }

    @Test("usage and data errors exit, print and say what Golden/errors.golden holds")
    func errors() throws {
        let binary = try ferryBinary()
        let directory = TestScratch.directory()
        try FileManager.default.createSymbolicLink(atPath: directory + "/S", withDestinationPath: samplesDirectory())
        let path = (binary as NSString).deletingLastPathComponent + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let lines = try String(contentsOfFile: Self.golden + "/error-cases.txt", encoding: .utf8).split(separator: "\n").map(String.init)
        var text = ""
        for line in lines where !line.hasPrefix("#") && !line.isEmpty {
            if line.hasPrefix("setup: ") {
                let (code, _, err) = try runShell("cd '\(directory)' && " + line.dropFirst(7), environment: ["PATH": path])
                #expect(code == 0, "setup failed: \(line): \(err)")
                continue
            }
            let (code, out, err) = try runShell("cd '\(directory)' && " + line, environment: ["PATH": path])
            _ = try runShell("cd '\(directory)' && rm -rf o o.* r.* x x.*")
            text += "$ \(line)\nexit \(code)\n"
            if !out.isEmpty { text += "--- stdout\n" + Self.normalized(out, directory: directory) }
            if !err.isEmpty { text += "--- stderr\n" + Self.normalized(err, directory: directory) }
            text += "\n"
        }
        try Self.compare(text, with: Self.golden + "/errors.golden")
    }

    /// `text` with the scratch folder written `D` and the times of summaries written `T`.
    static func normalized(_ text: String, directory: String) -> String {
        var text = text.replacingOccurrences(of: directory, with: "D")
        let patterns = [
            (#"[0-9]+\.[0-9]+ s, [0-9]+\.[0-9]+ MB/s"#, "T s, T MB/s"),
            (#""seconds":[0-9.]+"#, #""seconds":T"#),
            (#""megabytesPerSecond":[0-9.]+"#, #""megabytesPerSecond":T"#),
        ]
        for (pattern, replacement) in patterns {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return text.hasSuffix("\n") ? text : text + "\n[no newline at end]\n"
    }

    /// Compares `text` with the golden file (or rewrites it with `FERRY_UPDATE_GOLDEN=1`),
    /// naming the first line that differs.
    static func compare(_ text: String, with file: String) throws {
        if updates {
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            return
        }
        let expected = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        guard text != expected else { return }
        let got = text.split(separator: "\n", omittingEmptySubsequences: false)
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let index = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
        let context = got[..<index].last { $0.hasPrefix("$ ") }.map { " (in `\($0)`)" } ?? ""
        Issue.record("""
            \(file) differs at line \(index + 1)\(context):
              expected: \(index < want.count ? String(want[index]) : "(end)")
              found:    \(index < got.count ? String(got[index]) : "(end)")
            """)
    }
}
