import FerryPredicate
import FerryRecords
import Testing

@Suite("Hostile input")
struct HostileInputTests {
    @Test("100,000 nested parentheses fail with a nesting error instead of overflowing the stack")
    func deepParentheses() {
        let text = String(repeating: "(", count: 100_000) + "a == 1" + String(repeating: ")", count: 100_000)
        #expect(throws: PredicateError.self) { try RecordPredicate(parsing: text) }
        do {
            _ = try RecordPredicate(parsing: text)
        } catch {
            #expect(error.code == .nestingTooDeep)
        }
    }

    @Test("Deep nesting of every recursive form stops at the limit",
          arguments: ["(", "NOT ", "!", "{", "-", "f(", "a[", "SUBQUERY(a, $x, "])
    func deepForms(_ opener: String) {
        let text = String(repeating: opener, count: 100_000) + "a == 1"
        do {
            _ = try RecordPredicate(parsing: text)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .nestingTooDeep)
        }
    }

    @Test("Nesting just under the limit parses, prints and evaluates")
    func nestingUnderLimit() throws {
        let depth = RecordPredicate.maximumDepth - 1
        let text = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        #expect(try RecordPredicate(parsing: text).predicateFormat == "a == 1")
        let nots = String(repeating: "NOT ", count: RecordPredicate.maximumDepth - 2) + "a == 1"
        let predicate = try RecordPredicate(parsing: nots)
        #expect(try predicate.compile().evaluate(.object(["a": .number(JSONNumber(Int64(1)))])))
        #expect(try RecordPredicate(parsing: predicate.predicateFormat) == predicate)
    }

    @Test("Collections, function calls and negated parentheses nest as deep as parentheses: each level counts once",
          arguments: [("{", "}"), ("abs:(", ")"), ("f(", ")"), ("-(", ")"), ("(", ")")])
    func nestingCountsOnce(opener: String, closer: String) throws {
        let depth = RecordPredicate.maximumDepth - 5
        let text = "a IN " + String(repeating: opener, count: depth) + "1" + String(repeating: closer, count: depth)
        let predicate = try RecordPredicate(parsing: text)
        #expect(try RecordPredicate(parsing: try predicate.canonicalText()) == predicate)
        let tooDeep = "a IN " + String(repeating: opener, count: RecordPredicate.maximumDepth + 1) + "1"
            + String(repeating: closer, count: RecordPredicate.maximumDepth + 1)
        #expect(throws: PredicateError.self) { try RecordPredicate(parsing: tooDeep) }
    }

    @Test("A predicate whose text would nest too deep to parse back (arguments nest deeper) has no canonical text")
    func argumentsTooDeepToPrint() throws {
        var value = JSONValue.number(JSONNumber(Int64(1)))
        for _ in 0..<(RecordPredicate.maximumDepth + 10) { value = .array([value]) }
        let predicate = try RecordPredicate(parsing: "a IN %@", arguments: [value])
        #expect(performing: { _ = try predicate.canonicalText() }, throws: { ($0 as? PredicateError)?.code == .nestingTooDeep })
    }

    @Test("MATCHES patterns that repeat a repeating group are found, for predicate check to warn", arguments: [
        (#"(a+)+"#, true), (#"(?:a*)*"#, true), (#"(x(a+)b)+"#, true), (#"(\w+\s?){2,}"#, true), (#"(a{2,})*"#, true),
        (#"(ab)*c+"#, false), (#"a+b*"#, false), (#"(a+){1}"#, false), (#"([a+]b)*"#, false), (#"(\+a)*"#, false), (#"(a|b)*"#, false),
    ])
    func backtrackingPatterns(pattern: String, flagged: Bool) throws {
        let predicate = try RecordPredicate(parsing: "s MATCHES %@ OR NOT (t == 1 AND u MATCHES %@)", arguments: [.string("x"), .string(pattern)])
        #expect(predicate.backtrackingPatterns.map(\.pattern) == (flagged ? [pattern] : []))
    }

    @Test("A 100,000-term AND chain parses flat, prints, and evaluates")
    func longAndChain() throws {
        let terms = (0..<100_000).map { "a\($0 % 10) == \($0 % 10)" }
        let text = terms.joined(separator: " AND ")
        let predicate = try RecordPredicate(parsing: text)
        guard case .and(let operands, _) = predicate else {
            Issue.record("expected a flat AND")
            return
        }
        #expect(operands.count == 100_000)
        #expect(predicate.predicateFormat == text)
        var object = JSONObject()
        for i in 0..<10 { object["a\(i)"] = .number(JSONNumber(Int64(i))) }
        #expect(try predicate.compile().evaluate(.object(object)))
        let orText = terms.joined(separator: " || ")
        #expect(try RecordPredicate(parsing: orText).compile().evaluate(.object(object)))
    }

    @Test("A 100,000-component key path parses into one flat key path and prints back",
          arguments: ["", "$t.", "a[0].", "SUBQUERY(s, $x, $x == 1)."])
    func longKeyPath(_ prefix: String) throws {
        let components = (0..<100_000).map { "k\($0 % 7)" }
        let text = prefix + components.joined(separator: ".") + " == 1"
        let predicate = try RecordPredicate(parsing: text)
        guard case .comparison(let comparison) = predicate else {
            Issue.record("expected a comparison")
            return
        }
        switch comparison.left {
        case .keyPath(let parsed): #expect(parsed == components)
        case .member(_, let parsed): #expect(parsed == components)
        default: Issue.record("expected one key path, found \(comparison.left)")
        }
        #expect(predicate.predicateFormat == text)
        if prefix.isEmpty {
            #expect(try predicate.compile().evaluate(.object([:])) == false)
            let viaArguments = try RecordPredicate(parsing: "%K.%K == 1", arguments: [.string("k0"), .string(components.dropFirst().joined(separator: "."))])
            #expect(viaArguments.predicateFormat == text)
        }
    }

    @Test("A 100,000-term arithmetic chain stops at the nesting limit")
    func longArithmeticChain() {
        let text = (0..<100_000).map { _ in "a" }.joined(separator: " + ") + " == 1"
        do {
            _ = try RecordPredicate(parsing: text)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .nestingTooDeep)
        }
    }

    @Test("A 10 MB string literal parses and evaluates; an unterminated one fails cleanly")
    func hugeString() throws {
        let big = String(repeating: "x", count: 10_000_000)
        let predicate = try RecordPredicate(parsing: "name == '\(big)'")
        guard case .comparison(let comparison) = predicate, case .string(let value) = comparison.right else {
            Issue.record("unexpected tree")
            return
        }
        #expect(value.utf8.count == 10_000_000)
        #expect(try predicate.compile().evaluate(.object(["name": .string(big)])))
        do {
            _ = try RecordPredicate(parsing: "name == '\(big)")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("closing single quote"))
            #expect(error.rendered().count < 1000)
        }
    }

    @Test("Random bytes give an error or a predicate, never a crash", arguments: 0..<8)
    func randomBytes(_ batch: Int) throws {
        var g = SeededGenerator(seed: UInt64(batch) + 99)
        let alphabet = Array("()[]{}'\"\\%@$#.,:=<>!&|+-*/^?aAzZ019 \n\tANDORNOTINANYALL".utf8)
        for _ in 0..<500 {
            let length = Int(g.next() % 60)
            let bytes = (0..<length).map { _ -> UInt8 in
                g.next() % 3 == 0 ? UInt8(truncatingIfNeeded: g.next()) : alphabet[Int(g.next() % UInt64(alphabet.count))]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let predicate = try? RecordPredicate(parsing: text) {
                // Whatever parses prints to text that parses back to the same tree.
                #expect(try RecordPredicate(parsing: predicate.predicateFormat) == predicate, "\(text)")
                _ = try? predicate.compile().evaluate(.object([:]))
            }
        }
    }
}
