/// A lexical token of the predicate language.
struct Token: Sendable {
    enum Kind: Equatable, Sendable {
        /// A plain name; `escaped` when written `#name`.
        case identifier(String, escaped: Bool)
        /// A reserved word, upper-cased.
        case keyword(Keyword)
        /// `@count`, `@sum`… (the text includes the `@`).
        case atName(String)
        /// `name:` or `name:part:` written without spaces.
        case selector(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `$name` (the text excludes the `$`).
        case variable(String)
        /// `%@`, `%K`, `%ld`… as written.
        case specifier(String)
        case punct(Punct)
        case end
    }

    var kind: Kind
    var span: SourceSpan

    /// How the token reads in an error message.
    var described: String {
        switch kind {
        case .identifier(let name, let escaped): "'\(escaped ? "#" : "")\(name.prefix(40))'"
        case .keyword(let keyword): "'\(keyword.rawValue)'"
        case .atName(let name): "'\(name)'"
        case .selector(let name): "'\(name)'"
        case .string(let text): text.count > 40 ? "a string" : "the string \"\(text)\""
        case .integer(let value): "'\(value)'"
        case .double(let value): "'\(value)'"
        case .variable(let name): "'$\(name)'"
        case .specifier(let text): "'\(text)'"
        case .punct(let punct): "'\(punct.rawValue)'"
        case .end: "end of input"
        }
    }
}

/// Reserved words, recognised case-insensitively.
enum Keyword: String, CaseIterable, Sendable {
    case and = "AND", or = "OR", `in` = "IN", not = "NOT", all = "ALL", any = "ANY", some = "SOME"
    case none = "NONE", like = "LIKE", caseInsensitive = "CASEINSENSITIVE", ci = "CI"
    case matches = "MATCHES", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case between = "BETWEEN", null = "NULL", `nil` = "NIL", `self` = "SELF", `true` = "TRUE"
    case yes = "YES", `false` = "FALSE", no = "NO", first = "FIRST", last = "LAST", size = "SIZE"
    case anyKey = "ANYKEY", subquery = "SUBQUERY", cast = "CAST", truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE", utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"

    /// Upper-cased spelling → keyword.
    static let table: [String: Keyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// Whether `name` (any case) is reserved and must be written `#name` as a key.
    static func isReserved(_ name: String) -> Bool {
        name.utf8.count <= 15 && table[name.uppercased()] != nil
    }
}

/// Punctuation and operators.
enum Punct: String, Sendable {
    case leftParen = "(", rightParen = ")", leftBrace = "{", rightBrace = "}"
    case leftBracket = "[", rightBracket = "]", comma = ",", dot = ".", colon = ":", assign = ":="
    case equal = "=", equalEqual = "==", notEqual = "!=", lessGreater = "<>", less = "<", greater = ">"
    case lessEqual = "<=", equalLess = "=<", greaterEqual = ">=", equalGreater = "=>"
    case ampAmp = "&&", pipePipe = "||", bang = "!"
    case plus = "+", minus = "-", star = "*", starStar = "**", slash = "/"
    case shiftLeft = "<<", shiftRight = ">>", amp = "&", pipe = "|", caret = "^"
}
