/// One side of a comparison: a key path, a constant, a variable, a function, a subquery…
///
/// The cases mirror `NSExpression`'s kinds. Constants that JSON and the format language lack are
/// typed cases: ``date(secondsSinceReferenceDate:)`` (printed as Apple prints dates,
/// `CAST(490594046.671135, "NSDate")`), ``reference(_:)`` and ``location(latitude:longitude:)``.
public indirect enum PredicateExpression: Hashable, Sendable {
    /// A string constant.
    case string(String)
    /// An integer constant (`TRUE`/`YES` are `1`, `FALSE`/`NO` are `0`, as Apple stores them).
    case integer(Int64)
    /// A floating-point constant that is not an integer.
    case double(Double)
    /// `nil` (`NULL`, `NIL`).
    case null
    /// A date, in seconds since 2001-01-01T00:00:00Z (Apple's reference date).
    case date(secondsSinceReferenceDate: Double)
    /// A record reference, by record name (from a `{"$reference": …}` argument).
    case reference(String)
    /// A location (from a `{"$location": [lat, lon]}` argument).
    case location(latitude: Double, longitude: Double)
    /// `{a, b, c}`: an array of expressions.
    case aggregate([PredicateExpression])
    /// `SELF`: the evaluated object.
    case evaluatedObject
    /// A key path from the evaluated object: `a.b.@count` is `["a", "b", "@count"]`.
    case keyPath([String])
    /// A key path applied to another expression: `$t.key`, `SUBQUERY(…).@count`.
    case member(PredicateExpression, [String])
    /// `base[index]`, `base[FIRST]`, `base[LAST]`, `base[SIZE]`.
    case index(PredicateExpression, PredicateIndex)
    /// `$name`.
    case variable(String)
    /// `$name := value`.
    case assignment(variable: String, value: PredicateExpression)
    /// A format specifier left unsubstituted (`%@`, `%K`, `%d`…): the string parsed without arguments.
    case placeholder(String)
    /// Binary arithmetic or bitwise operation.
    case arithmetic(ArithmeticOperator, PredicateExpression, PredicateExpression)
    /// Unary minus of a non-constant.
    case negation(PredicateExpression)
    /// A function call: `now()`, `lowercase(name)`, `distanceToLocation:fromLocation:(loc, %@)`.
    /// The name is kept as written (`sum`, `sum:`, `distanceToLocation:fromLocation:`).
    case function(String, [PredicateExpression])
    /// `FUNCTION(receiver, "selector", arguments…)`.
    case method(receiver: PredicateExpression, selector: String, arguments: [PredicateExpression])
    /// `SUBQUERY(collection, $variable, predicate)`.
    case subquery(collection: PredicateExpression, variable: String, predicate: RecordPredicate)
    /// `TERNARY(predicate, then, else)`.
    case ternary(RecordPredicate, PredicateExpression, PredicateExpression)
    /// `CAST(value, "Type")` that is not folded into a constant.
    case cast(PredicateExpression, String)
}

/// What goes between the brackets of `base[…]`.
public indirect enum PredicateIndex: Hashable, Sendable {
    /// `[FIRST]`.
    case first
    /// `[LAST]`.
    case last
    /// `[SIZE]`.
    case size
    /// `[expr]`: an array index or a dictionary key.
    case expression(PredicateExpression)
}

/// A binary operator between expressions.
public enum ArithmeticOperator: String, Hashable, Sendable, CaseIterable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case power = "**"
    case shiftLeft = "<<"
    case shiftRight = ">>"
    case bitwiseAnd = "&"
    case bitwiseOr = "|"
    case bitwiseXor = "^"

    /// Binding strength; higher binds tighter.
    var precedence: Int {
        switch self {
        case .bitwiseOr: 1
        case .bitwiseXor: 2
        case .bitwiseAnd: 3
        case .shiftLeft, .shiftRight: 4
        case .add, .subtract: 5
        case .multiply, .divide: 6
        case .power: 7
        }
    }
}

extension PredicateExpression {
    /// Whether this is a constant value (string, number, nil, date, reference, location, or an
    /// aggregate of constants).
    public var isConstant: Bool {
        switch self {
        case .string, .integer, .double, .null, .date, .reference, .location: true
        case .aggregate(let items): items.allSatisfy(\.isConstant)
        default: false
        }
    }

    /// The key path, when this is a plain key path from the evaluated object.
    public var keyPathComponents: [String]? {
        if case .keyPath(let components) = self { components } else { nil }
    }

    /// The key path component an unsubstituted `%K` leaves after a dot (`a.%K`, `$t.%K`), when
    /// the text is parsed without arguments; such a path prints back as written and cannot be
    /// compiled.
    public static let keyPlaceholder = "%K"

    /// Seconds between 1970-01-01 and 2001-01-01 (Apple's reference date).
    public static let referenceDateOffset: Double = 978_307_200
}
