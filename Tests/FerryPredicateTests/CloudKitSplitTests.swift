import FerryPredicate
import FerryRecords
import FerryTestSupport
import Testing

@Suite("CloudKit: split")
struct CloudKitSplitTests {
    static func split(_ text: String, args: String? = nil, batch: Int = 100, maximumQueries: Int = 1000) throws -> [RecordPredicate] {
        let predicate = try RecordPredicate(parsing: text, arguments: parseArguments(args))
        return try predicate.splitForCloudKit(.init(batchSize: batch, maximumQueries: maximumQueries))
    }

    /// Predicate, batch size, and the canonical text of each query in order.
    static let cases: [(String, Int, [String])] = [
        ("(a == 1 OR b == 2) AND c > 3", 100, ["a == 1 AND c > 3", "b == 2 AND c > 3"]),
        ("a == 1", 100, ["a == 1"]),
        ("a == 1 AND b BEGINSWITH 'x'", 100, [#"a == 1 AND b BEGINSWITH "x""#]),
        ("a == 1 OR a == 1", 100, ["a == 1"]),
        ("a == 1 AND a == 1 AND b == 2", 100, ["a == 1 AND b == 2"]),
        ("a == 1 OR b == 2 OR c == 3", 100, ["a == 1", "b == 2", "c == 3"]),
        ("(a == 1 OR b == 2) AND (c == 3 OR d == 4)", 100, ["a == 1 AND c == 3", "a == 1 AND d == 4", "b == 2 AND c == 3", "b == 2 AND d == 4"]),
        ("NOT (a == 1 AND b == 2)", 100, ["NOT a == 1", "NOT b == 2"]),
        ("NOT (a == 1 OR b == 2)", 100, ["(NOT a == 1) AND (NOT b == 2)"]),
        ("NOT NOT a == 1", 100, ["a == 1"]),
        ("NOT (NOT (a == 1 OR b == 2) AND c == 3)", 100, ["a == 1", "b == 2", "NOT c == 3"]),
        ("x IN {1, 2, 3, 4, 5}", 2, ["x IN {1, 2}", "x IN {3, 4}", "x IN {5}"]),
        ("x IN {1, 2, 3, 4}", 4, ["x IN {1, 2, 3, 4}"]),
        ("NOT x IN {1, 2, 3}", 2, ["(NOT x IN {1, 2}) AND (NOT x IN {3})"]),
        ("ANY {1, 2, 3} = x", 2, ["ANY {1, 2} == x", "ANY {3} == x"]),
        ("ANY tags IN {'a', 'b', 'c'}", 2, [#"ANY tags IN {"a", "b"}"#, #"ANY tags IN {"c"}"#]),
        ("ANY {'a', 'b', 'c'} IN tags", 2, [#"ANY {"a", "b"} IN tags"#, #"ANY {"c"} IN tags"#]),
        ("(a == 1 OR b == 2) AND x IN {1, 2, 3}", 2,
         ["a == 1 AND x IN {1, 2}", "a == 1 AND x IN {3}", "b == 2 AND x IN {1, 2}", "b == 2 AND x IN {3}"]),
        ("x IN {1, 2, 3} AND y IN {4, 5, 6}", 2,
         ["x IN {1, 2} AND y IN {4, 5}", "x IN {1, 2} AND y IN {6}", "x IN {3} AND y IN {4, 5}", "x IN {3} AND y IN {6}"]),
        ("TRUEPREDICATE", 100, ["TRUEPREDICATE"]),
        ("a == 1 OR TRUEPREDICATE", 100, ["TRUEPREDICATE"]),
        ("NOT FALSEPREDICATE", 100, ["TRUEPREDICATE"]),
        ("FALSEPREDICATE", 100, []),
        ("a == 1 AND FALSEPREDICATE", 100, []),
        ("a == 1 OR FALSEPREDICATE", 100, ["a == 1"]),
        ("SELF CONTAINS 'ferry' OR SELF CONTAINS 'boat'", 100, [#"SELF CONTAINS "ferry""#, #"SELF CONTAINS "boat""#]),
    ]

    @Test("Splitting rewrites OR, NOT over compounds and long lists into the expected queries", arguments: cases)
    func splits(_ entry: (String, Int, [String])) throws {
        let queries = try Self.split(entry.0, batch: entry.1)
        #expect(queries.map(\.predicateFormat) == entry.2)
        for query in queries { #expect(query.validateForCloudKit().isAccepted, "\(query)") }
    }

    @Test("ANY %@ IN relatedRecords with 1,000 references splits into 10 queries of 100, in order")
    func referenceBatches() throws {
        let arguments = try #require(try parseArguments(CloudKitDocumentedCases.references(1000)))
        let predicate = try RecordPredicate(parsing: "ANY %@ IN relatedRecords", arguments: arguments)
        #expect(!predicate.validateForCloudKit().isAccepted)
        let queries = try predicate.splitForCloudKit()
        #expect(queries.count == 10)
        var names: [String] = []
        for query in queries {
            guard case .comparison(let comparison) = query, case .aggregate(let items) = comparison.left else {
                Issue.record("unexpected query \(query)")
                continue
            }
            #expect(items.count == 100)
            names += items.map { if case .reference(let name) = $0 { name } else { "?" } }
            let filter = try #require(try query.cloudKitFilterBy().arrayValue?.first)
            #expect(filter["comparator"] == .string("LIST_CONTAINS_ANY"))
        }
        #expect(names == (0..<1000).map { "r\($0)" })
    }

    /// Predicates that cannot be split, with the rules and columns of the reasons.
    static let unsplittable: [(String, [CloudKitValidation.Rule], [Int])] = [
        ("NOT (a > 1 OR b ENDSWITH 'x')", [.notOperand, .unsupportedOperator], [1, 17]),
        ("a == 1 OR b LIKE 'x*'", [.unsupportedOperator], [13]),
        ("NOT (a == 1 OR b > 2)", [.notOperand], [1]),
        ("ALL tags == 1 OR a == 1", [.allOrNone], [1]),
        ("NOT ANY tags > 1", [.unsupportedForm], [14]),
        ("x == {\((0..<300).map(String.init).joined(separator: ", "))}", [.inListTooLong], [6]),
        ("(a == 1 OR a.b == 2) AND c == 3", [.keyPath], [12]),
    ]

    @Test("A predicate that cannot be split says why, with every reason's rule and position", arguments: unsplittable)
    func cannotSplit(_ entry: (String, [CloudKitValidation.Rule], [Int])) throws {
        let predicate = try RecordPredicate(parsing: entry.0)
        do {
            let queries = try predicate.splitForCloudKit(.init(batchSize: 2))
            Issue.record("expected no split, got \(queries)")
        } catch {
            #expect(error.code == .cloudKit)
            #expect(error.cloudKitReasons.map(\.rule) == entry.1, "\(error.cloudKitReasons)")
            #expect(error.cloudKitReasons.map(\.span.column) == entry.2, "\(error.cloudKitReasons)")
            #expect(error.message.hasPrefix("cannot split"))
            #expect(error.span.column == entry.2.first)
        }
    }

    @Test("A normal form over the query limit fails clearly instead of growing without bound")
    func blowUp() throws {
        let text = (0..<11).map { "(a\($0) == 1 OR b\($0) == 2)" }.joined(separator: " AND ")
        let predicate = try RecordPredicate(parsing: text)
        do {
            let queries = try predicate.splitForCloudKit()
            Issue.record("expected no split, got \(queries.count) queries")
        } catch {
            #expect(error.code == .cloudKit)
            #expect(error.message.contains("more than 1000 queries"), "\(error.message)")
        }
        #expect(try Self.split(text, maximumQueries: 2048).count == 2048)
    }

    @Test("Batch sizes outside 1…250 are refused", arguments: [0, -1, 251])
    func badBatch(_ size: Int) {
        #expect(throws: PredicateError.self) { try Self.split("x IN {1, 2}", batch: size) }
    }

    // MARK: - Property

    @Test("For generated predicates and records, the split queries match exactly the original's records, and CloudKit accepts each",
          arguments: 0..<8)
    func unionIsOriginal(_ seed: Int) throws {
        var world = SplitWorld(random: SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17))
        let records = (0..<60).map { world.record($0) }
        var splitCount = 0, multiCount = 0, batchedCount = 0
        let total = 150
        for _ in 0..<total {
            let text = world.predicate(depth: 3)
            let batch = 2 + world.random.below(3)
            let predicate = try RecordPredicate(parsing: text)
            let queries: [RecordPredicate]
            do {
                queries = try predicate.splitForCloudKit(.init(batchSize: batch))
            } catch {
                #expect(error.code == .cloudKit, "\(text): \(error)")
                // Either some part has no CloudKit form, or the normal form is over the query limit.
                #expect(!error.cloudKitReasons.isEmpty || error.message.contains("more than 1000 queries"), "\(text): \(error)")
                #expect(!error.cloudKitReasons.contains { $0.rule == .or }, "\(text): \(error.cloudKitReasons)")
                continue
            }
            splitCount += 1
            if queries.count > 1 { multiCount += 1 }
            if predicate.longestList > batch { batchedCount += 1 }
            for query in queries {
                let validation = query.validateForCloudKit()
                #expect(validation.isAccepted, "\(text) → \(query): \(validation.reasons)")
                #expect(query.longestList <= batch, "\(text) → \(query)")
            }
            let original = try RecordFilter(predicate)
            let filters = try queries.map { try RecordFilter($0) }
            for record in records {
                let expected = try original.matches(record)
                let union = try filters.contains { try $0.matches(record) }
                #expect(union == expected, "\(text) on \(record.fields ?? [:]): split \(queries.map(\.predicateFormat))")
            }
        }
        // The property says something only if many predicates split, into several queries, with batching.
        #expect(splitCount > total / 3, "only \(splitCount) of \(total) split")
        #expect(multiCount > total / 10, "only \(multiCount) split into several queries")
        #expect(batchedCount > total / 20, "only \(batchedCount) had lists to batch")
    }
}

/// Seeded predicates over four fields (integers `a` and `b`, string `name`, string list `tags`,
/// reference list `refs`), mostly in forms CloudKit accepts, and records that may lack any field.
struct SplitWorld {
    var random: SeededRandom

    mutating func int() -> Int { random.below(6) }

    mutating func list(_ element: (inout SplitWorld) -> String) -> String {
        "{" + (0..<random.below(8)).map { _ in element(&self) }.joined(separator: ", ") + "}"
    }

    mutating func tag() -> String { "'t\(random.below(6))'" }
    mutating func reference() -> String { "CAST('r\(random.below(6))', 'CKReference')" }

    mutating func leaf() -> String {
        switch random.below(16) {
        case 0: return "a \(random.pick(["==", "!=", "<", ">=", ">"])) \(int())"
        case 1: return "a BETWEEN {\(int()), \(int())}"
        case 2: return "a IN \(list { "\($0.int())" })"
        case 3: return "name == '\(random.pick(["x", "xy", "y"]))'"
        case 4: return "name BEGINSWITH '\(random.pick(["x", "y"]))'"
        case 5: return random.pick(["\(tag()) IN tags", "tags CONTAINS \(tag())", "ANY tags == \(tag())"])
        case 6: return "ANY tags IN \(list { $0.tag() })"
        case 7: return "ANY \(list { $0.tag() }) IN tags"
        case 8: return "ANY \(list { "\($0.int())" }) = a"
        case 9: return "b \(random.pick(["==", "<", ">"])) \(int())"
        case 10: return "ANY \(list { $0.reference() }) IN refs"
        case 11: return "ANY tags BEGINSWITH 't\(random.below(2))'"
        case 12: return "name IN \(list { "'\($0.random.pick(["x", "y", "z"]))'" })"
        case 13: return random.pick(["name ENDSWITH 'y'", "a > b"])
        default: return random.pick(["TRUEPREDICATE", "FALSEPREDICATE", "a == \(int())", "NOT a == \(int())"])
        }
    }

    mutating func predicate(depth: Int) -> String {
        guard depth > 0, random.below(4) != 0 else { return leaf() }
        switch random.below(5) {
        case 0: return "NOT (\(predicate(depth: depth - 1)))"
        case 1, 2:
            return "(" + (0..<(2 + random.below(2))).map { _ in predicate(depth: depth - 1) }.joined(separator: " AND ") + ")"
        default:
            return "(" + (0..<(2 + random.below(2))).map { _ in predicate(depth: depth - 1) }.joined(separator: " OR ") + ")"
        }
    }

    mutating func record(_ index: Int) -> Record {
        var fields: RecordFields = [:]
        if random.below(5) != 0 { fields["a"] = RecordField(.int64(Int64(int()))) }
        if random.below(5) != 0 { fields["b"] = RecordField(.int64(Int64(int()))) }
        if random.below(5) != 0 { fields["name"] = RecordField(.string(random.pick(["x", "xy", "y", "z", "X"]))) }
        if random.below(5) != 0 {
            fields["tags"] = RecordField(.list((0..<random.below(4)).map { _ in .string("t\(random.below(6))") }))
        }
        if random.below(5) != 0 {
            fields["refs"] = RecordField(.list((0..<random.below(4)).map { _ in .reference(Reference(recordName: "r\(random.below(6))")) }))
        }
        return Record(recordName: "rec-\(index)", recordType: "Item", fields: fields)
    }
}

extension RecordPredicate {
    /// The most values any constant list in the predicate holds.
    fileprivate var longestList: Int {
        switch self {
        case .constant: 0
        case .comparison(let c): Swift.max(c.left.longestList, c.right.longestList)
        case .and(let operands, _), .or(let operands, _): operands.map(\.longestList).max() ?? 0
        case .not(let operand, _): operand.longestList
        }
    }
}

extension PredicateExpression {
    fileprivate var longestList: Int {
        if case .aggregate(let items) = self { items.count } else { 0 }
    }
}
