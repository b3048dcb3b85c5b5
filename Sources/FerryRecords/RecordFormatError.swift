/// A record or JSON document that Ferry cannot read: what was expected, what was found, and where.
///
/// The decoder fills in ``byteOffset`` (within the document it was given); readers add the source
/// name, line, column and record index before the error reaches the user.
public struct RecordFormatError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem, stable for scripts (`--json` summaries carry it).
    public enum Code: String, Sendable {
        /// Not JSON: an unexpected character or token.
        case syntax
        /// The input ended inside a value.
        case truncated
        /// Bytes that are not UTF-8.
        case invalidUTF8
        /// A `\u` escape for half of a surrogate pair without the other half.
        case loneSurrogate
        /// A value of the wrong JSON type for its place or its field's type tag.
        case wrongType
        /// A required key is missing (`recordName`, a field's `value`, a location's `latitude`).
        case missingKey
        /// The same key twice in one object.
        case duplicateKey
        /// A number that does not fit its type (INT64 beyond 64 bits, a fraction in a TIMESTAMP).
        case outOfRange
        /// Nesting deeper than the configured limit.
        case tooDeep
        /// A record or line longer than the configured limit.
        case tooLarge
        /// A per-record error entry in a CKWS response (`serverErrorCode`).
        case serverError
    }

    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// Byte offset within the document (or line) where the problem is.
    public var byteOffset: Int
    /// The file or stream, when known (`-` for standard input).
    public var source: String?
    /// 1-based line in the source, when known.
    public var line: Int?
    /// 1-based column (in characters) in that line, when known.
    public var column: Int?
    /// 1-based index of the record in the source, when known.
    public var recordIndex: Int?

    public init(_ code: Code, _ message: String, byteOffset: Int, source: String? = nil,
                line: Int? = nil, column: Int? = nil, recordIndex: Int? = nil) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
        self.source = source
        self.line = line
        self.column = column
        self.recordIndex = recordIndex
    }

    /// `file:line:column: record N: message` — one line, as compilers print it.
    public var description: String {
        TextPosition.errorPrefix(source: source, line: line, column: column, byteOffset: byteOffset,
                                 recordIndex: recordIndex) + message
    }
}

/// A per-record error from a CKWS `records/query` or `records/lookup` response.
///
/// JSON: `{"recordName", "reason", "serverErrorCode", "retryAfter"?, "uuid"?}`. Unknown codes are kept
/// as strings.
public struct RecordServerError: Hashable, Sendable, CustomStringConvertible {
    public var recordName: String?
    public var reason: String?
    public var serverErrorCode: String
    /// The whole entry as sent, so it can be written to a rejects file unchanged.
    public var entry: JSONObject

    public init(recordName: String?, reason: String?, serverErrorCode: String, entry: JSONObject) {
        self.recordName = recordName
        self.reason = reason
        self.serverErrorCode = serverErrorCode
        self.entry = entry
    }

    public var description: String {
        var text = "server error \(serverErrorCode)"
        if let recordName { text += " for record \"\(recordName)\"" }
        if let reason { text += ": \(reason)" }
        return text
    }
}
