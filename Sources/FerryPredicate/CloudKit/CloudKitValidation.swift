/// Whether CloudKit's `CKQuery` would accept a predicate, and if not, every reason why.
public struct CloudKitValidation: Hashable, Sendable {
    /// The rule a finding is about.
    public enum Rule: String, Hashable, Sendable, CaseIterable {
        /// OR / `||` is not supported.
        case or
        /// ALL is not supported (NONE, `NOT ANY`, is: it negates a list test).
        case allOrNone
        /// ENDSWITH, LIKE, MATCHES, UTI-*, custom selectors.
        case unsupportedOperator
        /// CONTAINS or IN over a string (substring search).
        case stringContains
        /// Key paths with `.` or `@`.
        case keyPath
        /// NOT over an AND, an OR, BETWEEN, full-text search, location query or ordering.
        case notOperand
        /// SUBQUERY, FUNCTION, TERNARY, arithmetic, bitwise, `[ ]`, variables, casts of fields.
        case unsupportedExpression
        /// A field compared with another field, or no field at all.
        case fieldToField
        /// `parent` cannot be queried.
        case parent
        /// A system key that CKQuery does not filter on (`recordType`, `zoneName`…).
        case systemKey
        /// Names must match `[a-zA-Z][a-zA-Z0-9_]*`.
        case nameFormat
        /// A list of values (`x IN %@`, `ANY x IN %@`, `ANY %@ IN x`, `ANY {…} = x`, their NOT forms)
        /// holds at most 250 values; above 100 is a warning.
        case inListTooLong
        /// distanceToLocation:fromLocation: only with `<` or `<=` (inside a circle).
        case distanceDirection
        /// BEGINSWITH needs a string field and a string constant.
        case beginsWithNonString
        /// The comparison's form is not one CloudKit supports.
        case unsupportedForm
        /// TOKENMATCHES must be `allTokens TOKENMATCHES[cdl] constant`.
        case tokenMatches
        /// BETWEEN needs two single-value bounds `{low, high}`.
        case betweenBounds
        /// A date CloudKit's TIMESTAMP (whole milliseconds since 1970 in 64 bits) cannot hold: out of
        /// range, or compared for equality with a fraction of a millisecond.
        case timestamp
        /// A list of values mixing CloudKit types (integers with doubles are fine), or holding nil
        /// or another list.
        case listType
        /// A comparison with nil: CloudKit's values are never nil.
        case nilValue
        /// `ANY list CONTAINS value` is documented as list membership, but in memory it tests each
        /// element for a substring (warning).
        case quantifiedContains
        /// Comparison options such as `[c]` are undocumented for CloudKit (warning).
        case undocumentedOptions
        /// CloudKit compares strings case-insensitively (note).
        case caseInsensitiveEquality
        /// Records of type `Users` cannot be queried.
        case usersType
        /// The record type is not in the schema.
        case unknownRecordType
        /// The field is not in the schema.
        case unknownField
        /// The field's type does not fit the operator or the constant.
        case typeMismatch
        /// Asset fields cannot be queried.
        case assetField
        /// The field lacks the QUERYABLE index equality needs.
        case notQueryable
        /// The field lacks the SORTABLE index ordering and sorting need.
        case notSortable
        /// No field of the type is SEARCHABLE, which full-text search needs.
        case notSearchable
    }

    /// One finding: the rule, a sentence, and where in the predicate text.
    public struct Finding: Hashable, Sendable, CustomStringConvertible {
        /// The rule broken (or warned about).
        public var rule: Rule
        /// What is wrong and what CloudKit accepts instead.
        public var message: String
        /// Where in the predicate text.
        public var span: SourceSpan

        /// Creates a finding.
        public init(rule: Rule, message: String, span: SourceSpan) {
            self.rule = rule
            self.message = message
            self.span = span
        }

        /// `line:column: message [rule]`.
        public var description: String {
            span.isKnown ? "\(span.line):\(span.column): \(message) [\(rule.rawValue)]" : "\(message) [\(rule.rawValue)]"
        }
    }

    /// Why CloudKit would reject the predicate; empty when it would accept it.
    public var reasons: [Finding]
    /// Things that work differently or are undocumented, which do not make CloudKit reject it.
    public var warnings: [Finding]

    /// Whether CloudKit would accept the predicate.
    public var isAccepted: Bool { reasons.isEmpty }

    /// The most values one list may hold: CloudKit fails above it with "Query filter exceeds the
    /// limit of values: 250".
    public static let maximumListValues = 250

    /// The list size users batch at, and above which a list is warned about: CloudKit's servers
    /// have been seen failing from about 200 values.
    public static let recommendedListValues = 100

    /// Creates a result.
    public init(reasons: [Finding] = [], warnings: [Finding] = []) {
        self.reasons = reasons
        self.warnings = warnings
    }
}
