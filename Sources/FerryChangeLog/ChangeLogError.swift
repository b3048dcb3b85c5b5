import FerryRecords

/// A change log, history or state that Ferry cannot use: what was expected, what was found, where.
public struct ChangeLogError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem, stable for scripts.
    public enum Code: String, Sendable {
        /// Not JSON, or JSON of the wrong shape (the underlying record error says which).
        case format
        /// A line or document longer than the configured limit.
        case tooLarge
        /// A line that is JSON but neither a Ferry change event nor a CloudKit change response.
        case unknownDocument
        /// `until` or `since` names a token that no checkpoint of the history carries.
        case tokenNotFound
        /// A tokens file that is not what Ferry writes.
        case invalidTokens
        /// A state or export that holds a record (zone and recordName) more than once.
        case duplicateRecord
        /// A record that does not say its database, compared with an input that holds its zone
        /// and name in several.
        case ambiguousRecord
    }

    /// The kind of problem.
    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// The file or stream, when known.
    public var source: String?
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column in characters, when known.
    public var column: Int?
    /// The JSON or record error underneath, when there is one.
    public var underlying: RecordFormatError?

    /// Creates an error.
    public init(_ code: Code, _ message: String, source: String? = nil, line: Int? = nil, column: Int? = nil,
                underlying: RecordFormatError? = nil) {
        self.code = code
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.underlying = underlying
    }

    /// `file:line:column: message`, as compilers print it.
    public var description: String {
        TextPosition.errorPrefix(source: source, line: line, column: column) + message
    }

    /// Wraps a JSON error found at `offset` within `text`, which starts on line `line` of `source`.
    static func located(_ error: RecordFormatError, in text: UnsafeRawBufferPointer, source: String,
                        line: Int) -> ChangeLogError {
        var position = TextPosition(line: line)
        position.advance(over: text, count: error.byteOffset)
        let lineNumber = position.line, column = position.column
        var inner = error
        inner.source = source
        inner.line = lineNumber
        inner.column = column
        return ChangeLogError(error.code == .tooLarge ? .tooLarge : .format, error.message, source: source,
                              line: lineNumber, column: column, underlying: inner)
    }
}
