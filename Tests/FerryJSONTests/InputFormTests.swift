import FerryIO
import FerryJSON
import FerryPipeline
import FerryPredicate
import FerryRecords
import FerryTestSupport
import Testing

/// Generated records written in every form a user may hold them in: compact NDJSON, one
/// response per line, pretty-printed responses (CloudKit's `"key" : value`, two-space indents),
/// `changes/zone` responses, with CRLF line ends and a byte order mark.
enum InputForms {
    static func records(seed: UInt64, count: Int) -> [Record] {
        var generator = RecordGenerator(seed: seed)
        return (0..<count).map { _ in
            var record = generator.record()
            record.zoneID = record.zoneID ?? ZoneID(zoneName: "Z")
            return record
        }
    }

    static func compact(_ record: Record) -> String { RecordJSON.encodedString(record) }

    /// JSON text pretty-printed as CloudKit prints it.
    static func pretty(_ compact: String, indent: Int = 0) -> String { ResponseShapes.pretty(compact, indent: indent) }

    /// Every form, as named inputs; each holds all of `records`, in order.
    static func forms(of records: [Record]) -> [(name: String, text: String)] {
        let lines = records.map(compact)
        let pages = stride(from: 0, to: records.count, by: 7).map { Array(lines[$0..<min($0 + 7, lines.count)]) }
        let queryPages = pages.map { "{\"records\":[" + $0.joined(separator: ",") + "],\"continuationMarker\":\"m\"}" }
        let zonePages = pages.map { "{\"zones\":[{\"zoneID\":{\"zoneName\":\"Z\"},\"syncToken\":\"t\",\"records\":[" + $0.joined(separator: ",") + "],\"moreComing\":false}]}" }
        return [
            ("compact NDJSON", lines.joined(separator: "\n") + "\n"),
            ("compact NDJSON, CRLF, byte order mark, no final newline", "\u{FEFF}" + lines.joined(separator: "\r\n")),
            ("records/query responses, one per line", queryPages.joined(separator: "\n") + "\n"),
            ("changes/zone responses, one per line", zonePages.joined(separator: "\n") + "\n"),
            ("pretty-printed records/query responses", queryPages.map { pretty($0) }.joined(separator: "\n") + "\n"),
            ("pretty-printed changes/zone responses, CRLF", zonePages.map { pretty($0) }.joined(separator: "\n").replacingNewlines() + "\r\n"),
            ("one pretty-printed response with a byte order mark", "\u{FEFF}" + pretty("{\"records\":[" + lines.joined(separator: ",") + "]}")),
            ("pretty-printed records", lines.map { pretty($0) }.joined(separator: "\n")),
        ]
    }
}

private extension String {
    func replacingNewlines() -> String {
        var out = ""
        for c in self { if c == "\n" { out += "\r\n" } else { out.append(c) } }
        return out
    }
}

@Suite("Every input form through the one decoder")
struct InputFormTests {
    static let records = InputForms.records(seed: 2026, count: 60)
    static let expected = records.map(InputForms.compact)

    @Test("Every form gives the same records, read whole or fed a few bytes at a time",
          arguments: InputForms.forms(of: InputFormTests.records).map(\.name))
    func sameRecords(form: String) throws {
        let text = InputForms.forms(of: Self.records).first { $0.name == form }!.text
        let bytes = Array(text.utf8)
        for chunkSize in [1, 2, 3, 7, 64, 4096, .max] {
            let reader = NDJSONReader(source: MemorySource(bytes, name: form, chunkSize: chunkSize))
            var got: [String] = []
            while let record = try reader.next() { got.append(RecordJSON.encodedString(record)) }
            #expect(got == Self.expected, "\(form), fed \(chunkSize) bytes at a time")
        }
    }

    @Test("Every form gives the same records on the parallel path, in small units, large documents cut into runs",
          arguments: InputForms.forms(of: InputFormTests.records).map(\.name))
    func sameRecordsInParallel(form: String) throws {
        let text = InputForms.forms(of: Self.records).first { $0.name == form }!.text
        for (threads, split) in [(1, Int.max), (2, Int.max), (2, 0), (1, 0)] {
            let sink = MemorySink()
            try ParallelRead(source: MemorySource(Array(text.utf8), name: form, chunkSize: 100), into: sink, threads: threads,
                             configuration: .init(chunkSize: 4096, minimumSplitSize: split)).run()
            let lines = String(decoding: sink.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines == Self.expected, "\(form) on \(threads) threads, cut from \(split) bytes")
        }
    }
}

@Suite("Large documents cut into runs of records")
struct DocumentSplitTests {
    /// `text` through the parallel converter, cut into runs (or not): output, rejects, reports, failure.
    func convert(_ text: String, split: Bool, skip: Bool) -> (out: [String], rejects: String, reports: [String], failure: String?) {
        let sink = MemorySink(), rejects = MemorySink()
        var reports: [String] = []
        let read = ParallelRead(source: MemorySource(Array(text.utf8), name: "big.json", chunkSize: 333), into: sink,
                                policy: skip ? .skip(rejects: rejects) : .fail, threads: 2,
                                configuration: .init(chunkSize: 4096, minimumSplitSize: split ? 0 : .max))
        read.pipeline.onReject = { reports.append("\($0)") }
        var failure: String?
        do { try read.run() } catch { failure = "\(error)" }
        return (String(decoding: sink.bytes, as: UTF8.self).split(separator: "\n").map(String.init),
                String(decoding: rejects.bytes, as: UTF8.self), reports, failure)
    }

    static let records = InputForms.records(seed: 7, count: 300)

    static func response(badAt: Int?, zones: Bool) -> String {
        var lines = records.map(InputForms.compact)
        if let badAt { lines[badAt] = lines[badAt].replacingOccurrences(of: "\"recordName\"", with: "\"recordNam\"") }
        let body = zones
            ? "{\"zones\":[{\"zoneID\":{\"zoneName\":\"A\"},\"syncToken\":\"1\",\"records\":[" + lines[..<150].joined(separator: ",")
                + "]},{\"zoneID\":{\"zoneName\":\"B\"},\"records\":[" + lines[150...].joined(separator: ",") + "]}]}"
            : "{\"records\":[" + lines.joined(separator: ",") + "],\"continuationMarker\":\"x\"}"
        return InputForms.pretty(body) + "\n"
    }

    @Test("A large response gives the same records cut into runs as read whole", arguments: [false, true])
    func sameRecords(zones: Bool) {
        let text = Self.response(badAt: nil, zones: zones)
        let whole = convert(text, split: false, skip: false), cut = convert(text, split: true, skip: false)
        #expect(whole.failure == nil && cut.failure == nil)
        #expect(cut.out == whole.out)
        #expect(cut.out.count == 300)
    }

    @Test("A bad record of a large response is reported at the same line and column, cut or whole", arguments: [false, true])
    func samePositions(zones: Bool) {
        let text = Self.response(badAt: 201, zones: zones)
        let whole = convert(text, split: false, skip: false), cut = convert(text, split: true, skip: false)
        #expect(whole.failure != nil)
        #expect(cut.failure == whole.failure, "\(cut.failure ?? "-") | \(whole.failure ?? "-")")
        // Skipped, the cut response rejects only the bad record.
        let skipped = convert(text, split: true, skip: true)
        #expect(skipped.out.count == 299)
        #expect(skipped.reports.count == 1)
        #expect(skipped.reports.first == whole.failure)
    }

    @Test("A record with a member named records, a zone listing and a zone error entry are read whole, not cut")
    func shapesLeftWhole() {
        let record = "{\"recordName\":\"r\",\"records\":[{\"recordName\":\"x\"}]}"
        let listing = "{\"zones\":[{\"zoneID\":{\"zoneName\":\"A\"}}],\"syncToken\":\"s\"}"
        let errorEntry = "{\"zones\":[{\"zoneID\":{\"zoneName\":\"A\"},\"serverErrorCode\":\"ZONE_NOT_FOUND\"}]}"
        for text in [record, listing, errorEntry].map({ InputForms.pretty($0) + "\n" }) {
            let whole = convert(text, split: false, skip: true), cut = convert(text, split: true, skip: true)
            #expect(cut.out == whole.out && cut.reports == whole.reports && cut.failure == whole.failure)
        }
    }
}

@Suite("Rejected inputs are kept exactly")
struct RejectedInputTests {
    static let records = InputForms.records(seed: 11, count: 40)

    /// A pretty-printed `records/query` response of ``records`` whose record `badAt` has a string
    /// left open: its `recordName` value loses its closing quote, so the line ends inside it.
    static func brokenResponse(badAt: Int) -> String {
        let body = "{\"records\":[" + records.map(InputForms.compact).joined(separator: ",") + "]}"
        var lines = InputForms.pretty(body).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let names = lines.indices.filter { lines[$0].contains("\"recordName\" : \"") }
        let line = names[badAt]
        lines[line] = String(lines[line].dropLast(lines[line].hasSuffix(",") ? 2 : 1)) + " and more"
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("A response whose JSON breaks goes to the rejects file byte for byte, whole or cut into runs",
          arguments: [false, true])
    func brokenDocumentVerbatim(split: Bool) throws {
        let text = Self.brokenResponse(badAt: 25)
        let result = DocumentSplitTests().convert(text, split: split, skip: true)
        #expect(result.failure == nil)
        #expect(result.reports.count == 1)
        // Nothing of it is lost: the rejects file holds the input exactly (and a line break).
        #expect(result.rejects == text || result.rejects == text + "\n",
                "rejects differ from the input: \(result.rejects.count) bytes against \(text.count)")
    }

    @Test("An NDJSON file whose first line is cut inside a string is read as lines, not as one document")
    func cutFirstLine() throws {
        let good = Self.records.map(InputForms.compact)
        let first = String(good[0].prefix(30))
        #expect(first.filter { $0 == "\"" }.count % 2 == 1, "the cut must fall inside a string")
        let text = ([first] + good[1...]).joined(separator: "\n") + "\n"
        let result = DocumentSplitTests().convert(text, split: false, skip: true)
        #expect(result.failure == nil)
        #expect(result.out.count == good.count - 1)
        #expect(result.rejects == first + "\n")
    }

    @Test("A rejected multi-line entry is written as one compact line when it is valid JSON")
    func validEntryCompacted() throws {
        let entry = "{\n  \"a\" : \"x  y\",\n  \"b\" : [ 1, 2 ]\n}"
        let sink = MemorySink()
        try Array(entry.utf8).withUnsafeBytes { try RecordDocumentDecoder.writeReject($0, to: sink) }
        #expect(String(decoding: sink.bytes, as: UTF8.self) == "{\"a\":\"x  y\",\"b\":[1,2]}\n")
        // Not valid JSON (a string left open across lines): kept as it was.
        let broken = "{\n  \"a\" : \"x  y\n  \"b\" : [ 1, 2 ]\n}"
        let brokenSink = MemorySink()
        try Array(broken.utf8).withUnsafeBytes { try RecordDocumentDecoder.writeReject($0, to: brokenSink) }
        #expect(String(decoding: brokenSink.bytes, as: UTF8.self) == broken + "\n")
    }
}

@Suite("Zone listings are placed where they start")
struct ZoneListingPositionTests {
    @Test("Each listing of a file of pretty-printed responses is given the line it starts on, by the reader and the parallel converter")
    func listingLines() throws {
        let query = InputForms.pretty("{\"records\":[" + InputForms.records(seed: 3, count: 4).map(InputForms.compact).joined(separator: ",") + "]}")
        let list = InputForms.pretty(#"{"zones":[{"zoneID":{"zoneName":"A"},"syncToken":"S"}]}"#)
        let changes = InputForms.pretty(#"{"zones":[{"zoneID":{"zoneName":"B"}}],"syncToken":"D","moreComing":false}"#)
        let text = [query, list, changes].joined(separator: "\n") + "\n"
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let starts = lines.indices.filter { lines[$0] == "{" }.map { $0 + 1 }
        #expect(starts.count == 3)

        let reader = NDJSONReader(source: MemorySource(Array(text.utf8), name: "multi.json", chunkSize: 97))
        var count = 0
        while try reader.next() != nil { count += 1 }
        #expect(count == 4)
        #expect(reader.zoneListings.map(\.line) == Array(starts[1...]))

        var seen: [Int] = []
        let read = ParallelRead(source: MemorySource(Array(text.utf8), name: "multi.json", chunkSize: 97), into: MemorySink(),
                                threads: 2, configuration: .init(chunkSize: 4096))
        read.pipeline.onZoneListing = { seen.append($0.line) }
        try read.run()
        #expect(seen == Array(starts[1...]))
    }
}

@Suite("A filter screens each record of a response")
struct ResponseScreeningTests {
    /// Predicates whose evaluation never fails on generated records: a record the screening drops
    /// unevaluated would have been dropped by evaluating it (a failing evaluation is reported, and
    /// the screening does not report it: see the README on `--where`).
    static let predicates = [
        #"recordType == "Message""#, #"recordType == "Message" AND recordName CONTAINS[c] "A""#,
        #"recordName BEGINSWITH "a" OR recordType == "Chat""#, #"zoneName == "Z" AND recordType BEGINSWITH "Re""#,
    ]

    /// `text` converted with `filter`, screened by its prefilter or (`screened` false) only
    /// evaluated on each decoded record: output, rejects, failure, then the reports.
    static func convert(_ text: String, bytes: [UInt8]? = nil, filter: RecordFilter, screened: Bool, split: Bool,
                        skip: Bool) -> [String] {
        let sink = MemorySink(), rejects = MemorySink()
        var reports: [String] = []
        let source = MemorySource(bytes ?? Array(text.utf8), name: "input", chunkSize: 100)
        let transform = RecordTransform(filter: filter)
        let configuration = JSONFraming(chunkSize: 4096, minimumSplitSize: split ? 0 : .max)
        let policy: RecordErrorPolicy = skip ? .skip(rejects: rejects) : .fail
        let read = screened
            ? ParallelRead(source: source, into: sink, policy: policy, transform: transform, threads: 2, configuration: configuration)
            : ParallelRead(source: source, into: sink, policy: policy, transform: RecordTransform(custom: { try transform.apply(&$0) }),
                           prefilter: .some(nil), threads: 2, configuration: configuration)
        read.pipeline.onReject = { reports.append("reject \($0)") }
        read.pipeline.onTransformFailure = { reports.append("transform \($0)") }
        var failure = "none"
        do { try read.run() } catch { failure = "\(error)" }
        return [String(decoding: sink.bytes, as: UTF8.self), String(decoding: rejects.bytes, as: UTF8.self), failure] + reports
    }

    @Test("Every form gives what evaluating each decoded record gives, whole or cut into runs", arguments: predicates)
    func sameAsEvaluating(predicate: String) throws {
        let filter = try RecordFilter(parsing: predicate)
        #expect(filter.literals != nil || filter.fieldSelection != nil, "the predicate must give a prefilter")
        let records = InputForms.records(seed: 99, count: 120)
        let kept = try records.filter { try filter.matches($0) }.map(InputForms.compact)
        #expect(!kept.isEmpty && kept.count < records.count, "the predicate should keep some records, not all: \(kept.count)")
        for (name, text) in InputForms.forms(of: records) {
            for split in [false, true] {
                let screened = Self.convert(text, filter: filter, screened: true, split: split, skip: false)
                let evaluated = Self.convert(text, filter: filter, screened: false, split: split, skip: false)
                #expect(screened == evaluated, "\(name), cut: \(split)")
                #expect(screened[0].split(separator: "\n").map(String.init) == kept, "\(name), cut: \(split)")
            }
        }
    }

    @Test("Records of a changes/zone response that name no zone are judged in their zone")
    func zoneOfEntry() throws {
        let filter = try RecordFilter(parsing: #"zoneName == "Z" AND recordType == "Message""#)
        var records = InputForms.records(seed: 5, count: 80)
        for index in records.indices { records[index].zoneID = nil }
        let page = "{\"zones\":[{\"zoneID\":{\"zoneName\":\"Z\"},\"syncToken\":\"t\",\"records\":["
            + records.map(InputForms.compact).joined(separator: ",") + "]}]}"
        let text = InputForms.pretty(page) + "\n"
        for split in [false, true] {
            let screened = Self.convert(text, filter: filter, screened: true, split: split, skip: false)
            #expect(screened == Self.convert(text, filter: filter, screened: false, split: split, skip: false), "cut: \(split)")
            #expect(screened[0].split(separator: "\n").count == records.filter { $0.recordType == "Message" }.count)
        }
    }

    @Test("What the screening drops is checked; documents it must not cut are read whole",
          arguments: [
            // Ruled out by the field the predicate reads, with a bad escape in another field.
            #"{"recordName":"a","fields":{"count":{"value":1},"t":{"value":"\q"}}}"# + "\n"
                + #"{"recordName":"b","fields":{"count":{"value":100}}}"#,
            // Ruled out by its literals, with bad UTF-8 in a string.
            #"{"recordName":"a","recordType":"Other","fields":{"t":{"value":"\#u{FFFD}x"}}}"#,
            // A zone listing, and a zone's error entry, under a filter.
            #"{"zones":[{"zoneID":{"zoneName":"A"},"syncToken":"S"}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"A"},"serverErrorCode":"ZONE_NOT_FOUND"}]}"#,
            // A response whose entries are ruled out, an error entry among them, then a match.
            #"{"records":[{"recordName":"a","recordType":"Other","fields":{"count":{"value":1}}},"#
                + #"{"recordName":"b","serverErrorCode":"NOT_FOUND","reason":"gone"},"#
                + #"{"recordName":"c","recordType":"Foo","fields":{"count":{"value":100}}},{"recordName":"d"}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"b","serverErrorCode":"NOT_FOUND"},"#
                + #"{"recordName":"a","recordType":"Other"},{"recordName":"c","recordType":"Foo"}]}]}"#,
            // A response with both `records` and `zones`: its decoder reads `records` only.
            #"{"records":[{"recordName":"a","recordType":"Foo"}],"zones":[{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"b","recordType":"Foo"}]}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"b","recordType":"Foo"}]}],"records":[{"recordName":"a","recordType":"Foo"}]}"#,
          ])
    func screenedAlike(text: String) throws {
        var bytes = Array(text.utf8)
        // The second case's replacement character stands for a byte that is not UTF-8.
        if let at = bytes.firstIndex(of: 0xEF) { bytes.replaceSubrange(at..<at + 3, with: [0xFF]) }
        let input = bytes == Array(text.utf8) ? text : nil
        for predicate in [#"count > 50"#, #"recordType == "Foo""#] {
            let filter = try RecordFilter(parsing: predicate)
            for pretty in [false, true] {
                for skip in [false, true] {
                    let lines = text.split(separator: "\n").map(String.init)
                    let valid = input != nil && lines.allSatisfy { (try? JSONValue(parsing: $0)) != nil }
                    if pretty && !valid { continue }
                    let source = (pretty ? lines.map { InputForms.pretty($0) } : lines).joined(separator: "\n") + "\n"
                    let screened = Self.convert(source, bytes: input == nil ? bytes + [0x0A] : nil, filter: filter, screened: true,
                                                split: false, skip: skip)
                    let evaluated = Self.convert(source, bytes: input == nil ? bytes + [0x0A] : nil, filter: filter, screened: false,
                                                 split: false, skip: skip)
                    #expect(screened == evaluated, "\(predicate), pretty: \(pretty), skip: \(skip)")
                }
            }
        }
    }

    /// A response whose first record nests `levels` arrays in a field (as deep as the document's
    /// limit allows, or one level deeper), then a record of type `Foo`.
    static func deepResponse(levels: Int, zones: Bool, type: String = "Other") -> String {
        let deep = #"{"recordName":"a","recordType":""# + type + #"","fields":{"x":{"value":"#
            + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "}}}"
        let records = "[\n" + deep + ",\n" + #"{"recordName":"b","recordType":"Foo"}"# + "\n]"
        return (zones ? #"{"zones":[{"zoneID":{"zoneName":"Z"},"records":"# + records + "}]}" : #"{"records":"# + records + "}") + "\n"
    }

    @Test("A record nested near the limit is judged by the depth it has in its response, screened or not",
          arguments: [false, true], [-2, -1, 0, 1, 2])
    func nestedNearTheLimit(zones: Bool, offset: Int) throws {
        // The record lies 2 levels deep in a `records` response, 4 in a `changes/zone` one, and
        // its field value 3 levels below it: 507 (505) arrays reach the limit of 512.
        let levels = (zones ? 505 : 507) + offset
        let filter = try RecordFilter(parsing: #"recordType == "Foo""#)
        for type in ["Other", "Foo"] {
            let text = Self.deepResponse(levels: levels, zones: zones, type: type)
            for skip in [false, true] {
                let screened = Self.convert(text, filter: filter, screened: true, split: false, skip: skip)
                let evaluated = Self.convert(text, filter: filter, screened: false, split: false, skip: skip)
                #expect(screened == evaluated, "\(levels) levels, \(type), skip: \(skip)")
                #expect(screened.joined().contains("nesting deeper") == (offset > 0), "\(levels) levels, \(type): \(screened)")
            }
        }
    }

    @Test("A reader with a lower nesting limit rejects a ruled-out record past it, in a response too")
    func readerDepthLimit() throws {
        let filter = try RecordFilter(parsing: #"recordType == "Foo""#)
        for (levels, rejected) in [(5, false), (6, true)] {
            // 3 levels of record, 5 or 6 arrays: within a limit of 8, or past it.
            let text = Self.deepResponse(levels: levels, zones: false)
            let rejects = MemorySink()
            var reports: [String] = []
            let reader = NDJSONReader(source: MemorySource(Array(text.utf8), name: "input", chunkSize: 777),
                                      policy: .skip(rejects: rejects), configuration: .init(maximumDepth: 8))
            reader.prefilter = NDJSONPrefilter(for: filter)
            reader.onReject = { reports.append("\($0)") }
            var names: [String] = []
            while let record = try reader.next() { names.append(record.recordName) }
            #expect(names == ["b"])
            #expect(reports.count == (rejected ? 1 : 0) && reports.allSatisfy { $0.contains("nesting deeper than 8") }, "\(reports)")
        }
    }

    @Test("Screened, an entry of a pretty-printed response that is not valid JSON is rejected alone", arguments: [false, true])
    func badEntryAlone(crlf: Bool) throws {
        let filter = try RecordFilter(parsing: #"recordType == "Foo""#)
        let entries = [#"{"recordName":"a","recordType":"Other","fields":{"t":{"value":"X"}}}"#,
                       #"{"recordName":"b","recordType":"Foo"}"#, #"{"recordName":"c","recordType":"Other"}"#]
        var text = #"{"records":["# + entries.joined(separator: ",") + "]}"
        text = InputForms.pretty(text).replacingOccurrences(of: #""X""#, with: #""\q""#) + "\n"
        if crlf { text = text.replacingOccurrences(of: "\n", with: "\r\n") }
        let result = Self.convert(text, filter: filter, screened: true, split: false, skip: true)
        #expect(result[0].contains(#""recordName":"b""#) && !result[0].contains(#""recordName":"c""#), "\(result)")
        #expect(result[1].contains(#"\q"#) && result[1].contains(#""a""#) && !result[1].contains(#""b""#), "\(result)")
        #expect(result.count == 4 && result[3].contains("escape"), "\(result)")
    }

    @Test("A bad record of a response that could match is reported alike, screened or not", arguments: [false, true])
    func badRecord(zones: Bool) throws {
        let bad = 201
        let type = try #require(DocumentSplitTests.records[bad].recordType)
        let filter = try RecordFilter(parsing: "recordType == %@", arguments: [.string(type)])
        let text = DocumentSplitTests.response(badAt: bad, zones: zones)
        for split in [false, true] {
            for skip in [false, true] {
                let screened = Self.convert(text, filter: filter, screened: true, split: split, skip: skip)
                let evaluated = Self.convert(text, filter: filter, screened: false, split: split, skip: skip)
                #expect(screened == evaluated, "cut: \(split), skip: \(skip)")
                #expect(skip ? screened.count == 4 && screened[3].contains("recordName") : screened[2].contains("recordName"),
                        "the bad record must be reported: \(screened.dropFirst(2))")
            }
        }
        // A response whose JSON breaks is reported alike too.
        let broken = RejectedInputTests.brokenResponse(badAt: 25)
        for split in [false, true] {
            #expect(Self.convert(broken, filter: filter, screened: true, split: split, skip: true)
                == Self.convert(broken, filter: filter, screened: false, split: split, skip: true))
        }
    }
}
