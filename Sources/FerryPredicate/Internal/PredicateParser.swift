import FerryRecords

/// Recursive-descent parser over a pre-lexed token array. Recursion is bounded by
/// ``RecordPredicate/maximumDepth``; AND/OR chains and arithmetic chains are built with loops.
struct PredicateParser {
    private let text: String
    private var tokens: [Token]
    private var index = 0
    private let arguments: [JSONValue]?
    private var argumentIndex = 0
    private var depth = 0
    private let maximumDepth: Int

    init(text: String, arguments: [JSONValue]?, maximumDepth: Int) throws(PredicateError) {
        self.text = text
        self.arguments = arguments
        self.maximumDepth = maximumDepth
        do throws(PredicateError) {
            tokens = try PredicateLexer.tokenize(text)
        } catch {
            throw PredicateParser.attachSource(error, text: text)
        }
    }

    /// Parses the whole text as one predicate.
    mutating func parseWhole() throws(PredicateError) -> RecordPredicate {
        do throws(PredicateError) {
            let predicate = try parseOr()
            if current.kind != .end {
                if isComparisonOperatorAhead() {
                    throw PredicateError.expected("AND, OR or end of input (comparisons do not chain)",
                                                  found: current.described, at: current.span)
                }
                throw PredicateError.expected("AND, OR or end of input", found: current.described, at: current.span)
            }
            if let arguments, argumentIndex < arguments.count {
                throw PredicateError(.argument,
                                     "\(arguments.count) format arguments were given but the predicate uses \(argumentIndex)",
                                     expected: "\(argumentIndex) arguments", found: "\(arguments.count)",
                                     span: current.span)
            }
            return predicate
        } catch {
            throw PredicateParser.attachSource(error, text: text)
        }
    }

    /// Parses the whole text as one expression.
    mutating func parseWholeExpression() throws(PredicateError) -> PredicateExpression {
        do throws(PredicateError) {
            let expression = try parseExpression()
            if current.kind != .end {
                throw PredicateError.expected("end of input", found: current.described, at: current.span)
            }
            return expression
        } catch {
            throw PredicateParser.attachSource(error, text: text)
        }
    }

    /// Fills in the source line of an error, shortened to ~120 characters around the column.
    static func attachSource(_ error: PredicateError, text: String) -> PredicateError {
        guard error.span.isKnown, error.sourceLine == nil else { return error }
        var error = error
        let utf8 = text.utf8
        let offset = min(error.span.offset, utf8.count)
        let at = utf8.index(utf8.startIndex, offsetBy: offset)
        let lineStart = utf8[..<at].lastIndex(of: 0x0A).map { utf8.index(after: $0) } ?? utf8.startIndex
        let lineEnd = utf8[at...].firstIndex(of: 0x0A) ?? utf8.endIndex
        var line = Substring(text[lineStart..<lineEnd])
        var column = error.span.column
        if line.unicodeScalars.count > 120 {
            let scalars = line.unicodeScalars
            let dropFront = max(0, column - 60)
            let startIndex = scalars.index(scalars.startIndex, offsetBy: dropFront)
            let endIndex = scalars.index(startIndex, offsetBy: min(120, scalars.distance(from: startIndex, to: scalars.endIndex)))
            line = Substring(scalars[startIndex..<endIndex])
            if dropFront > 0 {
                line = "…" + line
                column = column - dropFront + 1
            }
        }
        error.sourceLine = String(line).replacingTabs()
        error.sourceLineColumn = column
        return error
    }

    // MARK: - Tokens

    private var current: Token { tokens[index] }

    private func peekKind(_ ahead: Int = 1) -> Token.Kind {
        let i = index + ahead
        return i < tokens.count ? tokens[i].kind : .end
    }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func isPunct(_ punct: Punct) -> Bool { current.kind == .punct(punct) }
    private func isKeyword(_ keyword: Keyword) -> Bool { current.kind == .keyword(keyword) }

    private mutating func expect(_ punct: Punct, _ what: String? = nil) throws(PredicateError) -> Token {
        guard isPunct(punct) else {
            throw PredicateError.expected(what ?? "'\(punct.rawValue)'", found: current.described, at: current.span)
        }
        let token = current
        advance()
        return token
    }

    private mutating func enter() throws(PredicateError) {
        depth += 1
        if depth > maximumDepth {
            throw PredicateError(.nestingTooDeep, "the predicate nests deeper than \(maximumDepth) levels",
                                 expected: "at most \(maximumDepth) levels of nesting",
                                 found: "more", span: current.span)
        }
    }

    private mutating func leave() { depth -= 1 }

    // MARK: - Predicates

    private mutating func parseOr() throws(PredicateError) -> RecordPredicate {
        let first = try parseAnd()
        guard isKeyword(.or) || isPunct(.pipePipe) else { return first }
        let span = current.span
        var operands: [RecordPredicate] = []
        first.appendFlattened(to: &operands, or: true)
        while isKeyword(.or) || isPunct(.pipePipe) {
            advance()
            try parseAnd().appendFlattened(to: &operands, or: true)
        }
        return .or(operands, span)
    }

    private mutating func parseAnd() throws(PredicateError) -> RecordPredicate {
        let first = try parseNot()
        guard isKeyword(.and) || isPunct(.ampAmp) else { return first }
        let span = current.span
        var operands: [RecordPredicate] = []
        first.appendFlattened(to: &operands, or: false)
        while isKeyword(.and) || isPunct(.ampAmp) {
            advance()
            try parseNot().appendFlattened(to: &operands, or: false)
        }
        return .and(operands, span)
    }

    private mutating func parseNot() throws(PredicateError) -> RecordPredicate {
        var spans: [SourceSpan] = []
        while isKeyword(.not) || isPunct(.bang) {
            spans.append(current.span)
            try enter()
            advance()
        }
        defer { depth -= spans.count }
        var predicate = try parsePrimary()
        for span in spans.reversed() { predicate = .not(predicate, span) }
        return predicate
    }

    private mutating func parsePrimary() throws(PredicateError) -> RecordPredicate {
        if isKeyword(.truePredicate) || isKeyword(.falsePredicate) {
            let value = isKeyword(.truePredicate)
            advance()
            return .constant(value)
        }
        if isPunct(.leftParen) {
            // Either a parenthesised predicate or a comparison whose left side starts with `(`.
            let save = (index, argumentIndex)
            let savedDepth = depth
            let attempt: Result<RecordPredicate, PredicateError>
            do {
                try enter()
                advance()
                let inner = try parseOr()
                _ = try expect(.rightParen, "')'")
                leave()
                attempt = .success(inner)
            } catch {
                attempt = .failure(error)
            }
            switch attempt {
            case .success(let inner) where !isComparisonOperatorAhead() && !isExpressionContinuation():
                return inner
            case .failure(let error) where error.code == .nestingTooDeep:
                throw error
            case .success, .failure:
                let firstError: PredicateError? = if case .failure(let e) = attempt { e } else { nil }
                depth = savedDepth
                (index, argumentIndex) = save
                do {
                    return try parseComparison()
                } catch let second {
                    if second.code == .nestingTooDeep { throw second }
                    if let firstError, firstError.span.offset > second.span.offset { throw firstError }
                    throw second
                }
            }
        }
        return try parseComparison()
    }

    private func isExpressionContinuation() -> Bool {
        switch current.kind {
        case .punct(.plus), .punct(.minus), .punct(.star), .punct(.starStar), .punct(.slash), .punct(.dot),
             .punct(.leftBracket), .punct(.shiftLeft), .punct(.shiftRight), .punct(.amp), .punct(.pipe), .punct(.caret):
            true
        default: false
        }
    }

    private func isComparisonOperatorAhead() -> Bool {
        switch current.kind {
        case .punct(.equal), .punct(.equalEqual), .punct(.notEqual), .punct(.lessGreater), .punct(.less),
             .punct(.greater), .punct(.lessEqual), .punct(.equalLess), .punct(.greaterEqual), .punct(.equalGreater):
            return true
        case .keyword(let k):
            return [.in, .contains, .beginsWith, .endsWith, .like, .matches, .between, .utiEquals, .utiConformsTo].contains(k)
        case .identifier(let name, escaped: false):
            return name.uppercased() == "TOKENMATCHES"
        default:
            return false
        }
    }

    private mutating func parseComparison() throws(PredicateError) -> RecordPredicate {
        let startSpan = current.span
        if current.kind == .end {
            throw PredicateError.expected("a comparison (every predicate needs a comparison)", found: "end of input", at: current.span)
        }
        var quantifier = PredicateComparison.Quantifier.direct
        var isNone = false
        switch current.kind {
        case .keyword(.any), .keyword(.some): quantifier = .any; advance()
        case .keyword(.all): quantifier = .all; advance()
        case .keyword(.none): quantifier = .any; isNone = true; advance()
        default: break
        }
        let leftSpan = current.span
        let left = try parseExpression()
        let operatorToken = current
        let op: PredicateComparison.Operator
        switch current.kind {
        case .punct(.equal), .punct(.equalEqual): op = .equalTo
        case .punct(.notEqual), .punct(.lessGreater): op = .notEqualTo
        case .punct(.less): op = .lessThan
        case .punct(.lessEqual), .punct(.equalLess): op = .lessThanOrEqualTo
        case .punct(.greater): op = .greaterThan
        case .punct(.greaterEqual), .punct(.equalGreater): op = .greaterThanOrEqualTo
        case .keyword(.in): op = .in
        case .keyword(.contains): op = .contains
        case .keyword(.beginsWith): op = .beginsWith
        case .keyword(.endsWith): op = .endsWith
        case .keyword(.like): op = .like
        case .keyword(.matches): op = .matches
        case .keyword(.between): op = .between
        case .keyword(.utiConformsTo): op = .utiConformsTo
        case .keyword(.utiEquals): op = .utiEquals
        case .identifier(let name, escaped: false) where name.uppercased() == "TOKENMATCHES": op = .tokenMatches
        case .selector(let selector): op = .customSelector(selector)
        case .end:
            throw PredicateError.expected("a comparison operator (every predicate needs a comparison)",
                                          found: "end of input", at: current.span)
        default:
            throw PredicateError.expected("a comparison operator", found: current.described, at: current.span)
        }
        advance()
        var options: PredicateComparison.Options = []
        if isPunct(.leftBracket), op != .between {
            let bracket = current.span
            advance()
            guard case .identifier(let letters, escaped: false) = current.kind else {
                throw PredicateError.expected("comparison options such as [c] or [cd]", found: current.described, at: current.span)
            }
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                case "l": options.insert(.localeSensitive)
                default:
                    throw PredicateError.expected("option letters c, d, n or l", found: "'\(letter)'", at: current.span)
                }
            }
            advance()
            _ = try expect(.rightBracket, "']' after the options that began at \(bracket)")
        }
        let rightSpan = current.span
        let right = try parseExpression()
        if isComparisonOperatorAhead() {
            throw PredicateError.expected("AND, OR or ')' (comparisons do not chain)", found: current.described, at: current.span)
        }
        let span = SourceSpan(offset: operatorToken.span.offset, length: operatorToken.span.length,
                              line: operatorToken.span.line, column: operatorToken.span.column)
        let comparison = PredicateComparison(left, op, right, quantifier: quantifier, options: options, span: span,
                                             leftSpan: quantifier == .direct ? leftSpan : startSpan, rightSpan: rightSpan)
        return isNone ? .not(.comparison(comparison), startSpan) : .comparison(comparison)
    }

    // MARK: - Expressions

    private mutating func parseExpression() throws(PredicateError) -> PredicateExpression {
        try enter()
        defer { leave() }
        return try parseBinary(minimum: 0)
    }

    /// The binary operator at the current token and its precedence.
    private func binaryOperator() -> ArithmeticOperator? {
        guard case .punct(let punct) = current.kind else { return nil }
        return switch punct {
        case .pipe: .bitwiseOr
        case .caret: .bitwiseXor
        case .amp: .bitwiseAnd
        case .shiftLeft: .shiftLeft
        case .shiftRight: .shiftRight
        case .plus: .add
        case .minus: .subtract
        case .star: .multiply
        case .slash: .divide
        case .starStar: .power
        default: nil
        }
    }

    /// Precedence climbing: one frame per precedence step actually used, left-associative.
    private mutating func parseBinary(minimum: Int) throws(PredicateError) -> PredicateExpression {
        var left = try parseUnary()
        var chain = 0
        defer { depth -= chain }
        while let op = binaryOperator(), op.precedence >= minimum {
            try enter()
            chain += 1
            advance()
            let right = try parseBinary(minimum: op.precedence + 1)
            left = .arithmetic(op, left, right)
        }
        return left
    }

    private mutating func parseUnary() throws(PredicateError) -> PredicateExpression {
        guard isPunct(.minus) else { return try parsePostfix() }
        // `-(…)`: the parenthesis enters a level, the minus does not add one.
        let parenthesized = peekKind() == .punct(.leftParen)
        if !parenthesized { try enter() }
        defer { if !parenthesized { leave() } }
        advance()
        let operand = try parseUnary()
        switch operand {
        case .integer(let value) where value != Int64.min: return .integer(-value)
        case .integer(let value): return .double(-Double(value))
        case .double(let value): return PredicateExpression.number(-value)
        default: return .negation(operand)
        }
    }

    private mutating func parsePostfix() throws(PredicateError) -> PredicateExpression {
        var base = try parsePrimaryExpression()
        var levels = 0
        defer { depth -= levels }
        // A key path being extended (`a.b.c…`) is kept here, outside the enum, so that each
        // `.key` appends in place: rebuilding `.keyPath(components + added)` for every dot copied
        // the whole path each time, quadratic in its length. `inner` is the base of a member path.
        var path: (inner: PredicateExpression?, components: [String])?
        switch base {
        case .keyPath(let components): path = (nil, components)
        case .member(let inner, let components): path = (inner, components)
        default: break
        }
        func flushed() -> PredicateExpression {
            guard let path else { return base }
            return path.inner.map { .member($0, path.components) } ?? .keyPath(path.components)
        }
        while true {
            if isPunct(.dot) {
                advance()
                let added: [String]
                switch current.kind {
                case .identifier(let name, _): added = [name]; advance()
                case .atName(let name): added = [name]; advance()
                case .specifier("%K"):
                    let span = current.span
                    advance()
                    added = try keyPathArgument(at: span)
                case .specifier(let specifier):
                    throw PredicateError.expected("a key after '.' (%K stands for a key, \(specifier) for a value)",
                                                  found: current.described, at: current.span)
                case .keyword(let keyword):
                    throw PredicateError.expected("a key (write #\(keyword.rawValue.lowercased()) for a key named like a reserved word)",
                                                  found: current.described, at: current.span)
                default:
                    throw PredicateError.expected("a key after '.'", found: current.described, at: current.span)
                }
                if added.isEmpty { continue }
                if path != nil {
                    path!.components.append(contentsOf: added)
                } else if case .evaluatedObject = base {
                    path = (nil, added)
                } else {
                    try enter()
                    levels += 1
                    path = (base, added)
                }
            } else if isPunct(.leftBracket) {
                base = flushed()
                path = nil
                try enter()
                levels += 1
                advance()
                let index: PredicateIndex
                switch current.kind {
                case .keyword(.first): index = .first; advance()
                case .keyword(.last): index = .last; advance()
                case .keyword(.size): index = .size; advance()
                default: index = .expression(try parseExpression())
                }
                _ = try expect(.rightBracket, "']'")
                base = .index(base, index)
            } else {
                return flushed()
            }
        }
    }

    private mutating func parseArguments(closing: Punct) throws(PredicateError) -> [PredicateExpression] {
        var items: [PredicateExpression] = []
        if isPunct(closing) {
            advance()
            return items
        }
        while true {
            // The collection or call entered a level already: its items do not enter another.
            items.append(try parseBinary(minimum: 0))
            if isPunct(.comma) {
                advance()
                continue
            }
            _ = try expect(closing, "',' or '\(closing.rawValue)'")
            return items
        }
    }

    private mutating func parsePrimaryExpression() throws(PredicateError) -> PredicateExpression {
        let token = current
        switch token.kind {
        case .string(let value): advance(); return .string(value)
        case .integer(let value): advance(); return .integer(value)
        case .double(let value): advance(); return PredicateExpression.number(value)
        case .keyword(.true), .keyword(.yes): advance(); return .integer(1)
        case .keyword(.false), .keyword(.no): advance(); return .integer(0)
        case .keyword(.null), .keyword(.nil): advance(); return .null
        case .keyword(.self): advance(); return .evaluatedObject
        case .keyword(.subquery): return try parseSubquery()
        case .keyword(.cast): return try parseCast()
        case .atName(let name): advance(); return .keyPath([name])
        case .identifier(let name, let escaped):
            advance()
            if !escaped, isPunct(.leftParen) {
                switch name.uppercased() {
                case "FUNCTION": return try parseMethod()
                case "TERNARY": return try parseTernary()
                default:
                    try enter()
                    defer { leave() }
                    advance()
                    return .function(name, try parseArguments(closing: .rightParen))
                }
            }
            return .keyPath([name])
        case .selector(let selector):
            advance()
            guard isPunct(.leftParen) else {
                throw PredicateError.expected("'(' after the function name \(selector)", found: current.described, at: current.span)
            }
            try enter()
            defer { leave() }
            advance()
            return .function(selector, try parseArguments(closing: .rightParen))
        case .variable(let name):
            advance()
            if isPunct(.assign) {
                advance()
                return .assignment(variable: name, value: try parseExpression())
            }
            return .variable(name)
        case .specifier(let specifier):
            advance()
            return try substitute(specifier, at: token.span)
        case .punct(.leftParen):
            advance()
            let inner = try parseExpression()
            _ = try expect(.rightParen, "')'")
            return inner
        case .punct(.leftBrace):
            try enter()
            defer { leave() }
            advance()
            return .aggregate(try parseArguments(closing: .rightBrace))
        case .end:
            throw PredicateError.expected("an expression", found: "end of input", at: token.span)
        case .keyword(let keyword):
            throw PredicateError.expected("an expression (write #\(keyword.rawValue.lowercased()) for a key named like a reserved word)",
                                          found: token.described, at: token.span)
        default:
            throw PredicateError.expected("an expression", found: token.described, at: token.span)
        }
    }

    private mutating func parseSubquery() throws(PredicateError) -> PredicateExpression {
        try enter()
        defer { leave() }
        advance()
        _ = try expect(.leftParen, "'(' after SUBQUERY")
        let collection = try parseExpression()
        _ = try expect(.comma, "',' after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else {
            throw PredicateError.expected("a $variable as the second SUBQUERY argument", found: current.described, at: current.span)
        }
        advance()
        _ = try expect(.comma, "',' after the SUBQUERY variable")
        let predicate = try parseOr()
        _ = try expect(.rightParen, "')' closing SUBQUERY")
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    private mutating func parseMethod() throws(PredicateError) -> PredicateExpression {
        try enter()
        defer { leave() }
        advance()
        let receiver = try parseExpression()
        _ = try expect(.comma, "',' after the FUNCTION receiver")
        guard case .string(let selector) = current.kind else {
            throw PredicateError.expected("a selector string as the second FUNCTION argument", found: current.described, at: current.span)
        }
        advance()
        var arguments: [PredicateExpression] = []
        while isPunct(.comma) {
            advance()
            arguments.append(try parseExpression())
        }
        _ = try expect(.rightParen, "',' or ')' in FUNCTION")
        return .method(receiver: receiver, selector: selector, arguments: arguments)
    }

    private mutating func parseTernary() throws(PredicateError) -> PredicateExpression {
        try enter()
        defer { leave() }
        advance()
        let condition = try parseOr()
        _ = try expect(.comma, "',' after the TERNARY condition")
        let then = try parseExpression()
        _ = try expect(.comma, "',' after the TERNARY true value")
        let otherwise = try parseExpression()
        _ = try expect(.rightParen, "')' closing TERNARY")
        return .ternary(condition, then, otherwise)
    }

    private mutating func parseCast() throws(PredicateError) -> PredicateExpression {
        try enter()
        defer { leave() }
        advance()
        _ = try expect(.leftParen, "'(' after CAST")
        let valueSpan = current.span
        let value = try parseExpression()
        _ = try expect(.comma, "',' after the CAST value")
        guard case .string(let type) = current.kind else {
            throw PredicateError.expected("a type name string such as \"NSDate\"", found: current.described, at: current.span)
        }
        advance()
        _ = try expect(.rightParen, "')' closing CAST")
        // A constant cast to NSDate must be a number of seconds since 2001 (or a date): any other
        // constant fails every evaluation, so it is refused here.
        if type == "NSDate", value.isConstant, value.numberValue == nil {
            if case .date = value {} else {
                throw PredicateError.expected("a number of seconds since 2001 for CAST to NSDate (or {\"$date\": …} in --args)",
                                              found: value.expressionFormat, at: valueSpan)
            }
        }
        return PredicateExpression.cast(value, to: type)
    }

    // MARK: - Format arguments

    /// The key path components a `%K` written after a dot stands for: its argument split at dots
    /// (`SELF` adds nothing), or the unsubstituted `%K` when parsing without arguments.
    private mutating func keyPathArgument(at span: SourceSpan) throws(PredicateError) -> [String] {
        switch try substitute("%K", at: span) {
        case .keyPath(let components): return components
        case .evaluatedObject: return []
        default: return [PredicateExpression.keyPlaceholder]
        }
    }

    private mutating func substitute(_ specifier: String, at span: SourceSpan) throws(PredicateError) -> PredicateExpression {
        guard let arguments else { return .placeholder(specifier) }
        guard argumentIndex < arguments.count else {
            throw PredicateError(.argument,
                                 "expected a format argument for \(specifier) (argument \(argumentIndex + 1)), found only \(arguments.count)",
                                 expected: "argument \(argumentIndex + 1)", found: "\(arguments.count) arguments", span: span)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        do throws(PredicateError) {
            return try PredicateExpression.substituting(specifier, with: argument)
        } catch {
            var error = error
            error.span = span
            error.sourceLineColumn = span.column
            throw error
        }
    }
}

extension String {
    fileprivate func replacingTabs() -> String {
        String(map { $0 == "\t" ? " " : $0 })
    }
}
