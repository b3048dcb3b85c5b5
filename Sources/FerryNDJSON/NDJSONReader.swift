import FerryIO
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads records from NDJSON — one record dictionary per line — and from saved CKWS responses.
///
/// Streaming: the input is read in chunks into one buffer that grows only to the longest line
/// (bounded by ``Configuration/maximumLineBytes``), so memory does not grow with the input.
///
/// Each line may hold a record dictionary, a `records/query` / `records/lookup` /
/// `records/changes` response (`{"records": […], …}`), or a JSON array of either. A file whose
/// first line does not hold a complete value (a pretty-printed response) is read as one or more
/// whitespace-separated JSON documents instead, up to ``Configuration/maximumDocumentBytes``.
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
        /// The largest multi-line document (pretty-printed response) read whole.
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
    }

    private let source: ByteSource
    private let configuration: Configuration
    private let policy: ErrorPolicy
    /// Called for every input skipped under ``ErrorPolicy/skip`` (for warnings on stderr).
    public var onReject: ((any Error) -> Void)?

    /// A cheap first look at each record line (see ``NDJSONPrefilter``): lines it refuses are
    /// dropped without a full decode. Set it before the first ``next()``.
    public var prefilter: NDJSONPrefilter?

    /// Record lines skipped by the prefilter.
    public private(set) var prefilteredCount = 0

    /// A response that lists zones and holds no records.
    public struct ZoneListing: Sendable, Equatable {
        /// `zones/list`, `changes/database`, … as the shape tells.
        public var shape: String
        /// How many zones it names.
        public var zoneCount: Int
        /// The 1-based line it starts on.
        public var line: Int
    }

    /// The responses read so far that list zones and hold no records (nothing to convert).
    public private(set) var zoneListings: [ZoneListing] = []

    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0 // first unconsumed byte
    private var end = 0 // end of valid bytes
    private var scanFrom = 0 // where to resume the newline search
    private var isEOF = false
    /// The 1-based line the latest record came from (line mode).
    public private(set) var lineNumber = 0
    private var isFirstLine = true
    /// Records and rejects of the current line (or document) after the first, in input order.
    private var pending: [Pending] = []
    private var pendingIndex = 0
    /// Items (records, drops, rejects) decoded so far; each item's index is its count.
    private var itemCount = 0

    private enum Pending {
        case record(Record, index: Int)
        /// A located error and the bytes for the rejects file.
        case reject(RecordFormatError, raw: [UInt8])
    }
    private var documentMode = false

    /// The 1-based index, among records and rejected inputs, of the record returned last (or of
    /// the input rejected last).
    public private(set) var recordIndex = 0
    /// Records returned so far.
    public private(set) var recordCount = 0
    /// Inputs rejected under ``ErrorPolicy/skip``.
    public private(set) var rejectedCount = 0
    /// Bytes consumed from the source.
    public private(set) var bytesRead = 0

    /// Creates a reader over `source`.
    public init(source: ByteSource, policy: ErrorPolicy = .fail, configuration: Configuration = .init()) {
        self.source = source
        self.policy = policy
        self.configuration = configuration
        capacity = configuration.chunkSize * 2
        buffer = .allocate(byteCount: capacity + 1, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The name of the source, for messages.
    public var sourceName: String { source.name }

    /// Returns the next record, or `nil` at the end of the input.
    public func next() throws -> Record? {
        while true {
            while pendingIndex < pending.count {
                let item = pending[pendingIndex]
                pendingIndex += 1
                if pendingIndex == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingIndex = 0
                }
                switch item {
                case .record(let record, let index):
                    recordIndex = index
                    recordCount += 1
                    return record
                case .reject(let error, let raw):
                    recordIndex = error.recordIndex ?? recordIndex
                    try raw.withUnsafeBytes { try handle(error, raw: $0) }
                }
            }
            if documentMode { return nil }
            guard let (lineStart, lineEnd) = try nextLine() else { return nil }
            var contentEnd = lineEnd
            if contentEnd > lineStart && buffer.load(fromByteOffset: contentEnd - 1, as: UInt8.self) == 0x0D {
                contentEnd -= 1 // CRLF
            }
            var contentStart = lineStart
            if isFirstLine {
                isFirstLine = false
                // A UTF-8 byte order mark, only at the start of the input (not on the line after
                // a first line over the limit).
                if lineNumber == 1 && contentEnd - contentStart >= 3 && buffer.load(fromByteOffset: contentStart, as: UInt8.self) == 0xEF
                    && buffer.load(fromByteOffset: contentStart + 1, as: UInt8.self) == 0xBB
                    && buffer.load(fromByteOffset: contentStart + 2, as: UInt8.self) == 0xBF {
                    contentStart += 3
                }
                if try switchToDocumentModeIfNeeded(lineStart: contentStart, lineEnd: contentEnd) {
                    continue
                }
            }
            let line = UnsafeRawBufferPointer(start: buffer + contentStart, count: contentEnd - contentStart)
            if NDJSONLineDecoder.isBlank(line) { continue }
            if let (record, index) = try decodeLine(line, rawLine: UnsafeRawBufferPointer(start: buffer + lineStart, count: lineEnd - lineStart)) {
                recordIndex = index
                recordCount += 1
                return record
            }
        }
    }

    // MARK: Decoding

    /// Decodes one line. When it starts with a record, that record is returned (the common case,
    /// without queueing); everything after it is queued, so records and rejects come out in
    /// input order.
    private func decodeLine(_ line: UnsafeRawBufferPointer, rawLine: UnsafeRawBufferPointer) throws -> (Record, Int)? {
        var decoder = NDJSONLineDecoder(configuration: RecordJSON.Configuration(maximumDepth: configuration.maximumDepth))
        decoder.prefilter = prefilter
        var first: (Record, Int)?
        try decoder.decode(line, raw: rawLine) { item in
            itemCount += 1
            switch consume item {
            case .record(let record):
                if first == nil && pending.isEmpty { first = (record, itemCount) } else { pending.append(.record(record, index: itemCount)) }
            case .dropped:
                prefilteredCount += 1
            case .reject(let error, let raw):
                pending.append(.reject(locate(error), raw: Array(raw)))
            case .zonesOnly(let shape, let zoneCount):
                itemCount -= 1
                zoneListings.append(ZoneListing(shape: shape, zoneCount: zoneCount, line: lineNumber))
            }
        }
        return first
    }

    /// The error with the source, record index and line (and, in document mode, the line and
    /// column in `text`, from its byte offset) filled in.
    private func locate(_ error: RecordFormatError, documentText text: UnsafeRawBufferPointer? = nil) -> RecordFormatError {
        var located = error
        located.source = source.name
        located.recordIndex = itemCount
        if let text {
            let (line, column) = NDJSONLineDecoder.lineAndColumn(in: text, offset: error.byteOffset)
            located.line = line
            located.column = column
        } else {
            located.line = lineNumber
        }
        return located
    }

    /// Fails or skips a located bad input.
    private func handle(_ located: RecordFormatError, raw: UnsafeRawBufferPointer) throws {
        switch policy {
        case .fail:
            throw located
        case .skip(let rejects):
            rejectedCount += 1
            if let rejects { try NDJSONLineDecoder.writeReject(raw, to: rejects) }
            onReject?(located)
        }
    }

    // MARK: Lines

    /// Finds the next line; returns its byte range in `buffer` (without the newline).
    private func nextLine() throws -> (Int, Int)? {
        while true {
            if let newline = findNewline(from: scanFrom, to: end) {
                if newline - start > configuration.maximumLineBytes {
                    try rejectOversizedLine(upTo: newline)
                    continue
                }
                let line = (start, newline)
                start = newline + 1
                scanFrom = start
                lineNumber += 1
                return line
            }
            scanFrom = end
            if isEOF {
                if start < end {
                    let line = (start, end)
                    start = end
                    lineNumber += 1
                    return line
                }
                return nil
            }
            if end - start > configuration.maximumLineBytes {
                try skipOversizedLine()
                continue
            }
            try fill()
        }
    }

    private func findNewline(from: Int, to: Int) -> Int? {
        guard from < to else { return nil }
        guard let found = memchr(buffer + from, 0x0A, to - from) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(buffer)
    }

    /// Reads more input, compacting or growing the buffer as needed.
    private func fill() throws {
        if start > 0 && (start == end || capacity - end < configuration.chunkSize) {
            let live = end - start
            if live > 0 { buffer.copyMemory(from: buffer + start, byteCount: live) }
            scanFrom -= start
            end = live
            start = 0
        }
        if capacity - end < configuration.chunkSize {
            let newCapacity = max(capacity * 2, end + configuration.chunkSize)
            let newBuffer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity + 1, alignment: 16)
            newBuffer.copyMemory(from: buffer, byteCount: end)
            buffer.deallocate()
            buffer = newBuffer
            capacity = newCapacity
        }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer + end, count: min(capacity - end, configuration.chunkSize)))
        if n == 0 {
            isEOF = true
        } else {
            end += n
            bytesRead += n
        }
    }

    private func oversizedLineError() -> RecordFormatError {
        lineNumber += 1
        itemCount += 1
        recordIndex = itemCount
        return NDJSONLineDecoder.oversizedLineError(limit: configuration.maximumLineBytes, source: source.name,
                                                    line: lineNumber, recordIndex: recordIndex)
    }

    /// A complete line in the buffer that is longer than the limit.
    private func rejectOversizedLine(upTo newline: Int) throws {
        let error = oversizedLineError()
        guard case .skip(let rejects) = policy else { throw error }
        rejectedCount += 1
        onReject?(error)
        try rejects?.write(UnsafeRawBufferPointer(start: buffer + start, count: newline + 1 - start))
        start = newline + 1
        scanFrom = start
    }

    /// A line longer than the limit: reject it (streaming it to the rejects file) without holding it.
    private func skipOversizedLine() throws {
        let error = oversizedLineError()
        guard case .skip(let rejects) = policy else { throw error }
        rejectedCount += 1
        onReject?(error)
        while true {
            if let newline = findNewline(from: start, to: end) {
                try rejects?.write(UnsafeRawBufferPointer(start: buffer + start, count: newline + 1 - start))
                start = newline + 1
                scanFrom = start
                return
            }
            try rejects?.write(UnsafeRawBufferPointer(start: buffer + start, count: end - start))
            start = 0
            end = 0
            scanFrom = 0
            if isEOF {
                try rejects?.write([0x0A])
                return
            }
            try fill()
        }
    }

    // MARK: Multi-line documents

    /// If the first line opens a value it does not close, reads the input as JSON documents.
    private func switchToDocumentModeIfNeeded(lineStart: Int, lineEnd: Int) throws -> Bool {
        let line = UnsafeRawBufferPointer(start: buffer + lineStart, count: lineEnd - lineStart)
        var first: UInt8 = 0
        for b in line where b != 0x20 && b != 0x09 && b != 0x0D {
            first = b
            break
        }
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || NDJSONLineDecoder.isBlank(line) else { return false }
        do {
            _ = try RecordJSON.parseValue(line, configuration: .init(maximumDepth: configuration.maximumDepth))
            return false
        } catch let error where error.code == .truncated || NDJSONLineDecoder.isBlank(line) {
            // Not a complete value on one line: read the whole input as documents.
        } catch {
            return false
        }
        documentMode = true
        var all: [UInt8] = Array(UnsafeRawBufferPointer(start: buffer + lineStart, count: end - lineStart))
        start = end
        while !isEOF {
            try fill()
            all.append(contentsOf: UnsafeRawBufferPointer(start: buffer + start, count: end - start))
            start = end
            if all.count > configuration.maximumDocumentBytes {
                throw RecordFormatError(.tooLarge, "expected a multi-line JSON document of at most \(configuration.maximumDocumentBytes) bytes, found a larger one",
                                        byteOffset: 0, source: source.name, line: 1, column: 1)
            }
        }
        try all.withUnsafeBytes { text in
            try decodeDocuments(text)
        }
        return true
    }

    private func decodeDocuments(_ text: UnsafeRawBufferPointer) throws {
        var decoder = NDJSONLineDecoder(configuration: RecordJSON.Configuration(maximumDepth: configuration.maximumDepth))
        decoder.prefilter = prefilter
        try decoder.decodeDocuments(text) { item in
            itemCount += 1
            switch consume item {
            case .record(let record):
                pending.append(.record(record, index: itemCount))
            case .dropped:
                prefilteredCount += 1
            case .zonesOnly(let shape, let zoneCount):
                itemCount -= 1
                zoneListings.append(ZoneListing(shape: shape, zoneCount: zoneCount, line: lineNumber))
            case .reject(let error, let raw):
                pending.append(.reject(locate(error, documentText: text), raw: Array(raw)))
            }
        }
    }
}
