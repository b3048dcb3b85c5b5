import FerryIO
import FerryRecords

/// Reads a history — Ferry change-log lines or saved CloudKit change responses — as events.
///
/// Streaming: ``JSONFramer`` cuts the input into chunks of whole lines. Each line is one JSON document
/// whose kind is detected from its keys (see `Docs/ChangeLogFormat.md`): a Ferry event
/// (`"event"`), a `records/changes` page, a `changes/zone`, `changes/database` or legacy
/// `zones/changes` response, or a JSON array of these. A source whose first line does not hold a
/// complete JSON value (a pretty-printed saved response) is read as whitespace-separated
/// documents, up to ``Configuration/maximumDocumentBytes`` (from a source of unknown size — a pipe,
/// a gzip stream — up to ``Configuration/maximumLineBytes``, since the documents are held whole).
///
/// Errors are ``ChangeLogError``s naming the source, line and column.
///
/// ```swift
/// let reader = ChangeLogReader(source: try InputFile(path: "history.ndjson"))
/// while let event = try reader.next() { print(event) }
/// ```
public final class ChangeLogReader {
    /// Limits, buffering and the default zone.
    public struct Configuration: Sendable {
        /// The zone of records and pages that name none (before a page named one); `nil` means
        /// `_defaultZone`.
        public var defaultZone: ZoneID?
        /// The longest line accepted.
        public var maximumLineBytes: Int
        /// The largest multi-line document read whole; from a source of unknown size (a pipe, a
        /// gzip stream), no more than ``maximumLineBytes``.
        public var maximumDocumentBytes: Int
        /// Deepest JSON nesting accepted.
        public var maximumDepth: Int
        /// Bytes read from the source at a time.
        public var chunkSize: Int
        /// Whether a `recordSaved` of a tombstone (`"deleted": true`) is a save of that record as
        /// it is rather than a delete: for restoring a store's journal, where a saved row may be a
        /// tombstone the store holds (`Docs/StoreFormat.md`).
        public var keepsTombstones = false

        /// Creates a configuration.
        public init(defaultZone: ZoneID? = nil, maximumLineBytes: Int = 64 << 20, maximumDocumentBytes: Int = 1 << 30,
                    maximumDepth: Int = 512, chunkSize: Int = 1 << 20) {
            self.defaultZone = defaultZone
            self.maximumLineBytes = maximumLineBytes
            self.maximumDocumentBytes = maximumDocumentBytes
            self.maximumDepth = maximumDepth
            self.chunkSize = chunkSize
        }
    }

    private let reader: EventReader
    private let name: String
    private let configuration: Configuration
    /// Events returned so far.
    public private(set) var eventCount = 0

    /// Creates a reader over `source` (decompressed already; see `Compression.openInput`).
    public init(source: ByteSource, configuration: Configuration = .init()) {
        var given: ByteSource? = source
        name = source.name
        self.configuration = configuration
        var decoder = EventDecoder()
        decoder.defaultZone = configuration.defaultZone
        decoder.maximumDepth = configuration.maximumDepth
        decoder.scanner.keepsTombstones = configuration.keepsTombstones
        reader = EventReader(sources: {
            defer { given = nil }
            return given
        }, configuration: configuration, decoder: decoder, threads: 0, mapsInput: false, unitSize: configuration.chunkSize)
    }

    /// The name of the source, for messages.
    public var sourceName: String { name }

    /// Bytes read from the source so far.
    public var bytesRead: Int { reader.bytesRead }

    /// Returns the next event, or `nil` at the end of the input.
    ///
    /// Saved records are decoded fully (and so validated fully) with `RecordJSON.decodeRecord`.
    /// Error entries (`serverErrorCode`) of change responses are skipped here (``nextChange()``
    /// returns them).
    public func next() throws -> ChangeEvent? {
        while let change = try nextChange() {
            switch change {
            case .zoneSaved(let zone): return .zoneSaved(zone)
            case .zoneDeleted(let zone): return .zoneDeleted(zone)
            case .zonePurged(let zone): return .zonePurged(zone)
            case .recordDeleted(let name, let zone, let type): return .recordDeleted(RecordID(recordName: name, zoneID: zone), recordType: type)
            case .checkpoint(let checkpoint): return .checkpoint(checkpoint)
            case .serverError: continue
            case .recordSaved(let record, _): return .recordSaved(record)
            }
        }
        return nil
    }

    /// Returns the next change as the replay core takes it (error entries of change responses
    /// included, which a replay reports), or `nil` at the end of the input. A saved record comes
    /// decoded, with its zone.
    package func nextChange() throws -> ReplayEvent<Record, ZoneID>? {
        guard let raw = try reader.nextRaw() else { return nil }
        eventCount += 1
        switch raw {
        case .zoneSaved(let zone): return .zoneSaved(zone)
        case .zoneDeleted(let zone): return .zoneDeleted(zone)
        case .zonePurged(let zone): return .zonePurged(zone)
        case .recordDeleted(let name, let zone, let type): return .recordDeleted(recordName: name, zoneID: zone, recordType: type)
        case .checkpoint(let checkpoint): return .checkpoint(checkpoint)
        case .serverError(let zone, let name, let code, let reason):
            return .serverError(zoneID: zone, recordName: name, code: code, reason: reason)
        case .recordSaved(let blob, _):
            let record: Record
            do {
                record = try ReplayState.decode(blob.json)
            } catch {
                throw ChangeLogError(.format, "\(error.message) (in the record \"\(blob.nameString)\")", source: sourceName,
                                     underlying: error)
            }
            return .recordSaved(record, zone: record.zoneID ?? configuration.defaultZone ?? .default)
        }
    }
}
