/// The one error type of FerryPredicate: a syntax error, a bad format argument, an evaluation
/// error or a schema error, with what was expected, what was found and where.
public struct PredicateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable {
        /// The text is not a predicate (or not a schema).
        case syntax
        /// The text nests deeper than ``RecordPredicate/maximumDepth``.
        case nestingTooDeep
        /// A format argument is missing, extra, or of the wrong kind.
        case argument
        /// The predicate is well formed but cannot be evaluated (unlike types, unbound variable…).
        case evaluation
        /// CloudKit would reject the predicate, and it has no filterBy form or cannot be split into
        /// queries CloudKit accepts (``PredicateError/cloudKitReasons`` says why).
        case cloudKit
    }

    /// The kind of failure.
    public var code: Code
    /// A human sentence; says what was expected and what was found when that applies.
    public var message: String
    /// What the parser expected, e.g. `an operator`.
    public var expected: String?
    /// What it found instead, e.g. `end of input`.
    public var found: String?
    /// Where it happened; ``SourceSpan/unknown`` for evaluation errors without a position.
    public var span: SourceSpan
    /// The source line holding the error (shortened around the column when very long).
    public var sourceLine: String?
    /// The column of ``span`` inside ``sourceLine`` (differs from `span.column` when shortened).
    public var sourceLineColumn: Int
    /// With code ``Code-swift.enum/cloudKit``: every reason CloudKit would reject the predicate (or
    /// a query split from it), each with its rule and position; ``span`` is the first one's.
    public var cloudKitReasons: [CloudKitValidation.Finding] = []

    /// Creates an error.
    public init(_ code: Code, _ message: String, expected: String? = nil, found: String? = nil,
                span: SourceSpan = .unknown, sourceLine: String? = nil, sourceLineColumn: Int? = nil) {
        self.code = code
        self.message = message
        self.expected = expected
        self.found = found
        self.span = span
        self.sourceLine = sourceLine
        self.sourceLineColumn = sourceLineColumn ?? span.column
    }

    /// A syntax error reporting what was expected and what was found.
    static func expected(_ expected: String, found: String, at span: SourceSpan) -> PredicateError {
        PredicateError(.syntax, "expected \(expected), found \(found)", expected: expected, found: found, span: span)
    }

    /// An evaluation error.
    static func evaluation(_ message: String) -> PredicateError {
        PredicateError(.evaluation, message)
    }

    /// 1-based line, 0 when unknown.
    public var line: Int { span.line }
    /// 1-based column, 0 when unknown.
    public var column: Int { span.column }

    /// `line:column: message`, or just the message when the position is unknown.
    public var description: String {
        span.isKnown ? "\(span.line):\(span.column): \(message)" : message
    }

    /// The message, then the source line and a caret under the offending text:
    ///
    /// ```
    /// 1:12: expected an expression, found end of input
    ///   age > 3 AND
    ///              ^
    /// ```
    public func rendered() -> String {
        guard let sourceLine, span.isKnown else { return description }
        let pad = String(repeating: " ", count: max(0, sourceLineColumn - 1))
        let width = max(1, min(span.length, max(1, sourceLine.count - sourceLineColumn + 1)))
        return "\(description)\n  \(sourceLine)\n  \(pad)\(String(repeating: "^", count: width))"
    }
}
