import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FerryTestSupport
import Testing

/// Reads every record of `bytes`, fed `chunkSize` bytes at a time.
func readAll(_ bytes: [UInt8], chunkSize: Int = .max, policy: NDJSONReader.ErrorPolicy = .fail,
             configuration: NDJSONReader.Configuration = .init()) throws -> [Record] {
    let reader = NDJSONReader(source: MemorySource(bytes, name: "input", chunkSize: chunkSize), policy: policy,
                              configuration: configuration)
    var records: [Record] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

func writeAll(_ records: [Record]) throws -> [UInt8] {
    let sink = MemorySink()
    let writer = NDJSONWriter(sink: sink)
    for record in records { try writer.write(record) }
    try writer.finish()
    #expect(sink.isCommitted)
    return sink.bytes
}

func sample(_ name: String) throws -> [UInt8] {
    try InputFile(path: samplesDirectory() + "/" + name).readAll()
}

@Suite("NDJSON reading and writing")
struct NDJSONReaderTests {
    static let samples = ["chat.ndjson", "shopping.ndjson", "edge-cases.ndjson", "query-response.json"]

    @Test("A pretty-printed response from a stream is held to the line limit, from a regular file to the document limit")
    func streamedDocumentLimit() throws {
        var text = "{\n  \"records\": [\n"
        for i in 0..<200 { text += "    {\"recordName\": \"r\(i)\"},\n" }
        text += "    {\"recordName\": \"last\"}\n  ]\n}\n"
        let configuration = NDJSONReader.Configuration(maximumLineBytes: 1024)
        for chunkSize in [.max, 100] {
            let error = #expect(throws: RecordFormatError.self) { try readAll(Array(text.utf8), chunkSize: chunkSize, configuration: configuration) }
            #expect(error?.description == "input:1:1: expected a multi-line JSON document of at most 1024 bytes from a stream (held in memory "
                    + "whole, it is held to the line limit; a regular file may hold one of up to 1073741824 bytes), found a larger one")
        }
        let path = TestScratch.directory() + "/pretty.json"
        let file = try OutputFile(path: path)
        try file.write(text)
        try file.commit()
        let reader = NDJSONReader(source: try InputFile(path: path), configuration: configuration)
        var count = 0
        while try reader.next() != nil { count += 1 }
        #expect(count == 201)
    }

    @Test("Samples read the same at every chunk boundary", arguments: samples)
    func chunkBoundaries(name: String) throws {
        let bytes = try sample(name)
        let whole = try readAll(bytes)
        #expect(!whole.isEmpty)
        for chunk in Array(1...64) + [100, 1000, 4096] {
            #expect(try readAll(bytes, chunkSize: chunk, configuration: .init(chunkSize: 16)) == whole, "chunk \(chunk)")
        }
    }

    @Test("Samples round-trip NDJSON → model → NDJSON to the same JSON values", arguments: samples.dropLast())
    func sampleRoundTrip(name: String) throws {
        let bytes = try sample(name)
        let records = try readAll(bytes)
        let output = try writeAll(records)
        let inputLines = lines(of: bytes)
        let outputLines = lines(of: output)
        #expect(inputLines.count == outputLines.count)
        for (a, b) in zip(inputLines, outputLines) {
            let x = try a.withUnsafeBytes { try RecordJSON.parseValue($0) }
            let y = try b.withUnsafeBytes { try RecordJSON.parseValue($0) }
            #expect(jsonEquivalent(x, y), "\(String(decoding: a, as: UTF8.self))\n\(String(decoding: b, as: UTF8.self))")
        }
        #expect(try readAll(output) == records)
    }

    @Test("100,000 generated records round-trip unchanged")
    func generatedRoundTrip() throws {
        var generator = RecordGenerator(seed: 2024)
        let input = generator.ndjson(count: 100_000)
        let records = try readAll(input)
        #expect(records.count == 100_000)
        let output = try writeAll(records)
        #expect(output == input) // Ferry's own output is canonical: byte-identical
        #expect(try readAll(output) == records)
    }

    @Test("A pretty-printed response document converts to its records")
    func documents() throws {
        let records = try readAll(try sample("query-response.json"))
        #expect(records.map(\.recordName) == (1...3).map { "Q0000000-0000-4000-8000-00000000000\($0)" })
    }

    @Test("Pretty-printed documents after compact lines fail at the first, saying why")
    func prettyAfterLines() throws {
        for document in ["{\n  \"recordName\" : \"b\"\n}\n", "{\n  \"records\" : [ {\n    \"recordName\" : \"b\"\n  } ]\n}\n",
                         "[ {\r\n  \"recordName\" : \"b\"\r\n} ]\r\n"] {
            let bytes = Array(("{\"recordName\":\"a\"}\n" + document).utf8)
            let error = #expect(throws: RecordFormatError.self) { try readAll(bytes) }
            #expect(error?.line == 2)
            #expect(error?.message.contains("NDJSON holds one whole value per line") == true, "\(error?.message ?? "")")
        }
        // A line cut short (inside a string, or after a value) gets no hint.
        for last in ["{\"recordName\":\"b\n", "{\"recordName\":\"b\",\"recordType\":\"T\"", "{\"recordName\":\"b\",\n"] {
            let cut = #expect(throws: RecordFormatError.self) { try readAll(Array(("{\"recordName\":\"a\"}\n" + last).utf8)) }
            #expect(cut?.message.contains("NDJSON holds") == false, "\(last)")
        }
    }

    @Test("A record of a zone entry or a records/changes page with \"zoneID\": null is placed in its zone, the null dropped")
    func nullZoneID() throws {
        let record = #"{"recordName":"a","recordType":"T","zoneID":null}"#
        let expected = [#"{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"}}"#]
        for page in [#"{"zones":[{"zoneID":{"zoneName":"Z"},"records":["# + record + "]}]}",
                     #"{"records":["# + record + #"],"zoneID":{"zoneName":"Z"},"syncToken":"s"}"#] {
            for text in [page, page.replacingOccurrences(of: ",", with: ",\n  ")] {
                let records = try readAll(Array((text + "\n").utf8))
                #expect(records.map(RecordJSON.encodedString) == expected, "\(text)")
            }
        }
    }

    @Test("Per-record server errors are reported with their position, not skipped silently")
    func serverErrors() throws {
        let bytes = try sample("lookup-response-with-error.json")
        let error = #expect(throws: RecordFormatError.self) { try readAll(bytes) }
        #expect(error?.code == .serverError)
        #expect(error?.message.contains("NOT_FOUND") == true)
        #expect(error?.line == 31)
        let rejects = MemorySink()
        let kept = try readAll(bytes, policy: .skip(rejects: rejects))
        #expect(kept.count == 1)
        #expect(lines(of: rejects.bytes).count == 1) // one compact line per rejected entry
        let rejected = try rejects.bytes.withUnsafeBytes { try RecordJSON.parseValue(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
        #expect(rejected["serverErrorCode"] == .string("NOT_FOUND"))
    }

    @Test("An error entry that is a document of its own, after others, is reported at its own line")
    func errorEntryDocument() throws {
        let text = "{\n  \"records\" : [ { \"recordName\" : \"a\" } ]\n}\n  {\"serverErrorCode\":\"ACCESS_DENIED\",\"reason\":\"no\"}\n"
        let error = #expect(throws: RecordFormatError.self) { try readAll(Array(text.utf8)) }
        #expect(error?.code == .serverError)
        #expect(error?.line == 4)
        #expect(error?.column == 3)
    }

    @Test("CRLF line ends, a byte order mark and blank lines are accepted")
    func lineEnds() throws {
        let text = "\u{FEFF}{\"recordName\":\"a\"}\r\n\r\n  \n{\"recordName\":\"b\"}"
        #expect(try readAll(Array(text.utf8)).map(\.recordName) == ["a", "b"])
    }

    @Test("Bad lines fail with file, line, column and record index")
    func errorPositions() throws {
        let text = "{\"recordName\":\"a\"}\n{\"recordName\":\"é\",\"fields\":{\"n\":{\"value\":\"x\",\"type\":\"INT64\"}}}\n"
        let error = #expect(throws: RecordFormatError.self) { try readAll(Array(text.utf8)) }
        #expect(error?.source == "input")
        #expect(error?.line == 2)
        #expect(error?.column == 42) // characters, not bytes: "é" is two bytes
        #expect(error?.recordIndex == 2)
        #expect(error?.description.hasPrefix("input:2:42: record 2: expected a number for INT64 field \"n\"") == true)
    }

    static let badLines: [(String, [UInt8])] = [
        ("truncated JSON", Array(#"{"recordName":"t","fields":{"a":{"value":"#.utf8)),
        ("wrong type for tag", Array(#"{"recordName":"w","fields":{"n":{"value":"abc","type":"INT64"}}}"#.utf8)),
        ("missing recordName", Array(#"{"recordType":"T","fields":{}}"#.utf8)),
        ("duplicate keys", Array(#"{"recordName":"d","recordName":"e"}"#.utf8)),
        ("nested arrays", Array(#"{"recordName":"n","x":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000) + Array(repeating: UInt8(ascii: "]"), count: 100_000) + [UInt8(ascii: "}")]),
        ("binary garbage", (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }.filter { $0 != 0x0A }),
        ("invalid UTF-8", Array(#"{"recordName":"#.utf8) + [0x22, 0xC3, 0x28, 0x22, 0x7D]),
        ("lone surrogate", Array(#"{"recordName":"\udead"}"#.utf8)),
    ]

    @Test("Each kind of bad line fails alone, and with skip the rejects hold exactly the bad lines",
          arguments: badLines.map(\.0))
    func badInput(kind: String) throws {
        let bad = Self.badLines.first { $0.0 == kind }!.1
        let good1 = Array(#"{"recordName":"good1"}"#.utf8)
        let good2 = Array(#"{"recordName":"good2","fields":{"x":{"value":1,"type":"INT64"}}}"#.utf8)
        let input = good1 + [0x0A] + bad + [0x0A] + good2 + [0x0A]
        let error = #expect(throws: RecordFormatError.self) { try readAll(input) }
        #expect(error?.line == 2)
        let rejects = MemorySink()
        let kept = try readAll(input, policy: .skip(rejects: rejects))
        #expect(kept.map(\.recordName) == ["good1", "good2"])
        #expect(rejects.bytes == bad + [0x0A])
    }

    @Test("A 100 MB line is rejected without holding it, and skipped verbatim")
    func hugeLine() throws {
        var input = Array(#"{"recordName":"a"}"#.utf8) + [0x0A]
        let huge = Array(#"{"recordName":"big","x":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 100 << 20) + Array("\"}".utf8)
        input += huge + [0x0A] + Array(#"{"recordName":"b"}"#.utf8)
        for chunk in [Int.max, 1 << 20] {
            do {
                let records = try readAll(input, chunkSize: chunk)
                Issue.record("expected a too-large error, read \(records.count) records")
            } catch let error as RecordFormatError {
                #expect(error.code == .tooLarge)
                #expect(error.line == 2)
            }
        }
        let rejects = MemorySink()
        let kept = try readAll(input, policy: .skip(rejects: rejects))
        #expect(kept.map(\.recordName) == ["a", "b"])
        #expect(rejects.bytes.count == huge.count + 1)
        #expect(rejects.bytes.elementsEqual(huge + [0x0A]), "rejects differ from the line")
    }
}
