import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FerryTestSupport
import Testing

/// Every response shape through every JSON record reader — the sequential reader, and the
/// parallel one transcoding, decoding, cutting large documents into runs, and cutting them
/// under a prefilter — compact, pretty-printed, and as an element of an array on one line: all
/// read what the record model reads, and agree on the rest (rejects, their messages, zone
/// listings).
@Suite("Every response shape through every JSON record reader")
struct ResponseShapeReaderTests {
    /// What a reader made of an input.
    struct Reading: Equatable {
        var records: [String]
        var rejected: Int
        var reports: [String]
        var zoneListings: [Int]
    }

    /// The forms of a shape's text: one compact line, pretty-printed, in an array on one line,
    /// and twice over (two documents, or two lines).
    static func forms(_ text: String) -> [(name: String, text: String)] {
        let pretty = ResponseShapes.pretty(text)
        return [("compact", text + "\n"), ("pretty-printed", pretty + "\n"), ("in an array", "[" + text + "]\n"),
                ("two lines", text + "\n" + text + "\n"), ("two pretty-printed documents", pretty + "\n" + pretty + "\n")]
    }

    static func sequential(_ text: String) -> Reading {
        let rejects = MemorySink()
        var reports: [String] = []
        let reader = NDJSONReader(source: MemorySource(Array(text.utf8), name: "input", chunkSize: 97), policy: .skip(rejects: rejects))
        reader.onReject = { reports.append("\($0)") }
        var records: [String] = []
        do {
            while let record = try reader.next() { records.append(RecordJSON.encodedString(record)) }
        } catch {
            reports.append("failed: \(error)")
        }
        return Reading(records: records, rejected: reader.rejectedCount, reports: reports, zoneListings: reader.zoneListings.map(\.line))
    }

    /// The parallel reader's ways through a document.
    enum Way: CaseIterable {
        /// Records written as they are read (transcoded where the transcoder takes them).
        case passingThrough
        /// Records decoded and encoded again (a transform that changes nothing).
        case decoding
        /// Every document cut into runs of records (as a large one is).
        case cutting
        /// Every response cut into its records, each screened by a prefilter that keeps all.
        case screening
    }

    static func parallel(_ text: String, _ way: Way) -> Reading {
        let output = MemorySink(), rejects = MemorySink()
        var reports: [String] = []
        var listings: [Int] = []
        let read = ParallelRead(
            source: MemorySource(Array(text.utf8), name: "input", chunkSize: 97), into: output, policy: .skip(rejects: rejects),
            transform: way == .decoding ? RecordTransform(custom: { _ in true }) : RecordTransform(),
            prefilter: way == .screening ? .some(NDJSONPrefilter(mightMatch: { _ in true })) : nil, threads: 2,
            configuration: .init(chunkSize: 4096, minimumSplitSize: way == .cutting ? 0 : .max))
        read.pipeline.onReject = { reports.append("\($0)") }
        read.pipeline.onZoneListing = { listings.append($0.line) }
        var rejected = 0
        do {
            rejected = try read.run().rejected
        } catch {
            reports.append("failed: \(error)")
        }
        let records = String(decoding: output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        return Reading(records: records, rejected: rejected, reports: reports, zoneListings: listings)
    }

    @Test("Every reader reads a shape as the record model does, in every form", arguments: ResponseShapes.all.map(\.name))
    func agree(shape: String) {
        let text = ResponseShapes.all.first { $0.name == shape }!.text
        let model = ResponseShapes.model(text)
        for form in Self.forms(text) {
            let copies = form.name.hasPrefix("two") ? 2 : 1
            let expected = Self.sequential(form.text)
            #expect(expected.records == Array(repeating: model.records, count: copies).flatMap { $0 }, "\(shape), \(form.name)")
            #expect(expected.rejected == model.rejects * copies, "\(shape), \(form.name): \(expected.reports)")
            #expect(expected.zoneListings.count == (model.listsZones ? copies : 0), "\(shape), \(form.name)")
            for way in Way.allCases {
                let actual = Self.parallel(form.text, way)
                #expect(actual == expected, "\(shape), \(form.name), \(way)")
            }
        }
    }
}
