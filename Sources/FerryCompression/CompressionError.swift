/// An error from compressing or decompressing: a bad or truncated gzip stream, a failed checksum,
/// a decompression limit, or a zlib or libdeflate failure.
///
/// Carries what kind of failure it was (``code``), a message saying what was expected and what was
/// found, the name of the underlying source or sink, and where in the compressed bytes it happened.
/// Errors thrown by the wrapped source or sink (for example `FerryIOError`) pass through unchanged.
public struct CompressionError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable {
        /// The gzip header is malformed: wrong magic bytes, unknown method, reserved flags, bad header CRC.
        case badHeader = "bad gzip header"
        /// The input ended inside a member.
        case truncated = "truncated input"
        /// The deflate data is invalid (zlib `Z_DATA_ERROR`).
        case corruptData = "corrupt data"
        /// The CRC-32 in a member's trailer does not match the decompressed bytes.
        case checksumMismatch = "CRC-32 mismatch"
        /// The ISIZE in a member's trailer does not match the decompressed length.
        case lengthMismatch = "length mismatch"
        /// Bytes after the last member are not another gzip member.
        case trailingGarbage = "trailing garbage"
        /// Decompressed output is larger than ``GzipSource/Configuration/maximumOutputBytes``.
        case outputLimitExceeded = "output limit exceeded"
        /// Decompressed output grows faster than ``GzipSource/Configuration/maximumRatio`` allows.
        case ratioLimitExceeded = "ratio limit exceeded"
        /// A configuration value is out of range.
        case invalidConfiguration = "invalid configuration"
        /// The stream was used after it was committed or after an earlier failure.
        case invalidState = "invalid state"
        /// zlib reported a failure that is not about the data (memory, version, stream state).
        case zlibFailure = "zlib failure"
        /// libdeflate failed to allocate a compressor or to fit a block into its output bound.
        case libdeflateFailure = "libdeflate failure"
    }

    /// What kind of failure this is.
    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// The name of the wrapped source or sink (usually a path).
    public var source: String
    /// The offset in the compressed bytes where the failure was detected, when known.
    public var compressedOffset: Int?
    /// The zero-based index of the gzip member being read, when decompressing.
    public var memberIndex: Int?
    /// The zlib return code, when the failure came from zlib.
    public var zlibStatus: ZlibStatus?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        source: String,
        compressedOffset: Int? = nil,
        memberIndex: Int? = nil,
        zlibStatus: ZlibStatus? = nil
    ) {
        self.code = code
        self.message = message
        self.source = source
        self.compressedOffset = compressedOffset
        self.memberIndex = memberIndex
        self.zlibStatus = zlibStatus
    }

    /// `SOURCE: gzip member N, compressed byte OFFSET: CODE: MESSAGE [zlib STATUS]`.
    public var description: String {
        var text = source + ":"
        if let memberIndex { text += " gzip member \(memberIndex)," }
        if let compressedOffset { text += " compressed byte \(compressedOffset):" }
        text += " \(code.rawValue): \(message)"
        if let zlibStatus { text += " [zlib \(zlibStatus)]" }
        return text
    }
}
