import FerryRecords

/// A parsed predicate: a comparison, a compound (AND, OR, NOT) or a constant.
///
/// ```swift
/// let predicate = try RecordPredicate(parsing: #"recordType == "Message" AND count > %@"#, arguments: [.number(JSONNumber(50))])
/// print(predicate)               // recordType == "Message" AND count > 50
/// let filter = try predicate.compile()
/// ```
///
/// AND and OR are n-ary and always flat: an AND never directly holds another AND (the parser
/// merges `a AND (b AND c)` into one chain), so a 100,000-term chain is one node.
public indirect enum RecordPredicate: Hashable, Sendable {
    /// `TRUEPREDICATE` (`true`) or `FALSEPREDICATE` (`false`).
    case constant(Bool)
    /// A comparison.
    case comparison(PredicateComparison)
    /// All operands hold (`TRUEPREDICATE` when empty). The span is the first `AND`.
    case and([RecordPredicate], SourceSpan = .unknown)
    /// Some operand holds (`FALSEPREDICATE` when empty). The span is the first `OR`.
    case or([RecordPredicate], SourceSpan = .unknown)
    /// The operand does not hold. The span is the `NOT` (or the `NONE` it came from).
    case not(RecordPredicate, SourceSpan = .unknown)

    /// How deeply parentheses, NOT, functions and arithmetic may nest before parsing stops with
    /// ``PredicateError/Code-swift.enum/nestingTooDeep`` (chains of AND/OR do not count).
    ///
    /// 200 keeps the recursive-descent parser well inside a 512 KB thread stack (Swift
    /// concurrency's worker threads) even in debug builds; real predicates nest a handful deep.
    public static let maximumDepth = 200

    /// Parses a predicate format string.
    ///
    /// - Parameters:
    ///   - text: the format string, e.g. `name BEGINSWITH[c] "fer" AND age > 3`.
    ///   - arguments: values for the format specifiers in order (`%K` takes a key path string,
    ///     `%@` any value, `%d`/`%f` numbers). With `nil`, specifiers stay ``PredicateExpression/placeholder(_:)``s.
    /// - Throws: ``PredicateError`` with what was expected, what was found and where.
    public init(parsing text: String, arguments: [JSONValue]? = nil) throws(PredicateError) {
        var parser = try PredicateParser(text: text, arguments: arguments, maximumDepth: Self.maximumDepth)
        self = try parser.parseWhole()
    }

    /// Apple's `predicateFormat`: the canonical text of this predicate.
    ///
    /// A key that came from a `%K` argument and that the format language cannot write (`a-b`,
    /// `my key`, `#a`) is printed as it is, so that text does not parse back;
    /// ``canonicalText()`` refuses such a predicate instead.
    public var predicateFormat: String {
        var printer = PredicatePrinter()
        printer.write(self)
        return printer.output
    }

    /// The canonical text (``predicateFormat``), which parses back to this same predicate.
    ///
    /// - Throws: ``PredicateError`` with code ``PredicateError/Code-swift.enum/argument`` naming
    ///   the first key path component the format language has no way to write (it has no
    ///   escape for characters such as `-`, space, `#` or `:` in a key; `#` only escapes reserved
    ///   words), or a number that is not finite.
    public func canonicalText() throws(PredicateError) -> String {
        var printer = PredicatePrinter()
        printer.write(self)
        if let unwritable = printer.unwritable {
            throw PredicateError(.argument,
                                 "\(unwritable) cannot be written in predicate format syntax, so no text parses back to this predicate (a key is letters, digits and _, or @name; #word escapes a reserved word)",
                                 expected: "a key the format language can write", found: unwritable)
        }
        // Arguments may nest deeper than text can (a JSON array of 300 levels for %@): such text
        // would not parse back.
        do {
            _ = try RecordPredicate(parsing: printer.output)
        } catch where error.code == .nestingTooDeep {
            throw PredicateError(.nestingTooDeep,
                                 "the predicate's canonical text nests deeper than \(Self.maximumDepth) levels, so it would not parse back",
                                 expected: "at most \(Self.maximumDepth) levels of nesting", found: "more")
        } catch {}
        return printer.output
    }

    /// Appends this predicate to an operand list of an OR (`or == true`) or AND, merging
    /// same-kind compounds so chains stay flat.
    func appendFlattened(to operands: inout [RecordPredicate], or: Bool) {
        switch self {
        case .or(let inner, _) where or: operands.append(contentsOf: inner)
        case .and(let inner, _) where !or: operands.append(contentsOf: inner)
        default: operands.append(self)
        }
    }

    /// An AND of the operands, flattened (`TRUEPREDICATE` when empty, the operand when one).
    public static func all(_ operands: [RecordPredicate]) -> RecordPredicate {
        var flat: [RecordPredicate] = []
        for operand in operands { operand.appendFlattened(to: &flat, or: false) }
        return flat.count == 1 ? flat[0] : .and(flat)
    }

    /// An OR of the operands, flattened (`FALSEPREDICATE` when empty, the operand when one).
    public static func any(_ operands: [RecordPredicate]) -> RecordPredicate {
        var flat: [RecordPredicate] = []
        for operand in operands { operand.appendFlattened(to: &flat, or: true) }
        return flat.count == 1 ? flat[0] : .or(flat)
    }
}

extension RecordPredicate: CustomStringConvertible {
    /// The canonical text (``predicateFormat``).
    public var description: String { predicateFormat }
}

extension PredicateExpression {
    /// Parses a single expression, e.g. `items.@sum.price * 2`.
    public init(parsing text: String, arguments: [JSONValue]? = nil) throws(PredicateError) {
        var parser = try PredicateParser(text: text, arguments: arguments, maximumDepth: RecordPredicate.maximumDepth)
        self = try parser.parseWholeExpression()
    }

    /// The canonical text of this expression.
    public var expressionFormat: String {
        var printer = PredicatePrinter()
        printer.write(self)
        return printer.output
    }
}
