@testable import FerryCLI
import Foundation
import Testing

/// A 0-byte file whose name (or `--from`) promises gzip, an archive, XML or a store is a
/// truncated download, not an empty data set: every command that reads records refuses it.
@Suite("Empty inputs")
struct EmptyInputTests {
    /// An empty file named `name`, in a fresh folder.
    private func emptyFile(_ name: String) throws -> String {
        let path = scratchDirectory() + "/" + name
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        return path
    }

    @Test("An empty file whose name promises a format that cannot be empty is a data error in every reader",
          arguments: [
              ("z.ndjson.gz", "expected a gzip stream"), ("z.xml.gz", "expected a gzip stream"),
              ("z.tar.gz", "expected a gzip stream"), ("z.tgz", "expected a gzip stream"),
              ("z.tar", "expected a tar archive"), ("z.xml", "expected an XML document"),
              ("z.sqlite", "expected a Ferry store"),
          ])
    func emptyPromisedFormat(name: String, expected: String) throws {
        let path = try emptyFile(name)
        let out = scratchDirectory() + "/out.ndjson"
        let commands: [[String]] = [
            ["convert", path, out], ["convert", path, "-"], ["inspect", path], ["diff", path, path],
            ["replay", path, "--out", out], ["verify", path], ["extract", path, scratchDirectory() + "/x"],
        ]
        for command in commands {
            let (status, _, error) = try runBinary(command)
            #expect(status == (command[0] == "diff" ? 2 : 1), "\(command)") // diff's trouble is 2, as diff(1)
            // verify reads archives and stores only: it expects one of those whatever the name.
            let gzip = name.hasSuffix(".gz") || name.hasSuffix(".tgz")
            let promised = command[0] == "verify" && !gzip ? "expected an archive or a store"
                : command[0] == "extract" && !gzip ? "expected a tar archive" : expected
            #expect(error.contains("\(path): \(promised)"), "\(command): \(error)")
            #expect(error.contains("found an empty file"), "\(command): \(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("An empty file that --from says is XML or an archive is a data error",
          arguments: [("xml", "expected an XML document"), ("archive", "expected a tar archive")])
    func emptyDeclaredFormat(format: String, expected: String) throws {
        let path = try emptyFile("z.ndjson")
        let (status, _, error) = try runBinary(["convert", path, "-", "--from", format])
        #expect(status == 1)
        #expect(error.contains("\(path): \(expected)"), "\(error)")
        let (piped, _, pipedError) = try runBinary(["convert", "-", "-", "--from", format])
        #expect(piped == 1)
        #expect(pipedError.contains("-: \(expected)"), "\(pipedError)")
    }

    @Test("An empty NDJSON file or standard input is zero records")
    func emptyNDJSON() throws {
        for name in ["z.ndjson", "z.json", "z.jsonl", "z"] {
            let path = try emptyFile(name)
            let out = scratchDirectory() + "/out.ndjson"
            #expect(Ferry.execute(["convert", path, out, "--quiet"]) == 0, "\(name)")
            #expect(try records(at: out).isEmpty)
            #expect(Ferry.execute(["inspect", path]) == 0, "\(name)")
            #expect(Ferry.execute(["replay", path, "--out", scratchDirectory() + "/state.ndjson", "--quiet"]) == 0, "\(name)")
        }
        let (status, output, _) = try runBinary(["convert", "-", "-", "--quiet"])
        #expect(status == 0)
        #expect(output.isEmpty)
    }
}
