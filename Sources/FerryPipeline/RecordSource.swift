import FerryRecords

/// Where a pipeline's records come from: NDJSON and saved responses (files, folders, stdin,
/// gzip), XML, an archive, a store.
///
/// A source reads its records, applies the pipeline's ``RecordPipeline/transform`` — where it is
/// cheapest, with the result of ``RecordTransform/apply(_:)`` — and hands what it keeps to
/// ``RecordPipeline/take(_:database:)`` in order, until the pipeline wants no more. A source that
/// encodes NDJSON itself (on worker threads) may hand over encoded lines instead, when the
/// pipeline offers ``RecordPipeline/takesEncodedLines``. It reports what it read with
/// ``RecordPipeline/countInput(records:rejected:bytes:)``.
public protocol RecordSource: AnyObject {
    /// The input's name, for messages.
    var name: String { get }
    /// Reads the records into `pipeline`.
    func run(into pipeline: RecordPipeline) throws
}

/// A ``RecordReader`` as a source: records read one at a time on the calling thread.
public final class ReaderSource: RecordSource {
    /// The reader.
    public let reader: any RecordReader
    /// The database of the record read last, for readers that know it (archives).
    private let database: (() -> String?)?

    /// A source reading `reader`; `database` says which database the record read last came from.
    public init(_ reader: any RecordReader, database: (() -> String?)? = nil) {
        self.reader = reader
        self.database = database
    }

    public var name: String { reader.sourceName }

    public func run(into pipeline: RecordPipeline) throws {
        reader.onReject = pipeline.onReject
        var counted = (records: 0, rejected: 0, bytes: 0)
        func count() {
            pipeline.countInput(records: reader.recordCount - counted.records, rejected: reader.rejectedCount - counted.rejected,
                                bytes: reader.bytesRead - counted.bytes)
            counted = (reader.recordCount, reader.rejectedCount, reader.bytesRead)
        }
        defer {
            count()
            // Responses that held zones, not records (an archive's members, say), said once.
            for listing in reader.zoneListings { pipeline.noteZoneListing(listing) }
        }
        while var record = try reader.next() {
            guard try pipeline.transform(&record, source: name, recordIndex: reader.recordIndex, line: reader.recordLine) else { continue }
            guard try pipeline.take(record, database: database?()) else { return }
            if pipeline.wantsProgress && reader.recordCount & 0x3FF == 0 { count() }
        }
    }
}
