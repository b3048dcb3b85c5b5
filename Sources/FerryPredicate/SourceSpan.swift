/// Where a piece of predicate text was written: a byte offset and length, and the 1-based line and
/// column (in characters) of its first character.
///
/// Spans are carried through the syntax tree so that errors and CloudKit reasons can point at the
/// text, but they never take part in equality or hashing: two trees that differ only in where
/// they were written are equal, so `parse(format(tree)) == tree` holds.
public struct SourceSpan: Hashable, Sendable, CustomStringConvertible {
    /// Byte offset of the first character in the UTF-8 text.
    public var offset: Int
    /// Length in bytes.
    public var length: Int
    /// 1-based line; 0 when unknown.
    public var line: Int
    /// 1-based column in characters; 0 when unknown.
    public var column: Int

    /// Creates a span.
    public init(offset: Int, length: Int, line: Int, column: Int) {
        self.offset = offset
        self.length = length
        self.line = line
        self.column = column
    }

    /// The span of a node that was built in code rather than parsed.
    public static let unknown = SourceSpan(offset: 0, length: 0, line: 0, column: 0)

    /// Whether this span points at parsed text.
    public var isKnown: Bool { line > 0 }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }

    /// Spans never distinguish trees.
    public static func == (lhs: SourceSpan, rhs: SourceSpan) -> Bool { true }

    /// Spans never distinguish trees.
    public func hash(into hasher: inout Hasher) {}
}
