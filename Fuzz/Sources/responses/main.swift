// Saved CloudKit Web Services responses (records/query, lookup, modify, changes, changes/zone,
// zones shapes) and per-record error entries: the document decoder and NDJSONReader, which reads
// pretty-printed documents whole. Checks: no crash; a decoded response's records encode to JSON
// that decodes to the same records; converting it with nothing to change (records transcoded)
// writes exactly the reader's records, encoded, or fails where reading fails (``checkPassThrough``).
import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FuzzDriver
import FuzzPassThrough

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let bytes = fuzzInput(data, size) else { return 0 }
    for policy in [RecordErrorPolicy.fail, .skip(rejects: MemorySink())] {
        let reader = NDJSONReader(source: MemorySource(Array(bytes), chunkSize: 4096), policy: policy,
                                  configuration: .init(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes,
                                                       chunkSize: 4096))
        while true {
            guard let record = try? reader.next() else { break }
            var out = JSONOutput(capacity: 1024)
            RecordJSON.encode(record, into: &out)
            let again = try? RecordJSON.decodeRecord(out.bytes)
            fuzzCheck(again == record, "a record read from a response changed in a round trip:\n\(record)\n"
                      + String(decoding: out.bytes, as: UTF8.self))
        }
    }
    checkPassThrough(bytes)
    guard let document = try? RecordJSON.decodeDocument(bytes) else { return 0 }
    switch document {
    case .record, .recordError, .zones: break
    case .response(let response): _ = response.entries.count
    }
    return 0
}

runFuzzer(testOneInput)
