import FerryPipeline

/// An archive as a pipeline source: its records, each with the database it belongs to and,
/// into an archive output, what the archive holds besides records — assets, change logs, zones
/// without records and change tokens — carried over, so archive → archive loses nothing.
public final class ArchiveRecordSource: RecordSource {
    private let reader: ArchiveRecordReader
    private let output: ArchiveRecordWriter?

    /// A source reading `reader`; with `output`, what else the archive holds goes there too.
    public init(_ reader: ArchiveRecordReader, carryingOverInto output: ArchiveRecordWriter? = nil) {
        self.reader = reader
        self.output = output
    }

    public var name: String { reader.sourceName }

    public func run(into pipeline: RecordPipeline) throws {
        if let output { ArchiveCarryOver.begin(from: reader, into: output) }
        try ReaderSource(reader, database: { [reader] in reader.current?.database }).run(into: pipeline)
        if let output { try ArchiveCarryOver.finish(from: reader, into: output) }
    }
}
