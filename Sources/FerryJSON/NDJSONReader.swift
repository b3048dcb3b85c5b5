import FerryIO
import FerryPipeline
import FerryRecords

/// Reads records from NDJSON — one record dictionary per line — and from saved CKWS responses.
///
/// Streaming: ``JSONFramer`` cuts the input into chunks of whole lines, each decoded when the
/// one before is used up, so memory does not grow with the input (it is bounded by the chunk
/// size and the longest line, ``Configuration/maximumLineBytes``).
///
/// Each line may hold a record dictionary, a `records/query` / `records/lookup` /
/// `records/modify` / `records/changes` response (`{"records": […], …}`), a `changes/zone`
/// response (records inside `zones`), or a JSON array of these. An input whose first line does
/// not hold a complete value (a pretty-printed response) is read as one or more
/// whitespace-separated JSON documents instead, up to ``Configuration/maximumDocumentBytes``
/// (from a source of unknown size — a pipe, a gzip stream — up to ``Configuration/maximumLineBytes``,
/// since the documents are held whole).
/// Responses that only list zones hold no records; they are noted in ``zoneListings``.
///
/// Errors name the source, line, column (in characters) and record index. With
/// ``ErrorPolicy/skip`` a bad line is written verbatim to the rejects sink and reading goes on;
/// per-record server errors in responses count as rejects too (the entry is written as one line).
public final class NDJSONReader: RecordReader {
    /// What to do with an input that is not a valid record.
    public typealias ErrorPolicy = RecordErrorPolicy

    /// Limits and buffering.
    public struct Configuration: Sendable {
        /// The longest line accepted. CloudKit's own limit is 1 MB per record; the default leaves room.
        public var maximumLineBytes: Int = 64 << 20
        /// The largest multi-line document (pretty-printed response) read whole; from a source of
        /// unknown size (a pipe, a gzip stream), no more than ``maximumLineBytes``.
        public var maximumDocumentBytes: Int = 1 << 30
        /// Deepest JSON nesting accepted.
        public var maximumDepth: Int = 512
        /// Bytes read from the source at a time.
        public var chunkSize: Int = 1 << 20

        public init(maximumLineBytes: Int = 64 << 20, maximumDocumentBytes: Int = 1 << 30,
                    maximumDepth: Int = 512, chunkSize: Int = 1 << 20) {
            self.maximumLineBytes = maximumLineBytes
            self.maximumDocumentBytes = maximumDocumentBytes
            self.maximumDepth = maximumDepth
            self.chunkSize = chunkSize
        }

        /// The framer's configuration (inputs read, not mapped: a reader may run for long).
        var framing: JSONFramer.Configuration {
            JSONFramer.Configuration(chunkSize: chunkSize, maximumLineBytes: maximumLineBytes,
                                     maximumDocumentBytes: maximumDocumentBytes, maximumDepth: maximumDepth, mapsInput: false)
        }
    }

    private let framer: JSONFramer
    private let configuration: Configuration
    private let policy: ErrorPolicy
    /// Called for every input skipped under ``ErrorPolicy/skip`` (for warnings on stderr).
    public var onReject: ((any Error) -> Void)?

    /// A cheap first look at each record line (see ``NDJSONPrefilter``): lines it refuses are
    /// dropped without a full decode. Set it before the first ``next()``.
    package var prefilter: NDJSONPrefilter?

    /// Record lines skipped by the prefilter.
    public var prefilteredCount: Int { droppedBefore + (current?.recordsDropped ?? 0) }

    /// The responses read so far that list zones and hold no records (nothing to convert).
    public private(set) var zoneListings: [ZoneListing] = []

    /// The unit being handed out, and how far.
    private var current: RecordUnitResult?
    private var recordCursor = 0
    private var eventCursor = 0
    /// Lines, records and rejects, and drops of the units before the current one.
    private var linesBefore = 0
    private var itemsBefore = 0
    private var droppedBefore = 0
    private var isEnded = false

    /// The 1-based line the latest record or reject came from.
    public private(set) var lineNumber = 0
    /// The 1-based index, among records and rejected inputs, of the record returned last (or of
    /// the input rejected last).
    public private(set) var recordIndex = 0
    /// Records returned so far.
    public private(set) var recordCount = 0
    /// Inputs rejected under ``ErrorPolicy/skip``.
    public private(set) var rejectedCount = 0
    /// Bytes consumed from the source.
    public var bytesRead: Int { framer.bytesRead }

    /// Creates a reader over `source`.
    public init(source: ByteSource, policy: ErrorPolicy = .fail, configuration: Configuration = .init()) {
        framer = JSONFramer(source: source, configuration: configuration.framing)
        self.policy = policy
        self.configuration = configuration
    }

    /// The name of the source, for messages.
    public var sourceName: String { framer.sourceName }

    /// Returns the next record, or `nil` at the end of the input.
    public func next() throws -> Record? {
        while true {
            if let result = current {
                if let record = try nextRecord(of: result) { return record }
                finish(result)
            }
            guard !isEnded else { return nil }
            guard let piece = try framer.next() else {
                isEnded = true
                return nil
            }
            switch piece {
            case .unit(let unit):
                let result = RecordUnitResult(unit: unit)
                result.keepsPositions = true
                decoder.decode(result)
                current = result
                recordCursor = 0
                eventCursor = 0
            case .oversizedLine:
                linesBefore += 1
                itemsBefore += 1
                recordIndex = itemsBefore
                lineNumber = linesBefore
                let error = RecordDocumentDecoder.oversizedLineError(limit: configuration.maximumLineBytes, source: sourceName,
                                                                 line: linesBefore, recordIndex: itemsBefore)
                guard case .skip(let rejects) = policy else { throw error }
                rejectedCount += 1
                onReject?(error)
                try framer.streamOversizedLine(to: rejects)
            }
        }
    }

    private var decoder: RecordUnitDecoder {
        RecordUnitDecoder(decoder: RecordDocumentDecoder(configuration: RecordJSON.Configuration(maximumDepth: configuration.maximumDepth),
                                                     prefilter: prefilter),
                          transform: nil, encodes: false, failsFast: false, maximumLineBytes: configuration.maximumLineBytes)
    }

    /// The next record of `result`, after whatever it reports before that record; `nil` when it
    /// has none left.
    private func nextRecord(of result: RecordUnitResult) throws -> Record? {
        let isLines = result.unit.kind == .lines
        while eventCursor < result.events.count && result.events[eventCursor].recordsBefore <= recordCursor {
            let event = result.events[eventCursor]
            eventCursor += 1
            let line = isLines ? linesBefore + event.line : event.line
            switch event.kind {
            case .zoneListing(let response):
                zoneListings.append(ZoneListing(source: sourceName, line: line, response: response))
                continue
            case .transformFailure(let error), .inputFailure(let error):
                throw error // there is no transform here; whole inputs are read by the framer here
            case .reject(var error, let raw):
                error.source = sourceName
                error.line = line
                error.recordIndex = itemsBefore + event.localIndex
                recordIndex = itemsBefore + event.localIndex
                lineNumber = line
                try raw.withUnsafeBytes { try handle(error, raw: $0) }
            case .oversizedLine(let range):
                let error = RecordDocumentDecoder.oversizedLineError(limit: configuration.maximumLineBytes, source: sourceName,
                                                                 line: line, recordIndex: itemsBefore + event.localIndex)
                recordIndex = itemsBefore + event.localIndex
                lineNumber = line
                guard case .skip(let rejects) = policy else { throw error }
                rejectedCount += 1
                onReject?(error)
                if let rejects {
                    try result.unit.withBytes { bytes in try rejects.write(UnsafeRawBufferPointer(rebasing: bytes[range])) }
                    try rejects.write([0x0A])
                }
            }
        }
        guard recordCursor < result.records.count else { return nil }
        let record = result.records[recordCursor]
        let position = result.positions[recordCursor]
        recordCursor += 1
        recordIndex = itemsBefore + position.index
        lineNumber = isLines ? linesBefore + position.line : position.line
        recordCount += 1
        return record
    }

    /// Moves past a unit whose records and reports were all handed out.
    private func finish(_ result: RecordUnitResult) {
        if result.unit.kind == .lines { linesBefore += result.lineCount }
        itemsBefore += result.itemCount
        droppedBefore += result.recordsDropped
        current = nil
    }

    /// Fails or skips a located bad input.
    private func handle(_ located: RecordFormatError, raw: UnsafeRawBufferPointer) throws {
        switch policy {
        case .fail:
            throw located
        case .skip(let rejects):
            rejectedCount += 1
            if let rejects { try RecordDocumentDecoder.writeReject(raw, to: rejects) }
            onReject?(located)
        }
    }
}
