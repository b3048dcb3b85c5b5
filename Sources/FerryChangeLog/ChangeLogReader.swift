import FerryIO
import FerryRecords

/// Reads a history — Ferry change-log lines or saved CloudKit change responses — as events.
///
/// Streaming: one buffer that grows only to the longest line. Each line is one JSON document
/// whose kind is detected from its keys (see `Docs/ChangeLogFormat.md`): a Ferry event
/// (`"event"`), a `records/changes` page, a `changes/zone`, `changes/database` or legacy
/// `zones/changes` response, or a JSON array of these. A source whose first line does not hold a
/// complete JSON value (a pretty-printed saved response) is read as whitespace-separated
/// documents, up to ``Configuration/maximumDocumentBytes``.
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
        /// The largest multi-line document read whole.
        public var maximumDocumentBytes: Int
        /// Deepest JSON nesting accepted.
        public var maximumDepth: Int
        /// Bytes read from the source at a time.
        public var chunkSize: Int

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

    private let lines: LineReader
    private let configuration: Configuration
    var decoder: EventDecoder {
        didSet { decoder.scanner.arena = arena }
    }
    private let pending = EventBuffer()
    /// Where the blobs of `pending` are made; reused once they are all taken.
    private let arena = BlobArena()
    private var sawFirstDocument = false
    /// The whole input, when it is read as multi-line documents.
    private var documents: [UInt8]?
    private var documentOffset = 0
    private var documentLine = 1
    private var documentLineOffset = 0
    /// The 1-based line where the document that produced the latest event starts.
    public private(set) var line = 0
    /// Events returned so far.
    public private(set) var eventCount = 0


    /// Creates a reader over `source` (decompressed already; see `Compression.openInput`).
    public init(source: ByteSource, configuration: Configuration = .init()) {
        self.configuration = configuration
        lines = LineReader(source: source, chunkSize: configuration.chunkSize, maximumLineBytes: configuration.maximumLineBytes)
        decoder = EventDecoder()
        decoder.scanner.arena = arena
        decoder.defaultZone = configuration.defaultZone
        decoder.maximumDepth = configuration.maximumDepth
    }

    /// The name of the source, for messages.
    public var sourceName: String { lines.name }

    /// Bytes read from the source so far.
    public var bytesRead: Int { lines.bytesRead }

    /// Returns the next event, or `nil` at the end of the input.
    ///
    /// Saved records are decoded fully (and so validated fully) with `RecordJSON.decodeRecord`.
    /// Error entries (`serverErrorCode`) of change responses are skipped here; ``Replayer``
    /// reports them.
    public func next() throws -> ChangeEvent? {
        while let raw = try nextRaw() {
            switch raw {
            case .zoneSaved(let zone): return .zoneSaved(zone)
            case .zoneDeleted(let zone): return .zoneDeleted(zone)
            case .zonePurged(let zone): return .zonePurged(zone)
            case .recordDeleted(let name, let zone, let type): return .recordDeleted(RecordID(recordName: name, zoneID: zone), recordType: type)
            case .checkpoint(let checkpoint): return .checkpoint(checkpoint)
            case .serverError: continue
            case .recordSaved(let blob, _):
                do {
                    return .recordSaved(try ReplayState.decode(blob.json))
                } catch {
                    throw ChangeLogError(.format, "\(error.message) (in the record \"\(blob.nameString)\")", source: sourceName,
                                         line: line, underlying: error)
                }
            }
        }
        return nil
    }

    /// Returns the next event in replay's form (records kept as compact JSON).
    func nextRaw() throws -> RawEvent? {
        while true {
            if let event = pending.take() {
                eventCount += 1
                return event
            }
            pending.reset()
            arena.reset()
            if documents != nil {
                guard try decodeNextDocument() else { return nil }
                continue
            }
            guard let text = try lines.nextLine() else { return nil }
            if Self.isBlank(text) { continue }
            line = lines.lineNumber
            if !sawFirstDocument {
                sawFirstDocument = true
                if try switchToDocumentsIfIncomplete(text) { continue }
            }
            try decode(text, line: line)
        }
    }

    private static func isBlank(_ text: UnsafeRawBufferPointer) -> Bool {
        for b in text where b != 0x20 && b != 0x09 && b != 0x0D && b != 0x0A { return false }
        return true
    }

    /// Decodes one document, or a JSON array of documents, into `pending`.
    private func decode(_ text: UnsafeRawBufferPointer, line: Int) throws {
        do throws(RecordFormatError) {
            try decoder.decodeLine(text, into: pending)
        } catch {
            throw ChangeLogError.located(error, in: text, source: sourceName, line: line)
        }
    }

    /// If the first line opens a value it does not close, reads the whole source as documents.
    private func switchToDocumentsIfIncomplete(_ text: UnsafeRawBufferPointer) throws -> Bool {
        var s = JSONScanner(text, maximumDepth: configuration.maximumDepth)
        do throws(RecordFormatError) {
            try s.skipValueStructure()
            return false
        } catch where error.code == .truncated {
            var all = Array(text)
            let rest = try lines.readRemaining(limit: configuration.maximumDocumentBytes)
            if !rest.isEmpty {
                all.append(0x0A)
                all.append(contentsOf: rest)
            }
            documents = all
            documentOffset = 0
            documentLine = line
            documentLineOffset = 0
            return true
        } catch {
            return false // decode() reports it
        }
    }

    private func decodeNextDocument() throws -> Bool {
        guard let all = documents else { return false }
        return try all.withUnsafeBytes { text in
            var start = documentOffset
            while start < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[start]) { start += 1 }
            guard start < text.count else { return false }
            for i in documentLineOffset..<start where text[i] == 0x0A { documentLine += 1 }
            documentLineOffset = start
            line = documentLine
            let rest = UnsafeRawBufferPointer(rebasing: text[start...])
            var s = JSONScanner(rest, maximumDepth: configuration.maximumDepth)
            do throws(RecordFormatError) {
                try s.skipValueStructure()
            } catch {
                throw ChangeLogError.located(error, in: rest, source: sourceName, line: line)
            }
            let end = start + s.position
            documentOffset = end
            try decode(UnsafeRawBufferPointer(rebasing: text[start..<end]), line: line)
            return true
        }
    }
}
