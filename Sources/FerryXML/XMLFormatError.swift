import FerryRecords

/// An XML document or record that Ferry cannot read or write: what was expected, what was found,
/// and where.
///
/// Errors from libxml2 itself (well-formedness, encoding, its own resource limits) carry the
/// libxml2 error number in ``libxml2Code``; errors found by Ferry (a bad INT64, a forbidden
/// DOCTYPE, a limit from ``XMLRecordReader/Configuration``) carry `nil` there.
public struct XMLFormatError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem, stable for scripts.
    public enum Code: String, Sendable {
        /// Not well-formed XML (libxml2 reported a syntax error).
        case syntax
        /// The input ended inside the document.
        case truncated
        /// Bytes that are not UTF-8, or a document in another encoding.
        case invalidUTF8
        /// A DOCTYPE, entity declaration or entity reference: refused (XXE, billion laughs).
        case forbiddenDTD
        /// The root element is not `<records>` in Ferry's namespace, or an element is in another one.
        case wrongNamespace
        /// An element or attribute where Ferry's format has none, or a required one missing.
        case unexpectedContent
        /// A value that does not fit its type (an INT64 that is not an integer, a bad escape).
        case invalidValue
        /// Nesting deeper than ``XMLRecordReader/Configuration/maximumDepth``.
        case tooDeep
        /// A name or text longer than the configured limit.
        case tooLarge
        /// The document does not conform to the XSD (``XMLSchemaValidator``).
        case schemaViolation
        /// Reading the source or writing the sink failed (the underlying error is in the message).
        case io
        /// libxml2 failed in a way that is not about the input (out of memory, a failed call).
        case library
    }

    /// The kind of problem.
    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// The file or stream, when known.
    public var source: String?
    /// 1-based line in the source, when known.
    public var line: Int?
    /// 1-based column in that line, when known (libxml2 reports it for syntax errors).
    public var column: Int?
    /// 1-based index of the record in the source, when known.
    public var recordIndex: Int?
    /// libxml2's error number (`xmlParserErrors`), when libxml2 reported the problem.
    public var libxml2Code: Int32?

    /// Creates an error.
    public init(_ code: Code, _ message: String, source: String? = nil, line: Int? = nil,
                column: Int? = nil, recordIndex: Int? = nil, libxml2Code: Int32? = nil) {
        self.code = code
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.recordIndex = recordIndex
        self.libxml2Code = libxml2Code
    }

    /// `file:line:column: record N: message` — one line, as compilers print it.
    public var description: String {
        TextPosition.errorPrefix(source: source, line: line, column: column, recordIndex: recordIndex) + message
    }
}
