import FerryPredicate
import FerryRecords
import Testing

@Suite("Evaluation")
struct EvaluationTests {
    static let object: JSONValue = {
        do { return try JSONValue(parsing: EvalTable.object) } catch { fatalError("fixture: \(error)") }
    }()

    static func evaluate(_ entry: EvalCase, on evaluate: (RecordFilter) throws -> Bool) -> Result<Bool, PredicateError> {
        do {
            let arguments = try parseArguments(entry.arguments)
            let filter = try RecordFilter(parsing: entry.predicate, arguments: arguments)
            return .success(try evaluate(filter))
        } catch let error as PredicateError {
            return .failure(error)
        } catch {
            return .failure(PredicateError(.argument, "\(error)"))
        }
    }

    @Test("Each JSON case evaluates to its documented result", arguments: EvalTable.all)
    func jsonCase(_ entry: EvalCase) {
        let result = Self.evaluate(entry) { try $0.evaluate(Self.object) }
        switch (result, entry.expected) {
        case (.success(let value), let expected?): #expect(value == expected)
        case (.failure, nil): break
        case (.success(let value), nil): Issue.record("expected an error, got \(value)")
        case (.failure(let error), _?): Issue.record("unexpected error: \(error)")
        }
    }

    static let record = Record(
        recordName: "msg-1", recordType: "Message", zoneID: ZoneID(zoneName: "Chats"),
        fields: [
            "text": RecordField(.string("Hello, wonderful World")),
            "count": RecordField(.int64(51)),
            "score": RecordField(.double(2.5)),
            "sent": RecordField(.timestamp(1_714_564_800_000)),
            "author": RecordField(.reference(Reference(recordName: "user-9"))),
            "tags": RecordField(.list([.string("urgent"), .string("Work")])),
            "ratings": RecordField(.list([.int64(1), .int64(2), .int64(3)])),
            "where": RecordField(.location(Location(latitude: 47.37, longitude: 8.54))),
            "flag": RecordField(.int64(1)),
            "title": RecordField(.string("Ünïcödé Straße")),
            "raw": RecordField(.json(.object(["x": .number(JSONNumber(Int64(5)))]))),
        ],
        recordChangeTag: "tag-7",
        created: RecordStamp(timestamp: 1_700_000_000_000, userRecordName: "_creator"),
        modified: RecordStamp(timestamp: 1_714_564_800_000, userRecordName: "_modifier"),
        parent: Reference(recordName: "thread-1"))

    static let recordCases: [EvalCase] = [
        EvalCase("recordType == 'Message'", true),
        EvalCase("recordType == 'Other'", false),
        EvalCase("recordType != 'Other'", true),
        EvalCase("recordName == 'msg-1'", true),
        EvalCase("recordID == %@", true, args: #"[{"$reference": "msg-1"}]"#),
        EvalCase("recordID == 'msg-1'", true),
        EvalCase("zoneName == 'Chats'", true),
        EvalCase("recordChangeTag == 'tag-7'", true),
        EvalCase("parent == %@", true, args: #"[{"$reference": "thread-1"}]"#),
        EvalCase("creatorUserRecordID == %@", true, args: #"[{"$reference": "_creator"}]"#),
        EvalCase("lastModifiedUserRecordID == %@", true, args: #"[{"$reference": "_modifier"}]"#),
        EvalCase("creationDate < %@", true, args: #"[{"$date": "2024-01-01T00:00:00Z"}]"#),
        EvalCase("creationDate == %@", true, args: #"[{"$date": 1700000000}]"#),
        EvalCase("modificationDate == %@", true, args: #"[{"$date": "2024-05-01T12:00:00Z"}]"#),
        EvalCase("modificationDate > creationDate", true),
        EvalCase("sent == %@", true, args: #"[{"$date": "2024-05-01T12:00:00Z"}]"#),
        EvalCase("sent > 5", nil),
        EvalCase("count > 50", true),
        EvalCase("count > 51", false),
        EvalCase("count >= 51", true),
        EvalCase("count == 51", true),
        EvalCase("count != 51", false),
        EvalCase("count < 51.5", true),
        EvalCase("count == '51'", false),
        EvalCase("count > '5'", nil),
        EvalCase("score BETWEEN {2, 3}", true),
        EvalCase("text CONTAINS[c] 'hello'", true),
        EvalCase("text CONTAINS[c] 'WORLD'", true),
        EvalCase("text CONTAINS 'hello'", false),
        EvalCase("text CONTAINS[c] 'goodbye'", false),
        EvalCase("title CONTAINS[c] 'STRASSE'", true),
        EvalCase("title CONTAINS[c] 'ünï'", true),
        EvalCase("title CONTAINS[c] 'uni'", false),
        EvalCase("title CONTAINS[cd] 'UNI'", true),
        EvalCase("text == 'Hello, wonderful World'", true),
        EvalCase("text == 'hello'", false),
        EvalCase("text != 'hello'", true),
        EvalCase("missing == nil", true),
        EvalCase("missing != 'x'", true),
        EvalCase("missing > 1", false),
        EvalCase("missing CONTAINS[c] 'x'", false),
        EvalCase("author == %@", true, args: #"[{"$reference": "user-9"}]"#),
        EvalCase("tags CONTAINS 'urgent'", true),
        EvalCase("ANY tags ==[c] 'work'", true),
        EvalCase("'Work' IN tags", true),
        EvalCase("ratings.@sum == 6", true),
        EvalCase("ratings.@count == 3", true),
        EvalCase("ALL ratings > 0", true),
        EvalCase("distanceToLocation:fromLocation:(where, %@) < 2000", true, args: #"[{"$location": [47.38, 8.54]}]"#),
        EvalCase("flag == YES", true),
        EvalCase("raw.x == 5", true),
        EvalCase("SELF CONTAINS 'wonderful'", true),
        EvalCase("SELF CONTAINS 'WONDERFUL planet'", true),
        EvalCase("SELF CONTAINS 'planet'", false),
        EvalCase("SELF CONTAINS 'strasse'", true),
        EvalCase("SELF CONTAINS 'hello-goodbye'", true),
        EvalCase("SELF CONTAINS 'urgent'", true),
        EvalCase("recordType == 'Message' AND count > 50 AND text CONTAINS[c] 'hello'", true),
        EvalCase("recordType == 'Message' AND count > 60 AND text CONTAINS[c] 'hello'", false),
        EvalCase("SUBQUERY(ratings, $r, $r >= 2).@count == 2", true),
    ]

    @Test("Each record case evaluates system keys and fields to the documented result", arguments: recordCases)
    func recordCase(_ entry: EvalCase) {
        let result = Self.evaluate(entry) { try $0.matches(Self.record) }
        switch (result, entry.expected) {
        case (.success(let value), let expected?): #expect(value == expected)
        case (.failure, nil): break
        case (.success(let value), nil): Issue.record("expected an error, got \(value)")
        case (.failure(let error), _?): Issue.record("unexpected error: \(error)")
        }
    }

    @Test("Variables are bound at evaluation, and an unbound variable is an error")
    func variables() throws {
        let filter = try RecordFilter(parsing: "age > $limit AND name BEGINSWITH $prefix")
        #expect(try filter.evaluate(Self.object, variables: ["limit": .number(JSONNumber(Int64(40))), "prefix": .string("Fer")]))
        #expect(try !filter.evaluate(Self.object, variables: ["limit": .number(JSONNumber(Int64(50))), "prefix": .string("Fer")]))
        #expect(throws: PredicateError.self) { try filter.evaluate(Self.object) }
        #expect(try filter.matches(Self.record, variables: ["limit": .number(JSONNumber(Int64(1))), "prefix": .string("x")]) == false)
    }

    @Test("Compiling a predicate with unsubstituted specifiers fails with an argument error")
    func placeholdersDoNotCompile() {
        do {
            _ = try RecordFilter(parsing: "name == %@")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .argument)
        }
    }

    @Test("The fast path and the general path agree on generated records",
          arguments: ["count > 50", "count == 7", "count != 7", "text CONTAINS[c] 'ab'", "text == 'abc'", "text != 'abc'",
                      "count <= 3", "text CONTAINS[c] 'é'", "text BEGINSWITH 'a'", "recordType == 'Message'",
                      "text CONTAINS[c] 'fi'", "text CONTAINS[c] 'ss'", "text CONTAINS[c] 'ki'", "text CONTAINS[c] 'is'"])
    func fastPathAgreement(_ text: String) throws {
        let fast = try RecordFilter(parsing: text)
        // The same comparison written with SELF.key does not take the fast path.
        let slow = try RecordFilter(parsing: text.replacingFirstKey())
        var generator = SeededGenerator(seed: 42)
        for i in 0..<300 {
            let record = Self.randomRecord(&generator, index: i)
            let a = Result { try fast.matches(record) }.map { $0 }
            let b = Result { try slow.matches(record) }.map { $0 }
            switch (a, b) {
            case (.success(let x), .success(let y)): #expect(x == y, "record \(record)")
            case (.failure, .failure): break
            default: Issue.record("fast and slow paths disagree on \(record)")
            }
        }
    }

    static func randomRecord(_ g: inout SeededGenerator, index: Int) -> Record {
        let words = ["abc", "ABC", "xabx", "Éclair", "ab", "", "a", "K\u{212A}", "café", "e\u{301}ab",
                     "\u{FB01}nance", "stra\u{DF}e", "\u{131}s", "\u{17F}s", "ｆｕｌｌ", "Ki", "FI", "SS"]
        var fields = RecordFields()
        switch g.next() % 4 {
        case 0: fields["count"] = RecordField(.int64(Int64(g.next() % 100)))
        case 1: fields["count"] = RecordField(.double(Double(g.next() % 100) / 2))
        case 2: fields["count"] = RecordField(.string("7"))
        default: break
        }
        switch g.next() % 4 {
        case 0, 1: fields["text"] = RecordField(.string(words[Int(g.next() % UInt64(words.count))] + words[Int(g.next() % UInt64(words.count))]))
        case 2: fields["text"] = RecordField(.int64(3))
        default: break
        }
        return Record(recordName: "r\(index)", recordType: g.next() % 2 == 0 ? "Message" : nil, fields: fields)
    }
}

extension String {
    /// `count > 50` → `SELF.count + 0 > 50`-free form: `SELF.count` parses to the same key path,
    /// so use `{count}[FIRST]`, which reads the same value through the general path.
    func replacingFirstKey() -> String {
        let key = prefix { $0.isLetter }
        return "{\(key)}[FIRST]" + dropFirst(key.count)
    }
}

/// SplitMix64, for reproducible generated cases.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
