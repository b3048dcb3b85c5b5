// Archives (tar, gzip or not, with or without a manifest) read as `ferry convert` reads them:
// detected by content, then every record read with ArchiveRecordReader (member checks, manifest
// checks, limits). No crash on any input.
import FerryArchive
import FerryCompression
import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FuzzDriver

let gzip = GzipSource.Configuration(maximumOutputBytes: 4 << 20, maximumRatio: 1000, ratioGraceBytes: 1 << 16)
let configuration = ArchiveReader.Configuration(
    gzip: gzip, maximumMemberBytes: 1 << 20, maximumTotalBytes: 4 << 20, maximumMembers: 256,
    maximumManifestBytes: 1 << 20, maximumMetadataBytes: 1 << 16,
    records: NDJSONReader.Configuration(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes))

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let input = fuzzInput(data, size) else { return 0 }
    let bytes = Array(input)
    guard let opened = try? ArchiveDetection.openInput(MemorySource(bytes, chunkSize: 1000), configuration: gzip) else { return 0 }
    // Non-archives go to the NDJSON and XML readers in `convert`; the archive reader is still
    // given them here, as a source that merely claims to be one.
    for policy in [RecordErrorPolicy.fail, .skip(rejects: MemorySink())] {
        let source: any ByteSource = policy.skips ? MemorySource(bytes, chunkSize: 777) : opened.source
        guard let archive = try? ArchiveReader(source: source, configuration: configuration, policy: policy) else { continue }
        let reader = ArchiveRecordReader(archive)
        var count = 0
        while count < 100_000, let record = try? reader.next() {
            _ = record
            count += 1
        }
    }
    return 0
}

runFuzzer(testOneInput)
