import FerryIO
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

@Suite("XML read in every chunk size")
struct ChunkingTests {
    /// Records with every kind of value and hostile strings, as XML.
    static let generated: [UInt8] = {
        var generator = RecordGenerator(seed: 42)
        let records = (0..<40).map { _ in generator.record() }
        return try! xmlBytes(records)
    }()

    /// Sizes 1…64, and around libxml2's 512-byte push chunks and 4,000-byte reads.
    static let sizes = Array(1...64) + [127, 128, 129, 511, 512, 513, 1023, 1024, 1025, 3999, 4000, 4001, 4095, 4096, 4097, 8191, 8192, 65_536]

    @Test("The same records come out whatever the chunk size", arguments: sizes)
    func sameRecords(chunkSize: Int) throws {
        let whole = try readXML(Self.generated)
        #expect(whole.count == 40)
        let chunked = try readXML(Self.generated, chunkSize: chunkSize)
        #expect(ndjson(chunked) == ndjson(whole))
    }

    @Test("Errors name the same line and column whatever the chunk size", arguments: [1, 2, 3, 7, 64, 511, 4000, 4097])
    func samePositions(chunkSize: Int) throws {
        // A bad INT64 deep in a document, after multi-byte characters on the same line.
        var body = ""
        for i in 0..<50 {
            body += "  <record recordName=\"r\(i) ✓😀\"><fields><string name=\"s\">日本語 😀</string><int64 name=\"n\">\(i)</int64></fields></record>\n"
        }
        body += "  <record recordName=\"bad ✓\"><fields><string name=\"s\">日本語</string><int64 name=\"n\">12x</int64></fields></record>\n"
        let text = document(body)
        let error = try #require(xmlError(text, chunkSize: chunkSize))
        #expect(error.code == .invalidValue)
        #expect(error.line == 53)
        #expect(error.column == 67) // the <int64 of the bad record, in characters
        #expect(error.recordIndex == 51)
        #expect(error.message.contains("\"12x\""))
    }

    @Test("The structure scanner marks the same elements whatever the chunk size", arguments: [1, 2, 5, 13, 100])
    func scannerChunks(chunkSize: Int) {
        let text = Array(document("""
          <!-- a comment with <record> inside -->
          <record recordName="a"/><?pi <record ?>
          <record recordName='b>c' x="&quot;/"><fields><![CDATA[<record>]]></fields></record>
          <record
             recordName="c">
          </record>
        """).utf8)
        var whole = XMLStructureScanner(recordsOnly: true)
        text.withUnsafeBytes { whole.scan($0) }
        var chunked = XMLStructureScanner(recordsOnly: true)
        var offset = 0
        while offset < text.count {
            let end = min(offset + chunkSize, text.count)
            text[offset..<end].withUnsafeBytes { chunked.scan($0) }
            offset = end
        }
        let marks = (1...3).compactMap { whole.mark($0) }
        #expect(marks.map(\.line) == [4, 5, 6])
        #expect(marks.map(\.column) == [3, 3, 3])
        #expect(marks.allSatisfy { $0.end > $0.offset })
        #expect((1...3).compactMap { chunked.mark($0) }.map { [$0.offset, $0.line, $0.column, $0.end] }
            == marks.map { [$0.offset, $0.line, $0.column, $0.end] })
        #expect(whole.mark(4) == nil)
    }
}
