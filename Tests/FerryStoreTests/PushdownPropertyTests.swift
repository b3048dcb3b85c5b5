import Testing
import FerryPredicate
import FerryRecords
import FerryStore
import FerryTestSupport

/// The judge of predicate pushdown: for generated stores and generated predicates, a store query
/// returns exactly the records that evaluating the compiled filter on every record returns
/// (records the filter cannot evaluate do not match), in stored order, with and without indexes,
/// one page or many.
@Suite("Predicate pushdown")
struct PushdownPropertyTests {
    /// Strings whose bytes and whose Swift equality disagree, or that case-fold into ASCII.
    static let tricky = ["e\u{301}", "\u{E9}", "\u{212A}elvin", "Kelvin", "kelvin", "stra\u{DF}e", "STRASSE", "strasse", "\u{130}stanbul",
                         "\u{131}i", "\u{FB01}nance", "finance", "A\u{30A}", "\u{C5}", "a;b", "a\u{37E}b", "x`y", "x\u{1FEF}y", "hello",
                         "HELLO world", "Othello", "he\"llo", "50%", "a_b", "a\\b", "", " ", "MESSAGE", "Message", "日本語", "😀"]

    /// Records from the generator, plus records whose fields hold the tricky strings and
    /// numbers at the edges of exact comparison.
    static func records(seed: UInt64, count: Int) -> [Record] {
        var records = StoreFixture.records(count: count, seed: seed)
        var random = SeededRandom(seed: seed ^ 0xABCD)
        let numbers: [FieldValue] = [.int64(1 << 53), .int64((1 << 53) + 1), .int64(-(1 << 53) - 1), .double(9_007_199_254_740_992),
                                     .double(0.30000000000000004), .double(-0.0), .int64(50), .int64(51), .double(50.5),
                                     .timestamp(1_600_000_000_123), .string("50"), .int64(Int64.max), .double(1e300)]
        for index in 0..<(count / 3) {
            var record = Record(recordName: "t\(index)-" + random.pick(tricky), recordType: random.pick(["Message", "MESSAGE", "Note"]))
            record.zoneID = ZoneID(zoneName: random.pick(["Chats", "Zone \u{2713} 日本", "_defaultZone"]))
            var fields = RecordFields()
            fields["f0"] = RecordField(.string(random.pick(tricky)), type: .string)
            let number = random.pick(numbers)
            fields["f1"] = RecordField(number, type: number.inferredType)
            fields["f2"] = RecordField(.list((0..<random.below(3)).map { _ in .string(random.pick(tricky)) }), type: .stringList)
            if random.chance(0.5) {
                fields["f3"] = RecordField(.reference(Reference(recordName: random.pick(tricky), action: .deleteSelf)), type: .reference)
            } else {
                let other = random.pick(numbers)
                fields["f3"] = RecordField(other, type: other.inferredType)
            }
            record.fields = fields
            if random.chance(0.5) { record.created = RecordStamp(timestamp: 1_600_000_000_000 + Int64(random.below(3)), userRecordName: random.pick(tricky)) }
            if random.chance(0.3) { record.parent = Reference(recordName: random.pick(tricky)) }
            if random.chance(0.3) { record.recordChangeTag = random.pick(tricky) }
            records.append(record)
        }
        // As JSON gives them back (the model can hold values JSON cannot tell apart).
        return try! records.map { record in try StoreFixture.json(record).withUnsafeBytes { try RecordJSON.decodeRecord($0) } }
    }

    /// A generator of predicates over the keys and values the records hold.
    struct PredicateMaker {
        var random: SeededRandom
        let records: [Record]
        static let keys = ["f0", "f1", "f2", "f3", "f4", "f5", "recordType", "recordName", "recordID", "zoneName", "recordChangeTag",
                           "creationDate", "modificationDate", "parent", "share", "creatorUserRecordID", "lastModifiedUserRecordID", "missing"]

        mutating func constant(for key: String) -> PredicateExpression {
            // Half the time a value some record holds, so that comparisons hit.
            if random.chance(0.5), let value = sampled(key) { return value }
            switch random.below(10) {
            case 0: return .string(random.pick(PushdownPropertyTests.tricky))
            case 1: return .integer(random.pick([0, 1, 50, -1, 1 << 53, (1 << 53) + 1, Int64.max, Int64.min]))
            case 2: return .double(random.pick([0.5, -0.0, 50.0, 9_007_199_254_740_992, 9_007_199_254_740_994, 1e300, 0.30000000000000004]))
            case 3: return .null
            case 4: return .date(secondsSinceReferenceDate: random.pick([1_600_000_000.123, 1_600_000_000, 1_500_000_000]) - PredicateExpression.referenceDateOffset)
            case 5: return .reference(random.pick(PushdownPropertyTests.tricky))
            default: return .string(random.pick(["hello", "Message", "Chats", "a", "x", "HELLO"]))
            }
        }

        mutating func sampled(_ key: String) -> PredicateExpression? {
            let record = random.pick(records)
            switch key {
            case "recordType": return record.recordType.map(PredicateExpression.string)
            case "recordName", "recordID": return .string(record.recordName)
            case "zoneName": return .string(record.zoneName)
            case "recordChangeTag": return record.recordChangeTag.map(PredicateExpression.string)
            case "creationDate": return record.created?.timestamp.map { .date(secondsSinceReferenceDate: Double($0) / 1000 - PredicateExpression.referenceDateOffset) }
            case "modificationDate": return record.modified?.timestamp.map { .date(secondsSinceReferenceDate: Double($0) / 1000 - PredicateExpression.referenceDateOffset) }
            case "parent": return record.parent.map { .string($0.recordName) }
            case "share": return record.share.map { .string($0.recordName) }
            case "creatorUserRecordID": return record.created?.userRecordName.map(PredicateExpression.string)
            case "lastModifiedUserRecordID": return record.modified?.userRecordName.map(PredicateExpression.string)
            default:
                guard let value = record[field: key] else { return nil }
                return Self.expression(value)
            }
        }

        static func expression(_ value: FieldValue) -> PredicateExpression? {
            switch value {
            case .string(let s), .bytes(let s): .string(s)
            case .int64(let v): .integer(v)
            case .double(let v): .double(v)
            case .timestamp(let ms): .date(secondsSinceReferenceDate: Double(ms) / 1000 - PredicateExpression.referenceDateOffset)
            case .reference(let r): .string(r.recordName)
            case .list(let items): items.first.flatMap(expression)
            default: nil
            }
        }

        mutating func comparison() -> RecordPredicate {
            let key = random.pick(Self.keys)
            let operators: [PredicateComparison.Operator] = [.equalTo, .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan,
                                                              .greaterThanOrEqualTo, .between, .in, .contains, .beginsWith, .endsWith, .like]
            let op = random.pick(operators)
            var options: PredicateComparison.Options = []
            if [.contains, .beginsWith, .equalTo, .like].contains(op) && random.chance(0.3) {
                options = random.pick([[.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]])
            }
            var quantifier = PredicateComparison.Quantifier.direct
            var right: PredicateExpression
            switch op {
            case .between: right = .aggregate([constant(for: key), constant(for: key)])
            case .in:
                if random.chance(0.3) {
                    // `x IN list`: the constant on the left.
                    return .comparison(PredicateComparison(constant(for: key), .in, .keyPath([key]), options: options))
                }
                right = .aggregate((0..<random.below(4)).map { _ in constant(for: key) })
            default:
                right = constant(for: key)
                if op == .equalTo && random.chance(0.15) { quantifier = .any }
            }
            if op == .equalTo && random.chance(0.1) {
                return .comparison(PredicateComparison(right, .equalTo, .keyPath([key]), options: options))
            }
            return .comparison(PredicateComparison(.keyPath([key]), op, right, quantifier: quantifier, options: options))
        }

        mutating func predicate(depth: Int = 0) -> RecordPredicate {
            switch depth > 1 ? 0 : random.below(10) {
            case 0...4: return comparison()
            case 5, 6: return .and((0..<(1 + random.below(3))).map { _ in predicate(depth: depth + 1) })
            case 7: return .or((0..<(1 + random.below(3))).map { _ in predicate(depth: depth + 1) })
            case 8: return .not(predicate(depth: depth + 1))
            default: return .constant(random.chance(0.5))
            }
        }
    }

    /// The records a compiled filter matches, by key.
    static func expected(_ records: [Record], _ predicate: RecordPredicate) throws -> [String] {
        let filter = try RecordFilter(predicate)
        return records.filter { (try? filter.matches($0)) == true }.map(StoreFixture.key)
    }

    static func schema() -> String {
        var text = "DEFINE SCHEMA\n"
        for type in ["Message", "MESSAGE", "Note", "Chat", "Item"] {
            text += "RECORD TYPE \(type) (f0 STRING QUERYABLE SORTABLE, f1 INT64 QUERYABLE SORTABLE, f3 INT64 QUERYABLE, "
                + "\"___createTime\" TIMESTAMP SORTABLE, \"___recordID\" REFERENCE QUERYABLE);\n"
        }
        return text
    }

    @Test("A store query returns exactly the records the compiled filter matches", arguments: [(UInt64(1), false), (2, true), (3, false), (4, true)])
    func queriesMatchTheFilter(seed: UInt64, indexed: Bool) throws {
        let records = Self.records(seed: seed, count: 240)
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: path)
        if indexed {
            try RecordStore(path: path, access: .readWrite).makeIndexes(for: try CloudKitSchema(parsing: Self.schema()))
        }
        let store = try RecordStore(path: path)
        var maker = PredicateMaker(random: SeededRandom(seed: seed &* 7919), records: records)
        var pushed = 0, exact = 0
        for _ in 0..<150 {
            let predicate = maker.predicate()
            let explanation = try store.explain(StoreQuery(predicate: predicate))
            if !explanation.pushedDown.isEmpty { pushed += 1 }
            if !explanation.usesCompiledFilter { exact += 1 }
            let expected = try Self.expected(records, predicate)
            let page = try store.query(StoreQuery(predicate: predicate))
            let got = try page.records().map(StoreFixture.key)
            #expect(got == expected, "predicate: \(predicate.predicateFormat)")
            // With a type filter too (the form `ferry query --type` takes).
            let typed = try store.query(StoreQuery(recordTypes: ["Message"], predicate: predicate))
            let typedExpected = try Self.expected(records.filter { $0.recordType == "Message" }, predicate)
            #expect(try typed.records().map(StoreFixture.key) == typedExpected, "predicate: \(predicate.predicateFormat) with --type Message")
        }
        // The property means something only if SQL does part of the work, and sometimes all of it.
        #expect(pushed > 30, "\(pushed) of 150 predicates pushed down")
        #expect(exact > 15, "\(exact) of 150 predicates decided by SQL alone")
    }

    @Test("Every QUERYABLE or SORTABLE field gets an index of its own: names that spell alike, types that differ in case")
    func indexNamesAreDistinct() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(StoreFixture.records(count: 10, seed: 9), into: path)
        let schema = """
        DEFINE SCHEMA
        RECORD TYPE a_ (b INT64 QUERYABLE);
        RECORD TYPE a (_b INT64 SORTABLE);
        RECORD TYPE Message (f STRING QUERYABLE);
        RECORD TYPE MESSAGE (f STRING QUERYABLE);
        RECORD TYPE "x2d" (f STRING QUERYABLE);
        RECORD TYPE "-" (f STRING QUERYABLE);
        """
        let store = try RecordStore(path: path, access: .readWrite)
        let indexes = try store.makeIndexes(for: try CloudKitSchema(parsing: schema))
        #expect(indexes.count == 6)
        #expect(Set(indexes.map { $0.name.lowercased() }).count == 6)
        #expect(indexes.contains { $0.recordType == "a_" && $0.fieldName == "b" && $0.kind == "QUERYABLE" })
        #expect(indexes.contains { $0.recordType == "a" && $0.fieldName == "_b" && $0.kind == "SORTABLE" })
        // Each is an index SQLite has, and running again changes nothing.
        try store.execute(sql: "SELECT 1")
        #expect(try store.makeIndexes(for: try CloudKitSchema(parsing: schema)) == indexes)
    }

    @Test("Dates beyond 2^53 ms and strings holding U+0000 give the records evaluation gives")
    func extremeDatesAndNULStrings() throws {
        var records: [Record] = []
        for (name, ms) in [("max", Int64.max), ("big", (Int64(1) << 53) + 1), ("small", 1_600_000_000_123)] {
            var record = Record(recordName: name, recordType: "T")
            var fields = RecordFields()
            fields["ts"] = RecordField(.timestamp(ms), type: .timestamp)
            record.fields = fields
            record.created = RecordStamp(timestamp: ms)
            records.append(record)
        }
        for (name, text) in [("n1", "a\u{0}b"), ("n2", "a"), ("n3", "a\u{0}c"), ("n4", "b")] {
            var record = Record(recordName: name, recordType: "T")
            var fields = RecordFields()
            fields["f"] = RecordField(.string(text), type: .string)
            record.fields = fields
            records.append(record)
        }
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: path)
        let store = try RecordStore(path: path)
        let predicates: [(String, [JSONValue]?)] = [
            (#"ts == CAST(9223371058547576, "NSDate")"#, nil),
            (#"creationDate >= CAST(9223371058547576, "NSDate")"#, nil),
            (#"ts == CAST(9006220947540.993, "NSDate")"#, nil),
            (#"ts BETWEEN {CAST(9006220947540.992, "NSDate"), CAST(9006220947540.994, "NSDate")}"#, nil),
            (#"ts < CAST(9006220947540.994, "NSDate")"#, nil),
            ("f == %@", [.string("a\u{0}b")]), ("f IN {%@, %@}", [.string("a\u{0}b"), .string("zz")]),
            ("f BEGINSWITH %@", [.string("a\u{0}")]), ("f != %@", [.string("a\u{0}b")]), ("f > %@", [.string("a\u{0}b")]),
            ("f < %@", [.string("a")]), ("f == %@", [.string("a")]),
        ]
        for (text, arguments) in predicates {
            let predicate = try RecordPredicate(parsing: text, arguments: arguments)
            let expected = try Self.expected(records, predicate)
            #expect(try store.query(StoreQuery(predicate: predicate)).records().map(StoreFixture.key) == expected, "\(text)")
        }
    }

    @Test("Paging with cursors gives the same records as one unlimited query, for any sort keys",
          arguments: [UInt64(5), 6, 7])
    func pagingIsStable(seed: UInt64) throws {
        let records = Self.records(seed: seed, count: 150)
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: path)
        if seed == 6 { try RecordStore(path: path, access: .readWrite).makeIndexes(for: try CloudKitSchema(parsing: Self.schema())) }
        let store = try RecordStore(path: path)
        var maker = PredicateMaker(random: SeededRandom(seed: seed), records: records)
        let sortChoices = ["f0", "f1", "f1:desc", "f3", "recordName:desc", "creationDate", "modificationDate:desc", "recordType", "missing"]
        for round in 0..<20 {
            var query = StoreQuery(recordTypes: round % 3 == 0 ? ["Message"] : [],
                                   predicate: round % 2 == 0 ? maker.predicate() : nil,
                                   sortKeys: (0..<(1 + maker.random.below(2))).map { _ in StoreSortKey(parsing: maker.random.pick(sortChoices))! })
            let all = try store.query(query).recordsJSON
            var paged: [[UInt8]] = []
            query.limit = 1 + maker.random.below(9)
            var pages = 0
            while true {
                let page = try store.query(query)
                paged += page.recordsJSON
                pages += 1
                guard let next = page.continuationMarker, pages < 1000 else { break }
                query.cursor = next
            }
            #expect(paged == all, "sort \(query.sortKeys), predicate \(query.predicate?.predicateFormat ?? "-")")
        }
    }

    @Test("A cursor of another query is refused")
    func foreignCursor() throws {
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(Self.records(seed: 9, count: 30), into: path)
        let store = try RecordStore(path: path)
        let page = try store.query(StoreQuery(limit: 2))
        let cursor = try #require(page.continuationMarker)
        #expect(throws: StoreError.self) { try store.query(StoreQuery(recordTypes: ["Note"], limit: 2, cursor: cursor)) }
        #expect(throws: StoreError.self) { try store.query(StoreQuery(limit: 2, cursor: "not a cursor")) }
    }

    @Test("SQLite reads back every double the generator makes as the same double")
    func sqliteParsesDoublesExactly() throws {
        var generator = RecordGenerator(seed: 17)
        var records: [Record] = []
        for index in 0..<2000 {
            var record = Record(recordName: "d\(index)", recordType: "D")
            record.fields = ["x": RecordField(.double(generator.double()), type: .double)]
            records.append(record)
        }
        let path = StoreFixture.newPath()
        try StoreFixture.importRecords(records, into: path)
        let store = try RecordStore(path: path)
        for record in records.prefix(400) {
            guard case .double(let value)? = record[field: "x"] else { continue }
            let page = try store.query(StoreQuery(predicate: .comparison(PredicateComparison(.keyPath(["x"]), .equalTo, .double(value)))))
            #expect(try page.records().contains { $0.recordName == record.recordName }, "\(value)")
        }
    }
}
