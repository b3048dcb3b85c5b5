import FerryPredicate
import FerryRecords
import Testing

/// Random syntax trees in the parser's normal form (flat AND/OR, folded constants).
struct TreeGenerator {
    var g: SeededGenerator

    mutating func int(_ n: Int) -> Int { Int(g.next() % UInt64(n)) }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    static let keys = ["a", "name", "Tags", "x_1", "café", "first", "in", "size", "count", "名前", "SELF2"]
    /// Keys a `%K` argument can hold but the format language cannot write.
    static let oddKeys = ["a-b", "#a", "my key", "distanceToLocation:fromLocation:", "x:", "", "(", "%K", "@", "a.b"]
    static let scalars: [String] = ["a", "Z", " ", "\"", "'", "\\", "\n", "\t", "\u{0}", "é", "🚢", "%", "@", "*", "?", "\u{7F}", "\r", "e\u{301}"]

    mutating func string() -> String {
        (0..<int(6)).map { _ in pick(Self.scalars) }.joined()
    }

    mutating func double() -> Double {
        switch int(4) {
        case 0: return Double(int(1000)) + 0.5
        case 1: return -Double(int(100_000)) / 7
        case 2: return Double(bitPattern: (g.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x0010_0000_0000_0000) // finite, normal
        default: return 1e-5 * Double(int(9) + 1) + 1e-9
        }
    }

    /// Dates around whole milliseconds, with fractions of one, and beyond what 64-bit milliseconds hold.
    mutating func date() -> PredicateExpression {
        let seconds: Double = switch int(4) {
        case 0: 736_257_600 + Double(int(3000)) / 1000
        case 1: 736_257_600.0005 + Double(int(3))
        case 2: pick([1e20, -1e20, 9.3e15, 1e300])
        default: double()
        }
        return .date(secondsSinceReferenceDate: seconds)
    }

    mutating func constant() -> PredicateExpression {
        switch int(11) {
        case 9: return date()
        // Lists mixing kinds: integers with doubles, strings, dates, nil.
        case 10: return .aggregate((0..<int(4)).map { _ in pick([.integer(Int64(int(10))), .number(double()), .string(string()), date(), .null]) })
        case 0: return .string(string())
        case 1: return .integer(Int64(bitPattern: g.next()) >> Int64(int(64)))
        case 2: return .number(double())
        case 3: return .null
        case 4: return .date(secondsSinceReferenceDate: double())
        case 5: return .reference(string())
        case 6: return .location(latitude: double(), longitude: double())
        case 7: return .integer(Int64.min)
        default: return .aggregate((0..<int(3)).map { _ in .integer(Int64(int(10))) })
        }
    }

    mutating func keyPath() -> PredicateExpression {
        var components = (0..<(1 + int(3))).map { _ in int(8) == 0 ? pick(Self.oddKeys) : pick(Self.keys) }
        if int(4) == 0 { components.append(pick(["@count", "@sum", "@avg"])) }
        return .keyPath(components)
    }

    mutating func expression(_ depth: Int) -> PredicateExpression {
        if depth <= 0 { return int(2) == 0 ? constant() : keyPath() }
        switch int(16) {
        case 0, 1: return constant()
        case 2, 3: return keyPath()
        case 4: return .variable(pick(["x", "item", "v1"]))
        case 5: return .member(.variable("t"), [pick(Self.keys)])
        case 6: return .index(keyPath(), pick([.first, .last, .size, .expression(.integer(Int64(int(5))))]))
        case 7: return .placeholder(pick(["%@", "%K", "%d", "%ld", "%.2f"]))
        case 8: return .arithmetic(pick(ArithmeticOperator.allCases), expression(depth - 1), expression(depth - 1))
        case 9: return .negation(keyPath())
        case 10: return .function(pick(["now", "sum", "lowercase", "sum:", "distanceToLocation:fromLocation:"]),
                                  (0..<int(3)).map { _ in expression(depth - 1) })
        case 11: return .method(receiver: expression(depth - 1), selector: pick(["pow:", "length", "a\"b"]),
                                arguments: (0..<int(2)).map { _ in expression(depth - 1) })
        case 12: return .subquery(collection: keyPath(), variable: "s", predicate: predicate(depth - 1))
        case 13: return .ternary(predicate(depth - 1), expression(depth - 1), expression(depth - 1))
        case 14: return .cast(keyPath(), pick(["NSString", "NSNumber", "NSDate"]))
        default: return .aggregate((0..<int(4)).map { _ in expression(depth - 1) })
        }
    }

    static let operators: [PredicateComparison.Operator] = [
        .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .matches, .like,
        .beginsWith, .endsWith, .in, .contains, .between, .tokenMatches, .utiConformsTo, .utiEquals,
        .customSelector("notContainedIn:"),
    ]

    mutating func comparison(_ depth: Int) -> PredicateComparison {
        let op = pick(Self.operators)
        var options = PredicateComparison.Options(rawValue: UInt8(int(16)))
        if op == .between { options = [] }
        return PredicateComparison(expression(depth), op, expression(depth),
                                   quantifier: pick([.direct, .direct, .any, .all]), options: options)
    }

    mutating func predicate(_ depth: Int) -> RecordPredicate {
        if depth <= 0 { return .comparison(comparison(0)) }
        switch int(7) {
        case 0: return .constant(int(2) == 0)
        case 1, 2: return .comparison(comparison(depth - 1))
        case 3: return .not(predicate(depth - 1))
        default:
            let isAnd = int(2) == 0
            let operands = (0..<(2 + int(3))).map { _ -> RecordPredicate in
                var operand = predicate(depth - 1)
                // Same-kind children are merged by the parser; wrap them to stay in normal form.
                switch (operand, isAnd) {
                case (.and, true), (.or, false): operand = .not(operand)
                default: break
                }
                return operand
            }
            return isAnd ? .and(operands) : .or(operands)
        }
    }
}

@Suite("Properties")
struct PropertyTests {
    @Test("Random syntax trees print, parse back to the same tree, and print stably", arguments: 0..<20)
    func roundTrip(_ batch: Int) throws {
        var generator = TreeGenerator(g: SeededGenerator(seed: UInt64(batch) &* 7919 &+ 1))
        for _ in 0..<100 {
            let tree = generator.predicate(4)
            let text: String
            do {
                text = try tree.canonicalText()
            } catch {
                // Only a key the language cannot write is refused, and the error names it.
                let odd = TreeGenerator.oddKeys.contains { error.message.contains("the key \"\($0)\"") }
                #expect(odd, "\(error.message)\nfrom tree \(tree)")
                continue
            }
            let parsed: RecordPredicate
            do {
                parsed = try RecordPredicate(parsing: text)
            } catch {
                Issue.record("\(error.rendered())\nfrom tree \(tree)")
                continue
            }
            #expect(parsed == tree, "text: \(text)")
            #expect(parsed.predicateFormat == text)
        }
    }

    @Test("Canonical text is a fixed point: format(parse(format(parse(s)))) == format(parse(s))",
          arguments: ParseTable.all.filter { $0.canonical != nil })
    func stability(_ entry: ParseCase) throws {
        let once = try RecordPredicate(parsing: entry.input, arguments: parseArguments(entry.arguments)).predicateFormat
        let twice = try RecordPredicate(parsing: once).predicateFormat
        #expect(once == twice)
    }
}
