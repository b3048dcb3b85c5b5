import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords

/// The parallel JSON reader as `ferry convert` runs it: a ``JSONRecordSource`` read into a
/// ``RecordPipeline`` that writes NDJSON to `output`, set up for a test to add its callbacks.
struct ParallelRead {
    let pipeline: RecordPipeline
    let source: JSONRecordSource

    /// Reads the inputs `sources` opens on `threads` workers; `prefilter`, when given, screens
    /// records instead of the predicate's (`.some(nil)`: none at all).
    init(_ sources: @escaping () throws -> (any ByteSource)?, into output: MemorySink, policy: RecordErrorPolicy = .fail,
         transform: RecordTransform = RecordTransform(), prefilter: NDJSONPrefilter?? = nil, threads: Int, limit: Int? = nil,
         configuration: JSONFraming = JSONFraming()) {
        pipeline = RecordPipeline(writer: NDJSONWriter(sink: output), transform: transform, policy: policy, threads: threads, limit: limit)
        if let prefilter {
            source = JSONRecordSource(name: "input", inputs: sources, configuration: configuration, prefilter: prefilter)
        } else {
            source = JSONRecordSource(name: "input", inputs: sources, configuration: configuration)
        }
    }

    /// Reads one source, `given`, the same way.
    init(source given: any ByteSource, into output: MemorySink, policy: RecordErrorPolicy = .fail,
         transform: RecordTransform = RecordTransform(), prefilter: NDJSONPrefilter?? = nil, threads: Int, limit: Int? = nil,
         configuration: JSONFraming = JSONFraming()) {
        var given: (any ByteSource)? = given
        self.init({
            defer { given = nil }
            return given
        }, into: output, policy: policy, transform: transform, prefilter: prefilter, threads: threads, limit: limit,
                  configuration: configuration)
    }

    /// Reads everything, finishes the pipeline and returns its statistics.
    @discardableResult
    func run() throws -> RunStatistics {
        try pipeline.read(source)
        return try pipeline.finish()
    }
}
