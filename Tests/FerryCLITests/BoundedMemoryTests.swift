@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryTestSupport
import Foundation
import Testing

/// Every reader, fed hostile input far larger than memory on standard input as it is made
/// (never written out, never held; ``FedRun``), is refused at a limit or streams it, while the
/// `ferry` process's own peak RSS is sampled (``SpawnedProcess``, Linux `VmHWM`; elsewhere only
/// the limits are checked). Scripts/sanitize leaves this suite out of its AddressSanitizer run:
/// the sanitizer's shadow memory is not what it measures.
///
/// The ceilings, from the limits the readers promise (Docs/RecordJSON.md, Docs/XMLFormat.md,
/// Docs/Compression.md, Docs/ArchiveLayout.md):
/// - a `ferry` process starts at about 25 MiB (`convert` and `replay`, with two worker threads
///   as here, run at about 40 MiB; each more thread adds its buffers);
/// - what streams (records, gzip, tar members, XML) stays under 96 MiB, its start plus about
///   64 MiB of buffers;
/// - a JSON reader holds one line whole, or one multi-line document read from a stream (a pipe,
///   a gzip stream, an archive member), up to `--max-line-bytes` (64 MiB), once: its buffer
///   grows straight to the limit rather than doubling past it, so the process stays under
///   64 MiB + 64 MiB = 128 MiB;
/// - XML holds at most one record (64 MiB) and refuses a text node over 10,000,000 bytes and
///   elements nested over 32 deep as the bytes arrive.
///
/// A refusal must come early: well before the hostile input ends, with exit 1, a message naming
/// the input and what was expected, and no output file.
@Suite("Every reader refuses or streams hostile input in bounded memory")
struct BoundedMemoryTests {
    static let gibibyte = 1 << 30
    static let tenGiB = 10 << 30
    /// `--max-line-bytes` by default: the longest line, and the largest document read from a stream.
    static let lineLimit = 64 << 20
    /// Peak RSS of a reader that streams, in KiB.
    static let streamingCeilingKiB = 96 << 10
    /// Peak RSS of a JSON reader holding a line or document up to ``lineLimit``, in KiB.
    static let heldCeilingKiB = (64 << 10) + (lineLimit >> 10)

    /// What a case should come to.
    enum Outcome: Sendable {
        /// Exit 1 having taken less than `within` bytes, with every one of `message` on stderr.
        case refused(_ message: [String], within: Int)
        /// Exit 0 having taken all its input.
        case streamed
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let reader: String
        let shape: String
        /// `ferry`'s arguments; `OUT` is replaced by a folder of the test's own.
        let arguments: [String]
        let input: [Stretch]
        let outcome: Outcome
        let ceilingKiB: Int
        var testDescription: String { "\(reader): \(shape)" }
    }

    static let recordsXML = "<records xmlns=\"https://ferry.dev/ns/records/1\" version=\"1\">\n"
    static let prettyQuery = "{\n  \"records\": [\n    {\n      \"recordName\": \"x\",\n      \"fields\": {\"s\": {\"value\": \""
    static let prettyZoneChanges = "{\n  \"zones\": [\n    {\n      \"zoneID\": {\"zoneName\": \"Z\"},\n      \"records\": [\n"
        + "        {\"recordName\": \"x\", \"fields\": {\"s\": {\"value\": \""
    static let recordLine = "{\"recordName\":\"r\",\"recordType\":\"Note\",\"fields\":{\"title\":{\"value\":\"a note of some length\",\"type\":\"STRING\"},\"n\":{\"value\":42,\"type\":\"INT64\"}}}\n"
    static let saveLine = "{\"event\":\"recordSaved\",\"zoneID\":{\"zoneName\":\"Z\"},\"record\":{\"recordName\":\"r\",\"recordType\":\"Note\",\"fields\":{\"n\":{\"value\":42,\"type\":\"INT64\"}}}}\n"

    static let recordElement = "<record recordName=\"x\"><fields><int64 name=\"n\">42</int64></fields></record>\n"

    static let lineTooLong = ["-:1:1", "expected a line of at most \(lineLimit) bytes"]
    static let documentTooLarge = ["-:1:1", "expected a multi-line JSON document of at most \(lineLimit) bytes"]
    static let tooDeep = ["-:1:513: ", "nesting deeper than 512 levels"]
    /// How much of a hostile input a refusal at the line limit may take: a few times the limit.
    static let early = 256 << 20

    static let cases: [Case] = {
        let convert = ["convert", "-", "OUT/out.ndjson", "--from", "ndjson", "--threads", "2"]
        let replay = ["replay", "-", "--out", "OUT/state.ndjson", "--threads", "2"]
        let xml = ["convert", "-", "OUT/out.ndjson"]
        let nested: [Stretch] = [Stretch(repeating: "[", count: 10_000_000), Stretch(repeating: "]", count: 10_000_000), .once("\n")]
        return [
            // NDJSON record lines.
            Case(reader: "NDJSON", shape: "a 1 GiB JSON string", arguments: convert,
                 input: [.once("{\"recordName\":\"x\",\"fields\":{\"s\":{\"value\":\""), Stretch(repeating: "A", count: gibibyte)],
                 outcome: .refused(lineTooLong, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "NDJSON", shape: "a 1 GiB line of whitespace", arguments: convert,
                 input: [Stretch(repeating: " ", count: gibibyte)],
                 outcome: .refused(lineTooLong, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "NDJSON", shape: "10 million nested arrays", arguments: convert, input: nested,
                 outcome: .refused(tooDeep, within: 32 << 20), ceilingKiB: heldCeilingKiB),
            Case(reader: "NDJSON", shape: "32 MiB of record lines", arguments: ["convert", "-", "-", "--from", "ndjson", "--threads", "2", "--quiet"],
                 input: [Stretch(repeating: recordLine, count: 32 << 20 - (32 << 20) % recordLine.utf8.count)],
                 outcome: .streamed, ceilingKiB: streamingCeilingKiB),
            // Saved responses, pretty-printed: documents, read whole.
            Case(reader: "saved response", shape: "a 1 GiB JSON string", arguments: convert,
                 input: [.once(prettyQuery), Stretch(repeating: "A", count: gibibyte)],
                 outcome: .refused(documentTooLarge, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "saved response", shape: "a 1 GiB line of whitespace", arguments: convert,
                 input: [.once("{\n"), Stretch(repeating: " ", count: gibibyte)],
                 outcome: .refused(documentTooLarge, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "saved response", shape: "1 GiB of records", arguments: convert,
                 input: [.once("{\n  \"records\": [\n"), Stretch(repeating: "    " + String(recordLine.dropLast()) + ",\n", count: gibibyte)],
                 outcome: .refused(documentTooLarge, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "saved response", shape: "10 million nested arrays", arguments: convert,
                 input: [.once("{\n  \"records\": ")] + nested + [.once("}\n")],
                 outcome: .refused(["-:2:525: ", "nesting deeper than 512 levels"], within: 32 << 20), ceilingKiB: heldCeilingKiB),
            // Change logs and saved change responses, replayed.
            Case(reader: "history", shape: "a 1 GiB JSON string", arguments: replay,
                 input: [.once("{\"event\":\"recordSaved\",\"record\":{\"recordName\":\"x\",\"fields\":{\"s\":{\"value\":\""),
                         Stretch(repeating: "A", count: gibibyte)],
                 outcome: .refused(lineTooLong, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "history", shape: "a 1 GiB line of whitespace", arguments: replay,
                 input: [Stretch(repeating: " ", count: gibibyte)],
                 outcome: .refused(lineTooLong, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "history", shape: "10 million nested arrays", arguments: replay, input: nested,
                 outcome: .refused(tooDeep, within: 32 << 20), ceilingKiB: heldCeilingKiB),
            Case(reader: "history", shape: "a 1 GiB JSON string in a pretty-printed changes/zone response", arguments: replay,
                 input: [.once(prettyZoneChanges), Stretch(repeating: "A", count: gibibyte)],
                 outcome: .refused(documentTooLarge, within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "history", shape: "16 MiB of saves", arguments: ["replay", "-", "--out", "-", "--threads", "2", "--quiet"],
                 input: [Stretch(repeating: saveLine, count: 16 << 20 - (16 << 20) % saveLine.utf8.count)],
                 outcome: .streamed, ceilingKiB: streamingCeilingKiB),
            // gzip around JSON: the decompressed stream is held to the same limits.
            Case(reader: "gzip", shape: "a 10 GiB JSON string", arguments: ["convert", "-", "OUT/out.ndjson", "--threads", "2"],
                 input: [.once(gzip(Array("{\"recordName\":\"x\",\"fields\":{\"s\":{\"value\":\"".utf8))), tenGiBOfLetters],
                 outcome: .refused(["- (gzip):1:1", "expected a line of at most \(lineLimit) bytes"], within: early), ceilingKiB: heldCeilingKiB),
            Case(reader: "gzip", shape: "a 10 GiB JSON string in a pretty-printed response", arguments: ["convert", "-", "OUT/out.ndjson", "--threads", "2"],
                 input: [.once(gzip(Array(prettyQuery.utf8))), tenGiBOfLetters],
                 outcome: .refused(["- (gzip):1:1", "expected a multi-line JSON document of at most \(lineLimit) bytes"], within: early),
                 ceilingKiB: heldCeilingKiB),
            // XML.
            Case(reader: "XML", shape: "a 1 GiB text node", arguments: xml,
                 input: [.once(recordsXML + "<record recordName=\"x\"><fields><string name=\"s\">"), Stretch(repeating: "A", count: gibibyte)],
                 outcome: .refused(["-:2:", "expected text of at most 10000000 bytes"], within: early), ceilingKiB: streamingCeilingKiB),
            Case(reader: "XML", shape: "a 1 GiB line of whitespace", arguments: xml,
                 input: [.once(recordsXML), Stretch(repeating: " ", count: gibibyte)],
                 outcome: .refused(["-:2:", "expected text of at most 10000000 bytes"], within: early), ceilingKiB: streamingCeilingKiB),
            Case(reader: "XML", shape: "10 million nested elements", arguments: xml,
                 input: [.once(recordsXML), Stretch(repeating: "<a>", count: 30_000_000)],
                 outcome: .refused(["-:2:", "expected nesting of at most 32 levels"], within: 1 << 20), ceilingKiB: streamingCeilingKiB),
            Case(reader: "XML", shape: "32 MiB of records", arguments: ["convert", "-", "-", "--quiet"],
                 input: [.once(recordsXML), Stretch(repeating: recordElement, count: 32 << 20 - (32 << 20) % recordElement.utf8.count), .once("</records>\n")],
                 outcome: .streamed, ceilingKiB: streamingCeilingKiB),
        ]
    }()

    @Test("Each reader refuses or streams hostile input on standard input in bounded memory", arguments: cases)
    func hostileInput(_ c: Case) throws {
        let dir = scratchDirectory()
        let arguments = c.arguments.map { $0.replacingOccurrences(of: "OUT", with: dir) }
        let run = try FedRun(arguments, input: c.input)
        let total = c.input.reduce(0) { $0 + $1.count }
        switch c.outcome {
        case .refused(let message, let within):
            #expect(run.status == 1, "\(run.error)")
            for part in message { #expect(run.error.contains(part), "\(run.error)") }
            #expect(run.error.hasPrefix("ferry: ") && run.error.split(separator: "\n").count == 1, "\(run.error)")
            #expect(run.sent < within, "ferry took \(run.sent) of \(total) bytes")
        case .streamed:
            #expect(run.status == 0, "\(run.error)")
            #expect(run.sent == total)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        #expect(peak < c.ceilingKiB, "peak RSS \(peak >> 10) MiB, ceiling \(c.ceilingKiB >> 10) MiB")
        #endif
    }

    // MARK: gzip and tar

    /// One gzip member holding `bytes` `times` over; gzip members concatenated are one stream.
    static func gzip(_ bytes: [UInt8], times: Int = 1) -> [UInt8] {
        let memory = MemorySink()
        do {
            let sink = try GzipSink(wrapping: memory, configuration: .init(level: 9, threads: 1, blockSize: 64 << 20, engine: .zlib))
            for _ in 0..<times { try sink.write(bytes) }
            try sink.commit()
        } catch {
            return []
        }
        return memory.bytes
    }

    /// One gzip member of 64 MiB of zeros (about 64 KiB); repeated, any multiple of 64 MiB.
    static let zerosMember = gzip([UInt8](repeating: 0, count: 1 << 20), times: 64)

    /// 10 GiB of lowercase letters, no newline, as a gzip stream: one member of 1 MiB of
    /// pseudo-random letters (about 600 KiB, far under the ratio limit), repeated.
    static let tenGiBOfLetters: Stretch = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let letters = (0..<(1 << 20)).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(ascii: "a") + UInt8(state % 26)
        }
        let member = gzip(letters)
        return Stretch(repeating: member, count: member.count * (tenGiB >> 20))
    }()

    /// 10 GiB of zeros as a gzip stream: one member of 64 MiB of zeros, repeated.
    static var tenGiBOfZeros: Stretch { Stretch(repeating: zerosMember, count: zerosMember.count * (tenGiB >> 26)) }

    /// The tar headers of a member `name` declaring `size` bytes (a pax `size` record, as every
    /// member over 8 GiB has).
    static func header(name: String, size: Int) throws -> [UInt8] {
        let sink = MemorySink()
        try TarWriter(sink: sink, modificationTime: 0).beginMember(name: name, size: size)
        return sink.bytes
    }

    @Test("ferry convert stops 10 GiB of gzip-compressed zeros on stdin at the default ratio limit, in bounded memory")
    func convertStopsAGzipBomb() throws {
        let dir = scratchDirectory()
        let run = try FedRun(["convert", "-", dir + "/out.ndjson"], input: [Self.tenGiBOfZeros])
        #expect(run.status == 1)
        #expect(run.error.contains("maximumRatio"), "\(run.error)")
        #expect(run.sent < 4 << 20)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        #expect(peak < Self.streamingCeilingKiB, "peak RSS \(peak >> 10) MiB")
        #endif
    }

    @Test("ferry verify --max-bytes stops 10 GiB of gzip-compressed zeros on stdin at the limit, in bounded memory")
    func verifyStopsAtMaxBytes() throws {
        let zeros = Self.tenGiBOfZeros
        let run = try FedRun(["verify", "--max-bytes", "512M", "--max-ratio", "0", "-"], input: [zeros])
        #expect(run.status == 1)
        #expect(run.error.contains("decompression failed") && run.error.contains("maximumOutputBytes"), "\(run.error)")
        #expect(run.sent < zeros.count / 8, "ferry took \(run.sent) of \(zeros.count) compressed bytes")
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        #expect(peak < Self.streamingCeilingKiB, "peak RSS \(peak >> 10) MiB")
        #endif
    }

    @Test("ferry convert refuses a tar member declaring 10 GiB of one endless line at the line limit, in bounded memory")
    func convertStopsAnEndlessLineInATarMember() throws {
        let dir = scratchDirectory()
        let header = try Self.header(name: "exports/huge.ndjson", size: Self.tenGiB)
        let run = try FedRun(["convert", "-", dir + "/out.ndjson"],
                             input: [.once(header), Stretch(repeating: "{\"recordName\":", count: Self.tenGiB)])
        #expect(run.status == 1)
        #expect(run.error.contains("member exports/huge.ndjson") && run.error.contains("invalid record"), "\(run.error)")
        #expect(run.sent < Self.early, "ferry took \(run.sent) bytes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        #expect(peak < Self.heldCeilingKiB, "peak RSS \(peak >> 10) MiB")
        #endif
    }

    /// Every byte of a member goes through SHA-256, about 8 MB/s in a debug build: 32 MiB take
    /// about 4 s of CPU.
    @Test("ferry extract streams a tar member declaring 10 GiB through in pieces: memory does not grow with it")
    func extractStreamsAHugeMember() throws {
        let dir = scratchDirectory()
        let header = try Self.header(name: "assets/huge", size: Self.tenGiB)
        let streamed = 32 << 20
        let run = try FedRun(["extract", "-", dir + "/out"],
                             input: [.once(header), Stretch(repeating: [7], count: streamed)], baselineAfter: 2 << 20)
        #expect(run.status == 1)
        #expect(run.error.contains("member assets/huge") && run.error.contains("truncated"), "\(run.error)")
        #expect(run.sent == header.count + streamed)
        let leftovers = (try? FileManager.default.subpathsOfDirectory(atPath: dir + "/out")) ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        let baseline = try #require(run.baselineKiB)
        #expect(peak < Self.streamingCeilingKiB, "peak RSS \(peak >> 10) MiB")
        #expect(peak - baseline < streamed >> 11, "peak RSS grew \((peak - baseline) >> 10) MiB while 30 MiB streamed")
        #endif
    }
}
