import FerryIO
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Ferry's one framer of JSON input: cuts an input into ``InputUnit``s for decoders — chunks of
/// whole lines (NDJSON, one response per line, Ferry's change log) or, when the first line opens
/// a value it does not close, the whole input as documents (pretty-printed responses).
///
/// Every JSON reader runs on it: the record readers (``NDJSONReader``, one unit at a time on the
/// calling thread; ``JSONRecordSource``, units decoded on worker threads) and replay's history
/// readers. A regular file is cut in place from a mapping (on Linux, where its pages can
/// be given back behind the reader); other inputs are read into memory a chunk at a time, so
/// memory stays bounded by the chunk size and the longest line. A pipe's bytes are cut as they
/// come: a unit waits for whole lines, not for a full chunk. Documents are read whole: from an
/// input of unknown size (a pipe, a gzip stream, an archive member) no larger than a line
/// (``Configuration/maximumStreamedDocumentBytes``), from a regular file up to
/// ``Configuration/maximumDocumentBytes``.
///
/// A line longer than ``Configuration/maximumLineBytes`` is not held: the framer returns
/// ``Piece/oversizedLine``, and the caller fails or streams it to a rejects file with
/// ``streamOversizedLine(to:)``. Lines inside a chunk are checked against the limit by whoever
/// decodes the chunk.
package final class JSONFramer {
    /// Chunking and limits.
    package typealias Configuration = JSONFraming

    /// What ``next()`` cut.
    package enum Piece {
        case unit(InputUnit)
        /// A line longer than the limit starts here (line mode): fail, or pass it on with
        /// ``streamOversizedLine(to:)`` before asking for the next piece.
        case oversizedLine
    }

    private let source: ByteSource
    private let configuration: Configuration
    /// The input's position among those being read.
    package let sourceIndex: Int
    /// The input mapped, once known; cut in place.
    private var mapped: MappedInput?
    private var mappedOffset = 0
    /// Bytes read and not yet cut (read mode).
    private var pending = PendingBytes()
    private var isEOF = false
    private var kind: InputUnit.Kind?
    private var isFirstUnit = true
    /// Bytes of the input cut so far.
    private var cutOffset = 0
    /// Bytes read from the source (or cut from the mapping).
    package private(set) var bytesRead = 0
    /// Where the pages of the mapping already given back end.
    private var releasedUpTo = 0
    /// Pieces of a large document cut into runs of records, not yet handed out, with the text
    /// they are part of and what keeps it alive.
    private var queued: (pieces: ArraySlice<DocumentSplitter.Piece>, text: UnsafeRawBufferPointer, owner: AnyObject)?

    /// A framer for `source`, the input numbered `sourceIndex` among those being read.
    package init(source: ByteSource, configuration: Configuration = .init(), sourceIndex: Int = 0) {
        self.source = source
        self.configuration = configuration
        self.sourceIndex = sourceIndex
        pending.limit = Self.adding(configuration.maximumLineBytes, configuration.chunkSize)
    }

    deinit { pending.free() }

    /// The input's name.
    package var sourceName: String { source.name }

    /// How the input is framed, once the first unit was cut.
    package var framing: InputUnit.Kind? { kind }

    /// The mapping the units are cut from, if the input is mapped.
    package var mapping: MappedFile? { mapped?.file }

    /// Whether pages of a mapped input can be given back as it is read (Linux's `MADV_DONTNEED`);
    /// elsewhere inputs are read with `read`, so that memory stays bounded.
    #if os(Linux)
    package static let releasesMappedPages = true
    #else
    package static let releasesMappedPages = false
    #endif

    /// The next piece, or `nil` at the end of the input.
    package func next() throws -> Piece? {
        if let unit = nextQueued() { return .unit(unit) }
        if isFirstUnit && configuration.passesWholeInputs, let whole = source as? any WholeInput,
           mapped == nil && pending.count == 0 && !isEOF {
            isFirstUnit = false
            isEOF = true
            kind = .documents
            return .unit(InputUnit(whole: whole, sourceIndex: sourceIndex))
        }
        if isFirstUnit && mapped == nil && pending.count == 0 && !isEOF {
            if configuration.mapsInput && Self.releasesMappedPages, let size = source.sizeHint, size >= configuration.minimumMappedSize,
               let input = source.mapRemaining(maximumSize: Int.max) {
                mapped = input
            }
        }
        if let mapped { return try nextMapped(mapped) }
        return try nextRead()
    }

    // MARK: Mapped input

    private func nextMapped(_ input: MappedInput) throws -> Piece? {
        let bytes = input.bytes
        guard let base = bytes.baseAddress, mappedOffset < bytes.count else { return nil }
        let total = bytes.count
        if kind == nil {
            kind = framing(of: bytes)
            if kind == .documents && total > configuration.maximumDocumentBytes {
                throw tooLargeDocument(limit: configuration.maximumDocumentBytes, isStream: false)
            }
        }
        let start = mappedOffset
        var cut = total
        let mark = start == 0 && Self.startsWithByteOrderMark(bytes) ? 3 : 0
        if kind == .documents, let unit = split(UnsafeRawBufferPointer(rebasing: bytes[(start + mark)...]), keeping: input.file) {
            mappedOffset = total
            bytesRead = total
            return .unit(unit)
        }
        if kind == .lines && start + configuration.chunkSize < total {
            // Back to the chunk's last newline; past a line longer than a chunk, on to its end.
            var back = start + configuration.chunkSize
            while back > start && base.load(fromByteOffset: back - 1, as: UInt8.self) != 0x0A { back -= 1 }
            if back > start {
                cut = back
            } else {
                let from = start + configuration.chunkSize
                let searchEnd = total - start > configuration.maximumLineBytes ? start + configuration.maximumLineBytes + 1 : total
                if searchEnd > from, let newline = memchr(base + from, 0x0A, searchEnd - from) {
                    cut = UnsafeRawPointer(newline) - base + 1
                } else if searchEnd < total {
                    return .oversizedLine
                }
            }
        }
        mappedOffset = cut
        bytesRead = cut
        return .unit(makeUnit(mapped: UnsafeRawBufferPointer(rebasing: bytes[start..<cut]), in: input.file))
    }

    /// Gives back the pages of a mapped input before `end` (an offset in the input), which were
    /// read and will not be read again, so that they no longer count towards the process's
    /// memory. They stay in the page cache.
    package func releaseMapped(upTo end: Int) {
        #if os(Linux)
        guard let input = mapped, let base = input.bytes.baseAddress,
              let released = Syscall.discardPages(from: base + releasedUpTo, to: base + end) else { return }
        releasedUpTo = released - base
        #endif
    }

    // MARK: Read input

    private func nextRead() throws -> Piece? {
        if kind == nil {
            // Enough to see the first non-blank line whole.
            try fill(toAtLeast: configuration.chunkSize)
            while !isEOF, firstContentLineEnd() == nil, pending.count <= configuration.maximumLineBytes {
                try fill(toAtLeast: pending.count + configuration.chunkSize)
            }
            guard pending.count > 0 else { return nil }
            if !isEOF && firstContentLineEnd() == nil {
                kind = .lines // a first line longer than the limit
            } else {
                kind = framing(of: pending.bytes)
            }
        }
        if kind == .documents {
            let isStream = source.sizeHint == nil
            let limit = isStream ? configuration.maximumStreamedDocumentBytes : configuration.maximumDocumentBytes
            pending.limit = Self.adding(limit, configuration.chunkSize)
            while true {
                if pending.count > limit { throw tooLargeDocument(limit: limit, isStream: isStream) }
                if isEOF { break }
                try fill(toAtLeast: pending.count + configuration.chunkSize)
            }
            guard pending.count > 0 else { return nil }
            if pending.count >= configuration.minimumSplitSize {
                let skipped = Self.startsWithByteOrderMark(pending.bytes) ? 3 : 0
                let count = pending.count
                let owner = SharedBytes(taking: pending.take(count, keepingCapacity: 0), count: count)
                if let unit = split(UnsafeRawBufferPointer(rebasing: owner.bytes[skipped...]), keeping: owner) { return .unit(unit) }
                // Not a shape to cut: one unit after all (a copy, once).
                pending.reserve(count)
                pending.spare.copyMemory(from: owner.bytes)
                pending.count = count
            }
            return .unit(makeUnit(taking: pending.count))
        }
        // Lines: what is there, or a chunk's worth, cut after its last newline.
        if pending.count < configuration.chunkSize && !isEOF { try fill(toAtLeast: 1) }
        var searched = 0
        while true {
            if pending.count == 0 && isEOF { return nil }
            if isEOF { return .unit(makeUnit(taking: pending.count)) }
            if let last = pending.lastNewline(from: searched) { return .unit(makeUnit(taking: last + 1)) }
            searched = pending.count
            if pending.count > configuration.maximumLineBytes { return .oversizedLine }
            try fill(toAtLeast: pending.count + 1)
        }
    }

    /// Reads into ``pending`` until it holds `count` bytes or the input ends (at least one
    /// read, unless it ended), straight into its memory.
    private func fill(toAtLeast count: Int) throws {
        repeat {
            pending.reserve(max(configuration.chunkSize, min(count, configuration.chunkSize * 4) - pending.count))
            // A chunk at a time at most: reading ahead of what framing needs would read past a
            // line over the limit (or a bomb) for nothing.
            let spare = pending.spare
            let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: spare[..<min(spare.count, configuration.chunkSize)]))
            if n == 0 {
                isEOF = true
                return
            }
            pending.count += n
            bytesRead += n
        } while pending.count < min(count, configuration.chunkSize)
    }

    /// The end of the first line that is not blank, if ``pending`` holds it whole.
    private func firstContentLineEnd() -> Int? {
        let bytes = pending.bytes
        guard let base = bytes.baseAddress else { return nil }
        var start = 0
        while start < bytes.count {
            guard let newline = memchr(base + start, 0x0A, bytes.count - start) else { return nil }
            let end = UnsafeRawPointer(newline) - base
            if !Self.isBlank(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), skippingMark: start == 0) { return end }
            start = end + 1
        }
        return nil
    }

    // MARK: Oversized lines

    /// Writes the line longer than the limit that ``next()`` found (and its newline) to `sink`,
    /// or skips it when `sink` is `nil`, without holding it; reading goes on after it.
    package func streamOversizedLine(to sink: ByteSink?) throws {
        if let input = mapped {
            let base = input.bytes.baseAddress!, total = input.bytes.count
            var start = mappedOffset
            while start < total {
                let piece = min(configuration.chunkSize, total - start)
                let newline = memchr(base + start, 0x0A, piece).map { UnsafeRawPointer($0) - base }
                let end = newline.map { $0 + 1 } ?? start + piece
                try sink?.write(UnsafeRawBufferPointer(start: base + start, count: end - start))
                releaseMapped(upTo: end)
                start = end
                if newline != nil { break }
            }
            if start == total && (start == 0 || base.load(fromByteOffset: start - 1, as: UInt8.self) != 0x0A) { try sink?.write([0x0A]) }
            mappedOffset = start
            bytesRead = start
            isFirstUnit = false
            return
        }
        isFirstUnit = false
        while true {
            let bytes = pending.bytes
            if let base = bytes.baseAddress, let found = memchr(base, 0x0A, bytes.count) {
                let newline = UnsafeRawPointer(found) - base
                try sink?.write(UnsafeRawBufferPointer(rebasing: bytes[...newline]))
                pending.removeFirst(newline + 1)
                return
            }
            try sink?.write(bytes)
            pending.removeFirst(bytes.count)
            if isEOF {
                try sink?.write([0x0A])
                return
            }
            try fill(toAtLeast: 1)
        }
    }

    // MARK: Units

    /// Cuts a large document text (the rest of the input) into runs of its records, when it is
    /// large and of a shape ``DocumentSplitter`` knows; returns the first unit and queues the rest.
    private func split(_ text: UnsafeRawBufferPointer, keeping owner: AnyObject) -> InputUnit? {
        guard text.count >= configuration.minimumSplitSize,
              let pieces = DocumentSplitter.pieces(of: text, runBytes: configuration.chunkSize, maximumDepth: configuration.maximumDepth)
        else { return nil }
        queued = (pieces[...], text, owner)
        isFirstUnit = false
        return nextQueued()
    }

    /// The next unit of a document cut into runs, if one is queued.
    private func nextQueued() -> InputUnit? {
        guard var current = queued, let piece = current.pieces.popFirst() else {
            queued = nil
            return nil
        }
        queued = current
        switch piece {
        case .records(let run):
            return InputUnit(elements: run.elements, zone: run.zone, of: current.text, keeping: current.owner, mapping: mapped?.file,
                             sourceName: source.name, sourceIndex: sourceIndex, offset: run.elements.first?.lowerBound ?? 0)
        case .documents(let range):
            return InputUnit(elements: [range], zone: nil, of: current.text, keeping: current.owner, mapping: mapped?.file,
                             sourceName: source.name, sourceIndex: sourceIndex, offset: range.lowerBound, asDocuments: true)
        }
    }

    private func makeUnit(mapped bytes: UnsafeRawBufferPointer, in file: MappedFile) -> InputUnit {
        defer {
            isFirstUnit = false
            cutOffset += bytes.count
        }
        return InputUnit(kind: kind ?? .lines, mapped: bytes, in: file, sourceName: source.name, sourceIndex: sourceIndex,
                         offset: cutOffset, skipsByteOrderMark: isFirstUnit && Self.startsWithByteOrderMark(bytes))
    }

    /// A unit of the first `count` bytes of ``pending``, which it takes over (the rest stays).
    private func makeUnit(taking count: Int) -> InputUnit {
        let skipsMark = isFirstUnit && Self.startsWithByteOrderMark(UnsafeRawBufferPointer(rebasing: pending.bytes[..<count]))
        let storage = pending.take(count, keepingCapacity: configuration.chunkSize)
        let unit = InputUnit(kind: kind ?? .lines, owning: storage, count: count, sourceName: source.name,
                             sourceIndex: sourceIndex, offset: cutOffset, skipsByteOrderMark: skipsMark)
        isFirstUnit = false
        cutOffset += count
        return unit
    }

    // MARK: Framing

    /// How an input starting with `bytes` is framed: as documents when its first non-blank line
    /// opens a JSON value it does not close (a pretty-printed response), else as lines.
    private func framing(of bytes: UnsafeRawBufferPointer) -> InputUnit.Kind {
        guard let base = bytes.baseAddress else { return .lines }
        var start = Self.startsWithByteOrderMark(bytes) ? 3 : 0
        while start < bytes.count {
            let end = memchr(base + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - base } ?? bytes.count
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            start = end + 1
            if Self.isBlank(line, skippingMark: false) { continue }
            if line.count > configuration.maximumLineBytes { return .lines }
            return RecordJSON.opensIncompleteValue(line, configuration: .init(maximumDepth: configuration.maximumDepth)) ? .documents : .lines
        }
        return .lines
    }

    private func tooLargeDocument(limit: Int, isStream: Bool) -> RecordFormatError {
        Self.tooLargeDocument(limit: limit, isStream: isStream, configuration: configuration, source: source.name)
    }

    /// The error for a document over `limit` bytes in `source`.
    package static func tooLargeDocument(limit: Int, isStream: Bool, configuration: Configuration, source: String) -> RecordFormatError {
        let why = isStream ? " from a stream (held in memory whole, it is held to the line limit; a regular file may hold one of up to "
            + "\(configuration.maximumDocumentBytes) bytes)" : ""
        return RecordFormatError(.tooLarge, "expected a multi-line JSON document of at most \(limit) bytes\(why), found a larger one",
                                 byteOffset: 0, source: source, line: 1, column: 1)
    }

    /// Whether an input beginning with `head` (its first bytes, not necessarily all of it) is
    /// framed as documents: its first non-blank line, whole within `head`, opens a JSON value it
    /// does not close. `false` when `head` does not settle it.
    package static func opensDocument(head: UnsafeRawBufferPointer, configuration: Configuration = .init()) -> Bool {
        guard let base = head.baseAddress else { return false }
        var start = startsWithByteOrderMark(head) ? 3 : 0
        while start < head.count {
            guard let newline = memchr(base + start, 0x0A, head.count - start) else { return false }
            let end = UnsafeRawPointer(newline) - base
            let line = UnsafeRawBufferPointer(rebasing: head[start..<end])
            start = end + 1
            if isBlank(line, skippingMark: false) { continue }
            return RecordJSON.opensIncompleteValue(line, configuration: .init(maximumDepth: configuration.maximumDepth))
        }
        return false
    }

    /// `a + b`, or `Int.max` where that overflows (a limit may be `Int.max`).
    private static func adding(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// Whether `bytes` start with a UTF-8 byte order mark.
    package static func startsWithByteOrderMark(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0xEF && iterator.next() == 0xBB && iterator.next() == 0xBF
    }

    /// Whether a line holds only spaces, tabs and carriage returns (after a byte order mark, when
    /// `skippingMark`).
    private static func isBlank(_ line: UnsafeRawBufferPointer, skippingMark: Bool) -> Bool {
        let content = skippingMark && startsWithByteOrderMark(line) ? UnsafeRawBufferPointer(rebasing: line[3...]) : line
        return RecordDocumentDecoder.isBlank(content)
    }
}

/// The bytes a framer has read and not yet cut, in memory it owns; cutting hands the memory to
/// the unit and copies only what is left after the cut (a partial last line).
private struct PendingBytes {
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    var count = 0
    /// The most the framer holds before it refuses the input (its limit and one read). Growth
    /// goes straight to it instead of doubling past it: the bytes held at the limit are then in
    /// memory once, not copied into a buffer twice their size while the old one still holds them.
    var limit = Int.max

    /// The bytes held.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[..<count]) }

    /// The room after them.
    var spare: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: storage[count...]) }

    /// Makes room for at least `more` bytes after those held.
    mutating func reserve(_ more: Int) {
        guard storage.count - count < more else { return }
        var size = max(count + more, storage.count * 2)
        if size < limit && size > limit / 2 { size = limit }
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        if count > 0 { grown.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: count) }
        storage.deallocate()
        storage = grown
    }

    /// Hands over the memory holding the first `cut` bytes; what follows them moves to new memory
    /// of at least `capacity` bytes.
    mutating func take(_ cut: Int, keepingCapacity capacity: Int) -> UnsafeMutableRawBufferPointer {
        let taken = storage
        let rest = count - cut
        storage = .allocate(byteCount: max(capacity, rest * 2), alignment: 16)
        if rest > 0 { storage.baseAddress!.copyMemory(from: taken.baseAddress! + cut, byteCount: rest) }
        count = rest
        return taken
    }

    /// Drops the first `n` bytes.
    mutating func removeFirst(_ n: Int) {
        if n < count { storage.baseAddress!.copyMemory(from: storage.baseAddress! + n, byteCount: count - n) }
        count -= n
    }

    /// The offset of the last newline at or after `start`, if any.
    func lastNewline(from start: Int) -> Int? {
        let bytes = self.bytes
        var i = bytes.count - 1
        while i >= start {
            if bytes[i] == 0x0A { return i }
            i -= 1
        }
        return nil
    }

    /// Frees the memory (the owner calls it once, when it goes).
    func free() { storage.deallocate() }
}
