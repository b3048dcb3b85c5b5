import FerryPipeline

/// A source with what is carried over between formats, besides records, before and after it.
final class CarryingSource: RecordSource {
    private let source: any RecordSource
    private let before: () throws -> Void
    private let after: () throws -> Void

    init(_ source: any RecordSource, before: @escaping () throws -> Void, after: @escaping () throws -> Void) {
        self.source = source
        self.before = before
        self.after = after
    }

    var name: String { source.name }

    func run(into pipeline: RecordPipeline) throws {
        try before()
        try source.run(into: pipeline)
        try after()
    }
}
