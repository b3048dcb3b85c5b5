import FerryIO

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
    }

    package let kind: Kind
    /// The unit's bytes: valid while the unit lives.
    package let bytes: UnsafeRawBufferPointer
    /// The input's name, for messages.
    package let sourceName: String
    /// The position of the input among those the framer was given (0-based).
    package let sourceIndex: Int
    /// Bytes of the input before this unit.
    package let offset: Int
    /// Whether the unit starts with a UTF-8 byte order mark to be skipped (only at the start of
    /// an input).
    package let skipsByteOrderMark: Bool
    /// The mapping the bytes lie in, or `nil` when the unit owns them.
    package let mapping: MappedFile?
    private let owned: UnsafeMutableRawBufferPointer?

    package init(kind: Kind, mapped bytes: UnsafeRawBufferPointer, in mapping: MappedFile, sourceName: String, sourceIndex: Int,
         offset: Int, skipsByteOrderMark: Bool) {
        self.kind = kind
        self.bytes = bytes
        self.mapping = mapping
        owned = nil
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
        self.sourceName = sourceName
        self.sourceIndex = sourceIndex
        self.offset = offset
        self.skipsByteOrderMark = skipsByteOrderMark
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
