import FerryRecords
import FerryTestSupport
import Testing

@Suite("Record JSON mapping")
struct RecordJSONTests {
    @Test("Every field type decodes to its typed value")
    func typedValues() throws {
        let text = #"""
        {"recordName":"r","recordType":"T","fields":{
        "s":{"value":"x","type":"STRING"},"i":{"type":"INT64","value":-9223372036854775808},
        "d":{"value":-0.0,"type":"DOUBLE"},"t":{"value":1700000000000,"type":"TIMESTAMP"},
        "b":{"value":"AAE=","type":"BYTES"},"e":{"value":"AAE=","type":"ENCRYPTED_BYTES"},
        "r":{"value":{"recordName":"p","action":"DELETE_SELF"},"type":"REFERENCE"},
        "a":{"value":{"fileChecksum":"c","size":12,"wrappingKey":"k","receipt":"q","referenceChecksum":"z","downloadURL":"u/${f}"},"type":"ASSETID"},
        "l":{"value":{"latitude":1.5,"longitude":-2,"horizontalAccuracy":3,"verticalAccuracy":4,"altitude":5,"speed":6,"course":7,"timestamp":8},"type":"LOCATION"},
        "sl":{"value":["a","b"],"type":"STRING_LIST"},"il":{"value":[1,2],"type":"INT64_LIST"},
        "u":{"value":[],"type":"UNKNOWN_LIST"},"n":{"value":7,"type":"NUMBER_INT64"},"f":{"value":{"q":1},"type":"FUTURE"}}}
        """#
        let record = try RecordJSON.decodeRecord(text)
        #expect(record[field: "s"] == .string("x"))
        #expect(record[field: "i"] == .int64(.min))
        #expect(record[field: "d"]?.doubleValue?.bitPattern == (-0.0).bitPattern)
        #expect(record[field: "t"] == .timestamp(1_700_000_000_000))
        #expect(record[field: "b"] == .bytes("AAE="))
        #expect(record.fields?["e"]?.type == .encryptedBytes)
        #expect(record[field: "r"] == .reference(Reference(recordName: "p", action: .deleteSelf)))
        #expect(record[field: "a"] == .asset(Asset(fileChecksum: "c", size: 12, referenceChecksum: "z", wrappingKey: "k", receipt: "q", downloadURL: "u/${f}")))
        #expect(record[field: "l"] == .location(Location(latitude: 1.5, longitude: -2, horizontalAccuracy: 3, verticalAccuracy: 4, altitude: 5, speed: 6, course: 7, timestamp: 8)))
        #expect(record[field: "sl"] == .list([.string("a"), .string("b")]))
        #expect(record[field: "il"] == .list([.int64(1), .int64(2)]))
        #expect(record[field: "u"] == .json(.array([])))
        #expect(record[field: "n"] == .int64(7))
        #expect(record.fields?["n"]?.type?.rawValue == "NUMBER_INT64")
        #expect(record[field: "f"] == .json(.object(["q": .number(JSONNumber(text: "1"))])))
    }

    @Test("Bad records are rejected with a message naming what was expected", arguments: [
        (#"{"recordType":"T"}"#, RecordFormatError.Code.missingKey, "recordName"),
        (#"{"recordName":"r","fields":{"n":{"value":"12","type":"INT64"}}}"#, .wrongType, "expected a number for INT64 field \"n\""),
        (#"{"recordName":"r","fields":{"n":{"value":1.5,"type":"INT64"}}}"#, .outOfRange, "fraction"),
        (#"{"recordName":"r","fields":{"n":{"value":9223372036854775808,"type":"INT64"}}}"#, .outOfRange, "64-bit"),
        // A number beyond a double's range is not a double (it would be written back as null).
        (#"{"recordName":"r","fields":{"d":{"value":1e309,"type":"DOUBLE"}}}"#, .outOfRange, "range of a double"),
        (#"{"recordName":"r","fields":{"d":{"value":[1,-2e400],"type":"DOUBLE_LIST"}}}"#, .outOfRange, "range of a double"),
        (#"{"recordName":"r","fields":{"l":{"value":{"latitude":1e999,"longitude":0},"type":"LOCATION"}}}"#, .outOfRange, "range of a double"),
        (#"{"recordName":"r","recordName":"s"}"#, .duplicateKey, "\"recordName\" twice"),
        (#"{"recordName":"r","fields":{"a":{"value":1,"type":"INT64"},"a":{"value":2,"type":"INT64"}}}"#, .duplicateKey, "\"a\" twice"),
        (#"{"recordName":"r","fields":{"a":{"value":1,"value":2}}}"#, .duplicateKey, "\"value\" twice"),
        (#"{"recordName":"r","fields":{"a":{"type":"STRING"}}}"#, .missingKey, "\"value\""),
        (#"{"recordName":"r","fields":{"l":{"value":{"latitude":1},"type":"LOCATION"}}}"#, .missingKey, "longitude"),
        (#"{"recordName":"r","fields":{"l":{"value":"x","type":"REFERENCE"}}}"#, .wrongType, "expected an object"),
        (#"{"recordName":"r","fields":{"l":{"value":1,"type":"STRING_LIST"}}}"#, .wrongType, "expected a list"),
        (#"{"recordName":"r","deleted":"yes"}"#, .wrongType, "true or false"),
        (#"{"recordName":7}"#, .wrongType, "expected a string for \"recordName\""),
        (#"{"recordName":"r","zoneID":{"ownerRecordName":"o"}}"#, .missingKey, "zoneName"),
        (#"{"recordName":"r""#, .truncated, "expected"),
        (#"[1,2]"#, .syntax, "expected a record object"),
    ])
    func badRecords(text: String, code: RecordFormatError.Code, message: String) {
        let error = #expect(throws: RecordFormatError.self) { try RecordJSON.decodeRecord(text) }
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test("An untyped number beyond a double's range is kept as its JSON text, not made infinite")
    func untypedHugeNumber() throws {
        // Found by the record-line fuzzer: 157e+308 decoded as infinity and was written as null.
        let text = #"{"recordName":"r","fields":{"x":{"value":157e+308},"y":{"value":-1e400,"type":"NUMBER"}}}"#
        let record = try RecordJSON.decodeRecord(text)
        #expect(record[field: "x"] == .json(.number(JSONNumber(text: "157e+308"))))
        let again = try RecordJSON.decodeRecord(RecordJSON.encodedString(record))
        #expect(again == record)
    }

    @Test("Unknown keys and nulls survive at every level, in order")
    func unknownKeys() throws {
        let text = #"{"recordName":"r","zzz":{"b":1,"a":[null,true]},"parent":null,"zoneID":{"zoneName":"Z","extra":1},"fields":{"f":{"value":"v","type":"STRING","isEncrypted":false}},"aaa":"last"}"#
        let record = try RecordJSON.decodeRecord(text)
        #expect(record.unknownKeys.members.map(\.key) == ["zzz", "parent", "aaa"])
        #expect(record.zoneID?.unknownKeys["extra"] == .number(JSONNumber(text: "1")))
        #expect(record.fields?["f"]?.unknownKeys["isEncrypted"] == .bool(false))
        let again = RecordJSON.encodedString(record)
        #expect(jsonEquivalent(try JSONValue(parsing: again), try JSONValue(parsing: text)))
    }

    @Test("A response document yields its records, errors and marker")
    func responses() throws {
        let text = #"{"records":[{"recordName":"a","recordType":"T","fields":{}},{"recordName":"b","reason":"gone","serverErrorCode":"NOT_FOUND"},{"recordName":"c","fields":{"x":{"value":"s","type":"INT64"}}}],"continuationMarker":"m","other":1}"#
        let bytes = Array(text.utf8)
        let document = try bytes.withUnsafeBytes { try RecordJSON.decodeDocument($0) }
        guard case .response(let response) = document else {
            Issue.record("expected a response")
            return
        }
        #expect(response.continuationMarker == "m")
        #expect(response.unknownKeys["other"] != nil)
        #expect(response.entries.count == 3)
        if case .record(let r) = response.entries[0].content { #expect(r.recordName == "a") } else { Issue.record("entry 0") }
        if case .error(let e) = response.entries[1].content { #expect(e.serverErrorCode == "NOT_FOUND") } else { Issue.record("entry 1") }
        if case .invalid(let e) = response.entries[2].content { #expect(e.code == .wrongType) } else { Issue.record("entry 2") }
        let entryText = String(decoding: bytes[response.entries[1].byteRange], as: UTF8.self)
        #expect(entryText == #"{"recordName":"b","reason":"gone","serverErrorCode":"NOT_FOUND"}"#)
    }

    @Test("Generated records survive model → JSON → model, and JSON → model → JSON, unchanged",
          arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func roundTripProperty(seed: UInt64) throws {
        var generator = RecordGenerator(seed: seed)
        for _ in 0..<2_000 {
            let record = generator.record()
            let text = RecordJSON.encodedString(record)
            let decoded = try RecordJSON.decodeRecord(text)
            #expect(decoded == record, "\(text)")
            let reencoded = RecordJSON.encodedString(decoded)
            #expect(reencoded == text)
            if decoded != record { return }
        }
    }

    @Test("Doubles round-trip bit for bit through their shortest text")
    func doubles() throws {
        var random = SeededRandom(seed: 99)
        for _ in 0..<20_000 {
            let d = Double(bitPattern: random.next())
            guard d.isFinite else { continue }
            let record = Record(recordName: "r", fields: ["d": RecordField(.double(d), type: .double)])
            let back = try RecordJSON.decodeRecord(RecordJSON.encodedString(record))
            #expect(back[field: "d"]?.doubleValue?.bitPattern == d.bitPattern)
        }
    }
}

@Suite("Field type tags")
struct FieldTypeTagTests {
    @Test("Each standard constant, spelled out by hand, is what its tag parses to")
    func constantsMatchTheirTags() {
        for type in FieldType.allStandard {
            #expect(type == FieldType(rawValue: type.rawValue), "\(type)")
        }
    }
}
