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

    /// A cheap first look at each record line: only the selected parts are decoded and `accepts`
    /// decides; lines it refuses are skipped without a full decode (their JSON structure is still
    /// checked). Lines it accepts, and lines the partial decode cannot read, are decoded fully.
    public var prefilter: (selection: FieldSelection, accepts: (Record) -> Bool)?

    /// Record lines skipped by the prefilter.
    public private(set) var prefilteredCount = 0

    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0 // first unconsumed byte
    private var end = 0 // end of valid bytes
    private var scanFrom = 0 // where to resume the newline search
    private var isEOF = false
    private var lineNumber = 0
    private var isFirstLine = true
    private var pending: [Record] = []
    private var pendingIndex = 0
    private var documentMode = false

    /// Records returned so far plus inputs rejected (the index of the last record seen).
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
            if pendingIndex < pending.count {
                let record = pending[pendingIndex]
                pendingIndex += 1
                if pendingIndex == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingIndex = 0
                }
                recordCount += 1
                return record
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
                if contentEnd - contentStart >= 3 && buffer.load(fromByteOffset: contentStart, as: UInt8.self) == 0xEF
                    && buffer.load(fromByteOffset: contentStart + 1, as: UInt8.self) == 0xBB
                    && buffer.load(fromByteOffset: contentStart + 2, as: UInt8.self) == 0xBF {
                    contentStart += 3 // UTF-8 byte order mark
                }
                if try switchToDocumentModeIfNeeded(lineStart: contentStart, lineEnd: contentEnd) {
                    continue
                }
            }
            let line = UnsafeRawBufferPointer(start: buffer + contentStart, count: contentEnd - contentStart)
            if isBlank(line) { continue }
            if let record = try decodeLine(line, rawLine: UnsafeRawBufferPointer(start: buffer + lineStart, count: lineEnd - lineStart)) {
                recordCount += 1
                return record
            }
        }
    }

    private func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        for b in line where b != 0x20 && b != 0x09 && b != 0x0D { return false }
        return true
    }

    // MARK: Decoding

    /// Decodes one line: a record is returned; response entries are queued; rejects are handled.
    private func decodeLine(_ line: UnsafeRawBufferPointer, rawLine: UnsafeRawBufferPointer) throws -> Record? {
        let config = RecordJSON.Configuration(maximumDepth: configuration.maximumDepth)
        // Fast path: a plain record dictionary.
        var first: UInt8 = 0
        for b in line where b != 0x20 && b != 0x09 {
            first = b
            break
        }
        if first == UInt8(ascii: "[") {
            return try decodeArrayLine(line, rawLine: rawLine, config: config)
        }
        recordIndex += 1
        if let prefilter, first == UInt8(ascii: "{"),
           let partial = try? RecordJSON.decodeRecord(line, selecting: prefilter.selection, configuration: config),
           !prefilter.accepts(partial) {
            prefilteredCount += 1
            return nil
        }
        let document: RecordDocument
        do {
            document = try RecordJSON.decodeDocument(line, configuration: config)
        } catch {
            try reject(error, in: line, lineBase: 0, raw: rawLine)
            return nil
        }
        return try take(document, line: line, lineBase: 0, raw: rawLine)
    }

    private func decodeArrayLine(_ line: UnsafeRawBufferPointer, rawLine: UnsafeRawBufferPointer,
                                 config: RecordJSON.Configuration) throws -> Record? {
        // A JSON array of documents on one line: decode it whole (it is bounded by the line limit).
        recordIndex += 1
        let value: JSONValue
        do {
            value = try RecordJSON.parseValue(line, configuration: config)
        } catch {
            try reject(error, in: line, lineBase: 0, raw: rawLine)
            return nil
        }
        recordIndex -= 1
        guard case .array(let items) = value else { return nil }
        for item in items {
            recordIndex += 1
            var out = JSONOutput(capacity: 4096)
            out.appendValue(item)
            let document: RecordDocument
            do {
                document = try RecordJSON.decodeDocument(out.bytes, configuration: config)
            } catch {
                try reject(error, in: line, lineBase: 0, raw: out.bytes, positionUnknown: true)
                continue
            }
            if let record = try take(document, line: out.bytes, lineBase: 0, raw: out.bytes) {
                pending.append(record)
            }
        }
        return nil
    }

    /// Turns a decoded document into records (queued) and rejects.
    private func take(_ document: RecordDocument, line: UnsafeRawBufferPointer, lineBase: Int,
                      raw: UnsafeRawBufferPointer) throws -> Record? {
        switch document {
        case .record(let record):
            return record
        case .recordError(let serverError):
            try reject(RecordFormatError(.serverError, serverError.description, byteOffset: 0), in: line, lineBase: lineBase, raw: raw)
            return nil
        case .response(let response):
            recordIndex -= 1
            for entry in response.entries {
                recordIndex += 1
                let entryBytes = UnsafeRawBufferPointer(rebasing: line[entry.byteRange])
                switch entry.content {
                case .record(let record):
                    pending.append(record)
                case .error(let serverError):
                    try reject(RecordFormatError(.serverError, serverError.description, byteOffset: entry.byteRange.lowerBound),
                               in: line, lineBase: lineBase, raw: entryBytes)
                case .invalid(let error):
                    try reject(error, in: line, lineBase: lineBase, raw: entryBytes)
                }
            }
            return nil
        }
    }

    /// Fails or skips a bad input, with its position.
    private func reject(_ error: RecordFormatError, in text: UnsafeRawBufferPointer, lineBase: Int,
                        raw: UnsafeRawBufferPointer, positionUnknown: Bool = false) throws {
        var located = error
        located.source = source.name
        located.recordIndex = recordIndex
        if documentMode {
            let (line, column) = Self.lineAndColumn(in: text, offset: error.byteOffset)
            located.line = line
            located.column = column
        } else {
            located.line = lineNumber
            if !positionUnknown {
                located.column = Self.lineAndColumn(in: text, offset: error.byteOffset).column
            }
        }
        switch policy {
        case .fail:
            throw located
        case .skip(let rejects):
            rejectedCount += 1
            if let rejects {
                if raw.contains(0x0A), let value = try? RecordJSON.parseValue(raw) {
                    // From a pretty-printed document: one compact line, so rejects stay NDJSON.
                    var out = JSONOutput(capacity: raw.count)
                    out.appendValue(value)
                    try rejects.write(out.bytes)
                } else {
                    try rejects.write(raw)
                }
                try rejects.write([0x0A])
            }
            onReject?(located)
        }
    }

    /// 1-based line and column (in characters: UTF-8 lead bytes) of `offset` in `text`.
    static func lineAndColumn(in text: UnsafeRawBufferPointer, offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        let stop = min(offset, text.count)
        var i = 0
        while i < stop {
            let b = text[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return (line, column)
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
        recordIndex += 1
        return RecordFormatError(
            .tooLarge,
            "expected a line of at most \(configuration.maximumLineBytes) bytes (CloudKit records are at most 1 MB), found a longer one",
            byteOffset: 0, source: source.name, line: lineNumber, column: 1, recordIndex: recordIndex)
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
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || isBlank(line) else { return false }
        do {
            _ = try RecordJSON.parseValue(line, configuration: .init(maximumDepth: configuration.maximumDepth))
            return false
        } catch let error where error.code == .truncated || isBlank(line) {
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
        var offset = 0
        let config = RecordJSON.Configuration(maximumDepth: configuration.maximumDepth)
        while true {
            while offset < text.count, [0x20, 0x0A, 0x0D, 0x09].contains(text[offset]) { offset += 1 }
            if offset >= text.count { return }
            // Find the extent of the next value, then decode it.
            let valueEnd: Int
            do {
                valueEnd = try RecordJSON.extentOfValue(in: text, from: offset, configuration: config)
            } catch {
                recordIndex += 1
                var shifted = error
                shifted.byteOffset += 0
                try reject(shifted, in: text, lineBase: 0, raw: UnsafeRawBufferPointer(rebasing: text[offset...]))
                return
            }
            let slice = UnsafeRawBufferPointer(rebasing: text[offset..<valueEnd])
            if slice.first == UInt8(ascii: "[") {
                let value = try RecordJSON.parseValue(slice, configuration: config)
                if case .array(let items) = value {
                    for item in items {
                        recordIndex += 1
                        var out = JSONOutput(capacity: 4096)
                        out.appendValue(item)
                        do {
                            let document = try RecordJSON.decodeDocument(out.bytes, configuration: config)
                            if let record = try take(document, line: out.bytes, lineBase: 0, raw: out.bytes) { pending.append(record) }
                        } catch let error as RecordFormatError {
                            var located = error
                            located.byteOffset = offset
                            try reject(located, in: text, lineBase: 0, raw: out.bytes)
                        }
                    }
                }
            } else {
                recordIndex += 1
                do {
                    let document = try RecordJSON.decodeDocument(slice, configuration: config)
                    if let record = try take(document, line: slice, lineBase: offset, raw: slice) { pending.append(record) }
                } catch let error as RecordFormatError {
                    var located = error
                    located.byteOffset += offset
                    try reject(located, in: text, lineBase: 0, raw: slice)
                }
            }
            offset = valueEnd
        }
    }
}
