import FerryIO
import FerryJSON
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

@Suite("XML round trips")
struct RoundTripTests {
    static let samples = ["chat.ndjson", "edge-cases.ndjson", "lookup-response-with-error.json", "query-response.json", "shopping.ndjson"]

    @Test("Every sample goes NDJSON → XML → NDJSON byte for byte", arguments: samples)
    func samplesRoundTrip(sample: String) throws {
        let input = try [UInt8](Data(contentsOf: URL(fileURLWithPath: samplesDirectory() + "/" + sample)))
        let records = try ndjsonRecords(input)
        #expect(!records.isEmpty)
        let xml = try xmlBytes(records)
        let back = try readXML(xml)
        #expect(ndjson(back) == ndjson(records))
        #expect(back == records)
    }

    /// Samples that are change histories, not records (replayed in the CLI tests).
    static let historySamples = ["chat-history.ndjson"]

    @Test("The samples folder holds exactly the samples tested")
    func samplesAreAllTested() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: samplesDirectory()).sorted()
        #expect(files == (Self.samples + Self.historySamples).sorted())
    }

    @Test("Generated records survive model → XML → model, every value kind and hostile string", arguments: 0..<20)
    func generatedProperty(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed) &* 0x9E37_79B9 &+ 7)
        let records = (0..<200).map { _ in generator.record() }
        let xml = try xmlBytes(records)
        let back = try readXML(xml)
        #expect(back.count == records.count)
        for (a, b) in zip(records, back) where a != b || RecordJSON.encodedString(a) != RecordJSON.encodedString(b) {
            Issue.record("record \(a.recordName) changed:\n\(RecordJSON.encodedString(a))\n\(RecordJSON.encodedString(b))")
            break
        }
    }

    @Test("100,000 generated records go NDJSON → XML → NDJSON byte for byte")
    func hundredThousand() throws {
        var generator = RecordGenerator(seed: 100_000)
        let input = generator.ndjson(count: 100_000)
        let records = try ndjsonRecords(input)
        #expect(records.count == 100_000)
        #expect(ndjson(records) == input)
        let sink = MemorySink()
        let writer = try XMLRecordWriter(sink: sink)
        for record in records { try writer.write(record) }
        try writer.finish()
        let reader = XMLRecordReader(source: MemorySource(sink.bytes, chunkSize: 1 << 16))
        var out = JSONOutput(capacity: input.count + 1024)
        while let record = try reader.next() {
            RecordJSON.encode(record, into: &out)
            out.append(0x0A)
        }
        #expect(reader.recordCount == 100_000)
        #expect(out.array == input)
    }

    @Test("Doubles keep every bit: -0.0, 5e-324, 17-digit values, extremes (INF and NaN are refused: WriterLimitTests)")
    func doubles() throws {
        let values: [Double] = [-0.0, 0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 2.2250738585072014e-308, 1.7976931348623157e308,
                                -1.7976931348623157e308, 0.30000000000000004, 0.1, 1e21, 1e-7, 123456789012345678.0, 9007199254740992]
        var fields = RecordFields()
        for (i, value) in values.enumerated() { fields["d\(i)"] = RecordField(.double(value), type: .double) }
        fields["list"] = RecordField(.list(values.map { .double($0) }), type: .doubleList)
        fields["where"] = RecordField(.location(Location(latitude: -0.0, longitude: .leastNonzeroMagnitude, altitude: .greatestFiniteMagnitude)), type: .location)
        let back = try readXML(try xmlBytes([Record(recordName: "d", fields: fields)]))[0]
        for (i, value) in values.enumerated() {
            let read = back[field: "d\(i)"]?.doubleValue
            #expect(read?.bitPattern == value.bitPattern, "d\(i): \(value)")
        }
        guard case .location(let location)? = back[field: "where"] else { Issue.record("no location"); return }
        #expect(location.latitude.bitPattern == (-0.0).bitPattern)
        #expect(location.longitude == .leastNonzeroMagnitude)
        #expect(location.altitude == .greatestFiniteMagnitude)
    }

    @Test("INT64 is exact at both ends and timestamps keep milliseconds before 1970 and past 9999")
    func integers() throws {
        var fields = RecordFields()
        fields["max"] = RecordField(.int64(.max), type: .int64)
        fields["min"] = RecordField(.int64(.min), type: .int64)
        fields["beyondDouble"] = RecordField(.int64(9_007_199_254_740_993), type: .int64)
        fields["before"] = RecordField(.timestamp(-86_400_001), type: .timestamp)
        fields["far"] = RecordField(.timestamp(.max), type: .timestamp)
        fields["list"] = RecordField(.list([.int64(.min), .json(.null), .int64(.max)]), type: .int64List)
        let record = Record(recordName: "n", fields: fields, created: RecordStamp(timestamp: .min))
        let xml = String(decoding: try xmlBytes([record]), as: UTF8.self)
        #expect(xml.contains("<timestamp name=\"before\" date=\"1969-12-30T23:59:59.999Z\">-86400001</timestamp>"))
        #expect(xml.contains("<timestamp name=\"far\">9223372036854775807</timestamp>")) // no date outside 0001–9999
        #expect(try readXML(xml) == [record])
    }

    @Test("Empty lists, UNKNOWN_LIST, nulls, untyped fields, unknown types and NUMBER_INT64 keep their exact form")
    func specialFields() throws {
        let line = #"{"recordName":"s","fields":{"e":{"value":[],"type":"STRING_LIST"},"u":{"value":[],"type":"UNKNOWN_LIST"},"n":{"value":null,"type":"STRING"},"nn":{"value":null},"t":{"value":"x"},"i":{"value":12},"d":{"value":1.5},"big":{"value":123456789012345678901234567890},"o":{"value":{"a":[1,true]}},"f":{"value":{"k":1.50},"type":"FUTURE"},"fs":{"value":"text","type":"FUTURE"},"l":{"value":42,"type":"NUMBER_INT64"},"a":{"value":{"fileChecksum":"c","size":1},"type":"ASSET"},"x":{"value":"v","type":"STRING","isEncrypted":true,"extra":{"k":[null]}}}}"#
        let records = try ndjsonRecords(Array((line + "\n").utf8))
        let xml = try xmlBytes(records)
        let text = String(decoding: xml, as: UTF8.self)
        #expect(text.contains(#"<list name="e" type="STRING_LIST"/>"#))
        #expect(text.contains(#"<list name="u" type="UNKNOWN_LIST"/>"#))
        #expect(text.contains(#"<null name="n" type="STRING"/>"#))
        #expect(text.contains(#"<null name="nn"/>"#))
        #expect(text.contains(#"<string name="t" untyped="true">x</string>"#))
        #expect(text.contains(#"<json name="f" type="FUTURE">{"k":1.50}</json>"#))
        #expect(text.contains(#"<int64 name="l" type="NUMBER_INT64">42</int64>"#))
        #expect(text.contains(#"<field name="x"><string>v</string><unknown key="isEncrypted">true</unknown><unknown key="extra">{"k":[null]}</unknown></field>"#))
        #expect(ndjson(try readXML(xml)) == Array((line + "\n").utf8))
    }

    @Test("System fields, references with zones, assets and locations keep every member and unknown key")
    func systemFields() throws {
        var generator = RecordGenerator(seed: 7)
        var record = generator.record()
        record.recordType = "T"
        record.zoneID = ZoneID(zoneName: "Z", ownerRecordName: "_o", zoneType: "REGULAR_CUSTOM_ZONE", unknownKeys: ["zx": .bool(true)])
        record.created = RecordStamp(timestamp: 1, userRecordName: "_u", deviceID: "d", unknownKeys: ["sx": .null])
        record.modified = RecordStamp(timestamp: 2)
        record.parent = Reference(recordName: "p", zoneID: ZoneID(zoneName: "Q"), action: Reference.Action.none, unknownKeys: ["px": .number(JSONNumber(text: "1e3"))])
        record.share = Reference(recordName: "s", action: Reference.Action(rawValue: "FUTURE"))
        record.deleted = false
        record.shortGUID = "g"
        record.pluginFields = .object(["k": .array([])])
        record.unknownKeys = ["publicPermission": .string("NONE"), "recordTypeExtra": .null]
        record.fields = [
            "asset": RecordField(.asset(Asset(fileChecksum: "c", size: 5, referenceChecksum: "r", wrappingKey: "w", receipt: "rc",
                                              downloadURL: "https://x/${f}", unknownKeys: ["ax": .string("y")])), type: .asset),
            "loc": RecordField(.location(Location(latitude: 1, longitude: 2, horizontalAccuracy: 3, verticalAccuracy: 4, altitude: 5,
                                                  speed: 6, course: 7, timestamp: 8, unknownKeys: ["lx": .bool(false)])), type: .location),
            "refs": RecordField(.list([.reference(Reference(recordName: "a", zoneID: ZoneID(zoneName: "Z"), action: .deleteSelf)), .json(.null)]), type: .referenceList),
        ]
        let back = try readXML(try xmlBytes([record]))
        #expect(back == [record])
        #expect(ndjson(back) == ndjson([record]))
    }
}
