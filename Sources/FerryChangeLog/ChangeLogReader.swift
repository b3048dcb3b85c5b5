import FerryIO
import FerryRecords

/// Reads a history — Ferry change-log lines or saved CloudKit change responses — as events.
///
/// Streaming: one buffer that grows only to the longest line. Each line is one JSON document whose
/// kind is detected from its keys (see ``EventDecoder``-level rules in `Docs/ChangeLogFormat.md`):
/// a Ferry event (`"event"`), a `records/changes` page, a `changes/zone`, `changes/database` or legacy
/// `zones/changes` response, or a JSON array of these. A source whose first line does not hold a
/// complete JSON value (a pretty-printed saved response) is read as whitespace-separated documents,
/// up to ``Configuration/maximumDocumentBytes``.
///
/// Errors are ``ChangeLogError``s naming the source, line and column.
public final class ChangeLogReader {
    /// Limits, buffering and the default zone.
    public struct Configuration: Sendable {
        /// The zone of records that carry no `zoneID` (and of `records/changes` pages with no
        /// records); `nil` means `_defaultZone`.
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
    var decoder: EventDecoder
    private var pending: [RawEvent] = []
    private var pendingIndex = 0
    private var sawFirstDocument = false
    private var document: [UInt8]?
    private var documentOffset = 0
    private var documentLine = 1
    private var documentLineOffset = 0
    /// The 1-based line where the document that produced the latest event starts.
    public private(set) var line = 0
    /// Events returned so far.
    public private(set) var eventCount = 0

    /// Creates a reader over `source`.
    public init(source: ByteSource, configuration: Configuration = .init()) {
        self.configuration = configuration
        lines = LineReader(source: source, chunkSize: configuration.chunkSize, maximumLineBytes: configuration.maximumLineBytes)
        decoder = EventDecoder()
        decoder.defaultZone = configuration.defaultZone
        decoder.maximumDepth = configuration.maximumDepth
    }

    /// The name of the source, for messages.
    public var sourceName: String { lines.name }

    /// Bytes read from the source so far.
    public var bytesRead: Int { lines.bytesRead }

    /// Returns the next event, or `nil` at the end of the input.
    ///
    /// Saved records are fully decoded (and so fully validated) with `RecordJSON.decodeRecord`.
    /// Error entries of `changes/zone` responses are skipped here; ``Replayer`` reports them.
    public func next() throws -> ChangeEvent? {
        while let raw = try nextRaw() {
            switch raw {
            case .zoneSaved(let zone): return .zoneSaved(zone)
            case .zoneDeleted(let zone): return .zoneDeleted(zone)
            case .zonePurged(let zone): return .zonePurged(zone)
            case .recordDeleted(let name, let zone, let type): return .recordDeleted(RecordID(recordName: name, zoneID: zone), recordType: type)
            case .checkpoint(let checkpoint): return .checkpoint(checkpoint)
            case .zoneError: continue
            case .recordSaved(let summary):
                let result = summary.bytes.withUnsafeBytes { bytes in
                    Result { () throws(RecordFormatError) -> Record in try RecordJSON.decodeRecord(bytes) }
                }
                switch result {
                case .success(let record): return .recordSaved(record)
                case .failure(let error):
                    var inner = error
                    inner.source = sourceName
                    inner.line = line
                    throw ChangeLogError(.format, error.message, source: sourceName, line: line, underlying: inner)
                }
            }
        }
        return nil
    }

    /// Returns the next event in replay's form (records kept as compact JSON).
    func nextRaw() throws -> RawEvent? {
        while true {
            if pendingIndex < pending.count {
                let event = pending[pendingIndex]
                pendingIndex += 1
                eventCount += 1
                return event
            }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if document != nil {
                guard try decodeNextDocument() else { return nil }
                continue
            }
            guard let text = try lines.nextLine() else { return nil }
            if isBlank(text) { continue }
            line = lines.lineNumber
            if !sawFirstDocument {
                sawFirstDocument = true
                if try switchToDocumentsIfIncomplete(text) { continue }
            }
            try decode(text, line: line)
        }
    }

    private func isBlank(_ text: UnsafeRawBufferPointer) -> Bool {
        for b in text where b != 0x20 && b != 0x09 && b != 0x0D && b != 0x0A { return false }
        return true
    }

    /// Decodes one document (or a JSON array of documents) into `pending`.
    private func decode(_ text: UnsafeRawBufferPointer, line: Int) throws {
        do throws(RecordFormatError) {
            var start = 0
            while start < text.count, text[start] == 0x20 || text[start] == 0x09 || text[start] == 0x0A || text[start] == 0x0D { start += 1 }
            if start < text.count && text[start] == UInt8(ascii: "[") {
                var c = JSONCursor(text, maximumDepth: configuration.maximumDepth)
                try c.beginArray()
                var first = true
                var offsets: [Range<Int>] = []
                while try c.nextElement(&first) {
                    c.skipWhitespace()
                    let elementStart = c.position
                    try c.skipValue()
                    offsets.append(elementStart..<c.position)
                }
                try c.expectEnd()
                for range in offsets {
                    do throws(RecordFormatError) {
                        try decoder.decode(UnsafeRawBufferPointer(rebasing: text[range]), into: &pending)
                    } catch {
                        var shifted = error
                        shifted.byteOffset += range.lowerBound
                        throw shifted
                    }
                }
            } else {
                try decoder.decode(text, into: &pending)
            }
        } catch {
            throw ChangeLogError.located(error, in: text, source: sourceName, line: line)
        }
    }

    /// If the first line is an incomplete value, reads the whole source as JSON documents.
    private func switchToDocumentsIfIncomplete(_ text: UnsafeRawBufferPointer) throws -> Bool {
        var c = JSONCursor(text, maximumDepth: configuration.maximumDepth)
        c.validates = false
        do throws(RecordFormatError) {
            try c.skipValue()
            return false
        } catch where error.code == .truncated {
            var all = Array(text)
            all.append(0x0A)
            all.append(contentsOf: try lines.readRemaining(limit: configuration.maximumDocumentBytes))
            document = all
            documentOffset = 0
            documentLine = line
            documentLineOffset = 0
            return true
        } catch {
            return false
        }
    }

    private func decodeNextDocument() throws -> Bool {
        guard let all = document else { return false }
        return try all.withUnsafeBytes { text in
            var c = JSONCursor(text, maximumDepth: configuration.maximumDepth)
            c.position = documentOffset
            c.skipWhitespace()
            guard c.position < text.count else { return false }
            let start = c.position
            // Line of the document's start, counted incrementally.
            for i in documentLineOffset..<start where text[i] == 0x0A { documentLine += 1 }
            documentLineOffset = start
            line = documentLine
            c.validates = false
            do throws(RecordFormatError) {
                try c.skipValue()
            } catch {
                throw ChangeLogError.located(error, in: UnsafeRawBufferPointer(rebasing: text[start...]), source: sourceName, line: line)
            }
            documentOffset = c.position
            try decode(UnsafeRawBufferPointer(rebasing: text[start..<c.position]), line: line)
            return true
        }
    }
}
