import FerryIO
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

/// The writer writes nothing the reader refuses: no text piece longer than the reader's limit once
/// escaped, no INF or NaN.
@Suite("XML writer limits")
struct WriterLimitTests {
    static let limit = XMLRecordReader.Configuration.defaultMaximumTextBytes

    /// A record whose string field `s` is `value`.
    static func record(_ value: String, name: String = "amp") -> Record {
        Record(recordName: name, fields: ["s": RecordField(.string(value), type: .string)])
    }

    @Test("The writer's limit is the reader's default limit, libxml2's own")
    func sharedLimit() {
        #expect(XMLRecordWriter.maximumTextBytes == XMLRecordReader.Configuration().maximumTextBytes)
        #expect(XMLRecordWriter.maximumTextBytes == LibXMLTextReader.defaultTextLimit)
    }

    @Test("Text exactly at the reader's limit once escaped is written and reads back", arguments: [
        String(repeating: "&", count: limit / 5), // &amp;
        String(repeating: "a", count: limit),
    ])
    func atTheLimit(value: String) throws {
        let record = Self.record(value)
        #expect(try readXML(try xmlBytes([record])) == [record])
    }

    @Test("Text one byte over the reader's limit once escaped is refused, naming the record and the field", arguments: [
        String(repeating: "&", count: limit / 5) + "a",
        String(repeating: "a", count: limit + 1),
        String(repeating: "\u{1}", count: limit / 6 + 1), // \u0001 in an escaped element
    ])
    func overTheLimit(value: String) throws {
        let sink = MemorySink()
        let writer = try XMLRecordWriter(sink: sink)
        try writer.write(Self.record("x", name: "first"))
        let error = try #require(throws: XMLFormatError.self) { try writer.write(Self.record(value)) }
        #expect(error.code == .tooLarge)
        #expect(error.recordIndex == 2)
        #expect(error.message.contains("expected text of at most \(Self.limit) bytes in one piece once escaped in field \"s\" of record \"amp\""), "\(error)")
        #expect(error.message.contains("the XML reader's limit"))
        #expect(error.message.contains("CloudKit's own limit for a whole record is 1 MB"))
    }

    @Test("A long list item, attribute or unknown member is refused too", arguments: 0..<3)
    func otherPieces(index: Int) throws {
        let long = String(repeating: "x", count: Self.limit + 1)
        let records = [
            Record(recordName: "l", fields: ["tags": RecordField(.list([.string("a"), .string(long)]), type: .stringList)]),
            Record(recordName: "r", fields: ["ref": RecordField(.reference(Reference(recordName: long)), type: .reference)]),
            Record(recordName: "u", unknownKeys: ["note": .string(long)]),
        ]
        let error = try #require(throws: XMLFormatError.self) { try xmlBytes([records[index]]) }
        #expect(error.code == .tooLarge)
        #expect(error.message.contains("record \"\(records[index].recordName)\""), "\(error)")
    }

    @Test("INF, -INF and NaN are refused, in a field, a list and a location, naming the record and the field",
          arguments: [Double.infinity, -.infinity, .nan])
    func nonFinite(value: Double) throws {
        let fields: [RecordFields] = [
            ["d": RecordField(.double(value), type: .double)],
            ["d": RecordField(.list([.double(1), .double(value)]), type: .doubleList)],
            ["d": RecordField(.location(Location(latitude: 1, longitude: 2, altitude: value)), type: .location)],
        ]
        for fields in fields {
            let error = try #require(throws: XMLFormatError.self) { try xmlBytes([Record(recordName: "r", fields: fields)]) }
            #expect(error.code == .invalidValue)
            #expect(error.message.hasPrefix("expected a finite number in field \"d\" of record \"r\", found \(value)"), "\(error)")
        }
    }
}
