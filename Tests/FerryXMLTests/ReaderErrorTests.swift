import FerryIO
import FerryPipeline
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

@Suite("XML reader errors and rejects")
struct ReaderErrorTests {
    /// (body, code, line, column, words the message must contain)
    static let cases: [(String, XMLFormatError.Code, Int, Int, String)] = [
        ("<record/>", .unexpectedContent, 3, 1, "expected recordName"),
        ("<record recordName=\"a\"><fields><int64 name=\"n\">1.5</int64></fields></record>", .invalidValue, 3, 32, "expected a 64-bit integer for <int64>, found \"1.5\""),
        ("<record recordName=\"a\"><fields><int64 name=\"n\">9223372036854775808</int64></fields></record>", .invalidValue, 3, 32, "64-bit"),
        ("<record recordName=\"a\"><fields><double name=\"d\">0x1p3</double></fields></record>", .invalidValue, 3, 32, "expected a number"),
        ("<record recordName=\"a\"><fields><double name=\"d\">1e400</double></fields></record>", .invalidValue, 3, 32, "within the range of a double"),
        ("<record recordName=\"a\"><fields><double name=\"d\">-2e308</double></fields></record>", .invalidValue, 3, 32, "within the range of a double"),
        ("<record recordName=\"a\"><fields><double name=\"d\">INF</double></fields></record>", .invalidValue, 3, 32, "expected a finite number for <double>, found \"INF\""),
        ("<record recordName=\"a\"><fields><double name=\"d\"> -INF </double></fields></record>", .invalidValue, 3, 32, "expected a finite number"),
        ("<record recordName=\"a\"><fields><double name=\"d\">+INF</double></fields></record>", .invalidValue, 3, 32, "expected a finite number"),
        ("<record recordName=\"a\"><fields><double name=\"d\">NaN</double></fields></record>", .invalidValue, 3, 32, "expected a finite number"),
        ("<record recordName=\"a\"><fields><double name=\"d\">-Infinity</double></fields></record>", .invalidValue, 3, 32, "expected a finite number"),
        ("<record recordName=\"a\"><fields><list name=\"l\" type=\"DOUBLE_LIST\"><double>1</double><double>nan</double></list></fields></record>", .invalidValue, 3, 84, "expected a finite number"),
        ("<record recordName=\"a\"><fields><location name=\"l\" latitude=\"1\" longitude=\"2\" altitude=\"INF\"/></fields></record>", .invalidValue, 3, 78, "expected a finite number for altitude"),
        ("<record recordName=\"a\">\n  <created timestamp=\"1\" date=\"2000-01-01T00:00:00.000Z\"/>\n</record>", .invalidValue, 4, 26, "date=\"1970-01-01T00:00:00.001Z\""),
        ("<record recordName=\"a\" deleted=\"yes\"/>", .invalidValue, 3, 24, "deleted=\"true\" or \"false\""),
        ("<record recordName=\"a\" colour=\"red\"/>", .unexpectedContent, 3, 24, "colour"),
        ("<record recordName=\"a\"><fields><string name=\"s\"/><string name=\"s\"/></fields></record>", .unexpectedContent, 3, 58, "\"s\" twice"),
        ("<record recordName=\"a\"><fields><list name=\"l\" type=\"STRING_LIST\"><string>a</string><int64>1</int64></list></fields></record>", .unexpectedContent, 3, 84, "<string> or <null/>"),
        ("<record recordName=\"a\"><fields><list name=\"l\"/></fields></record>", .unexpectedContent, 3, 32, "type=\"…_LIST\""),
        ("<record recordName=\"a\"><fields><int64 name=\"n\" type=\"STRING\">1</int64></fields></record>", .invalidValue, 3, 48, "type tag for <int64>"),
        ("<record recordName=\"a\"><fields><json name=\"j\" type=\"INT64\">\"x\"</json></fields></record>", .invalidValue, 3, 32, "suits type INT64"),
        ("<record recordName=\"a\"><fields><json name=\"j\">{nope}</json></fields></record>", .invalidValue, 3, 32, "invalid JSON"),
        ("<record recordName=\"a\"><unknown key=\"recordName\">1</unknown></record>", .unexpectedContent, 3, 33, "twice"),
        ("<record recordName=\"a\\q\" escaped=\"true\"/>", .invalidValue, 3, 9, "backslash"),
        ("<record recordName=\"a\">text</record>", .unexpectedContent, 3, 1, "found text \"text\""),
        ("<record recordName=\"a\"><zoneID zoneName=\"z\"/><zoneID zoneName=\"y\"/></record>", .unexpectedContent, 3, 46, "at most one <zoneID>"),
        ("<record recordName=\"a\"><fields><location name=\"l\" latitude=\"1\"/></fields></record>", .unexpectedContent, 3, 32, "no longitude"),
        ("<notARecord/>", .unexpectedContent, 3, 1, "expected <record>"),
    ]

    @Test("Each kind of bad record names its line, column, record and what was expected", arguments: 0..<cases.count)
    func badRecord(index: Int) throws {
        let (body, code, line, column, words) = Self.cases[index]
        let text = document(body)
        let error = try #require(xmlError(text))
        #expect(error.code == code, "\(error)")
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.recordIndex == 1)
        #expect(error.source == "test.xml")
        #expect(error.message.contains(words), "\(error)")
        #expect(error.description.hasPrefix("test.xml:\(line):\(column): record 1: expected"))
        // Under skip, the same record is rejected verbatim and the next one is read.
        let rejects = MemorySink()
        let reader = XMLRecordReader(source: MemorySource(document(body + "\n<record recordName=\"next\"/>")), policy: .skip(rejects: rejects))
        var reported: [any Error] = []
        reader.onReject = { reported.append($0) }
        #expect(try reader.next()?.recordName == "next")
        #expect(try reader.next() == nil)
        #expect(reader.rejectedCount == 1 && reader.recordCount == 1 && reader.recordIndex == 2)
        #expect(rejects.text == body + "\n")
        #expect((reported.first as? XMLFormatError) == error.withSource("<memory>"))
    }

    @Test("Lines and columns stay exact past line 65,535, where libxml2's own lines stop")
    func bigLineNumbers() throws {
        var body = ""
        for i in 0..<70_000 { body += "<record recordName=\"r\(i)\"/>\n" }
        body += "  <record recordName=\"bad\"><fields>\n    <int64 name=\"n\">x</int64></fields></record>"
        let error = try #require(xmlError(document(body)))
        #expect(error.line == 70_004)
        #expect(error.column == 5)
        #expect(error.recordIndex == 70_001)
    }

    @Test("The rejects output holds each rejected record exactly as it was, one after another")
    func verbatimRejects() throws {
        let bad1 = "<record\n    recordName='b1'   deleted=\"maybe\"><!-- kept --><fields/></record>"
        let bad2 = "<record recordName=\"b2\"><fields><int64 name=\"n\">&#x31;x</int64></fields></record>"
        let text = document("<record recordName=\"a\"/>\n  \(bad1)<record recordName=\"c\"/>\n\(bad2)\n<record recordName=\"d\"/>")
        let rejects = MemorySink()
        let records = try readXML(Array(text.utf8), chunkSize: 7, policy: .skip(rejects: rejects))
        #expect(records.map(\.recordName) == ["a", "c", "d"])
        #expect(rejects.text == bad1 + "\n" + bad2 + "\n")
        // Wrapped in the root, the rejects are a document again, with the same errors.
        let wrapped = document(rejects.text)
        let again = XMLRecordReader(source: MemorySource(wrapped), policy: .skip(rejects: nil))
        while try again.next() != nil {}
        #expect(again.rejectedCount == 2)
    }

    @Test("Text between records is rejected and later records keep their exact positions and bytes")
    func strayText() throws {
        let bad = "<record recordName=\"b\" deleted=\"x\"/>"
        let text = document("<record recordName=\"a\"/>\n  stray text\n  \(bad)\n<record recordName=\"c\"/>")
        let rejects = MemorySink()
        var errors: [XMLFormatError] = []
        let reader = XMLRecordReader(source: MemorySource(text), policy: .skip(rejects: rejects))
        reader.onReject = { errors.append($0 as! XMLFormatError) }
        var names: [String] = []
        while let record = try reader.next() { names.append(record.recordName) }
        #expect(names == ["a", "c"])
        #expect(errors.map(\.recordIndex) == [2, 3])
        #expect(errors.first?.message.contains("found text \"") == true)
        #expect(errors.last.map { ($0.line, $0.column) } ?? (0, 0) == (5, 26))
        #expect(rejects.text.hasSuffix(bad + "\n"))
    }

    @Test("Skipping without a rejects output counts and reports")
    func skipWithoutRejects() throws {
        let text = document("<record recordName=\"a\" deleted=\"x\"/><record recordName=\"b\"/>")
        let reader = XMLRecordReader(source: MemorySource(text), policy: .skip(rejects: nil))
        var messages: [String] = []
        reader.onReject = { messages.append("\($0)") }
        #expect(try reader.next()?.recordName == "b")
        #expect(messages == ["<memory>:3:24: record 1: expected deleted=\"true\" or \"false\", found deleted=\"x\""])
    }

    @Test("The root must be Ferry's, version 1")
    func root() throws {
        let wrongVersion = try #require(xmlError("<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"2\"/>"))
        #expect(wrongVersion.code == .unexpectedContent)
        #expect(wrongVersion.message.contains("version=\"2\""))
        let noVersion = try #require(xmlError("\n\n  <records xmlns=\"\(XMLRecordFormat.namespace)\"/>"))
        #expect(noVersion.line == 3 && noVersion.column == 3)
        #expect(try readXML("<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\"/>").isEmpty)
        let prefixed = "<f:records xmlns:f=\"\(XMLRecordFormat.namespace)\" version=\"1\"><f:record recordName=\"a\"><f:fields><f:string name=\"s\">x</f:string></f:fields></f:record></f:records>"
        #expect(try readXML(prefixed).first?[field: "s"] == .string("x"))
    }

    @Test("Comments, processing instructions, CDATA and character references read as their text")
    func xmlFeatures() throws {
        let text = document("""
        <!-- c --><?pi x?>
        <record recordName="a&#x26;b"><!-- c -->
          <fields>
            <string name="s">one <![CDATA[<two>]]> &#x1F600;<!-- c --> three&#10;</string>
            <int64 name="n">
               42
            </int64>
          </fields>
        </record>
        """)
        let record = try #require(try readXML(text).first)
        #expect(record.recordName == "a&b")
        #expect(record[field: "s"] == .string("one <two> 😀 three\n"))
        #expect(record[field: "n"] == .int64(42))
    }
}

extension XMLFormatError {
    func withSource(_ source: String) -> XMLFormatError {
        var copy = self
        copy.source = source
        return copy
    }
}
