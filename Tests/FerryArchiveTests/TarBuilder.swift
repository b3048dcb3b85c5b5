import Testing
@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryJSON
import FerryRecords
import FerryTestSupport

/// Builds tar streams in memory with Ferry's own `TarWriter` (regular files) and raw headers for
/// directories, links, devices and FIFOs.
enum TarBuilder {
    enum Entry {
        case file(String, [UInt8])
        case directory(String)
        /// A header of another type (`TarHeader.TypeFlag`), no data.
        case special(String, typeFlag: UInt8)
    }

    /// The tar stream of `entries`, ended by the two zero blocks.
    static func tar(_ entries: [Entry]) throws -> [UInt8] {
        let sink = MemorySink()
        let writer = TarWriter(sink: sink, modificationTime: 1_715_000_000)
        for entry in entries {
            switch entry {
            case .file(let name, let bytes):
                try writer.addMember(name: name, bytes: bytes)
            case .directory(let name):
                try sink.write(TarHeader.encode(name: name, size: 0, modificationTime: 0, typeFlag: TarHeader.TypeFlag.directory))
            case .special(let name, let typeFlag):
                try sink.write(TarHeader.encode(name: name, size: 0, modificationTime: 0, typeFlag: typeFlag))
            }
        }
        try writer.finish()
        return sink.bytes
    }

    /// `bytes` compressed with gzip.
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let memory = MemorySink()
        let sink = try GzipSink(wrapping: memory, configuration: .init(level: 6, threads: 1))
        try sink.write(bytes)
        try sink.commit()
        return memory.bytes
    }

    /// The `.tar.gz` of `entries`.
    static func tarGzip(_ entries: [Entry]) throws -> [UInt8] { try gzip(tar(entries)) }
}

/// Record files in every form a hand-made archive holds, and the records each holds when read
/// directly (not through an archive).
enum RecordFiles {
    enum Form: CaseIterable {
        case ndjson, jsonl, gzipped, prettyResponse, compactResponse
    }

    /// `records` as a file of `form`: its name's extension and its bytes.
    static func file(_ records: [Record], form: Form) throws -> (suffix: String, bytes: [UInt8]) {
        let lines = records.map { RecordJSON.encodedString($0) + "\n" }.joined()
        switch form {
        case .ndjson: return (".ndjson", Array(lines.utf8))
        case .jsonl: return (".jsonl", Array(lines.utf8))
        case .gzipped: return (".ndjson.gz", try TarBuilder.gzip(Array(lines.utf8)))
        case .prettyResponse, .compactResponse:
            let compact = "{\"records\":[" + records.map { RecordJSON.encodedString($0) }.joined(separator: ",") + "]}"
            if form == .compactResponse { return (".json", Array(compact.utf8)) }
            return (".json", PrettyJSON.bytes(try JSONValue(parsing: compact)))
        }
    }

    /// The records of a file's bytes, read directly with the NDJSON reader (gzip detected).
    static func read(_ bytes: [UInt8], name: String = "<file>") throws -> [Record] {
        let reader = NDJSONReader(source: try Compression.openInput(MemorySource(bytes, name: name)))
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }
}

/// Every record an archive's reader returns, in order.
func readRecords(_ reader: ArchiveReader) throws -> [Record] {
    try readArchive(reader).map(\.record)
}

/// The error `body` throws, as an ``ArchiveError`` (an issue is recorded for anything else).
func archiveError(_ body: () throws -> Void) -> ArchiveError? {
    do {
        try body()
        return nil
    } catch let error as ArchiveError {
        return error
    } catch {
        Issue.record("expected an ArchiveError, found \(error)")
        return nil
    }
}
