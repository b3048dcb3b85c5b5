@testable import FerryCLI
import FerryIO
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

private func bytes(at path: String) throws -> [UInt8] {
    try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
}

@Suite("ferry convert, inspect and validate with XML")
struct XMLCommandTests {
    let samples = samplesDirectory()

    @Test("NDJSON → XML → NDJSON through ferry convert is byte-identical to NDJSON → NDJSON",
          arguments: ["chat.ndjson", "shopping.ndjson", "edge-cases.ndjson", "query-response.json", "lookup-response-with-error.json"])
    func roundTrip(sample: String) throws {
        let dir = scratchDirectory()
        let skip = ["--on-error", "skip"] // lookup-response-with-error.json holds a server error entry
        #expect(Ferry.execute(["convert", samples + "/" + sample, dir + "/direct.ndjson", "--quiet"] + skip) == 0)
        #expect(Ferry.execute(["convert", samples + "/" + sample, dir + "/records.xml", "--quiet"] + skip) == 0)
        #expect(Ferry.execute(["convert", dir + "/records.xml", dir + "/back.ndjson", "--quiet"]) == 0)
        #expect(try bytes(at: dir + "/back.ndjson") == bytes(at: dir + "/direct.ndjson"))
        #expect(try bytes(at: dir + "/records.xml").starts(with: Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\"".utf8)))
        #expect(Ferry.execute(["validate", dir + "/records.xml", "--quiet"]) == 0)
    }

    @Test("Gzip-compressed XML is written by name and recognized by content")
    func gzip() throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/shopping.ndjson", dir + "/s.xml.gz", "--quiet"]) == 0)
        #expect(try bytes(at: dir + "/s.xml.gz").starts(with: [0x1F, 0x8B]))
        try FileManager.default.moveItem(atPath: dir + "/s.xml.gz", toPath: dir + "/renamed.data")
        #expect(Ferry.execute(["convert", dir + "/renamed.data", dir + "/s.ndjson", "--quiet"]) == 0)
        #expect(try records(at: dir + "/s.ndjson") == records(at: samples + "/shopping.ndjson"))
        #expect(Ferry.execute(["validate", dir + "/renamed.data", "--quiet"]) == 0)
    }

    @Test("Standard input is recognized as XML by its first non-blank byte, and XML goes to standard output")
    func pipes() throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/chat.xml", "--quiet"]) == 0)
        // Blank lines may come first when there is no XML declaration (which must be first).
        let declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let xml = "\n  " + (try String(contentsOfFile: dir + "/chat.xml", encoding: .utf8)).dropFirst(declaration.count)
        let (code, out, err) = try runBinary(["convert", "-", "-", "--type", "Message"], stdin: xml)
        #expect(code == 0, "\(err)")
        #expect(out.split(separator: "\n").count == 3)
        #expect(err.contains("5 records in, 3 out, 0 rejected"))
        let (toXML, xmlOut, _) = try runBinary(["convert", "-", "-", "--to", "xml", "--quiet"], stdin: try String(contentsOfFile: samples + "/chat.ndjson", encoding: .utf8))
        #expect(toXML == 0)
        #expect(xmlOut == (try String(contentsOfFile: dir + "/chat.xml", encoding: .utf8)))
        let (validated, _, validateErr) = try runBinary(["validate", "-"], stdin: xmlOut)
        #expect(validated == 0)
        #expect(validateErr == "ferry: 1 file, 0 invalid, 0 violations\n")
    }

    @Test("XML inputs are recognized by their content, whatever their name, also when the output is a file",
          arguments: ["-", "in.xml", "in.data"])
    func xmlIntoFile(input: String) throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/chat.xml", "--quiet"]) == 0)
        let xml = try String(contentsOfFile: dir + "/chat.xml", encoding: .utf8)
        let code: Int32
        let err: String
        if input == "-" {
            (code, _, err) = try runBinary(["convert", "-", dir + "/out.ndjson", "--threads", "2"], stdin: xml)
        } else {
            try write(xml, to: dir + "/" + input)
            (code, _, err) = try runBinary(["convert", dir + "/" + input, dir + "/out.ndjson", "--threads", "2"])
        }
        #expect(code == 0, "\(err)")
        #expect(try records(at: dir + "/out.ndjson") == records(at: samples + "/chat.ndjson"))
    }

    @Test("--on-error skip --rejects keeps bad XML records verbatim and converts the rest")
    func skipWithRejects() throws {
        let dir = scratchDirectory()
        let bad = "<record recordName=\"b\"><fields><int64 name=\"n\">twelve</int64></fields></record>"
        let text = "<records xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\">\n  <record recordName=\"a\"/>\n  \(bad)\n  <record recordName=\"c\"/>\n</records>\n"
        try write(text, to: dir + "/in.xml")
        let (code, _, err) = try runBinary(["convert", dir + "/in.xml", dir + "/out.ndjson", "--on-error", "skip", "--rejects", dir + "/rejects.xml"])
        #expect(code == 0)
        #expect(err.contains("ferry: skipped: \(dir)/in.xml:3:34: record 2: expected a 64-bit integer for <int64>, found \"twelve\""), "\(err)")
        #expect(err.contains("2 records in, 2 out, 1 rejected"))
        #expect(try records(at: dir + "/out.ndjson").map(\.recordName) == ["a", "c"])
        #expect(try String(contentsOfFile: dir + "/rejects.xml", encoding: .utf8) == bad + "\n")
    }

    @Test("Bad XML exits 1 with file, line, column and record, and leaves no output")
    func failure() throws {
        let dir = scratchDirectory()
        try write("<records xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\">\n<record recordName=\"a\" deleted=\"maybe\"/>\n</records>\n", to: dir + "/bad.xml")
        let (code, _, err) = try runBinary(["convert", dir + "/bad.xml", dir + "/out.ndjson"])
        #expect(code == 1)
        #expect(err == "ferry: \(dir)/bad.xml:2:24: record 1: expected deleted=\"true\" or \"false\", found deleted=\"maybe\"\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["bad.xml"])
        try write("<!DOCTYPE records [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><records/>", to: dir + "/xxe.xml")
        let (xxe, _, xxeErr) = try runBinary(["convert", dir + "/xxe.xml", dir + "/out.ndjson"])
        #expect(xxe == 1)
        #expect(xxeErr.contains("xxe.xml:1:1: expected no DOCTYPE"))
        #expect(!xxeErr.contains("root:"))
    }

    @Test("XML INF, -INF and NaN are refused with file and line, not written as null")
    func nonFiniteDoubles() throws {
        for spelling in ["INF", "-INF", "NaN"] {
            let dir = scratchDirectory()
            try write("<records xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\">\n<record recordName=\"a\"><fields>\n<double name=\"d\">\(spelling)</double></fields></record>\n</records>\n", to: dir + "/inf.xml")
            let (code, _, err) = try runBinary(["convert", dir + "/inf.xml", dir + "/out.ndjson"])
            #expect(code == 1)
            #expect(err.hasPrefix("ferry: \(dir)/inf.xml:3:1: record 1: expected a finite number for <double>, found \"\(spelling)\""), "\(err)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["inf.xml"])
        }
    }

    @Test("NDJSON → XML → NDJSON works up to the XML reader's text limit; one byte over, XML output is refused and none is left")
    func textLimit() throws {
        let dir = scratchDirectory()
        let limit = 10_000_000
        for (count, fits) in [(limit / 5, true), (limit / 5 + 1, false)] {
            let line = #"{"recordName":"amp","fields":{"s":{"value":""# + String(repeating: "&", count: count) + #"","type":"STRING"}}}"#
            try write(line + "\n", to: dir + "/in.ndjson")
            let (code, _, err) = try runBinary(["convert", dir + "/in.ndjson", dir + "/out.xml", "--quiet"])
            if fits {
                #expect(code == 0, "\(err)")
                #expect(Ferry.execute(["convert", dir + "/out.xml", dir + "/back.ndjson", "--quiet"]) == 0)
                #expect(try String(contentsOfFile: dir + "/back.ndjson", encoding: .utf8) == line + "\n")
                try FileManager.default.removeItem(atPath: dir + "/out.xml")
                try FileManager.default.removeItem(atPath: dir + "/back.ndjson")
            } else {
                #expect(code == 1)
                #expect(err.contains("expected text of at most 10000000 bytes in one piece once escaped in field \"s\" of record \"amp\", found 10000005 bytes"), "\(err)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["in.ndjson"])
            }
        }
    }

    @Test("ferry inspect reads XML as it reads NDJSON")
    func inspect() throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/chat.xml", "--quiet"]) == 0)
        let (code, out, _) = try runBinary(["inspect", dir + "/chat.xml", "--json"])
        let (_, fromNDJSON, _) = try runBinary(["inspect", samples + "/chat.ndjson", "--json"])
        #expect(code == 0)
        var xmlSummary = try JSONValue(parsing: out).objectValue!
        var ndjsonSummary = try JSONValue(parsing: fromNDJSON).objectValue!
        xmlSummary["bytes"] = nil // the inputs differ in size only
        ndjsonSummary["bytes"] = nil
        #expect(xmlSummary == ndjsonSummary)
    }

    static let broken = """
    <?xml version="1.0" encoding="UTF-8"?>
    <records xmlns="https://ferry.dev/ns/records/1" version="1">
      <record recordName="a">
        <fields><int64 name="n">12x</int64></fields>
      </record>
      <record deleted="perhaps"/>
    </records>

    """

    @Test("ferry validate reports every violation as file:line:column on stderr and exits 1")
    func validateBroken() throws {
        let dir = scratchDirectory()
        try write(Self.broken, to: dir + "/broken.xml")
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/good.xml", "--quiet"]) == 0)
        let (code, out, err) = try runBinary(["validate", dir + "/good.xml", dir + "/broken.xml"])
        #expect(code == 1)
        #expect(out.isEmpty)
        #expect(err == """
        \(dir)/broken.xml:4:13: element 'int64': '12x' is not a valid value of the atomic type 'xs:long'.
        \(dir)/broken.xml:6:3: element 'record', attribute 'deleted': 'perhaps' is not a valid value of the atomic type 'xs:boolean'.
        \(dir)/broken.xml:6:3: element 'record': The attribute 'recordName' is required but missing.
        ferry: 2 files, 1 invalid, 3 violations

        """)
        // xmllint, given the shipped schema, agrees.
        let xmllint = Process()
        xmllint.executableURL = URL(fileURLWithPath: "/usr/bin/xmllint")
        xmllint.arguments = ["--noout", "--schema", samples.replacingOccurrences(of: "/Samples", with: "/Schemas/ferry-records-1.xsd"), dir + "/broken.xml", dir + "/good.xml"]
        let pipe = Pipe()
        xmllint.standardError = pipe
        try xmllint.run()
        let lintOutput = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        xmllint.waitUntilExit()
        #expect(xmllint.terminationStatus != 0)
        #expect(lintOutput.contains("broken.xml fails to validate"))
        #expect(lintOutput.contains("good.xml validates"))
    }

    @Test("ferry validate --json lists violations for scripts")
    func validateJSON() throws {
        let dir = scratchDirectory()
        try write(Self.broken, to: dir + "/broken.xml")
        let (code, out, err) = try runBinary(["validate", dir + "/broken.xml", "--json", "--quiet"])
        #expect(code == 1)
        #expect(err.isEmpty)
        let report = try JSONValue(parsing: out)
        #expect(report["valid"] == .bool(false))
        let file = try #require(report["files"]?.arrayValue?.first)
        #expect(file["path"] == .string(dir + "/broken.xml"))
        let violations = try #require(file["violations"]?.arrayValue)
        #expect(violations.count == 3)
        #expect(violations[0]["line"] == .number(JSONNumber(Int64(4))))
        #expect(violations[0]["column"] == .number(JSONNumber(Int64(13))))
        #expect(violations[0]["code"] == .string("schemaViolation"))
    }

    @Test("ferry validate usage errors exit 2 and --help shows examples", arguments: [
        ["validate"], ["validate", "/no/such/file.xml"], ["validate", "-", "-"], ["validate", "x.xml", "--max-violations", "0"],
    ])
    func validateUsage(arguments: [String]) throws {
        #expect(Ferry.execute(arguments) == 2)
    }

    @Test("ferry validate --help explains the exit codes with examples")
    func validateHelp() throws {
        let (code, help, _) = try runBinary(["validate", "--help"])
        #expect(code == 0)
        #expect(help.contains("Examples:") && help.contains("ferry validate export.xml") && help.contains("Exit codes"))
    }
}
