import FerryIO
import FerryPipeline
import FerryRecords

/// NDJSON and saved CKWS responses as a pipeline source: the inputs — files, a folder's files,
/// standard input, gzip streams — decoded on worker threads by ``NDJSONParallelConverter``.
///
/// The pipeline's transform runs on the workers, after a look at raw lines for the predicate's
/// literals and a decode of only the fields it reads; when the pipeline's writer takes NDJSON
/// lines, the workers encode the records too, and only bytes reach the calling thread.
public final class JSONRecordSource: RecordSource {
    public let name: String
    private let nextInput: () throws -> (any ByteSource)?
    private let configuration: NDJSONParallelConverter.Configuration

    /// A source reading the inputs `nextInput` opens, one after another, until it returns `nil`
    /// (`name` names them all, for messages). The pipeline's thread count replaces
    /// `configuration.threads`.
    public init(name: String, inputs nextInput: @escaping () throws -> (any ByteSource)?,
                configuration: NDJSONParallelConverter.Configuration = .init()) {
        self.name = name
        self.nextInput = nextInput
        self.configuration = configuration
    }

    public func run(into pipeline: RecordPipeline) throws {
        let destination: NDJSONParallelConverter.Destination = pipeline.takesEncodedLines
            ? .encodedLines { bytes, records in try pipeline.takeEncodedLines(bytes, records: records) }
            : .records { record in try pipeline.take(record) }
        var configuration = self.configuration
        configuration.threads = pipeline.threads
        let converter = NDJSONParallelConverter(sources: nextInput, destination: destination, policy: pipeline.policy,
                                                transform: pipeline.transform, configuration: configuration)
        converter.limit = pipeline.remainingRecords
        converter.onReject = pipeline.onReject
        converter.onZoneListing = { listing in pipeline.noteZoneListing(listing) }
        var counted = NDJSONParallelConverter.Statistics()
        func count(_ now: NDJSONParallelConverter.Statistics) {
            pipeline.countInput(records: now.recordsRead - counted.recordsRead, rejected: now.rejected - counted.rejected,
                                bytes: now.bytesRead - counted.bytesRead)
            counted = now
        }
        converter.onTransformFailure = { pipeline.transformFailed($0) }
        if pipeline.wantsProgress { converter.onProgress = count }
        count(try converter.run())
    }
}
