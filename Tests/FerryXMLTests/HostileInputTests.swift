import FerryIO
import FerryPipeline
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

@Suite("Hostile XML")
struct HostileInputTests {
    static let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    static let root = "<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">\n"

    // MARK: Entities and DTDs

    @Test("XXE pointing at a local file fails and the file's content appears nowhere", arguments: [
        "<!DOCTYPE records [<!ENTITY xxe SYSTEM \"file://SECRET\">]>",
        "<!DOCTYPE records SYSTEM \"file://SECRET\">",
        "<!DOCTYPE records [<!ENTITY % p SYSTEM \"file://SECRET\"> %p;]>",
        "<!-- hello --><?pi x?>\n<!DOCTYPE records [<!ENTITY xxe SYSTEM \"SECRET\">]>",
    ])
    func xxe(doctype: String) throws {
        let secret = "ferry-secret-" + UUID().uuidString
        let path = scratchFile("secret.txt")
        try secret.write(toFile: path, atomically: false, encoding: .utf8)
        let text = Self.head + doctype.replacingOccurrences(of: "SECRET", with: path) + "\n" + Self.root
            + "<record recordName=\"&xxe;\"><fields><string name=\"s\">&xxe;</string></fields></record></records>\n"
        let rejects = MemorySink()
        var records: [Record] = []
        do {
            let reader = XMLRecordReader(source: MemorySource(text), policy: .skip(rejects: rejects))
            while let record = try reader.next() { records.append(record) }
            Issue.record("the XXE document was read")
        } catch let error as XMLFormatError {
            #expect(error.code == .forbiddenDTD)
            #expect(error.description.contains("DOCTYPE"))
            #expect(!error.description.contains(secret))
            #expect(error.line != nil && error.column != nil)
        }
        #expect(records.isEmpty)
        #expect(!rejects.text.contains(secret))
        let report = try XMLSchemaValidator().validate(MemorySource(text))
        #expect(report.violations.map(\.code) == [.forbiddenDTD])
        #expect(!report.violations.description.contains(secret))
    }

    @Test("Billion laughs fails at the DOCTYPE before any entity is parsed")
    func billionLaughs() throws {
        var entities = "<!ENTITY lol \"lol\">"
        for i in 1...9 {
            let previous = i == 1 ? "lol" : "lol\(i - 1)"
            entities += "<!ENTITY lol\(i) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
        }
        let text = Self.head + "<!DOCTYPE records [" + entities + "]>\n" + Self.root + "<record recordName=\"&lol9;\"/></records>"
        let source = MemorySource(text)
        let reader = XMLRecordReader(source: source)
        #expect(throws: XMLFormatError.self) { _ = try reader.next() }
        let error = try #require(xmlError(text))
        #expect(error.code == .forbiddenDTD)
        #expect(error.line == 2 && error.column == 1)
        #expect(reader.bytesRead < 4096)
    }

    @Test("Entity references without a DOCTYPE are undeclared, so refused")
    func undeclaredEntity() throws {
        let error = try #require(xmlError(document("<record recordName=\"&xxe;\"/>")))
        #expect(error.code == .forbiddenDTD)
        #expect(error.line == 3)
    }

    @Test("xsi:schemaLocation and XInclude are never followed")
    func noFetching() throws {
        let path = scratchFile("include.xml")
        try "<secret/>".write(toFile: path, atomically: false, encoding: .utf8)
        let text = Self.head + "<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"\(XMLRecordFormat.namespace) file://\(path)\">\n"
            + "<record recordName=\"a\"/>\n"
            + "<record recordName=\"b\"><xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"file://\(path)\"/></record>\n</records>\n"
        let rejects = MemorySink()
        let records = try readXML(Array(text.utf8), policy: .skip(rejects: rejects))
        #expect(records.map(\.recordName) == ["a"])
        #expect(rejects.text.hasPrefix("<record recordName=\"b\"><xi:include"))
        #expect(!rejects.text.contains("<secret"))
        let error = try #require(xmlError(text))
        #expect(error.code == .wrongNamespace)
        #expect(error.line == 4 && error.column == 24)
        #expect(try XMLSchemaValidator().validate(MemorySource(text)).violations.count == 1)
    }

    // MARK: Size and depth

    @Test("A 1 GB text node fails at libxml2's 10 MB text limit without reading the gigabyte", arguments: [
        ("<record recordName=\"x\"><fields><string name=\"s\">", "A", "</string></fields></record>"),
        ("<record recordName=\"", "A", "\"/>"),
        ("<!--", "A", "-->"),
        ("", "A", ""),
        ("<record recordName=\"x\"><unknown key=\"k\">\"", "é", "\"</unknown></record>"),
    ])
    func gigabyteText(before: String, filler: String, after: String) throws {
        let source = GeneratedSource(prefix: Self.head + Self.root + before, filler: filler, fillerBytes: 1 << 30,
                                     suffix: after + "</records>")
        let reader = XMLRecordReader(source: source)
        do {
            while try reader.next() != nil {}
            Issue.record("a gigabyte text node was read")
        } catch let error as XMLFormatError {
            #expect(error.code == .tooLarge, "\(error)")
            #expect(error.description.contains("10000000"), "\(error)")
            #expect(error.line == 3)
        }
        #expect(source.served < 16 << 20, "read \(source.served) bytes")
    }

    @Test("maximumTextBytes bounds text, attribute values, comments and CDATA as bytes arrive", arguments: [
        ("<record recordName=\"x\"><fields><string name=\"s\">", "t", "</string></fields></record>", 50),
        ("<record recordName=\"", "v", "\"/>", 21),
        ("<!--", "c", "-->", 5),
        ("<record recordName=\"x\"><fields><string name=\"s\"><![CDATA[", "d", "]]></string></fields></record>", 59),
        ("<?pi ", "p", "?>", 3),
    ])
    func textLimit(before: String, filler: String, after: String, column: Int) throws {
        let source = GeneratedSource(prefix: Self.head + Self.root + before, filler: filler, fillerBytes: 1 << 30,
                                     suffix: after + "</records>")
        let reader = XMLRecordReader(source: source, configuration: .init(maximumTextBytes: 1_000))
        do {
            while try reader.next() != nil {}
            Issue.record("a gigabyte of text was read")
        } catch let error as XMLFormatError {
            #expect(error.code == .tooLarge, "\(error)")
            #expect(error.message.hasPrefix("expected text of at most 1000 bytes"), "\(error)")
            #expect(error.line == 3)
            #expect((error.column ?? 0) > 1_000 && (error.column ?? 0) < column + 1_000 + 4_096, "\(error)")
        }
        #expect(source.served < 64 << 10)
    }

    @Test("A record larger than maximumRecordBytes fails without being held whole")
    func recordBudget() throws {
        let item = "<string>" + String(repeating: "x", count: 100) + "</string>"
        let source = GeneratedSource(prefix: Self.head + Self.root + "<record recordName=\"ok\"/>\n<record recordName=\"big\"><fields><list name=\"l\" type=\"STRING_LIST\">",
                                     filler: item, fillerBytes: 1 << 30, suffix: "</list></fields></record></records>")
        let reader = XMLRecordReader(source: source, configuration: .init(maximumRecordBytes: 1 << 20))
        #expect(try reader.next()?.recordName == "ok")
        do {
            _ = try reader.next()
            Issue.record("a gigabyte record was read")
        } catch let error as XMLFormatError {
            #expect(error.code == .tooLarge)
            #expect(error.recordIndex == 2)
            #expect(error.line == 4 && error.column == 1)
            #expect(error.message.contains("1048576"))
        }
        #expect(source.served < 2 << 20)
    }

    @Test("100,000 nested elements fail at a depth limit, read lazily", arguments: [100_000])
    func deepNesting(levels: Int) throws {
        let source = GeneratedSource(prefix: Self.head + Self.root + "<record recordName=\"x\"><unknown key=\"k\">",
                                     filler: "<a>", fillerBytes: 3 * levels, suffix: "")
        let reader = XMLRecordReader(source: source)
        do {
            _ = try reader.next()
            Issue.record("100,000 nested elements were read")
        } catch let error as XMLFormatError {
            #expect(error.code == .tooDeep, "\(error)")
            #expect(error.line == 3)
        }
        #expect(source.served < 64 << 10)
        // Within libxml2's limit, Ferry's own (configurable) limit applies.
        let shallow = document("<record recordName=\"x\"><unknown key=\"k\">" + String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40) + "</unknown></record>")
        let error = try #require(xmlError(shallow))
        #expect(error.code == .tooDeep)
        #expect(error.message.contains("at most 32 levels"))
        let deeper = try #require(xmlError(shallow, configuration: .init(maximumDepth: 64)))
        #expect(deeper.code == .unexpectedContent) // <a> is not Ferry's: the depth was fine
    }

    @Test("Too many attributes and overlong names are refused")
    func attributesAndNames() throws {
        let many = (0..<100).map { " a\($0)=\"1\"" }.joined()
        let error = try #require(xmlError(document("<record recordName=\"x\"\(many)/>")))
        #expect(error.code == .tooLarge)
        #expect(error.message.contains("at most 64 attributes"))
        let long = String(repeating: "n", count: 2_000)
        let named = try #require(xmlError(document("<record recordName=\"x\" \(long)=\"1\"/>")))
        #expect(named.code == .tooLarge)
        let huge = String(repeating: "n", count: 60_000)
        let libxml = try #require(xmlError(document("<record recordName=\"x\"><\(huge)/></record>")))
        #expect(libxml.code == .tooLarge)
    }

    // MARK: Broken documents

    static let truncationSource: [UInt8] = {
        var generator = RecordGenerator(seed: 9)
        var records = (0..<3).map { _ in generator.record() }
        records[1].recordName = "日本 &<>\"' \u{1}"
        return try! xmlBytes(records)
    }()

    @Test("A document cut at any byte fails clearly, after only the records before the cut")
    func truncated() throws {
        let bytes = Self.truncationSource
        let complete = try readXML(bytes)
        #expect(complete.count == 3)
        for cut in stride(from: 0, to: bytes.count - 1, by: bytes.count > 4000 ? 3 : 1) {
            let reader = XMLRecordReader(source: MemorySource(Array(bytes[..<cut]), name: "cut.xml"))
            var read: [Record] = []
            do {
                while let record = try reader.next() { read.append(record) }
                Issue.record("the document cut at \(cut) of \(bytes.count) bytes was read whole")
            } catch let error as XMLFormatError {
                // A cut inside a character leaves bytes that are not UTF-8.
                #expect([.truncated, .syntax, .invalidUTF8].contains(error.code), "cut \(cut): \(error)")
                #expect(error.source == "cut.xml" && error.line != nil)
            }
            #expect(read == Array(complete.prefix(read.count)), "cut \(cut)")
        }
    }

    @Test("A document that stops after a whole record, or holds only whitespace, is called truncated, not extra content",
          arguments: [1, 3, Int.max])
    func truncatedBetweenRecords(chunk: Int) throws {
        let records = Self.head + Self.root + "\n<record recordName=\"a\" recordType=\"T\"/>\n"
        for text in [records, records + "  \n", Self.head + Self.root, Self.head + Self.root + "\n"] {
            let error = try #require(xmlError(Array(text.utf8), chunkSize: chunk))
            #expect(error.code == .truncated, "\(error)")
            #expect(error.message.contains("found the end of the input") && !error.message.contains("Extra content"), "\(error)")
            #expect(error.recordIndex == nil, "\(error)")
        }
        for text in ["", " ", "\n\n  \t\n"] {
            let error = try #require(xmlError(Array(text.utf8), chunkSize: chunk))
            #expect(error.code == .truncated, "\(error)")
            #expect(!error.message.contains("Extra content"), "\(error)")
        }
    }

    @Test("Invalid UTF-8 is refused wherever it appears", arguments: [
        [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE6, 0x97], [0xF5, 0x80, 0x80, 0x80], [0x80],
    ] as [[UInt8]])
    func invalidUTF8(bad: [UInt8]) throws {
        let before = Array((Self.head + Self.root + "<record recordName=\"a\"><fields><string name=\"s\">ok ").utf8)
        let after = Array("</string></fields></record>".utf8)
        let inText = before + bad + after + Array("</records>".utf8)
        for chunk in [1, 3, .max] {
            let error = try #require(xmlError(inText, chunkSize: chunk))
            #expect(error.code == .invalidUTF8, "\(bad) chunk \(chunk): \(error)")
            #expect(error.line == 3)
        }
        let inAttribute = Array((Self.head + Self.root + "<record recordName=\"a").utf8) + bad + Array("\"/></records>".utf8)
        #expect(xmlError(inAttribute)?.code == .invalidUTF8)
    }

    @Test("UTF-16, other declared encodings and XML-forbidden characters are refused")
    func encodings() throws {
        let utf16: [UInt8] = [0xFF, 0xFE] + Array("<".utf8) + [0]
        #expect(xmlError(utf16)?.code == .invalidUTF8)
        let latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n" + Self.root + "</records>"
        let error = try #require(xmlError(latin1))
        #expect(error.code == .invalidUTF8)
        #expect(error.message.contains("ISO-8859-1"))
        let control = try #require(xmlError(document("<record recordName=\"a\u{1}\"/>")))
        #expect(control.code == .syntax)
        #expect(control.line == 3)
        // A byte order mark before a UTF-8 document is fine.
        #expect(try readXML([0xEF, 0xBB, 0xBF] + Array(document("<record recordName=\"a\"/>").utf8)).count == 1)
    }

    @Test("The wrong namespace is refused at the root and rejected for a record", arguments: [
        "<records version=\"1\">", "<records xmlns=\"urn:other\" version=\"1\">", "<f:records xmlns:f=\"urn:other\" version=\"1\">",
        "<record xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\">",
    ])
    func wrongNamespace(root: String) throws {
        let error = try #require(xmlError(Self.head + root + "</records>"))
        #expect(error.code == .wrongNamespace || error.code == .syntax)
        if error.code == .wrongNamespace {
            #expect(error.line == 2 && error.column == 1)
        }
    }

    @Test("A record in another namespace is rejected, the rest read")
    func recordNamespace() throws {
        let text = document("<record recordName=\"a\"/>\n<record xmlns=\"urn:other\" recordName=\"b\"/>\n<f:record xmlns:f=\"\(XMLRecordFormat.namespace)\" recordName=\"c\"/>")
        let rejects = MemorySink()
        let records = try readXML(Array(text.utf8), policy: .skip(rejects: rejects))
        #expect(records.map(\.recordName) == ["a", "c"])
        #expect(rejects.text == "<record xmlns=\"urn:other\" recordName=\"b\"/>\n")
        let error = try #require(xmlError(text))
        #expect(error.code == .wrongNamespace)
        #expect(error.recordIndex == 2 && error.line == 4 && error.column == 1)
    }

    @Test("A file that is not XML fails at its first byte", arguments: [
        "{\"recordName\":\"a\"}\n", "hello", "", "   \n", "\u{1F}\u{8B}\u{8}\u{0}",
    ])
    func notXML(text: String) throws {
        let error = try #require(xmlError(text))
        #expect([.syntax, .truncated, .invalidUTF8].contains(error.code), "\(error)")
        #expect(error.line != nil)
        #expect(error.message.hasPrefix("expected"))
    }

    @Test("Malformed XML fails even when bad records are skipped")
    func malformedAlwaysFails() throws {
        let text = document("<record recordName=\"a\"/>\n<record recordName=\"b\"><fields></record>\n<record recordName=\"c\"/>")
        let rejects = MemorySink()
        let reader = XMLRecordReader(source: MemorySource(text), policy: .skip(rejects: rejects))
        var read: [String] = []
        do {
            while let record = try reader.next() { read.append(record.recordName) }
            Issue.record("a malformed record was skipped")
        } catch let error as XMLFormatError {
            #expect(error.code == .syntax)
            #expect(error.line == 4 && error.column == 41)
            #expect(error.message.contains("mismatch"))
        }
        // Records before the error may come out (libxml2 parses ahead in 512-byte pieces); none after.
        #expect(read == [] || read == ["a"])
        // The error is sticky.
        #expect(throws: XMLFormatError.self) { _ = try reader.next() }
        #expect(rejects.bytes.isEmpty)
        #expect(reader.rejectedCount == 0)
    }
}
