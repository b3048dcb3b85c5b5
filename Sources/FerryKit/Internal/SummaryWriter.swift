import FerryPipeline
import FerryRecords

/// A sink that adds each record to a ``DatasetSummary``: what `inspect` reads into.
final class SummaryWriter: RecordWriter {
    var summary = DatasetSummary()

    func write(_ record: Record) throws {
        summary.add(record)
    }

    func finish() throws {}

    var recordCount: Int { summary.records }

    var bytesWritten: Int { 0 }
}
