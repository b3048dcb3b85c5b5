import FerryInternals

/// Writes the canonical text (Apple's `predicateFormat`) of predicates and expressions.
struct PredicatePrinter {
    var output = ""
    /// The first thing printed that the text cannot say (a key such as `a-b`, the number `inf`):
    /// the text then does not parse back to the same predicate.
    var unwritable: String?

    mutating func write(_ predicate: RecordPredicate) {
        switch predicate {
        case .constant(let value):
            output += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison):
            write(comparison)
        case .and(let operands, _):
            writeCompound(operands, keyword: " AND ", empty: "TRUEPREDICATE", isAnd: true)
        case .or(let operands, _):
            writeCompound(operands, keyword: " OR ", empty: "FALSEPREDICATE", isAnd: false)
        case .not(let operand, _):
            output += "NOT "
            switch operand {
            case .and(let items, _) where items.count > 1: writeParenthesized(operand)
            case .or(let items, _) where items.count > 1: writeParenthesized(operand)
            default: write(operand)
            }
        }
    }

    private mutating func writeParenthesized(_ predicate: RecordPredicate) {
        output += "("
        write(predicate)
        output += ")"
    }

    private mutating func writeCompound(_ operands: [RecordPredicate], keyword: String, empty: String, isAnd: Bool) {
        if operands.isEmpty {
            output += empty
            return
        }
        if operands.count == 1 {
            write(operands[0])
            return
        }
        for (i, operand) in operands.enumerated() {
            if i > 0 { output += keyword }
            switch operand {
            case .constant, .comparison: write(operand)
            case .and(let items, _) where isAnd || items.count == 1: write(operand)
            case .or(let items, _) where !isAnd || items.count == 1: write(operand)
            default: writeParenthesized(operand)
            }
        }
    }

    mutating func write(_ comparison: PredicateComparison) {
        if comparison.quantifier != .direct {
            output += comparison.quantifier.rawValue
            output += " "
        }
        write(comparison.left)
        output += " "
        output += comparison.operator.text
        if !comparison.options.isEmpty {
            output += "[\(comparison.options.letters)]"
        }
        output += " "
        write(comparison.right)
    }

    mutating func write(_ expression: PredicateExpression) {
        switch expression {
        case .string(let text): writeString(text)
        case .integer(let value): output += String(value)
        case .double(let value): writeDouble(value)
        case .null: output += "nil"
        case .date(let seconds):
            output += "CAST("
            writeDouble(seconds)
            output += ", \"NSDate\")"
        case .reference(let name):
            output += "CAST("
            writeString(name)
            output += ", \"CKReference\")"
        case .location(let latitude, let longitude):
            output += "CAST({"
            writeDouble(latitude)
            output += ", "
            writeDouble(longitude)
            output += "}, \"CLLocation\")"
        case .aggregate(let items):
            output += "{"
            writeList(items)
            output += "}"
        case .evaluatedObject: output += "SELF"
        case .keyPath(let components): writeKeyPath(components)
        case .member(let base, let components):
            writePostfixBase(base)
            output += "."
            writeKeyPath(components, afterDot: true)
        case .index(let base, let index):
            writePostfixBase(base)
            output += "["
            switch index {
            case .first: output += "FIRST"
            case .last: output += "LAST"
            case .size: output += "SIZE"
            case .expression(let inner): write(inner)
            }
            output += "]"
        case .variable(let name): output += "$" + name
        case .assignment(let name, let value):
            output += "$\(name) := "
            write(value)
        case .placeholder(let text): output += text
        case .arithmetic(let op, let left, let right):
            writeOperand(left, of: op, isRight: false)
            output += " \(op.rawValue) "
            writeOperand(right, of: op, isRight: true)
        case .negation(let operand):
            output += "-"
            switch operand {
            case .arithmetic, .assignment, .integer, .double: writeParenthesizedExpression(operand)
            default: write(operand)
            }
        case .function(let name, let arguments):
            output += name + "("
            writeList(arguments)
            output += ")"
        case .method(let receiver, let selector, let arguments):
            output += "FUNCTION("
            write(receiver)
            output += ", "
            writeString(selector)
            if !arguments.isEmpty {
                output += " , "
                writeList(arguments)
            }
            output += ")"
        case .subquery(let collection, let variable, let predicate):
            output += "SUBQUERY("
            write(collection)
            output += ", $\(variable), "
            write(predicate)
            output += ")"
        case .ternary(let condition, let then, let otherwise):
            output += "TERNARY("
            write(condition)
            output += ", "
            write(then)
            output += ", "
            write(otherwise)
            output += ")"
        case .cast(let value, let type):
            output += "CAST("
            write(value)
            output += ", "
            writeString(type)
            output += ")"
        }
    }

    private mutating func writeParenthesizedExpression(_ expression: PredicateExpression) {
        output += "("
        write(expression)
        output += ")"
    }

    private mutating func writeList(_ items: [PredicateExpression]) {
        for (i, item) in items.enumerated() {
            if i > 0 { output += ", " }
            write(item)
        }
    }

    private mutating func writePostfixBase(_ base: PredicateExpression) {
        switch base {
        case .arithmetic, .negation, .assignment, .integer, .double: writeParenthesizedExpression(base)
        default: write(base)
        }
    }

    private mutating func writeOperand(_ operand: PredicateExpression, of op: ArithmeticOperator, isRight: Bool) {
        switch operand {
        case .arithmetic(let inner, _, _) where inner.precedence < op.precedence || (isRight && inner.precedence == op.precedence):
            writeParenthesizedExpression(operand)
        case .assignment:
            writeParenthesizedExpression(operand)
        default:
            write(operand)
        }
    }

    private mutating func writeKeyPath(_ components: [String], afterDot: Bool = false) {
        for (i, component) in components.enumerated() {
            if i > 0 { output += "." }
            if unwritable == nil, !Self.isWritableKey(component, afterDot: afterDot || i > 0) {
                unwritable = "the key \"\(component)\""
            }
            // `#` escapes a reserved word, and a key that starts with a digit (`#0`), which
            // would otherwise read back as a number.
            if Keyword.isReserved(component) || component.utf8.first.map(PredicateLexer.isDigit) == true { output += "#" }
            output += component
        }
    }

    /// Whether a key path component reads back as itself: a name (`#` added for a reserved word
    /// or a leading digit), `@name`, or an unsubstituted `%K` after a dot. The format language
    /// has no escape for other characters (`a-b`, `my key`, `#a`, `x:`).
    static func isWritableKey(_ component: String, afterDot: Bool) -> Bool {
        if afterDot, component == PredicateExpression.keyPlaceholder { return true }
        var name = component.utf8[...]
        if name.first == UInt8(ascii: "@") { name = name.dropFirst() }
        guard let first = name.first, PredicateLexer.isIdentifierStart(first) || PredicateLexer.isDigit(first) else { return false }
        return name.allSatisfy(PredicateLexer.isIdentifierByte)
    }

    private mutating func writeDouble(_ value: Double) {
        if unwritable == nil, !value.isFinite { unwritable = "the number \(value)" }
        if let exact = Int64(exactly: value) {
            output += String(exact)
        } else {
            output += value.description
        }
    }

    private mutating func writeString(_ text: String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    output += "\\u" + Hex.digits(of: scalar.value, width: 4, uppercase: true)
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
