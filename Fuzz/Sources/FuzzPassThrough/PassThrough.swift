import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FuzzDriver

/// Converts `bytes` to NDJSON as `ferry convert` does with nothing to change in the records (the
/// workers transcode what the transcoder takes) and reads them with ``NDJSONReader`` (which
/// decodes every record), both failing at the first bad input: both must fail, or the
/// conversion must write exactly the reader's records, encoded.
public func checkPassThrough(_ bytes: UnsafeRawBufferPointer) {
    let sink = MemorySink()
    let pipeline = RecordPipeline(writer: NDJSONWriter(sink: sink), policy: .fail, threads: 1)
    var given: (any ByteSource)? = MemorySource(Array(bytes))
    let source = JSONRecordSource(name: "<memory>", inputs: {
        defer { given = nil }
        return given
    }, configuration: .init(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes))
    let converted = (try? { try pipeline.read(source); return try pipeline.finish() }()) != nil

    let reader = NDJSONReader(source: MemorySource(Array(bytes)), policy: .fail,
                              configuration: .init(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes))
    var expected = JSONOutput(capacity: 4096)
    var read = true
    do {
        while let record = try reader.next() {
            RecordJSON.encode(record, into: &expected)
            expected.append(0x0A)
        }
    } catch {
        read = false
    }
    fuzzCheck(converted == read, "the conversion \(converted ? "succeeded" : "failed") where reading \(read ? "succeeded" : "failed")")
    if converted && read {
        fuzzCheck(sink.bytes == expected.array, "the conversion wrote\n\(String(decoding: sink.bytes, as: UTF8.self))\n"
                  + "where the records read encode to\n\(String(decoding: expected.bytes, as: UTF8.self))")
    }
}
