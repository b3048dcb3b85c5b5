import FerryArchive
import FerryIO
import FerryJSON
import FerryPipeline
import FerryStore
import FerryXML

/// The record sources of a list of inputs, in order, for a `RecordPipeline`: consecutive NDJSON
/// and response inputs (files, a folder's files, gzip or not) form one `JSONRecordSource`,
/// decoded on every core across file boundaries; each XML file, each archive and each store is
/// a source of its own. Inputs are opened one at a time, as they are reached, and recognized by
/// ``InputRecognizer``.
///
/// ```swift
/// let sources = RecordSources(paths: try InputPaths.expand(["responses/"]), policy: pipeline.policy)
/// while pipeline.wantsMore, let source = try sources.next() { try pipeline.read(source) }
/// ```
///
/// This, with ``RecordOutput/open(_:configuration:)``, is where formats are read and written: a
/// new format adds a case to each (and a row to ``RecordFormat/registry``).
public final class RecordSources {
    /// The inputs, the next ones read ahead (a folder may hold thousands of files on disk).
    private let paths: FileReadahead
    private let recognizer: InputRecognizer
    private let policy: RecordErrorPolicy
    /// The pipeline's transform: a store input runs its types, zones and predicate as SQL.
    private let transform: RecordTransform
    /// An input opened to see its format, not yet handed out.
    private var pending: OpenedInput?
    /// Told what an archive's reading skipped (``HistoryInput/skippedMembersNote(_:)``).
    public var onNote: ((String) -> Void)?
    /// The output, when it keeps more than records: archives and stores read are carried over
    /// into an archive (tokens, assets, change logs, a store's journal), archives into a store.
    public var output: RecordOutput?
    /// When set, inputs that describe themselves are described to it instead of read: a store
    /// (its tables summed up) and an archive whose manifest comes first; an archive whose
    /// manifest comes later is read, then described too.
    public var onDescription: ((InputDescription) throws -> Void)?

    /// The sources of `paths` (files and `-`; folders expanded by ``InputPaths/expand(_:onNote:)``),
    /// opened by `recognizer`; bad input follows `policy`, and a store applies `transform` in SQL
    /// (give the pipeline's own).
    public init(paths: [String], recognizer: InputRecognizer = InputRecognizer(), policy: RecordErrorPolicy = .fail,
                transform: RecordTransform = RecordTransform()) {
        self.paths = FileReadahead(paths)
        self.recognizer = recognizer
        self.policy = policy
        self.transform = transform
    }

    private func openNext() throws -> OpenedInput? {
        if let input = pending {
            pending = nil
            return input
        }
        guard let path = paths.next() else { return nil }
        return try recognizer.recognize(path, for: .pipeline)
    }

    /// The next source, or `nil` after the last input.
    public func next() throws(FerryError) -> (any RecordSource)? {
        try FerryError.catching { try nextSource() }
    }

    private func nextSource() throws -> (any RecordSource)? {
        while let first = try openNext() {
            switch first {
            case .ndjson(let path, let source):
                return jsonSource(named: path, first: source)
            case .xml(_, let source):
                return ReaderSource(XMLRecordReader(source: source, policy: policy))
            case .archive(let path, let source):
                if let source = try archiveSource(path, source) { return source }
            case .store(_, let reader):
                if let onDescription {
                    try onDescription(.store(try StoreSummary(reader.store)))
                    continue
                }
                let source = try StoreRecordSource(reader, transform: transform)
                guard let archive = output?.archive else { return source }
                return CarryingSource(source, before: {}, after: { try StoreCarryOver.finish(from: reader, into: archive) })
            }
        }
        return nil
    }

    /// One source for this NDJSON input and the NDJSON inputs right after it; the first other
    /// input waits for the next call.
    private func jsonSource(named name: String, first: any ByteSource) -> any RecordSource {
        var given: (any ByteSource)? = first
        return JSONRecordSource(name: name, inputs: { [self] in
            if let source = given {
                given = nil
                return source
            }
            guard let input = try openNext() else { return nil }
            guard case .ndjson(_, let source) = input else {
                pending = input
                return nil
            }
            return source
        }, configuration: .init(maximumLineBytes: recognizer.configuration.maximumLineBytes))
    }

    /// An archive's source, with what it carries over into the output; `nil` when it was
    /// described instead (``onDescription``: its manifest came first).
    private func archiveSource(_ path: String, _ source: any ByteSource) throws -> (any RecordSource)? {
        let archive = try ArchiveReader(source: source, configuration: recognizer.archiveConfiguration, policy: policy)
        if let onDescription, archive.manifestPlacement == .first {
            // An archive describes itself: its manifest is read, not its records.
            try onDescription(.archive(path: path, manifest: archive.manifest))
            return nil
        }
        let reader = ArchiveRecordReader(archive)
        let records = ArchiveRecordSource(reader, carryingOverInto: output?.archive)
        let after = { [onNote, onDescription] in
            if let text = HistoryInput.skippedMembersNote(archive) { onNote?(text) }
            // No manifest up front: described by its records, and by a manifest met after them.
            if let onDescription, archive.manifestPlacement != .notRead {
                try onDescription(.archive(path: path, manifest: archive.manifest))
            }
        }
        guard let store = output?.store else { return CarryingSource(records, before: {}, after: after) }
        return CarryingSource(records, before: { StoreCarryOver.begin(from: reader, into: store) },
                              after: { try StoreCarryOver.finish(from: reader, into: store); try after() })
    }
}

/// What an input says of itself, without its records being read (``RecordSources/onDescription``).
public enum InputDescription {
    /// An archive's manifest.
    case archive(path: String, manifest: ArchiveManifest)
    /// A store's tables, summed up.
    case store(StoreSummary)
}
