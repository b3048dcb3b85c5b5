import FerryPredicate
import FerryRecords
import Testing

func parseArguments(_ text: String?) throws -> [JSONValue]? {
    guard let text else { return nil }
    guard case .array(let items) = try JSONValue(parsing: text) else { throw PredicateError(.argument, "not an array") }
    return items
}

@Suite("Parsing and canonical text")
struct ParserTests {
    @Test("Each table input parses to its canonical text, or fails with the expected message", arguments: ParseTable.all)
    func parseCase(_ entry: ParseCase) throws {
        let arguments = try parseArguments(entry.arguments)
        if let canonical = entry.canonical {
            let predicate = try RecordPredicate(parsing: entry.input, arguments: arguments)
            #expect(predicate.predicateFormat == canonical)
            // Stability: the canonical text parses back to the same tree and prints the same.
            let again = try RecordPredicate(parsing: canonical)
            #expect(again.predicateFormat == canonical)
            if entry.arguments == nil { #expect(again == predicate) }
        } else {
            do {
                let predicate = try RecordPredicate(parsing: entry.input, arguments: arguments)
                Issue.record("expected an error containing \"\(entry.error ?? "")\", parsed \(predicate)")
            } catch {
                #expect(error.message.contains(entry.error ?? "\u{0}"), "message: \(error.message)")
                if error.code == .syntax {
                    #expect(error.span.isKnown)
                    #expect(error.rendered().contains("^"))
                }
            }
        }
    }

    static let unwritableKeys: [(String, String, String)] = [
        ("%K == 1", "a-b", "a-b"),
        ("%K == 1", "#a", "#a"),
        ("%K == 1", "my key", "my key"),
        ("%K == 1", "distanceToLocation:fromLocation:", "distanceToLocation:fromLocation:"),
        ("%K == 1", "%K", "%K"),
        ("%K == 1", "a.b-c.d", "b-c"),
        ("a.%K == 1", "x y", "x y"),
        ("$t.%K == 1", "é-", "é-"),
        ("SUBQUERY(s, $x, $x.%K == 1).@count > 0", "(", "("),
    ]

    @Test("canonicalText refuses a key the format language cannot write, and names it", arguments: unwritableKeys)
    func unwritableKey(_ entry: (String, String, String)) throws {
        let predicate = try RecordPredicate(parsing: entry.0, arguments: [.string(entry.1)])
        do {
            let text = try predicate.canonicalText()
            Issue.record("expected an error, printed \(text)")
        } catch {
            #expect(error.code == .argument)
            #expect(error.message.contains("\"\(entry.2)\""), "\(error.message)")
        }
    }

    @Test("Keys that need #, or are @names or non-ASCII, print as text that parses back to the same key",
          arguments: ["in", "SELF", "0x", "9", "@count", "café", "名前", "_a", "a.in.b", "first.last", "TOKENMATCHES", "UTI"])
    func writableKey(_ key: String) throws {
        let predicate = try RecordPredicate(parsing: "%K == 1", arguments: [.string(key)])
        let text = try predicate.canonicalText()
        #expect(try RecordPredicate(parsing: text) == predicate, "\(text)")
    }

    @Test("canonicalText refuses a number that is not finite")
    func infiniteNumber() {
        let predicate = RecordPredicate.comparison(PredicateComparison(.keyPath(["x"]), .greaterThan, .double(.infinity)))
        #expect(throws: PredicateError.self) { try predicate.canonicalText() }
    }

    @Test("Errors point at the line and column of the offending text", arguments: ParseTable.positions)
    func errorPosition(_ entry: (String, Int, Int)) {
        do {
            _ = try RecordPredicate(parsing: entry.0, arguments: entry.0.hasPrefix("%K") ? [.number(JSONNumber(Int64(1)))] : nil)
            Issue.record("expected an error")
        } catch {
            #expect(error.line == entry.1)
            #expect(error.column == entry.2)
        }
    }

    static let operatorSpellings: [(String, String)] = [
        ("==", "=="), ("=", "=="), ("!=", "!="), ("<>", "!="), ("<", "<"), ("<=", "<="), ("=<", "<="),
        (">", ">"), (">=", ">="), ("=>", ">="), ("CONTAINS", "CONTAINS"), ("contains", "CONTAINS"),
        ("BEGINSWITH", "BEGINSWITH"), ("BeginsWith", "BEGINSWITH"), ("ENDSWITH", "ENDSWITH"), ("LIKE", "LIKE"),
        ("MATCHES", "MATCHES"), ("IN", "IN"), ("TOKENMATCHES", "TOKENMATCHES"),
    ]

    static let optionSpellings: [(String, String)] = [
        ("", ""), ("[c]", "[c]"), ("[d]", "[d]"), ("[cd]", "[cd]"), ("[dc]", "[cd]"), ("[n]", "[n]"),
        ("[l]", "[l]"), ("[cdl]", "[cdl]"), ("[LC]", "[cl]"), ("[nd]", "[dn]"),
    ]

    static var operatorOptionCases: [(String, String)] {
        operatorSpellings.flatMap { op in
            optionSpellings.map { opt in ("name \(op.0)\(opt.0) \"v\"", "name \(op.1)\(opt.1) \"v\"") }
        }
    }

    @Test("Every operator spelling with every option set prints canonically", arguments: operatorOptionCases)
    func operatorWithOptions(_ entry: (String, String)) throws {
        #expect(try RecordPredicate(parsing: entry.0).predicateFormat == entry.1)
    }

    @Test("Keywords are case-insensitive in every spelling",
          arguments: ["and", "AND", "And", "aNd", "&&"])
    func keywordCase(_ spelling: String) throws {
        let predicate = try RecordPredicate(parsing: "a == 1 \(spelling) b == 2")
        #expect(predicate.predicateFormat == "a == 1 AND b == 2")
    }

    @Test("A syntax error renders the source line with a caret under the offending text")
    func renderedCaret() {
        do {
            _ = try RecordPredicate(parsing: "age > 3 AND ? == 1")
            Issue.record("expected an error")
        } catch {
            let lines = error.rendered().split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 3)
            #expect(lines[1] == "  age > 3 AND ? == 1")
            #expect(lines[2] == "              ^")
            #expect(error.expected != nil)
            #expect(error.found == "'?'")
        }
    }

    @Test("The tree records quantifier, operator, options and both sides")
    func treeShape() throws {
        let predicate = try RecordPredicate(parsing: "ANY tags BEGINSWITH[cd] 'fe' AND NOT count > 5")
        guard case .and(let operands, _) = predicate, operands.count == 2,
              case .comparison(let first) = operands[0], case .not(.comparison(let second), _) = operands[1] else {
            Issue.record("unexpected shape \(predicate)")
            return
        }
        #expect(first.quantifier == .any)
        #expect(first.operator == .beginsWith)
        #expect(first.options == [.caseInsensitive, .diacriticInsensitive])
        #expect(first.left == .keyPath(["tags"]))
        #expect(first.right == .string("fe"))
        #expect(second.operator == .greaterThan)
        #expect(second.right == .integer(5))
        #expect(first.span.column == 10)
    }

    /// `%K` inside a dotted key path, with arguments, and the same key path written out.
    static let keyPathArgumentTrees: [(String, String, String)] = [
        ("%K.%K CONTAINS[c] NULL", #"["address", "city"]"#, "address.city CONTAINS[c] NULL"),
        ("ANY %K.%K == %@", #"["items", "name", "a"]"#, "ANY items.name == 'a'"),
        ("SUBQUERY(%K, $t, $t.%K == %@).@count > 0", #"["items", "name", "b"]"#, "SUBQUERY(items, $t, $t.name == 'b').@count > 0"),
        ("%K.name == 1", #"["team"]"#, "team.name == 1"),
        ("a.%K == 1", #"["b.c"]"#, "a.b.c == 1"),
        ("$t.%K == 1", #"["key"]"#, "$t.key == 1"),
    ]

    @Test("A %K key path parses to the same tree as the key path written out", arguments: keyPathArgumentTrees)
    func keyPathArgumentTree(_ entry: (String, String, String)) throws {
        let substituted = try RecordPredicate(parsing: entry.0, arguments: parseArguments(entry.1))
        #expect(substituted == (try RecordPredicate(parsing: entry.2)))
    }

    @Test("A bad %K argument after a dot is reported at that %K")
    func keyPathArgumentPosition() {
        do {
            _ = try RecordPredicate(parsing: "a.b == 1 AND c.%K == 2", arguments: [.number(JSONNumber(Int64(1)))])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .argument)
            #expect(error.line == 1 && error.column == 16, "\(error)")
        }
    }

    @Test("Expressions parse on their own")
    func expressionParsing() throws {
        let expression = try PredicateExpression(parsing: "items.@sum.price * 2")
        #expect(expression == .arithmetic(.multiply, .keyPath(["items", "@sum", "price"]), .integer(2)))
        #expect(expression.expressionFormat == "items.@sum.price * 2")
    }
}
