import FerryIO
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

@Suite("XML writer")
struct WriterTests {
    @Test("A record is written as the documented elements, one per line, values typed by element")
    func golden() throws {
        let record = Record(
            recordName: "m1", recordType: "Message",
            zoneID: ZoneID(zoneName: "Chats", ownerRecordName: "_o"),
            fields: [
                "text": RecordField(.string("Hi <you> & \"me\""), type: .string),
                "count": RecordField(.int64(2), type: .int64),
                "score": RecordField(.double(0.5), type: .double),
                "sentAt": RecordField(.timestamp(1_700_000_000_123), type: .timestamp),
                "chat": RecordField(.reference(Reference(recordName: "c1", action: .deleteSelf)), type: .reference),
                "tags": RecordField(.list([.string("a"), .string("b")]), type: .stringList),
            ],
            recordChangeTag: "t1",
            created: RecordStamp(timestamp: 1_700_000_000_000, userRecordName: "_u"),
            deleted: false)
        let expected = """
        <?xml version="1.0" encoding="UTF-8"?>
        <records xmlns="https://ferry.dev/ns/records/1" version="1">
          <record recordName="m1" recordType="Message" recordChangeTag="t1" deleted="false">
            <zoneID zoneName="Chats" ownerRecordName="_o"/>
            <created timestamp="1700000000000" date="2023-11-14T22:13:20.000Z" userRecordName="_u"/>
            <fields>
              <string name="text">Hi &lt;you&gt; &amp; "me"</string>
              <int64 name="count">2</int64>
              <double name="score">0.5</double>
              <timestamp name="sentAt" date="2023-11-14T22:13:20.123Z">1700000000123</timestamp>
              <reference name="chat" recordName="c1" action="DELETE_SELF"/>
              <list name="tags" type="STRING_LIST"><string>a</string><string>b</string></list>
            </fields>
          </record>
        </records>

        """
        #expect(String(decoding: try xmlBytes([record]), as: UTF8.self) == expected)
    }

    @Test("An empty document is the root alone")
    func empty() throws {
        #expect(String(decoding: try xmlBytes([]), as: UTF8.self)
            == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\"/>\n")
    }

    @Test("Characters XML 1.0 cannot carry use the \\uXXXX escape on an escaped=\"true\" element, losslessly",
          arguments: ["\u{0}", "\u{1}tab\tcr\rlf\n", "\u{FFFE}", "\u{FFFF}x", "back\\slash\u{7}", "\u{1F}\u{8}\u{C}\u{B}"])
    func controlCharacters(text: String) throws {
        let record = Record(recordName: text, recordType: text, zoneID: ZoneID(zoneName: text),
                            fields: RecordFields([.init(name: text, field: RecordField(.string(text), type: .string)),
                                                  .init(name: "k", field: RecordField(.list([.string(text)]), type: .stringList))]),
                            unknownKeys: JSONObject([.init(key: text, value: .string(text))]))
        let xml = String(decoding: try xmlBytes([record]), as: UTF8.self)
        #expect(xml.contains("escaped=\"true\""))
        #expect(!xml.unicodeScalars.contains { ($0.value < 0x20 && ![0x9, 0xA, 0xD].contains($0.value)) || $0.value == 0xFFFE || $0.value == 0xFFFF })
        #expect(try readXML(xml) == [record])
    }

    @Test("Text that needs no escape is written without escaped, backslashes and all")
    func plainBackslash() throws {
        let record = Record(recordName: "a\\b", fields: ["s": RecordField(.string("C:\\path\t\"q\""), type: .string)])
        let xml = String(decoding: try xmlBytes([record]), as: UTF8.self)
        #expect(!xml.contains("escaped"))
        #expect(xml.contains("<record recordName=\"a\\b\">"))
        #expect(xml.contains("<string name=\"s\">C:\\path\t\"q\"</string>"))
        #expect(try readXML(xml) == [record])
    }

    @Test("bytesWritten counts every byte and finish commits the sink once")
    func counting() throws {
        let sink = MemorySink()
        let writer = try XMLRecordWriter(sink: sink)
        var generator = RecordGenerator(seed: 3)
        for _ in 0..<500 { try writer.write(generator.record()) }
        #expect(!sink.isCommitted)
        try writer.finish()
        #expect(sink.isCommitted)
        #expect(writer.recordCount == 500)
        #expect(writer.bytesWritten == sink.bytes.count)
        try writer.finish() // a second finish does nothing
        #expect(writer.bytesWritten == sink.bytes.count)
    }

    @Test("Nothing appears under the output's name unless finish succeeds")
    func atomicOutput() throws {
        let path = scratchFile("out.xml")
        do {
            let writer = try XMLRecordWriter(sink: try OutputFile(path: path))
            var generator = RecordGenerator(seed: 4)
            for _ in 0..<2_000 { try writer.write(generator.record()) }
            // Dropped without finish().
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        let directory = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        let writer = try XMLRecordWriter(sink: try OutputFile(path: path))
        try writer.write(Record(recordName: "a"))
        try writer.finish()
        #expect(try readXML(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))).map(\.recordName) == ["a"])
    }

    @Test("A failing sink surfaces as an I/O error")
    func failingSink() throws {
        final class FullSink: ByteSink {
            let name = "full"
            func write(_ bytes: UnsafeRawBufferPointer) throws { throw FerryIOError(.write, path: "full", errno: 28) }
            func commit() throws {}
        }
        let writer = try XMLRecordWriter(sink: FullSink())
        var generator = RecordGenerator(seed: 5)
        let error = #expect(throws: XMLFormatError.self) {
            for _ in 0..<10_000 { try writer.write(generator.record()) }
            try writer.finish()
        }
        #expect(error?.code == .io)
        #expect(error?.message.contains("cannot write") == true)
    }
}
