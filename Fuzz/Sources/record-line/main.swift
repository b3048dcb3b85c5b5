// The NDJSON record line decoder: a record decoded from a line re-encodes to JSON that decodes
// to the same record and encodes to the same bytes; the selective decode accepts every line the
// full decode accepts; NDJSONReader gives the same record for the line; converting the input with
// nothing to change (records transcoded) writes exactly the reader's records, encoded, or fails
// where reading fails (``checkPassThrough``).
import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FuzzDriver
import FuzzPassThrough

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let bytes = fuzzInput(data, size) else { return 0 }
    // The reader runs on everything: lines, responses, garbage.
    let reader = NDJSONReader(source: MemorySource(Array(bytes)), policy: .skip(rejects: nil),
                              configuration: .init(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes,
                                                   chunkSize: 4096))
    var read: [Record] = []
    while let record = try? reader.next() { read.append(record) }

    checkPassThrough(bytes)
    guard let record = try? RecordJSON.decodeRecord(bytes) else { return 0 }
    var first = JSONOutput(capacity: 1024)
    RecordJSON.encode(record, into: &first)
    let text = String(decoding: first.bytes, as: UTF8.self)
    let again: Record
    do {
        again = try RecordJSON.decodeRecord(first.bytes)
    } catch {
        fuzzCheck(false, "the encoded record does not decode: \(error)\n\(text)")
        return 0
    }
    fuzzCheck(again == record, "the record changed in a round trip:\n\(record)\n\(again)\n\(text)")
    var second = JSONOutput(capacity: 1024)
    RecordJSON.encode(again, into: &second)
    fuzzCheck(first.array == second.array, "encoding is not stable:\n\(text)\n\(String(decoding: second.bytes, as: UTF8.self))")

    let selection = FieldSelection(fields: Set((record.fields?.entries ?? []).prefix(1).map(\.name)), includesStamps: false)
    fuzzCheck((try? RecordJSON.decodeRecord(bytes, selecting: selection)) != nil,
              "the selective decode rejects a record the full decode accepts")
    if !bytes.contains(UInt8(ascii: "\n")) && !bytes.contains(UInt8(ascii: "\r")) {
        fuzzCheck(read == [record], "NDJSONReader read \(read) from a line that decodes as \(record)")
    }
    return 0
}

runFuzzer(testOneInput)
