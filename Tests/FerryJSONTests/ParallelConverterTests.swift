import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FerryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A transform as tests write them.
typealias Transform = @Sendable (inout Record) throws -> Bool

/// What a conversion produced: output, rejects, the reports, and the error that stopped it.
struct ConversionResult: Equatable {
    var output: [UInt8]
    var rejects: [UInt8]
    var reports: [String]
    var failure: String?

    /// The first difference from `other`, briefly, or `nil` when equal.
    func difference(from other: ConversionResult) -> String? {
        func firstLine(_ a: [UInt8], _ b: [UInt8]) -> String {
            let x = a.split(separator: 0x0A, omittingEmptySubsequences: false)
            let y = b.split(separator: 0x0A, omittingEmptySubsequences: false)
            for i in 0..<max(x.count, y.count) where i >= x.count || i >= y.count || x[i] != y[i] {
                let left = i < x.count ? String(decoding: x[i].prefix(120), as: UTF8.self) : "(none)"
                let right = i < y.count ? String(decoding: y[i].prefix(120), as: UTF8.self) : "(none)"
                return "line \(i + 1) of \(x.count) vs \(y.count): \(left) | \(right)"
            }
            return "same lines"
        }
        if output != other.output { return "output differs: " + firstLine(output, other.output) }
        if rejects != other.rejects { return "rejects differ: " + firstLine(rejects, other.rejects) }
        if reports != other.reports {
            for i in 0..<max(reports.count, other.reports.count)
            where i >= reports.count || i >= other.reports.count || reports[i] != other.reports[i] {
                return "report \(i + 1): \(i < reports.count ? reports[i] : "(none)") | \(i < other.reports.count ? other.reports[i] : "(none)")"
            }
        }
        if failure != other.failure { return "failure: \(failure ?? "none") | \(other.failure ?? "none")" }
        return nil
    }
}

/// The sequential reference: `NDJSONReader` into `NDJSONWriter`, with the same transform.
func convertSequentially(_ input: [UInt8], skip: Bool, limit: Int? = nil, prefilter: NDJSONPrefilter? = nil,
                         transform: Transform? = nil, maximumLineBytes: Int = 4000) -> ConversionResult {
    let output = MemorySink(), rejects = MemorySink()
    var reports: [String] = []
    let reader = NDJSONReader(source: MemorySource(input, name: "input", chunkSize: 777),
                              policy: skip ? .skip(rejects: rejects) : .fail, configuration: .init(maximumLineBytes: maximumLineBytes))
    reader.prefilter = prefilter
    reader.onReject = { reports.append("reject \($0)") }
    let writer = NDJSONWriter(sink: output)
    var written = 0
    do {
        while var record = try reader.next() {
            do {
                if let transform, try !transform(&record) { continue }
            } catch {
                let report = "\(TransformFailure(source: "input", line: reader.lineNumber, recordIndex: reader.recordIndex, underlying: error))"
                if !skip { throw TestFailure(report) }
                reports.append("transform " + report)
                continue
            }
            if let limit, written == limit { break }
            try writer.write(record)
            written += 1
        }
        try writer.flush()
    } catch {
        try? writer.flush()
        return ConversionResult(output: output.bytes, rejects: rejects.bytes, reports: reports, failure: "\(error)")
    }
    return ConversionResult(output: output.bytes, rejects: rejects.bytes, reports: reports, failure: nil)
}

/// The parallel reader (a JSON source into a pipeline) on the same input: read in pieces from memory, or (`mapped`) from a
/// file it maps, named "input" either way.
func convertInParallel(_ input: [UInt8], skip: Bool, threads: Int, chunkSize: Int, limit: Int? = nil,
                       prefilter: NDJSONPrefilter? = nil, transform: Transform? = nil,
                       maximumLineBytes: Int = 4000, mapped: Bool = false) throws -> ConversionResult {
    let output = MemorySink(), rejects = MemorySink()
    var reports: [String] = []
    let source: any ByteSource = mapped ? try MappedTestSource(input) : MemorySource(input, name: "input", chunkSize: 1000)
    #expect((source.mapRemaining(maximumSize: .max) != nil) == (mapped && !input.isEmpty))
    let custom: (@Sendable (inout Record) throws -> Bool)? = transform
    let read = ParallelRead(source: source, into: output, policy: skip ? .skip(rejects: rejects) : .fail,
                            transform: RecordTransform(custom: custom), prefilter: .some(prefilter), threads: threads, limit: limit,
                            configuration: .init(chunkSize: chunkSize, maximumLineBytes: maximumLineBytes, minimumMappedSize: 0))
    read.pipeline.onReject = { reports.append("reject \($0)") }
    read.pipeline.onTransformFailure = { reports.append("transform \($0)") }
    do {
        try read.run()
    } catch {
        return ConversionResult(output: output.bytes, rejects: rejects.bytes, reports: reports, failure: "\(error)")
    }
    return ConversionResult(output: output.bytes, rejects: rejects.bytes, reports: reports, failure: nil)
}

/// A temporary file holding `bytes`, read (and mapped) under the name "input".
final class MappedTestSource: ByteSource {
    let name = "input"
    let path: String
    private let file: InputFile

    init(_ bytes: [UInt8]) throws {
        path = TestScratch.directory() + "/input.ndjson"
        let output = try OutputFile(path: path)
        try output.write(bytes)
        try output.commit()
        file = try InputFile(path: path)
    }

    deinit { try? FileSystem.remove(path) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try file.read(into: buffer) }
    func mapRemaining(maximumSize: Int) -> MappedInput? { file.mapRemaining(maximumSize: maximumSize) }
    var sizeHint: Int? { file.sizeHint }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Lines of every kind the reader accepts or rejects, for mixing into inputs.
enum LineCorpus {
    static func lines(seed: UInt64, count: Int) -> [[UInt8]] {
        var generator = RecordGenerator(seed: seed)
        var result: [[UInt8]] = []
        for i in 0..<count {
            let record = generator.record()
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(record, into: &out)
            let good = out.array
            // The first line is a good record: a first line that is not a complete value makes the
            // sequential reader read the input as pretty-printed documents.
            switch i == 0 ? 19 : generator.random.below(20) {
            case 0: result.append(Array(good.prefix(good.count / 2)))                      // truncated
            case 1: result.append(Array(#"{"recordName": 5}"#.utf8))                       // wrong type
            case 2: result.append(Array(#"{"recordName":"a","recordName":"b"}"#.utf8))     // duplicate key
            case 3: result.append([0xFF, 0xFE, 0x00, 0x41])                                 // binary garbage
            case 4: result.append(Array(#"{"recordName":"x","serverErrorCode":"NOT_FOUND","reason":"gone"}"#.utf8))
            case 5:
                let response = "{\"records\":[" + String(decoding: good, as: UTF8.self)
                    + ",{\"recordName\":\"e\",\"serverErrorCode\":\"ACCESS_DENIED\"}],\"continuationMarker\":\"m\"}"
                result.append(Array(response.utf8))
            case 6: result.append(Array("[".utf8) + good + Array(",".utf8) + good + Array("]".utf8)) // array line
            case 7: result.append([])                                                         // blank
            case 8: result.append(good + [0x0D])                                              // CRLF
            case 9: result.append(Array(String(repeating: "x", count: 4500).utf8))            // over the line limit
            case 10: result.append(Array("{\"recordName\":\"\\uD800\"}".utf8))               // lone surrogate
            default: result.append(good)
            }
        }
        return result
    }

    static func join(_ lines: [[UInt8]], finalNewline: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, line) in lines.enumerated() {
            bytes += line
            if index < lines.count - 1 || finalNewline { bytes.append(0x0A) }
        }
        return bytes
    }
}

@Suite("Parallel NDJSON conversion")
struct ParallelConverterTests {
    @Test("Output, rejects and reports equal the sequential reader's, for every thread count and chunk size",
          arguments: [1, 2, 3, 4, 5, 6])
    func matchesSequential(seed: Int) throws {
        let lines = LineCorpus.lines(seed: UInt64(seed), count: 300)
        let input = LineCorpus.join(lines, finalNewline: seed % 2 == 0)
        let expected = convertSequentially(input, skip: true)
        #expect(expected.failure == nil)
        for threads in [1, 2, 3] {
            for chunk in [4096, 5000, 65536] {
                for mapped in [false, true] {
                    let result = try convertInParallel(input, skip: true, threads: threads, chunkSize: chunk, mapped: mapped)
                    let difference = result.difference(from: expected)
                    #expect(difference == nil, "threads \(threads), chunk \(chunk), mapped \(mapped): \(difference ?? "")")
                }
            }
        }
    }

    @Test("Lines several chunks long, legal or over the limit, are cut where the sequential reader cuts them")
    func linesLongerThanAChunk() throws {
        var lines = LineCorpus.lines(seed: 21, count: 60)
        for (index, length) in [(3, 9000), (10, 20_000), (11, 4097), (30, 50_000), (31, 13_000)] {
            let name = String(repeating: "n", count: length)
            lines.insert(Array("{\"recordName\":\"\(name)\",\"recordType\":\"Long\"}".utf8), at: index)
        }
        for finalNewline in [true, false] {
            let input = LineCorpus.join(lines, finalNewline: finalNewline)
            let expected = convertSequentially(input, skip: true, maximumLineBytes: 30_000)
            #expect(expected.failure == nil)
            #expect(expected.reports.contains { $0.contains("at most 30000 bytes") })
            for threads in [1, 2] {
                for chunk in [4096, 8192] {
                    for mapped in [false, true] {
                        let result = try convertInParallel(input, skip: true, threads: threads, chunkSize: chunk,
                                                           maximumLineBytes: 30_000, mapped: mapped)
                        let difference = result.difference(from: expected)
                        #expect(difference == nil, "threads \(threads), chunk \(chunk), mapped \(mapped): \(difference ?? "")")
                    }
                }
            }
            // Under fail, the first line over the limit stops both, with the same message.
            let failure = convertSequentially(input, skip: false, maximumLineBytes: 30_000).failure
            for mapped in [false, true] {
                let result = try convertInParallel(input, skip: false, threads: 2, chunkSize: 4096, maximumLineBytes: 30_000,
                                                   mapped: mapped)
                #expect(result.failure == failure, "mapped \(mapped)")
            }
        }
    }

    @Test("Under --on-error fail the first bad input stops both, with the same message", arguments: [11, 12, 13])
    func failsLikeSequential(seed: Int) throws {
        let input = LineCorpus.join(LineCorpus.lines(seed: UInt64(seed), count: 200))
        let expected = convertSequentially(input, skip: false)
        #expect(expected.failure != nil)
        for threads in [1, 2, 4] {
            let result = try convertInParallel(input, skip: false, threads: threads, chunkSize: 4096, mapped: threads == 2)
            #expect(result.failure == expected.failure, "threads \(threads)")
            // Output before the failure is discarded by callers (atomic output); it must be a prefix.
            #expect(expected.output.starts(with: result.output) || result.output.starts(with: expected.output),
                    "outputs diverge before the failure")
        }
    }

    @Test("A limit writes exactly that many records, in order", arguments: [0, 1, 7, 150, 10_000])
    func limit(limit: Int) throws {
        var generator = RecordGenerator(seed: 3)
        let input = generator.ndjson(count: 400)
        let expected = convertSequentially(input, skip: true, limit: limit)
        for mapped in [false, true] {
            let result = try convertInParallel(input, skip: true, threads: 3, chunkSize: 4096, limit: limit, mapped: mapped)
            #expect(result.difference(from: expected) == nil, "mapped \(mapped)")
        }
    }

    @Test("Transforms, prefilters and transform failures behave as in the sequential reader")
    func transforms() throws {
        let input = LineCorpus.join(LineCorpus.lines(seed: 21, count: 400))
        let transform: Transform = { record in
            if record.recordName.hasPrefix("a") { throw TestFailure("names starting with a are refused") }
            guard record.recordName.count % 3 != 0 else { return false }
            record.fields = record.fields.map { RecordFields($0.entries.prefix(1).map { $0 }) }
            return true
        }
        let prefilter = NDJSONPrefilter(mightMatch: { line in line.count % 2 == 0 })
        let expected = convertSequentially(input, skip: true, prefilter: prefilter, transform: transform)
        for threads in [1, 2] {
            let result = try convertInParallel(input, skip: true, threads: threads, chunkSize: 4096, prefilter: prefilter,
                                               transform: transform, mapped: threads == 2)
            let difference = result.difference(from: expected)
            #expect(difference == nil, "threads \(threads): \(difference ?? "")")
        }
    }

    @Test("A byte order mark is stripped only at the start of the input, also when the first line is over the limit")
    func byteOrderMarkOnlyAtStart() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let record = Array(#"{"recordName":"a"}"#.utf8), other = Array(#"{"recordName":"b"}"#.utf8)
        for first in [Array(repeating: UInt8(ascii: "x"), count: 5000), Array(repeating: UInt8(ascii: "x"), count: 40)] {
            let input = first + [0x0A] + bom + record + [0x0A] + other + [0x0A]
            let expected = convertSequentially(input, skip: true, maximumLineBytes: 30)
            #expect(expected.output == other + [0x0A], "the mark on line 2 is not stripped")
            #expect(expected.rejects == first + [0x0A] + bom + record + [0x0A])
            for mapped in [false, true] {
                let result = try convertInParallel(input, skip: true, threads: 1, chunkSize: 4096, maximumLineBytes: 30, mapped: mapped)
                let difference = result.difference(from: expected)
                #expect(difference == nil, "first line \(first.count) bytes, mapped \(mapped): \(difference ?? "")")
            }
        }
        let marked = bom + record + [0x0A] + other + [0x0A]
        let expected = convertSequentially(marked, skip: true)
        #expect(expected.output == record + [0x0A] + other + [0x0A] && expected.rejects.isEmpty)
        for mapped in [false, true] {
            let result = try convertInParallel(marked, skip: true, threads: 1, chunkSize: 4096, mapped: mapped)
            #expect(result.difference(from: expected) == nil, "mapped \(mapped)")
        }
    }

    @Test("A line limit near Int.max reads lines longer than a chunk as any other limit does")
    func hugeLineLimit() throws {
        let long = Array(#"{"recordName":""#.utf8) + Array(repeating: UInt8(ascii: "n"), count: 9000) + Array(#""}"#.utf8)
        let input = Array(#"{"recordName":"a"}"#.utf8) + [0x0A] + long + [0x0A] + long
        let expected = convertSequentially(input, skip: false, maximumLineBytes: Int.max - 5)
        #expect(expected.failure == nil && expected.output == input + [0x0A])
        for mapped in [false, true] {
            let result = try convertInParallel(input, skip: false, threads: 1, chunkSize: 4096, maximumLineBytes: Int.max - 5, mapped: mapped)
            #expect(result.difference(from: expected) == nil, "mapped \(mapped)")
        }
    }

    @Test("Many lines over the limit in one chunk are each rejected verbatim, in order")
    func manyOversizedLinesInAChunk() throws {
        var lines: [[UInt8]] = []
        for index in 0..<3000 {
            lines.append(index % 3 == 0 ? Array(#"{"recordName":"r\#(index)"}"#.utf8) : Array(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: 60 + index % 7))
        }
        let input = LineCorpus.join(lines)
        let expected = convertSequentially(input, skip: true, maximumLineBytes: 40)
        #expect(expected.reports.count == 2000)
        for mapped in [false, true] {
            let result = try convertInParallel(input, skip: true, threads: 2, chunkSize: 65536, maximumLineBytes: 40, mapped: mapped)
            #expect(result.difference(from: expected) == nil, "mapped \(mapped)")
        }
    }

    @Test("A mapped input modified in place while it is converted fails the run")
    func mappedInputModified() throws {
        var generator = RecordGenerator(seed: 8)
        let input = generator.ndjson(count: 200)
        let source = try MappedTestSource(input)
        let read = ParallelRead(source: source, into: MemorySink(), threads: 1, configuration: .init(chunkSize: 4096, minimumMappedSize: 0))
        var rewritten = false
        read.pipeline.onProgress = { _ in
            guard !rewritten else { return }
            rewritten = true
            // Rewrite the first byte and grow the file by one: not a plain append.
            let fd = open(source.path, O_WRONLY)
            _ = pwrite(fd, "[", 1, 0)
            _ = pwrite(fd, "\n", 1, off_t(input.count))
            close(fd)
        }
        #expect(throws: FerryIOError.self) { try read.run() }
        #expect(rewritten)
        // Unchanged, the same file converts.
        let again = ParallelRead(source: try MappedTestSource(input), into: MemorySink(), threads: 1,
                                 configuration: .init(chunkSize: 4096, minimumMappedSize: 0))
        #expect(try again.run().recordsOut == 200)
    }

    @Test("Pretty-printed, blank-first and unfinished inputs convert as the sequential reader reads them",
          arguments: ["{\"recordName\":\"a\"}\n{}", "\u{FEFF}{\"recordName\":\"a\"}\r\n", "garbage\n{}\n",
                      "{\n  \"records\": [{\"recordName\": \"r\"}, {\"x\": 1}]\n}\n", "\n{\"recordName\":\"b\"}\n",
                      "{\"recordName\":\"no newline yet\"", "{\n  \"zones\": [{\"zoneID\": {\"zoneName\": \"Z\"}, \"records\": [{\"recordName\": \"z\"}]}]\n}"])
    func prettyAndOddInputs(_ text: String) throws {
        let input = Array(text.utf8)
        for skip in [false, true] {
            let expected = convertSequentially(input, skip: skip)
            for threads in [1, 2] {
                let actual = try convertInParallel(input, skip: skip, threads: threads, chunkSize: 4096)
                #expect(actual.difference(from: expected) == nil, "\(text) threads \(threads) skip \(skip): \(actual.difference(from: expected) ?? "")")
            }
        }
    }
}

@Suite("Fast JSON validation")
struct JSONValidatorTests {
    /// Both validators on `bytes`: the fast one must accept exactly what the scanner accepts.
    func agree(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            let fast = JSONValidator.check(raw, maximumDepth: 64).isWellFormed
            let slow = (try? RecordJSON.validate(raw, configuration: .init(maximumDepth: 64))) != nil
            return fast == slow
        }
    }

    @Test("The fast validator accepts exactly what the scanner accepts, on every truncation and byte flip")
    func agreesWithScanner() {
        var generator = RecordGenerator(seed: 77)
        var failures: [String] = []
        for _ in 0..<60 {
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(generator.record(), into: &out)
            let good = out.array
            if !agree(good) { failures.append(String(decoding: good, as: UTF8.self)) }
            for cut in stride(from: 0, to: good.count, by: 7) where !agree(Array(good.prefix(cut))) {
                failures.append("prefix \(cut) of " + String(decoding: good, as: UTF8.self))
            }
            for _ in 0..<40 {
                var bad = good
                let index = generator.random.below(bad.count)
                bad[index] = UInt8(truncatingIfNeeded: generator.random.below(256))
                if !agree(bad) { failures.append(String(decoding: bad, as: UTF8.self)) }
            }
        }
        let cases = [#"{"a":"\u12"}"#, #"{"a":"\uD83D\uDE00"}"#, #"{"a":"\uDE00"}"#, #"{"a":"\q"}"#, "01", "-", "1.", "1e", "1e+5",
                     "[1,]", "{,}", #"{"a" 1}"#, "tru", "nulls", " [ ] ", "\"\u{7F}\"", "\"\t\"", #"{"a":[{"b":[]}]}"#,
                     String(repeating: "[", count: 64) + String(repeating: "]", count: 64),
                     String(repeating: "[", count: 65) + String(repeating: "]", count: 65), "{}x", "\"\\\"", "\"é\""]
        for text in cases where !agree(Array(text.utf8)) { failures.append(text) }
        for bytes in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
                      [0x22, 0xE2, 0x82, 0x22], [0x22, 0xC0, 0xAF, 0x22]] as [[UInt8]] where !agree(bytes) {
            failures.append("\(bytes)")
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test("Pretty-printed text, CRLF, tabs and indentation runs of every length are checked alike")
    func whitespaceRuns() {
        var generator = RecordGenerator(seed: 78)
        var failures: [String] = []
        for indent in 0..<24 {
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(generator.record(), into: &out)
            let pretty = InputForms.pretty(String(decoding: out.bytes, as: UTF8.self), indent: indent)
            for text in [pretty, pretty.replacingOccurrences(of: "\n", with: "\r\n"),
                         pretty.replacingOccurrences(of: "\n  ", with: "\n\t")] {
                let good = Array(text.utf8)
                if !agree(good) { failures.append(text) }
                #expect(good.withUnsafeBytes { JSONValidator.check($0).isWellFormed }, "\(text)")
                for _ in 0..<20 {
                    var bad = good
                    bad[generator.random.below(bad.count)] = [0x0B, 0x0C, 0x00, 0x2C, 0x7D][generator.random.below(5)]
                    if !agree(bad) { failures.append(String(decoding: bad, as: UTF8.self)) }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) disagreements, first: \(failures.first ?? "")")
    }

    @Test("One value followed by whitespace, a comma or a bracket: the same outcome as the value alone, and where it ends")
    func valueInText() {
        var generator = RecordGenerator(seed: 79)
        var values = [#"{"a":"\u12"}"#, #"{"a":"\q"}"#, "01", "-", "1.", "1e", "tru", "nulls", "[1,]", "{,}", "[]", "{}", "17",
                      #""x""#, "null", #"{"records":[]}"#, #"{"recordName":"a","serverErrorCode":"NOT_FOUND"}"#]
        for _ in 0..<20 {
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(generator.record(), into: &out)
            let compact = String(decoding: out.bytes, as: UTF8.self)
            values += [compact, InputForms.pretty(compact, indent: 3), String(compact.dropLast())]
        }
        // Nesting limits count from the value.
        for limit in [1, 2, 8] {
            for levels in [limit, limit + 1] {
                let value = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
                let text = Array(("[" + value + ",1]").utf8)
                let found = text.withUnsafeBytes { JSONValidator.checkValue(in: $0, from: 1, maximumDepth: limit) }
                #expect(found.result.isWellFormed == (levels <= limit), "\(value) within \(limit)")
                #expect(found.result == Array(value.utf8).withUnsafeBytes { JSONValidator.check($0, maximumDepth: limit) })
            }
        }
        for value in values {
            let alone = Array(value.utf8).withUnsafeBytes { JSONValidator.check($0) }
            for (before, after) in [("", ""), ("  \n", ","), ("\t", "\n  ]"), ("", " x"), ("\r\n", "}{\"")] {
                let text = Array((before + value + after).utf8)
                let (found, end) = text.withUnsafeBytes { JSONValidator.checkValue(in: $0, from: 0) }
                #expect(found == alone, "\(before + value + after)")
                if alone.isWellFormed { #expect(end == before.utf8.count + value.utf8.count, "\(before + value + after)") }
            }
        }
    }

    @Test("Top-level records, responses and error entries are told apart")
    func recordObjects() {
        func isRecord(_ text: String) -> Bool {
            Array(text.utf8).withUnsafeBytes { JSONValidator.check($0).isRecordObject }
        }
        #expect(isRecord(#"{"recordName":"a","fields":{"records":{"value":1}}}"#))
        #expect(!isRecord(#"{"records":[]}"#))
        #expect(!isRecord(#"{"zones":[{"zoneID":{"zoneName":"A"},"serverErrorCode":"ZONE_NOT_FOUND"}]}"#))
        #expect(isRecord(#"{"recordName":"a","fields":{"zones":{"value":1}}}"#))
        #expect(!isRecord(#"{"recordName":"a","serverErrorCode":"NOT_FOUND"}"#))
        #expect(!isRecord("[]"))
    }
}
