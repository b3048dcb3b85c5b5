@testable import FerryCLI
import FerryIO
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry predicate")
struct PredicateCommandTests {
    @Test("check prints the canonical text and exits 0 for a valid predicate")
    func checkValid() throws {
        let (code, out, _) = try runBinary(["predicate", "check", "a = 1 && b <> 'x'"])
        #expect(code == 0)
        #expect(out == "a == 1 AND b != \"x\"\n")
    }

    @Test("check reports a syntax error with a caret and exits 1")
    func checkSyntax() throws {
        let (code, _, err) = try runBinary(["predicate", "check", "a == ((b"])
        #expect(code == 1)
        #expect(err.contains("1:9: expected ')'"))
        #expect(err.contains("          ^"))
    }

    @Test("check --cloudkit names each rule a predicate breaks")
    func checkCloudKit() throws {
        let (code, _, err) = try runBinary(["predicate", "check", "--cloudkit", "a == 1 OR name ENDSWITH 'x'"])
        #expect(code == 1)
        #expect(err.contains("[or]"))
        let (ok, out, _) = try runBinary(["predicate", "check", "--cloudkit", "--json", "count > 5 AND name BEGINSWITH 'A'"])
        #expect(ok == 0)
        let result = try JSONValue(parsing: out)
        #expect(result["ok"] == .bool(true))
        #expect(result["cloudkit"]?["accepted"] == .bool(true))
    }

    @Test("check --batch prints one JSON result per input line and exits 1 if any fails")
    func batch() throws {
        let (code, out, _) = try runBinary(["predicate", "check", "--batch", "--cloudkit"], stdin: "a == 1\n\nb ==\nc BEGINSWITH 'x' OR d == 2\n")
        #expect(code == 1)
        let results = try out.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(results.count == 3)
        #expect(results.map { $0["line"] } == [1, 3, 4].map { .number(JSONNumber(Int64($0))) })
        #expect(results.map { $0["ok"] } == [.bool(true), .bool(false), .bool(false)])
        #expect(results[2]["cloudkit"]?["accepted"] == .bool(false))
    }

    @Test("format substitutes %K and %@ arguments")
    func format() throws {
        let (code, out, _) = try runBinary(["predicate", "format", "%K == %@ AND %K IN %@", "--args", #"["team.key", "frc7332", "type", ["a", "b"]]"#])
        #expect(code == 0)
        #expect(out == "team.key == \"frc7332\" AND type IN {\"a\", \"b\"}\n")
    }

    @Test("format and eval substitute %K inside dotted key paths")
    func keyPathArguments() throws {
        let (code, out, _) = try runBinary(["predicate", "format", "ANY %K.%K == %@", "--args", #"["teams", "key", "frc7332"]"#])
        #expect(code == 0)
        #expect(out == "ANY teams.key == \"frc7332\"\n")
        let (status, result, _) = try runBinary(["predicate", "eval", "SUBQUERY(%K, $t, $t.%K == %@).@count > 0",
                                                 "--args", #"["teams", "key", "frc7332"]"#,
                                                 "--object", #"{"teams": [{"key": "frc1"}, {"key": "frc7332"}]}"#])
        #expect(status == 0)
        #expect(result == "true\n")
    }

    @Test("eval prints true or false, and exits 1 on an evaluation error", arguments: [
        ("tags CONTAINS 'x'", #"{"tags": ["x", "y"]}"#, "true\n", Int32(0)),
        ("age BETWEEN {18, 65}", #"{"age": 70}"#, "false\n", 0),
        ("name ==[cd] 'zoe'", #"{"name": "Zoë"}"#, "true\n", 0),
        ("age > 'x'", #"{"age": 3}"#, "", 1),
    ])
    func eval(predicate: String, object: String, expected: String, code: Int32) throws {
        let (status, out, _) = try runBinary(["predicate", "eval", predicate, "--object", object])
        #expect(status == code)
        #expect(out == expected)
    }

    @Test("eval binds --var variables")
    func variables() throws {
        let (status, out, _) = try runBinary(["predicate", "eval", "count > $min", "--object", #"{"count": 5}"#, "--var", "min=3"])
        #expect(status == 0 && out == "true\n")
    }

    @Test("filterby prints CKWS filters, and refuses what CloudKit rejects")
    func filterBy() throws {
        let (code, out, _) = try runBinary(["predicate", "filterby", "count >= 3"])
        #expect(code == 0)
        let filters = try JSONValue(parsing: out)
        #expect(filters.arrayValue?.first?["comparator"] == .string("GREATER_THAN_OR_EQUALS"))
        let (bad, _, _) = try runBinary(["predicate", "filterby", "a == 1 OR b == 2"])
        #expect(bad == 1)
    }

    @Test("convert --where keeps exactly the matching records")
    func whereFilter() throws {
        let dir = scratchDirectory()
        let samples = samplesDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", samples + "/query-response.json", dir + "/w.ndjson",
                               "--where", "recordType == %@ AND count > 5 AND text CONTAINS[c] %@", "--args", #"["Message", "HELLO"]"#, "--quiet"]) == 0)
        let kept = try records(at: dir + "/w.ndjson")
        #expect(kept.map(\.recordName) == ["A1000000-0000-4000-8000-000000000001", "Q0000000-0000-4000-8000-000000000001", "Q0000000-0000-4000-8000-000000000003"])
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/x.ndjson", "--where", "count >"]) == 2)
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/x.ndjson", "--where", "count > 'x'", "--quiet"]) == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.ndjson"))
    }
}

@Suite("gzip in ferry convert")
struct GzipConvertTests {
    @Test("A .gz output is standard gzip, and gzip input is recognized by content whatever its name")
    func roundTrip() throws {
        let dir = scratchDirectory()
        let samples = samplesDirectory()
        #expect(Ferry.execute(["convert", samples + "/shopping.ndjson", dir + "/s.ndjson.gz", "--level", "9", "--quiet"]) == 0)
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/bin/sh")
        check.arguments = ["-c", "gzip -t '\(dir)/s.ndjson.gz' && gzip -dc '\(dir)/s.ndjson.gz' > '\(dir)/plain.ndjson' && cp '\(dir)/s.ndjson.gz' '\(dir)/renamed.ndjson'"]
        try check.run()
        check.waitUntilExit()
        #expect(check.terminationStatus == 0)
        let original = try records(at: samples + "/shopping.ndjson")
        #expect(try records(at: dir + "/plain.ndjson") == original)
        #expect(Ferry.execute(["convert", dir + "/renamed.ndjson", dir + "/back.ndjson", "--quiet"]) == 0)
        #expect(try records(at: dir + "/back.ndjson") == original)
    }

    @Test("A corrupt gzip input exits 1 and leaves no output")
    func corrupt() throws {
        let dir = scratchDirectory()
        var bytes = [UInt8]()
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", dir + "/c.gz", "--quiet"]) == 0)
        bytes = try InputFile(path: dir + "/c.gz").readAll()
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/bad.gz"))
        #expect(Ferry.execute(["convert", dir + "/bad.gz", dir + "/out.ndjson", "--quiet"]) == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.ndjson"))
    }
}
