/// A comparison predicate: `[quantifier] left operator[options] right`.
public struct PredicateComparison: Hashable, Sendable {
    /// `ANY`/`SOME`, `ALL`, or none. (`NONE` parses as `NOT ANY`, as Apple parses it.)
    public enum Quantifier: String, Hashable, Sendable {
        /// No quantifier.
        case direct = ""
        /// `ANY` (also written `SOME`).
        case any = "ANY"
        /// `ALL`.
        case all = "ALL"
    }

    /// The comparison operator.
    public enum Operator: Hashable, Sendable {
        case equalTo, notEqualTo, lessThan, lessThanOrEqualTo, greaterThan, greaterThanOrEqualTo
        case matches, like, beginsWith, endsWith, `in`, contains, between, tokenMatches
        case utiConformsTo, utiEquals
        /// A custom selector such as `notContainedIn:`.
        case customSelector(String)

        /// The canonical spelling.
        public var text: String {
            switch self {
            case .equalTo: "=="
            case .notEqualTo: "!="
            case .lessThan: "<"
            case .lessThanOrEqualTo: "<="
            case .greaterThan: ">"
            case .greaterThanOrEqualTo: ">="
            case .matches: "MATCHES"
            case .like: "LIKE"
            case .beginsWith: "BEGINSWITH"
            case .endsWith: "ENDSWITH"
            case .in: "IN"
            case .contains: "CONTAINS"
            case .between: "BETWEEN"
            case .tokenMatches: "TOKENMATCHES"
            case .utiConformsTo: "UTI-CONFORMS-TO"
            case .utiEquals: "UTI-EQUALS"
            case .customSelector(let selector): selector
            }
        }

        /// Whether the operator compares strings (and so takes `[cd]` options meaningfully).
        public var isStringOperator: Bool {
            switch self {
            case .matches, .like, .beginsWith, .endsWith, .contains, .tokenMatches: true
            default: false
            }
        }
    }

    /// `[c]`, `[d]`, `[n]`, `[l]`.
    public struct Options: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized.
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: locale-sensitive.
        public static let localeSensitive = Options(rawValue: 8)

        /// The letters in canonical order c d n l, e.g. `cd`.
        public var letters: String {
            var text = ""
            if contains(.caseInsensitive) { text += "c" }
            if contains(.diacriticInsensitive) { text += "d" }
            if contains(.normalized) { text += "n" }
            if contains(.localeSensitive) { text += "l" }
            return text
        }
    }

    /// The quantifier.
    public var quantifier: Quantifier
    /// The left expression.
    public var left: PredicateExpression
    /// The operator.
    public var `operator`: Operator
    /// The options.
    public var options: Options
    /// The right expression.
    public var right: PredicateExpression
    /// Where the operator was written.
    public var span: SourceSpan
    /// Where the left expression starts (the quantifier, when there is one).
    public var leftSpan: SourceSpan
    /// Where the right expression starts.
    public var rightSpan: SourceSpan

    /// Creates a comparison.
    public init(_ left: PredicateExpression, _ operator: Operator, _ right: PredicateExpression,
                quantifier: Quantifier = .direct, options: Options = [],
                span: SourceSpan = .unknown, leftSpan: SourceSpan = .unknown, rightSpan: SourceSpan = .unknown) {
        self.quantifier = quantifier
        self.left = left
        self.operator = `operator`
        self.options = options
        self.right = right
        self.span = span
        self.leftSpan = leftSpan
        self.rightSpan = rightSpan
    }
}
