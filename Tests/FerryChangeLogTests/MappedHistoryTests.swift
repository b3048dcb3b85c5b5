@testable import FerryChangeLog
import FerryIO
import FerryJSON
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

/// A history file written for a test and removed afterwards.
private final class HistoryFile {
    let path: String

    init(_ bytes: [UInt8]) throws {
        path = NSTemporaryDirectory() + "ferry-mapped-\(UUID().uuidString).ndjson"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Replays the file at `path`, decoding `blockSize` bytes at a time.
private func replayFile(_ path: String, _ configuration: Replayer.Configuration = .init(decodingThreads: 2),
                        blockSize: Int = 4 << 20) throws -> Replayer {
    let replayer = Replayer(configuration: configuration)
    replayer.blockSize = blockSize
    replayer.minimumMappedSize = 0
    try replayer.apply(try InputFile(path: path))
    try replayer.finish()
    return replayer
}

/// Whether any record of the state still points at JSON in a mapped history.
private func pointsIntoMapping(_ state: ReplayState) -> Bool {
    state.storage.zones.contains { zone in zone.table.allBlobs.contains { $0.pointsAtJSON } }
}

@Suite("Histories read in place (mapped)")
struct MappedHistoryTests {
    /// A generated history with what line cutting must get right: a byte order mark, CRLF line
    /// ends, blank lines, and a last line without its newline.
    private static let history: [UInt8] = {
        let generated = HistoryGenerator.generate(seed: 31, configuration: .init(batches: 5, changesPerBatch: 4))
        var text = Array("\u{FEFF}".utf8) + generated.ferryLines
        text += Array(("\r\n   \n" + saved("crlf") + "\r\n\n" + saved("last", tag: "t9")).utf8)
        return text
    }()

    @Test("A mapped history gives the state a read one gives, cut into blocks of every size")
    func everyBlockSize() throws {
        let file = try HistoryFile(Self.history)
        let expected = try contents(replay(Self.history, .init(decodingThreads: 0)).state)
        #expect(expected.count > 10)
        let sizes = Array(1...96) + Array(stride(from: 97, through: Self.history.count + 1, by: 389)) + [Self.history.count]
        for size in sizes {
            let replayer = try replayFile(file.path, blockSize: size)
            #expect(try contents(replayer.state) == expected, "block size \(size)")
            #expect(replayer.state.storage.mappings.count == 1, "block size \(size)")
        }
        // The records' JSON was not copied: the state points into the file's mapping.
        #expect(pointsIntoMapping(try replayFile(file.path).state))
    }

    @Test("Read on the calling thread, a history is copied, not mapped")
    func notMapped() throws {
        let file = try HistoryFile(Self.history)
        let sequential = try replayFile(file.path, .init(decodingThreads: 0))
        #expect(sequential.state.storage.mappings.isEmpty)
        #expect(!pointsIntoMapping(sequential.state))
        #expect(try contents(sequential.state) == contents(replayFile(file.path).state))
    }

    @Test("The state outlives its replayer and the file's name; copies of it hold their own JSON")
    func stateOutlivesReplayer() throws {
        let expected = try contents(replay(Self.history, .init(decodingThreads: 0)).state)
        var state: ReplayState
        do {
            let file = try HistoryFile(Self.history)
            state = try replayFile(file.path).state
        } // the replayer and the file's name are gone; the mapping stays with the state
        #expect(try contents(state) == expected)
        var copy = state
        try copy.apply(ReplayTokens(), source: "test") // a change: the copy gets storage of its own
        #expect(!pointsIntoMapping(copy))
        state = ReplayState()
        #expect(try contents(copy) == expected)
    }

    @Test("With --order, saves pending in a batch survive a copy of the state taken and dropped between two sources")
    func pendingBatchAcrossCopy() throws {
        // The first source ends inside a batch (saves after its last checkpoint).
        let first = try HistoryFile(Array(([saved("a"), checkpoint("T1"), saved("b"), saved("c", parent: "b")].joined(separator: "\n")).utf8))
        let replayer = Replayer(configuration: .init(ordersBatches: true, decodingThreads: 2))
        replayer.minimumMappedSize = 0
        try replayer.apply(try InputFile(path: first.path))
        do {
            let copy = replayer.state // shares the storage: the next change copies it
            try replayer.apply(MemorySource(Array((saved("d") + "\n").utf8)))
            _ = copy
        } // the copy, with the storage that made the pending saves, is gone
        try replayer.finish()
        #expect(try contents(replayer.state) == contents(replay([saved("a"), saved("b"), saved("c", parent: "b"), saved("d")].joined(separator: "\n")).state))
    }

    @Test("A history modified in place after it was mapped fails the state's write, which leaves no output",
          arguments: ["rewritten", "rewritten longer", "touched"])
    func modifiedInPlace(how: String) throws {
        let file = try HistoryFile(Self.history)
        let replayer = try replayFile(file.path)
        #expect(replayer.state.storage.mappings.count == 1)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file.path))
        switch how {
        case "rewritten": // the same size, other bytes, and a later modification time
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: Data(Self.history.map { $0 == UInt8(ascii: "7") ? UInt8(ascii: "8") : $0 }))
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: file.path)
        case "rewritten longer": // as `cp` of a longer file over it does: other bytes, then more
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: Data(Self.history.map { $0 == UInt8(ascii: "7") ? UInt8(ascii: "8") : $0 }))
            try handle.write(contentsOf: Data(("\n" + saved("more")).utf8))
        default:
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: file.path)
        }
        try handle.close()
        let out = file.path + ".state.ndjson"
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect {
            try replayer.state.write(to: NDJSONWriter(sink: try OutputFile(path: out)))
        } throws: { error in
            "\(error)".contains("was modified in place while Ferry read it")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("A failed check leaves an earlier state and its tokens file as they were")
    func failedCheckKeepsEarlierState() throws {
        let file = try HistoryFile(Self.history)
        let out = file.path + ".state.ndjson"
        let sidecar = ReplayTokens.sidecarPath(for: out)
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: sidecar)
        }
        try replayFile(file.path).state.write(toPath: out)
        let earlier = try Data(contentsOf: URL(fileURLWithPath: out))
        let earlierTokens = try Data(contentsOf: URL(fileURLWithPath: sidecar))
        let replayer = try replayFile(file.path)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(7)], ofItemAtPath: file.path)
        #expect(throws: FerryIOError.self) { try replayer.state.write(toPath: out) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == earlier)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sidecar)) == earlierTokens)
        let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
        #expect(!left.contains { $0.hasPrefix("." + (out as NSString).lastPathComponent) }, "a temporary file was left")
    }

    @Test("A history appended to, replaced by renaming, or removed after it was mapped still writes the state it held")
    func appendedOrReplaced() throws {
        let file = try HistoryFile(Self.history)
        let expected = try contents(replay(Self.history, .init(decodingThreads: 0)).state)
        let replayer = try replayFile(file.path)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n" + saved("appended")).utf8))
        try handle.close()
        #expect(try contents(replayer.state) == expected)
        try replayer.state.write(to: NDJSONWriter(sink: try OutputFile(path: file.path + ".appended.ndjson")))
        #expect(FileManager.default.fileExists(atPath: file.path + ".appended.ndjson"))
        try FileManager.default.removeItem(atPath: file.path + ".appended.ndjson")
        let other = try HistoryFile(Array("{\"event\":\"checkpoint\",\"syncToken\":\"x\"}\n".utf8))
        #expect(rename(other.path, file.path) == 0)
        #expect(try contents(replayer.state) == expected)
        let out = file.path + ".state.ndjson"
        defer { try? FileManager.default.removeItem(atPath: out) }
        try replayer.state.write(to: NDJSONWriter(sink: try OutputFile(path: out)))
        #expect(FileManager.default.fileExists(atPath: out))
        try FileManager.default.removeItem(atPath: file.path)
        try replayer.state.write(to: NDJSONWriter(sink: try OutputFile(path: out)))
    }

    @Test("A line over the limit is reported at the same line, mapped or read, at every block size")
    func longLine() throws {
        let lines = [saved("a"), saved("b"), saved("c", fields: #"{"t":{"value":"\#(String(repeating: "x", count: 300))","type":"STRING"}}"#),
                     saved("d")]
        let bytes = Array(lines.joined(separator: "\n").utf8)
        let file = try HistoryFile(bytes)
        var configuration = Replayer.Configuration(decodingThreads: 2)
        configuration.reader.maximumLineBytes = 256
        for size in [1, 7, 100, 255, 256, 257, 400, 1 << 20] {
            let runs: [() throws -> Replayer] = [{ try replayFile(file.path, configuration, blockSize: size) },
                                                 { try replay(bytes, configuration) }]
            for run in runs {
                let error = try #require(throws: ChangeLogError.self) { try run() }
                #expect(error.code == .tooLarge, "block size \(size)")
                #expect(error.line == 3, "block size \(size)")
            }
        }
    }

    @Test("A bad line in a mapped history names its file, line and column, as a read one does")
    func badLine() throws {
        let bytes = Array((saved("a") + "\n" + saved("b") + "\n{\"event\":\"recordSaved\",\"record\":{\"recordName\":12}}\n").utf8)
        let file = try HistoryFile(bytes)
        let mapped = try #require(throws: ChangeLogError.self) { try replayFile(file.path, blockSize: 64) }
        let read = try #require(throws: ChangeLogError.self) { try replay(bytes, .init(decodingThreads: 0), name: file.path) }
        #expect(mapped.line == 3)
        #expect(mapped.description == read.description)
    }

    @Test("An empty history, from memory or a file, replays to an empty state in every decoding mode")
    func emptyHistory() throws {
        let file = try HistoryFile([])
        let blank = try HistoryFile(Array("\n \n".utf8))
        for threads in decodingModes {
            #expect(try replay([], .init(decodingThreads: threads)).state.recordCount == 0)
            #expect(try replayFile(file.path, .init(decodingThreads: threads)).state.recordCount == 0)
            #expect(try replayFile(blank.path, .init(decodingThreads: threads)).state.recordCount == 0)
        }
    }

    /// Pretty-printed `records/changes` pages as CloudKit answers: records saved again on a later
    /// page, one naming no zone, strings with spaces, escapes and non-ASCII text.
    private static func prettyPages(_ names: [String], page: Int) -> String {
        let records = names.enumerated().map { index, name in
            let zone = name.hasPrefix("nozone") ? "" : "\"zoneID\" : \(chats),\n      "
            return """
                {
                  "recordName" : "\(name)",
                  "recordType" : "Item",
                  \(zone)"recordChangeTag" : "p\(page)-\(index)",
                  "fields" : {
                    "text" : { "value" : "page \(page) \\"\(name)\\"  é\\n ✓", "type" : "STRING" },
                    "tags" : { "value" : [ "a b", "c" ], "type" : "STRING_LIST" },
                    "count" : { "value" : \(page * 10 + index), "type" : "INT64" }
                  }
                }
            """
        }
        return """
        {
          "records" : [
        \(records.joined(separator: ",\n"))
          ],
          "syncToken" : "P\(page)"
        }

        """
    }

    /// The state written as NDJSON.
    private static func written(_ state: ReplayState) throws -> [UInt8] {
        let out = TestScratch.directory() + "/state.ndjson"
        try state.write(to: NDJSONWriter(sink: try OutputFile(path: out)))
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    @Test("Past the mapped-file budget, responses are read and their records copied; the state is the same")
    func mappedFileBudget() throws {
        let pages = (1...5).map { page in Self.prettyPages(["a\(page % 2)", "b\(page)", "nozone\(page)"], page: page) }
        let files = try pages.map { try HistoryFile(Array($0.utf8)) }
        let replayer = Replayer(configuration: .init(decodingThreads: 2))
        replayer.minimumMappedSize = 0
        replayer.maximumMappedFiles = 2
        var next = files.makeIterator()
        try replayer.apply(sources: { try next.next().map { try InputFile(path: $0.path) } })
        try replayer.finish()
        #expect(replayer.state.storage.mappings.count == 2)
        let read = try replay(Array(pages.joined().utf8), .init(decodingThreads: 2))
        #expect(try Self.written(replayer.state) == Self.written(read.state))
    }

    @Test("Pretty-printed responses in a mapped file keep pointing at it, and are written compact, as from memory")
    func prettyPrinted() throws {
        let text = Self.prettyPages(["a", "b", "nozone1"], page: 1) + Self.prettyPages(["b", "c", "nozone2"], page: 2)
        let file = try HistoryFile(Array(text.utf8))
        for threads in [2, 1] {
            let mapped = try replayFile(file.path, .init(decodingThreads: threads))
            let read = try replay(Array(text.utf8), .init(decodingThreads: threads))
            #expect(mapped.state.recordCount == 5)
            #expect(mapped.tokens.zones.first?.syncToken == "P2")
            #expect(!mapped.state.storage.mappings.isEmpty)
            #expect(pointsIntoMapping(mapped.state), "records keep pointing at the pretty-printed text")
            #expect(try contents(mapped.state) == contents(read.state))
            let lines = try Self.written(mapped.state)
            #expect(lines == (try Self.written(read.state)))
            #expect(!lines.contains(UInt8(ascii: "\r")) && !String(decoding: lines, as: UTF8.self).contains(": "), "compact lines")

            // On from the mapped state, with more pretty pages: the records it keeps are copied
            // into the new state (compacted) and written compact.
            let more = try HistoryFile(Array(Self.prettyPages(["a", "d"], page: 3).utf8))
            let next = Replayer(configuration: .init(decodingThreads: threads), base: mapped.state)
            next.minimumMappedSize = 0
            try next.apply(try InputFile(path: more.path))
            try next.finish()
            let fromMemory = try replay(Array(Self.prettyPages(["a", "d"], page: 3).utf8), .init(decodingThreads: threads), base: read.state)
            #expect(try Self.written(next.state) == Self.written(fromMemory.state))
            #expect(try Self.written(mapped.state) == lines, "the base state is as it was")
        }
    }
}
