import FerryIO
import FerryRecords

/// A piece of one JSON input cut by ``JSONFramer`` for a decoder: whole lines, or whole
/// documents.
///
/// Its bytes are either a piece of a mapped file (kept mapped by the unit) or memory the unit
/// owns. `@unchecked Sendable`: the bytes are read-only once cut; a unit is handed to one worker
/// at a time.
package final class InputUnit: @unchecked Sendable {
    /// How the bytes are framed.
    package enum Kind: Sendable {
        /// Whole lines, one JSON document (or array of documents) per line.
        case lines
        /// Whitespace-separated JSON documents, such as one pretty-printed response.
        case documents
        /// Records of a large response document, each decoded on its own (``elements``).
        case elements
        /// A whole input still to be read (``whole``), by the worker that decodes it: the
        /// worker reads it (``readWhole(limit:)``) and the unit becomes ``documents``.
        case whole
    }

    package private(set) var kind: Kind
    /// The unit's bytes: valid while the unit lives.
    package private(set) var bytes: UnsafeRawBufferPointer
    /// The input's name, for messages.
    package let sourceName: String
    /// The position of the input among those the framer was given (0-based).
    package let sourceIndex: Int
    /// Bytes of the input before this unit.
    package let offset: Int
    /// Whether the unit starts with a UTF-8 byte order mark to be skipped (only at the start of
    /// an input).
    package private(set) var skipsByteOrderMark: Bool
    /// The mapping the bytes lie in, or `nil` when the unit owns them.
    package let mapping: MappedFile?
    private var owned: UnsafeMutableRawBufferPointer?
    /// For ``Kind/whole``: the input, until it is read.
    package private(set) var whole: (any WholeInput)?
    /// Whether the bytes were read by ``readWhole(limit:)`` (the framer did not count them).
    package private(set) var wasReadWhole = false
    /// What keeps memory the unit shares with others alive.
    private let keptAlive: AnyObject?

    /// For ``Kind/elements``: the byte range of each record within ``bytes``.
    package private(set) var elements: [Range<Int>] = []
    /// For ``Kind/elements``: the zone of the `changes/zone` entry the records came in.
    package private(set) var zone: ZoneID?
    /// For ``Kind/elements``: the whole text the records are part of (for lines and columns in
    /// messages), and where ``bytes`` start in it.
    package private(set) var document = UnsafeRawBufferPointer(start: nil, count: 0)
    package private(set) var offsetInDocument = 0

    /// A unit of records of `document`, a text kept alive by `owner`.
    /// With `asDocuments`, `elements` is one range of whole documents, read as ``Kind/documents``.
    package init(elements: [Range<Int>], zone: ZoneID?, of document: UnsafeRawBufferPointer, keeping owner: AnyObject,
                 mapping: MappedFile?, sourceName: String, sourceIndex: Int, offset: Int, asDocuments: Bool = false) {
        let start = elements.first?.lowerBound ?? 0, end = elements.last?.upperBound ?? 0
        kind = asDocuments ? .documents : .elements
        bytes = UnsafeRawBufferPointer(rebasing: document[start..<end])
        self.elements = elements.map { ($0.lowerBound - start)..<($0.upperBound - start) }
        self.zone = zone
        self.document = document
        offsetInDocument = start
        self.mapping = mapping
        owned = nil
        keptAlive = owner
        self.sourceName = sourceName
        self.sourceIndex = sourceIndex
        self.offset = offset
        skipsByteOrderMark = false
    }

    package init(kind: Kind, mapped bytes: UnsafeRawBufferPointer, in mapping: MappedFile, sourceName: String, sourceIndex: Int,
         offset: Int, skipsByteOrderMark: Bool) {
        self.kind = kind
        self.bytes = bytes
        self.mapping = mapping
        owned = nil
        keptAlive = nil
        self.sourceName = sourceName
        self.sourceIndex = sourceIndex
        self.offset = offset
        self.skipsByteOrderMark = skipsByteOrderMark
    }

    /// A unit owning `storage` (allocated with `allocate(byteCount:alignment:)`), of which the
    /// first `count` bytes are its content.
    package init(kind: Kind, owning storage: UnsafeMutableRawBufferPointer, count: Int, sourceName: String, sourceIndex: Int,
         offset: Int, skipsByteOrderMark: Bool) {
        self.kind = kind
        bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[..<count])
        owned = storage
        mapping = nil
        keptAlive = nil
        self.sourceName = sourceName
        self.sourceIndex = sourceIndex
        self.offset = offset
        self.skipsByteOrderMark = skipsByteOrderMark
    }

    /// A unit for the whole of `input`, which the worker decoding it reads.
    package init(whole input: any WholeInput, sourceIndex: Int) {
        kind = .whole
        bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        whole = input
        mapping = nil
        owned = nil
        keptAlive = nil
        sourceName = input.name
        self.sourceIndex = sourceIndex
        offset = 0
        skipsByteOrderMark = false
    }

    /// Reads a ``Kind/whole`` unit's input (at most `limit` bytes) and makes it a unit of
    /// ``Kind/documents`` owning them; `false` when the input is longer than `limit`.
    package func readWhole(limit: Int) throws -> Bool {
        guard let input = whole else { return true }
        whole = nil
        guard let (storage, count) = try input.readWhole(limit: limit) else { return false }
        owned = storage
        bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[..<count])
        skipsByteOrderMark = JSONFramer.startsWithByteOrderMark(bytes)
        kind = .documents
        wasReadWhole = true
        return true
    }

    /// Reads a ``Kind/whole`` unit's input as the framer reads a stream's document: whole, up to
    /// `framing`'s ``JSONFramer/Configuration/maximumStreamedDocumentBytes`` (the line limit).
    /// Does nothing for other units.
    ///
    /// - Throws: the framer's too-large error past the limit; what reading the input throws.
    package func readWhole(as framing: JSONFramer.Configuration) throws {
        guard kind == .whole else { return }
        let limit = framing.maximumStreamedDocumentBytes
        guard try readWhole(limit: limit) else {
            throw JSONFramer.tooLargeDocument(limit: limit, isStream: true, configuration: framing, source: sourceName)
        }
    }

    deinit { owned?.deallocate() }

    /// The content after a byte order mark the unit skips.
    package var content: UnsafeRawBufferPointer {
        skipsByteOrderMark ? UnsafeRawBufferPointer(rebasing: bytes[3...]) : bytes
    }

    /// Calls `body` with the bytes, keeping them alive until it returns.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(self) { try body(bytes) }
    }
}

/// Memory a framer read a whole input into, shared by the units cut from it and freed with
/// the last of them.
package final class SharedBytes: @unchecked Sendable {
    package let storage: UnsafeMutableRawBufferPointer
    package let count: Int

    package init(taking storage: UnsafeMutableRawBufferPointer, count: Int) {
        self.storage = storage
        self.count = count
    }

    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[..<count]) }

    deinit { storage.deallocate() }
}
