import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FerryTestSupport
@testable import FerryXML
import Foundation
import Testing

/// Ferry's XML for `records`.
func xmlBytes(_ records: [Record]) throws -> [UInt8] {
    let sink = MemorySink()
    let writer = try XMLRecordWriter(sink: sink)
    for record in records { try writer.write(record) }
    try writer.finish()
    return sink.bytes
}

/// Every record `bytes` holds, read `chunkSize` bytes at a time.
func readXML(_ bytes: [UInt8], chunkSize: Int = .max, policy: RecordErrorPolicy = .fail,
             configuration: XMLRecordReader.Configuration = .init(), name: String = "test.xml") throws -> [Record] {
    let reader = XMLRecordReader(source: MemorySource(bytes, name: name, chunkSize: chunkSize), policy: policy,
                                 configuration: configuration)
    var records: [Record] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

func readXML(_ text: String, chunkSize: Int = .max, policy: RecordErrorPolicy = .fail,
             configuration: XMLRecordReader.Configuration = .init()) throws -> [Record] {
    try readXML(Array(text.utf8), chunkSize: chunkSize, policy: policy, configuration: configuration)
}

/// The XMLFormatError reading `bytes` throws (fails the test when it throws none or another kind).
func xmlError(_ bytes: [UInt8], chunkSize: Int = .max, configuration: XMLRecordReader.Configuration = .init(),
              sourceLocation: SourceLocation = #_sourceLocation) -> XMLFormatError? {
    do {
        _ = try readXML(bytes, chunkSize: chunkSize, configuration: configuration)
        Issue.record("expected an XMLFormatError, read the document", sourceLocation: sourceLocation)
    } catch let error as XMLFormatError {
        return error
    } catch {
        Issue.record("expected an XMLFormatError, found \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

func xmlError(_ text: String, chunkSize: Int = .max, configuration: XMLRecordReader.Configuration = .init(),
              sourceLocation: SourceLocation = #_sourceLocation) -> XMLFormatError? {
    xmlError(Array(text.utf8), chunkSize: chunkSize, configuration: configuration, sourceLocation: sourceLocation)
}

/// Canonical NDJSON for records (distinguishes -0.0 from 0.0, keeps number texts).
func ndjson(_ records: [Record]) -> [UInt8] {
    var out = JSONOutput(capacity: 1 << 16)
    for record in records {
        RecordJSON.encode(record, into: &out)
        out.append(0x0A)
    }
    return out.array
}

/// Records from NDJSON bytes (server-error entries and other rejects skipped).
func ndjsonRecords(_ bytes: [UInt8]) throws -> [Record] {
    let reader = NDJSONReader(source: MemorySource(bytes), policy: .skip(rejects: nil))
    var records: [Record] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

/// A document with the root element around `body`.
func document(_ body: String) -> String {
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">\n\(body)\n</records>\n"
}

/// The repository root (beside Samples/).
func repositoryRoot() -> String {
    String(samplesDirectory().dropLast("/Samples".count))
}

func scratchFile(_ name: String) -> String {
    TestScratch.directory() + "/" + name
}

/// Runs `xmllint` (libxml2-utils); a missing xmllint is a failure, never a skip.
func xmllint(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let path = "/usr/bin/xmllint"
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw XMLFormatError(.library, "xmllint is not installed at \(path) (apt-get install libxml2-utils); these tests need it")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

/// A source that produces `prefix`, then `filler` repeated until `fillerBytes` bytes, then
/// `suffix`, without ever holding more than one chunk: hostile inputs of any size.
final class GeneratedSource: ByteSource {
    let name = "generated.xml"
    private let prefix: [UInt8]
    private let filler: [UInt8]
    private let suffix: [UInt8]
    private let fillerBytes: Int
    /// Bytes handed out so far.
    private(set) var served = 0

    init(prefix: String, filler: String, fillerBytes: Int, suffix: String) {
        self.prefix = Array(prefix.utf8)
        // Whole periods of the filler, about 64 KB of them, so runs are copied in bulk.
        let period = Array(filler.utf8)
        self.filler = Array([[UInt8]](repeating: period, count: max(1, 65_536 / period.count)).joined())
        self.suffix = Array(suffix.utf8)
        self.fillerBytes = fillerBytes
    }

    var totalBytes: Int { prefix.count + fillerBytes + suffix.count }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var n = 0
        while n < buffer.count && served < totalBytes {
            // Copy a run of the part `served` is in: prefix, filler (one period at a time) or suffix.
            let (part, index, limit): ([UInt8], Int, Int)
            if served < prefix.count {
                (part, index, limit) = (prefix, served, prefix.count - served)
            } else if served < prefix.count + fillerBytes {
                let into = served - prefix.count
                (part, index, limit) = (filler, into % filler.count, min(filler.count - into % filler.count, fillerBytes - into))
            } else {
                let into = served - prefix.count - fillerBytes
                (part, index, limit) = (suffix, into, suffix.count - into)
            }
            let run = min(limit, buffer.count - n)
            part.withUnsafeBytes { bytes in
                (buffer.baseAddress! + n).copyMemory(from: bytes.baseAddress! + index, byteCount: run)
            }
            n += run
            served += run
        }
        return n
    }
}
