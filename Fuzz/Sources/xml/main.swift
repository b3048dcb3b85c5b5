// The XML record reader (libxml2, streaming): no crash, under both error policies; records read
// are written with XMLRecordWriter and read back equal.
import FerryIO
import FerryRecords
import FerryXML
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let input = fuzzInput(data, size) else { return 0 }
    let bytes = Array(input)
    _ = readAll(XMLRecordReader(source: MemorySource(bytes, chunkSize: 512), policy: .skip(rejects: MemorySink())))
    guard let records = readAll(XMLRecordReader(source: MemorySource(bytes))), !records.isEmpty else { return 0 }
    let sink = MemorySink()
    do {
        let writer = try XMLRecordWriter(sink: sink)
        for record in records { try writer.write(record) }
        try writer.finish()
    } catch {
        fuzzCheck(false, "records read from XML cannot be written back: \(error)")
    }
    let again = readAll(XMLRecordReader(source: MemorySource(sink.bytes)))
    fuzzCheck(again == records, "records changed in an XML round trip:\n\(records)\n\(again.map { "\($0)" } ?? "error")\n\(sink.text)")
    return 0
}

/// Every record, or `nil` when reading fails.
func readAll(_ reader: XMLRecordReader) -> [Record]? {
    var records: [Record] = []
    do {
        while let record = try reader.next() { records.append(record) }
    } catch {
        return nil
    }
    return records
}

runFuzzer(testOneInput)
