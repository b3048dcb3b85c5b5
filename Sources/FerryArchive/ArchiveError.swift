import FerryRecords

/// An error from writing, reading, verifying or extracting an archive.
///
/// Carries what kind of failure it was (``code``), a message saying what was expected and what was
/// found, the archive's name, the member involved, the byte offset in the (decompressed) tar
/// stream where it happened and, for a bad record, its line in the member, plus the underlying
/// error (a `CompressionError`, `FerryIOError` or `RecordFormatError`) when there is one.
public struct ArchiveError: Error, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable {
        /// A tar header is malformed: bad checksum, bad number, unknown format.
        case corruptHeader = "corrupt tar header"
        /// The input ended inside a header or a member, or before the end-of-archive blocks.
        case truncated = "truncated archive"
        /// A member's name is absolute, contains `..`, or is otherwise unsafe to extract.
        case unsafePath = "unsafe path"
        /// A member is a symlink, hardlink, device, FIFO or other type Ferry never extracts.
        case unsupportedMemberType = "unsupported member type"
        /// The archive has no `manifest.json` where one is required (``ArchiveVerifier`` by default).
        case missingManifest = "missing manifest"
        /// `manifest.json` is not valid JSON or lacks a required key.
        case invalidManifest = "invalid manifest"
        /// A member's SHA-256 differs from the manifest.
        case checksumMismatch = "checksum mismatch"
        /// A member's size differs from the manifest.
        case sizeMismatch = "size mismatch"
        /// A records member holds a different number of records (per type) than the manifest says.
        case countMismatch = "record count mismatch"
        /// A member listed in the manifest is not in the archive.
        case missingMember = "missing member"
        /// A member is in the archive but not in the manifest, or appears twice.
        case unexpectedMember = "unexpected member"
        /// A member read before a manifest that comes later was handled by its name (records of a
        /// zone, an asset, a change log, skipped) differently from what the manifest then says.
        case memberBeforeManifest = "member before the manifest"
        /// A member or the whole archive is larger than the configured limits.
        case limitExceeded = "limit exceeded"
        /// Decompressing the archive failed (see ``underlying``: a `CompressionError`).
        case decompressionFailed = "decompression failed"
        /// A records member holds a line that is not a record (see ``underlying``).
        case invalidRecord = "invalid record"
        /// Reading or writing a file failed (see ``underlying``).
        case ioFailure = "I/O failure"
        /// An argument is invalid (an empty database name, a duplicate asset, …).
        case invalidArgument = "invalid argument"
        /// The writer or reader was used after it finished or failed.
        case invalidState = "invalid state"
    }

    /// What kind of failure this is.
    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// The archive's name (usually its path).
    public var archive: String
    /// The member's path inside the archive, when the failure concerns one.
    public var member: String?
    /// The byte offset in the uncompressed tar stream where the failure was found, when known; for
    /// a bad record, where its member's data starts.
    public var offset: Int?
    /// For a bad record: its 1-based line in the (decompressed) member, when known.
    public var line: Int?
    /// The error that caused this one, when there is one.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, archive: String, member: String? = nil,
                offset: Int? = nil, line: Int? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.archive = archive
        self.member = member
        self.offset = offset
        self.line = line
        self.underlying = underlying
    }

    /// `ARCHIVE: member PATH, line LINE, tar byte OFFSET: CODE: MESSAGE: UNDERLYING` (a record
    /// error underneath is not repeated: the member, line and message already say it).
    public var description: String {
        var text = archive + ":"
        if let member {
            var place = [" member \(member)"]
            if let line { place.append(" line \(line)") }
            if let offset { place.append(" tar byte \(offset)") }
            text += place.joined(separator: ",") + ":"
        } else if let offset {
            text += " tar byte \(offset):"
        }
        text += " \(code.rawValue): \(message)"
        // A record error's position and message are already in the member, line and message.
        if let underlying, !(underlying is RecordFormatError) { text += ": \(underlying)" }
        return text
    }
}
