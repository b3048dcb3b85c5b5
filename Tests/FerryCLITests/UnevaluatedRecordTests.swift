@testable import FerryCLI
import FerryTestSupport
import Foundation
import Testing

/// A record `--where` cannot be evaluated on (a number where the predicate wants a string) does
/// not match, whatever form the records come in: the NDJSON path may rule a line out by its
/// missing literals before evaluating anything, a store's SQL before Swift sees the row, so the
/// outcome cannot depend on evaluating every record.
@Suite("Records the predicate cannot be evaluated on")
struct UnevaluatedRecordTests {
    static let lines = [
        #"{"recordName":"a","recordType":"T","fields":{"s":{"value":"abc","type":"STRING"}}}"#,
        #"{"recordName":"b","recordType":"T","fields":{"s":{"value":5,"type":"INT64"}}}"#,
        #"{"recordName":"c","recordType":"T","fields":{"s":{"value":["x","c"],"type":"STRING_LIST"}}}"#,
        #"{"recordName":"d","recordType":"T","fields":{"s":{"value":"xyz","type":"STRING"}}}"#,
    ]

    /// The same four records as NDJSON, a pretty-printed saved response, XML, an archive and a store.
    static func inputs() throws -> (directory: String, paths: [String]) {
        let directory = scratchDirectory()
        let ndjson = directory + "/in.ndjson"
        try (lines.joined(separator: "\n") + "\n").write(toFile: ndjson, atomically: false, encoding: .utf8)
        let response = directory + "/response.json"
        let pretty = "{\n  \"records\" : [\n" + lines.map { "    " + $0.replacingOccurrences(of: "\":", with: "\" : ") }
            .joined(separator: ",\n") + "\n  ]\n}\n"
        try pretty.write(toFile: response, atomically: false, encoding: .utf8)
        var paths = [ndjson, response]
        for name in ["in.xml", "in.tar.gz", "in.sqlite"] {
            #expect(Ferry.execute(["convert", ndjson, directory + "/" + name, "--quiet"]) == 0)
            paths.append(directory + "/" + name)
        }
        return (directory, paths)
    }

    @Test("Every input form gives the same records and exit 0, and says which records were not evaluated", arguments: [
        (#"s ENDSWITH "c""#, ["a"]), (#"s BEGINSWITH "a""#, ["a"]), (#"s CONTAINS "c""#, ["a", "c"]),
        (#"s > "b""#, ["d"]), (#"s MATCHES "a.*" OR s == "xyz""#, ["a", "d"]),
    ])
    func sameEverywhere(predicate: String, expected: [String]) throws {
        let (directory, paths) = try Self.inputs()
        for path in paths {
            let out = directory + "/out-" + (path as NSString).lastPathComponent + ".ndjson"
            let (code, _, error) = try runBinary(["convert", path, out, "--where", predicate])
            #expect(code == 0, "\(path): \(error)")
            #expect(try records(at: out).map(\.recordName).sorted() == expected, "\(path)")
            #expect(!error.contains("record 1:"), "\(path): \(error)")
            if error.contains("could not be evaluated") {
                #expect(error.contains("did not match; the first: "), "\(path): \(error)")
            }
        }
    }

    @Test("The count is in the JSON summary and the message names the record")
    func counted() throws {
        let (directory, paths) = try Self.inputs()
        for path in paths {
            let (code, out, error) = try runBinary(["convert", path, directory + "/out.ndjson", "--where", #"s LIKE "*""#, "--json"])
            #expect(code == 0)
            #expect(out.contains(#""unevaluated":2"#), "\(path): \(out)")
            #expect(error.contains("2 records the predicate could not be evaluated on did not match"), "\(path): \(error)")
            #expect(error.contains(#"record 2:"#) || error.contains(#"record "b":"#), "\(path): \(error)")
            // Where the input has lines, the message gives the record's.
            if path.hasSuffix(".ndjson") { #expect(error.contains("in.ndjson:2: record 2:"), "\(error)") }
            if path.hasSuffix(".xml") { #expect(error.contains("in.xml:8: record 2:"), "\(error)") }
        }
        // --limit ends the reading after record d: b and c were met, and count, in every form.
        for path in paths {
            let (code, out, error) = try runBinary(["convert", path, directory + "/out.ndjson", "--where", #"s LIKE "*""#,
                                                    "--limit", "2", "--json"])
            #expect(code == 0)
            #expect(out.contains(#""unevaluated":2"#), "\(path): \(out) \(error)")
        }
        let (_, _, quiet) = try runBinary(["convert", paths[0], directory + "/out.ndjson", "--where", #"s LIKE "*""#, "--quiet"])
        #expect(quiet.isEmpty)
    }
}
