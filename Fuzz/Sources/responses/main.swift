// Saved CloudKit Web Services responses (records/query, lookup, modify, changes, changes/zone,
// zones shapes) and per-record error entries: the document decoder and NDJSONReader, which reads
// pretty-printed documents whole. Checks: no crash; a decoded response's records encode to JSON
// that decodes to the same records; a response the transcoder takes gives exactly the lines the
// reader's records encode to.
import FerryIO
import FerryNDJSON
import FerryPipeline
import FerryRecords
import FuzzDriver

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
    var transcoded = JSONOutput(capacity: 4096)
    var ends: [Int] = []
    var scratch = TranscodingScratch()
    if let end = RecordJSON.transcodeResponse(in: bytes, at: 0, into: &transcoded, recordEnds: &ends, scratch: &scratch, configuration: .init()),
       bytes[end...].allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
        let reader = NDJSONReader(source: MemorySource(Array(bytes)), policy: .fail,
                                  configuration: .init(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes))
        var expected = JSONOutput(capacity: 4096)
        do {
            while let record = try reader.next() {
                RecordJSON.encode(record, into: &expected)
                expected.append(0x0A)
            }
            fuzzCheck(expected.array == transcoded.array, "transcoded\n\(String(decoding: transcoded.bytes, as: UTF8.self))\n"
                      + "read and encoded\n\(String(decoding: expected.bytes, as: UTF8.self))")
        } catch {
            fuzzCheck(false, "the transcoder took a response the reader rejects: \(error)")
        }
    }
    guard let document = try? RecordJSON.decodeDocument(bytes) else { return 0 }
    switch document {
    case .record, .recordError, .zones: break
    case .response(let response): _ = response.entries.count
    }
    return 0
}

runFuzzer(testOneInput)
