import FerryIO
import FerryPipeline
import FerryRecords

/// NDJSON and saved CKWS responses as a pipeline source: the inputs — files, a folder's files,
/// standard input, gzip streams — decoded on the pipeline's threads by its parallel reader.
///
/// The pipeline's transform runs on the workers, after a look at raw records for the
/// predicate's literals and a decode of only the fields it reads; when the pipeline's writer
/// takes NDJSON lines, the workers encode the records too (or transcode them, when nothing
/// changes them), and only bytes reach the calling thread. What is read, rejected and kept is
/// counted, limited and reported by the pipeline, as for every source.
public final class JSONRecordSource: RecordSource {
    /// How the inputs are cut and what they may hold.
    public typealias Configuration = JSONFraming

    public let name: String
    private let nextInput: () throws -> (any ByteSource)?
    private let configuration: JSONFraming
    /// A prefilter given instead of the one of the pipeline's predicate (tests).
    private let givenPrefilter: NDJSONPrefilter?
    private let overridesPrefilter: Bool

    /// A source reading the inputs `nextInput` opens, one after another, until it returns `nil`
    /// (`name` names them all, for messages).
    public init(name: String, inputs nextInput: @escaping () throws -> (any ByteSource)?,
                configuration: Configuration = .init()) {
        self.name = name
        self.nextInput = nextInput
        self.configuration = configuration
        givenPrefilter = nil
        overridesPrefilter = false
    }

    /// A source as ``init(name:inputs:configuration:)`` makes it, whose records are screened by
    /// `prefilter` (none when `nil`) instead of by the pipeline predicate's literals and fields.
    package init(name: String, inputs nextInput: @escaping () throws -> (any ByteSource)?, configuration: Configuration = .init(),
                 prefilter: NDJSONPrefilter?) {
        self.name = name
        self.nextInput = nextInput
        self.configuration = configuration
        givenPrefilter = prefilter
        overridesPrefilter = true
    }

    public func run(into pipeline: RecordPipeline) throws {
        let prefilter = overridesPrefilter ? givenPrefilter : pipeline.transform.filter.flatMap { NDJSONPrefilter(for: $0) }
        try ParallelJSONReader(sources: nextInput, framing: configuration, pipeline: pipeline, prefilter: prefilter).run()
    }
}
