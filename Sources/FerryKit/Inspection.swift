import FerryIO
import FerryPipeline
import FerryRecords

/// What datasets hold, as `ferry inspect` shows it: records per zone and type, fields with the
/// types they were seen with, the time span, the bytes read. Records are read through the
/// same sources a ``Conversion`` reads (every core for NDJSON and responses) into a summary;
/// an archive whose manifest comes first and a store describe themselves without their records
/// being read.
///
/// ```swift
/// let report = try Inspection(configuration: .init(inputs: ["Samples/chat.ndjson"])).run()
/// print(report.text, terminator: "")
/// ```
public final class Inspection {
    /// What to inspect, and how.
    public struct Configuration: Sendable {
        /// The inputs: files, folders (every file under them), `-` for standard input.
        public var inputs: [String]
        /// Whether bad input is skipped (counted, and reported to ``Inspection/onReject``) rather than fatal.
        public var skipsBadInput: Bool

        /// An inspection of `inputs`.
        public init(inputs: [String], skipsBadInput: Bool = false) {
            self.inputs = inputs
            self.skipsBadInput = skipsBadInput
        }
    }

    /// What to inspect, and how.
    public let configuration: Configuration
    /// Told of entries a folder's listing skipped, as sentences.
    public var onNote: ((String) -> Void)?
    /// Told of each input skipped under ``Configuration/skipsBadInput``.
    public var onReject: ((any Error) -> Void)?
    /// Told now and then of the records and bytes read so far.
    public var onProgress: ((RunStatistics) -> Void)?

    /// An inspection as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Reads or describes every input and returns what they hold.
    ///
    /// - Throws: ``FerryError`` for an input that cannot be read (bad input, unless skipped).
    public func run() throws(FerryError) -> InspectionReport {
        let writer = SummaryWriter()
        var descriptions: [InputDescription] = []
        let statistics = try FerryError.catching {
            let pipeline = RecordPipeline(writer: writer, policy: configuration.skipsBadInput ? .skip(rejects: nil) : .fail,
                                          threads: Processors.available)
            pipeline.onReject = onReject
            pipeline.onZoneListing = { writer.summary.zoneListings.append($0) }
            pipeline.onProgress = onProgress
            let sources = RecordSources(paths: try InputPaths.expand(configuration.inputs, onNote: onNote), policy: pipeline.policy)
            sources.onDescription = { descriptions.append($0) }
            while let source = try sources.next() {
                try pipeline.read(source)
            }
            return try pipeline.finish()
        }
        var summary = writer.summary
        summary.bytes = statistics.bytesIn
        summary.rejected = statistics.rejected
        var report = InspectionReport(summary: summary)
        for description in descriptions {
            switch description {
            case .archive(let path, let manifest): report.archives.append(ManifestSummary(path: path, manifest: manifest))
            case .store(let store): report.stores.append(store)
            }
        }
        return report
    }
}
