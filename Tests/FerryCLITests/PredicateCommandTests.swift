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

    @Test("check --quiet and split --quiet print nothing; the exit code tells")
    func quiet() throws {
        let (rejected, rejectedOut, rejectedErr) = try runBinary(["predicate", "check", "--cloudkit", "--quiet", "a == 1 OR b == 2"])
        #expect(rejected == 1 && rejectedOut.isEmpty && rejectedErr.isEmpty)
        let (accepted, acceptedOut, acceptedErr) = try runBinary(["predicate", "check", "--quiet", "a == 1"])
        #expect(accepted == 0 && acceptedOut.isEmpty && acceptedErr.isEmpty)
        let (split, splitOut, splitErr) = try runBinary(["predicate", "split", "--cloudkit", "--quiet", "a == 1 OR b == 2"])
        #expect(split == 0 && splitOut.split(separator: "\n").count == 2 && splitErr.isEmpty)
        let (noisy, _, noisyErr) = try runBinary(["predicate", "split", "--cloudkit", "a == 1 OR b == 2"])
        #expect(noisy == 0 && noisyErr.contains("2 queries"))
    }

    @Test("check --batch - with --schema - is refused: standard input can be read once")
    func batchAndSchemaFromStdin() throws {
        let (code, _, err) = try runBinary(["predicate", "check", "--batch", "-", "--schema", "-"])
        #expect(code == 2)
        #expect(err.contains("read only once"))
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

    @Test("check --batch --cloudkit reads a file and reports each predicate with its rules and positions")
    func batchFile() throws {
        let path = scratchDirectory() + "/queries.txt"
        try write("""
        ANY { 'red', 'green' } = favoriteColor
        age BETWEEN {0, {1, 10}}
        (a == 1 OR b == 2) AND c > 3
        name ENDSWITH 'x'
        """, to: path)
        let (code, out, _) = try runBinary(["predicate", "check", "--batch", "--cloudkit", path])
        #expect(code == 1)
        let results = try out.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(results.count == 4)
        #expect(results.map { $0["cloudkit"]?["accepted"] } == [.bool(true), .bool(false), .bool(false), .bool(false)])
        let rules = results.map { ($0["cloudkit"]?["reasons"]?.arrayValue ?? []).map { $0["rule"]?.stringValue ?? "?" } }
        #expect(rules == [[], ["betweenBounds"], ["or"], ["unsupportedOperator"]])
        #expect(results[1]["cloudkit"]?["reasons"]?.at(0)?["column"] == .number(JSONNumber(Int64(13))))
        #expect(results[2]["cloudkit"]?["split"] == .number(JSONNumber(Int64(2))))
        #expect(results[3]["cloudkit"]?["split"] == nil)
        #expect(results[0]["cloudkit"]?["filterBy"]?.at(0)?["comparator"] == .string("IN"))
    }

    @Test("check --cloudkit says when split can rewrite a rejected predicate")
    func checkSuggestsSplit() throws {
        let (code, _, err) = try runBinary(["predicate", "check", "--cloudkit", "a == 1 OR b == 2"])
        #expect(code == 1)
        #expect(err.contains("error: 1:8: CloudKit does not support OR"))
        #expect(err.contains("ferry predicate split --cloudkit rewrites it as 2 queries"))
    }

    @Test("split prints one query per disjunct of the normal form")
    func splitDisjuncts() throws {
        let (code, out, err) = try runBinary(["predicate", "split", "--cloudkit", "(a == 1 OR b == 2) AND c > 3"])
        #expect(code == 0)
        #expect(out == "a == 1 AND c > 3\nb == 2 AND c > 3\n")
        #expect(err.contains("merge them by recordName"))
    }

    @Test("split batches 1,000 references into 10 queries of 100, as text or filterBy JSON")
    func splitReferences() throws {
        let arguments = "[[" + (0..<1000).map { #"{"$reference": "r\#($0)"}"# }.joined(separator: ", ") + "]]"
        let (code, out, _) = try runBinary(["predicate", "split", "ANY %@ IN relatedRecords", "--cloudkit", "--batch", "100", "--args", arguments])
        #expect(code == 0)
        let lines = out.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines.allSatisfy { $0.components(separatedBy: "CKReference").count - 1 == 100 && $0.hasSuffix(" IN relatedRecords") })
        let (jsonCode, json, _) = try runBinary(["predicate", "split", "ANY %@ IN relatedRecords", "--cloudkit", "--json", "--args", arguments])
        #expect(jsonCode == 0)
        let filters = try json.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(filters.count == 10)
        #expect(filters.allSatisfy { $0.at(0)?["comparator"] == .string("LIST_CONTAINS_ANY") && $0.at(0)?["fieldValue"]?["value"]?.arrayValue?.count == 100 })
        #expect(filters[9].at(0)?["fieldValue"]?["value"]?.at(99)?["recordName"] == .string("r999"))
    }

    @Test("split exits 1 with every reason when a part has no CloudKit form", arguments: [
        ("NOT (a > 1 OR b ENDSWITH 'x')", ["error: 1:1:", "[notOperand]", "error: 1:17:", "[unsupportedOperator]", "cannot split"]),
        ("(a0 == 1 OR b0 == 2) AND (a1 == 1 OR b1 == 2) AND (a2 == 1 OR b2 == 2)", ["more than 4 queries"]),
    ])
    func splitRefuses(_ entry: (String, [String])) throws {
        let (code, out, err) = try runBinary(["predicate", "split", "--cloudkit", "--max-queries", "4", entry.0])
        #expect(code == 1)
        #expect(out.isEmpty)
        for fragment in entry.1 { #expect(err.contains(fragment), "\(err)") }
    }

    @Test("split needs --cloudkit and a batch size within CloudKit's limit (exit 2)", arguments: [
        ["predicate", "split", "a == 1"],
        ["predicate", "split", "--cloudkit", "--batch", "251", "a == 1"],
        ["predicate", "split", "--cloudkit", "--batch", "0", "a == 1"],
        ["predicate", "split", "--cloudkit", "--max-queries", "0", "a == 1"],
    ])
    func splitUsage(_ arguments: [String]) throws {
        let (code, _, err) = try runBinary(arguments)
        #expect(code == 2)
        #expect(err.contains("Usage:"))
    }

    @Test("split --help shows examples, and a predicate matching nothing needs no query")
    func splitHelpAndNothing() throws {
        let (code, out, _) = try runBinary(["predicate", "split", "--help"])
        #expect(code == 0)
        #expect(out.contains("Examples:") && out.contains("--batch"))
        let (none, text, err) = try runBinary(["predicate", "split", "--cloudkit", "a == 1 AND FALSEPREDICATE"])
        #expect(none == 0)
        #expect(text.isEmpty)
        #expect(err.contains("no query is needed"))
    }

    @Test("format substitutes %K and %@ arguments")
    func format() throws {
        let (code, out, _) = try runBinary(["predicate", "format", "%K == %@ AND %K IN %@", "--args", #"["team.key", "frc7332", "type", ["a", "b"]]"#])
        #expect(code == 0)
        #expect(out == "team.key == \"frc7332\" AND type IN {\"a\", \"b\"}\n")
    }

    @Test("format exits 1 naming a key or number it cannot write as text that parses back", arguments: [
        ("%K == 1", #"["a-b"]"#, #""a-b""#),
        ("%K == 1", #"["my key"]"#, #""my key""#),
        ("%K == 1", ##"["#a"]"##, ##""#a""##),
        ("%K == 1", #"["distanceToLocation:fromLocation:"]"#, "distanceToLocation:fromLocation:"),
        ("x > %@", "[1e400]", "finite number"),
    ])
    func formatRefuses(_ entry: (String, String, String)) throws {
        let (code, out, err) = try runBinary(["predicate", "format", entry.0, "--args", entry.1])
        #expect(code == 1)
        #expect(out.isEmpty)
        #expect(err.contains(entry.2), "\(err)")
    }

    @Test("check refuses a string cast to NSDate, which every evaluation would fail")
    func checkStringDateCast() throws {
        let (code, _, err) = try runBinary(["predicate", "check", #"t > CAST("2017-01-01", "NSDate")"#])
        #expect(code == 1)
        #expect(err.contains("CAST to NSDate"), "\(err)")
    }

    @Test("check --cloudkit and filterby refuse out-of-range dates, mixed lists and nil; NOT ANY translates and splits", arguments: [
        ("x > CAST(1e20, \"NSDate\")", "[timestamp]"),
        ("x IN {1, \"a\"}", "[listType]"),
        ("a == nil", "[nilValue]"),
        ("creationDate > \"x\"", "[typeMismatch]"),
    ])
    func cloudKitValues(_ entry: (String, String)) throws {
        let (code, _, err) = try runBinary(["predicate", "check", "--cloudkit", entry.0])
        #expect(code == 1)
        #expect(err.contains(entry.1), "\(err)")
        let (filterCode, out, _) = try runBinary(["predicate", "filterby", entry.0])
        #expect(filterCode == 1)
        #expect(out.isEmpty)
    }

    @Test("NOT ANY is accepted, translated and split")
    func notAny() throws {
        let (code, out, _) = try runBinary(["predicate", "filterby", "NOT ANY favoriteColors = 'red'"])
        #expect(code == 0)
        #expect(try JSONValue(parsing: out).arrayValue?.first?["comparator"] == .string("NOT_LIST_CONTAINS"))
        let (split, queries, _) = try runBinary(["predicate", "split", "--cloudkit", "NOT ANY tags IN {'a', 'b'} OR NOT ANY tags BEGINSWITH 'r'"])
        #expect(split == 0)
        #expect(queries == "NOT ANY tags IN {\"a\", \"b\"}\nNOT ANY tags BEGINSWITH \"r\"\n")
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

    @Test("Predicate text that is not UTF-8 is refused, not repaired into U+FFFD; batch lines end at LF or CRLF")
    func notUTF8() throws {
        // An argument with a byte 0xFF, through a shell (Process takes Strings, which are UTF-8).
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", #""$0" predicate check "$(printf 'name == "\377"')""#, try ferryBinary()]
        let error = Pipe()
        shell.standardError = error
        shell.standardOutput = Pipe()
        try shell.run()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 2)
        #expect(message.contains("argument 3: expected UTF-8 text, found byte 0xFF at byte 10"), "\(message)")

        let dir = scratchDirectory()
        let batch = dir + "/batch.txt"
        try Data(Array("a == 1\r\nb == 2\r\n\r\nname == \"".utf8) + [0xFF] + Array("\"\nc == 3".utf8))
            .write(to: URL(fileURLWithPath: batch))
        let (code, out, _) = try runBinary(["predicate", "check", "--batch", batch])
        #expect(code == 1)
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(out)")
        #expect(lines.first?.hasPrefix(#"{"line":1,"ok":true,"canonical":"a == 1""#) == true, "\(out)")
        #expect(lines.dropFirst().first?.hasPrefix(#"{"line":2,"ok":true,"canonical":"b == 2""#) == true, "\(out)")
        #expect(lines.dropFirst(2).first?.contains(#""line":4,"ok":false"#) == true && lines.dropFirst(2).first?.contains("0xFF") == true, "\(out)")
        #expect(lines.last?.hasPrefix(#"{"line":5,"ok":true,"canonical":"c == 3""#) == true, "\(out)")
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
        // A number ordered against a string cannot be evaluated: no match, not an error.
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/x.ndjson", "--where", "count > 'x'", "--quiet"]) == 0)
        #expect(try records(at: dir + "/x.ndjson").isEmpty)
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
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", dir + "/c.ndjson.gz", "--quiet"]) == 0)
        bytes = try InputFile(path: dir + "/c.ndjson.gz").readAll()
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/bad.gz"))
        #expect(Ferry.execute(["convert", dir + "/bad.gz", dir + "/out.ndjson", "--quiet"]) == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.ndjson"))
    }
}

extension JSONValue {
    /// The element at `index` of an array, or `nil`.
    fileprivate func at(_ index: Int) -> JSONValue? {
        guard let items = arrayValue, items.indices.contains(index) else { return nil }
        return items[index]
    }
}
