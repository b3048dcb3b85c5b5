import FerryPredicate
import FerryRecords
import Testing

@Suite("CloudKit")
struct CloudKitTests {
    /// Predicates CloudKit's CKQuery accepts (reference: "What CloudKit's CKQuery accepts").
    static let accepted: [String] = [
        "TRUEPREDICATE",
        "FALSEPREDICATE",
        "name == 'x'",
        "name = 'x'",
        "name != 'x'",
        "name <> 'x'",
        "count < 5", "count <= 5", "count > 5", "count >= 5", "count => 5", "count =< 5",
        "'x' == name",
        "count BETWEEN {1, 5}",
        "name IN {'a', 'b'}",
        "name IN %@",
        "'a' IN tags",
        "tags CONTAINS 'a'",
        "ANY tags == 'a'",
        "ANY tags IN {'a', 'b'}",
        "ANY tags BEGINSWITH 'a'",
        "name BEGINSWITH 'fer'",
        "SELF CONTAINS 'ferry boat'",
        "self CONTAINS 'ferry' AND SELF CONTAINS 'boat'",
        "allTokens TOKENMATCHES[cdl] 'ferry'",
        "distanceToLocation:fromLocation:(location, %@) < 1000",
        "distanceToLocation:fromLocation:(location, %@) <= 1000",
        "NOT name == 'x'",
        "NOT name IN {'a'}",
        "NOT name BEGINSWITH 'a'",
        "NOT tags CONTAINS 'a'",
        "NONE tags == 'a'",
        "NOT ANY tags == 'a'",
        "NOT ANY tags IN {'a', 'b'}",
        "NOT ANY tags BEGINSWITH 'a'",
        "NOT ANY {'a', 'b'} = name",
        "NOT ANY {'a', 'b'} IN tags",
        "NOT NOT name == 'x'",
        "NOT TRUEPREDICATE",
        "NOT NOT NOT name IN {'a'}",
        "name == 'x' AND count > 2 && flag == 1",
        "recordID == %@",
        "creationDate > %@",
        "modificationDate < %@",
        "creatorUserRecordID == %@",
        "lastModifiedUserRecordID == %@",
        "created_at2 == 1",
        "modificationDate > now()",
    ]

    @Test("CloudKit accepts each documented form", arguments: accepted)
    func accepts(_ text: String) throws {
        let validation = try RecordPredicate(parsing: text).validateForCloudKit()
        #expect(validation.isAccepted, "\(validation.reasons)")
    }

    /// Rejected predicates with the rule and the 1-based column of the first reason.
    static let rejected: [(String, CloudKitValidation.Rule, Int)] = [
        ("a == 1 OR b == 2", .or, 8),
        ("a == 1 || b == 2", .or, 8),
        ("ALL tags == 'x'", .allOrNone, 1),
        ("name ENDSWITH 'x'", .unsupportedOperator, 6),
        ("name LIKE 'x*'", .unsupportedOperator, 6),
        ("name MATCHES 'x.*'", .unsupportedOperator, 6),
        ("name UTI-EQUALS 'x'", .unsupportedOperator, 6),
        ("y notContainedIn: {1}", .unsupportedOperator, 3),
        ("name IN 'a string'", .stringContains, 6),
        ("a.b == 1", .keyPath, 1),
        ("tags.@count > 1", .keyPath, 1),
        ("NOT (a == 1 AND b == 2)", .notOperand, 1),
        ("NOT a BETWEEN {1, 2}", .notOperand, 1),
        ("NOT SELF CONTAINS 'x'", .notOperand, 1),
        ("NOT distanceToLocation:fromLocation:(loc, %@) < 5", .notOperand, 1),
        ("NOT a > 1", .notOperand, 1),
        ("SUBQUERY(a, $x, $x == 1).@count > 0", .unsupportedExpression, 1),
        ("FUNCTION(a, 'length') == 1", .unsupportedExpression, 1),
        ("TERNARY(a == 1, 1, 2) == 1", .unsupportedExpression, 1),
        ("a + 1 == 2", .unsupportedExpression, 1),
        ("a & 1 == 1", .unsupportedExpression, 1),
        ("a[0] == 1", .unsupportedExpression, 1),
        ("a == $x", .unsupportedExpression, 6),
        ("a == b", .fieldToField, 6),
        ("parent == %@", .parent, 1),
        ("_private == 1", .nameFormat, 1),
        ("#名前 == 1", .nameFormat, 1),
        ("recordType == 'Message'", .systemKey, 1),
        ("zoneName == 'x'", .systemKey, 1),
        ("name IN {\((0..<251).map(String.init).joined(separator: ", "))}", .inListTooLong, 9),
        ("distanceToLocation:fromLocation:(loc, %@) > 5", .distanceDirection, 43),
        ("distanceToLocation:fromLocation:(loc, %@) >= 5", .distanceDirection, 43),
        ("name BEGINSWITH 5", .beginsWithNonString, 17),
        ("SELF == 'x'", .unsupportedForm, 1),
        ("1 < count", .unsupportedForm, 3),
        ("ANY tags > 1", .unsupportedForm, 10),
        ("a TOKENMATCHES 'x'", .tokenMatches, 3),
        ("1 == 1", .fieldToField, 3),
        ("{'a', 'b'} IN tags", .unsupportedForm, 1),
        ("ANY tags == {'a', 'b'}", .unsupportedForm, 13),
        ("ANY tags CONTAINS {'a'}", .unsupportedForm, 19),
        ("tags CONTAINS {'a'}", .unsupportedForm, 15),
        ("ANY 'a' = tags", .unsupportedForm, 1),
        ("ANY 'a' IN tags", .unsupportedForm, 1),
        ("{1, 2} CONTAINS age", .unsupportedForm, 8),
        ("ANY tags IN 'abc'", .stringContains, 10),
        ("ANY tags IN 5", .unsupportedForm, 13),
        ("age IN 5", .unsupportedForm, 8),
        ("age BETWEEN 25", .betweenBounds, 13),
        ("age BETWEEN {1, 2, 3}", .betweenBounds, 13),
        ("age BETWEEN {nil, 3}", .betweenBounds, 13),
        ("age BETWEEN {0, {1, 10}}", .betweenBounds, 13),
        ("ALL tokenize(5, 'Cdl') IN allTokens", .tokenMatches, 1),
        ("NOT NOT a > 1 AND NOT NOT NOT a < 1", .notOperand, 27),
        ("NOT (a == 1 OR b == 2)", .notOperand, 1),
        ("ALL tags IN {\((0..<251).map(String.init).joined(separator: ", "))}", .allOrNone, 1),
    ]

    @Test("NOT over an ordering is rejected for the real reason: no negated comparator, and missing fields")
    func notOrderingReason() throws {
        let validation = try RecordPredicate(parsing: "NOT a > 1").validateForCloudKit()
        let reason = try #require(validation.reasons.first)
        #expect(reason.rule == .notOperand)
        #expect(reason.message.contains("no negated ordering comparator"), "\(reason)")
        #expect(reason.message.contains("without the field"), "\(reason)")
        let between = try RecordPredicate(parsing: "NOT a BETWEEN {1, 2}").validateForCloudKit()
        #expect(between.reasons.first?.message.contains("Apple's CKQuery rules") == true, "\(between.reasons)")
    }

    @Test("A rejected comparison with the constant on the left suggests the field-first spelling")
    func mirroredHint() throws {
        let validation = try RecordPredicate(parsing: "1 < count").validateForCloudKit()
        #expect(validation.reasons.first?.message.hasSuffix("(write count > 1)") == true, "\(validation.reasons)")
    }

    /// Every form that carries a list of values; `%@` is the list.
    static let listForms = [
        "x IN %@", "ANY x IN %@", "ANY %@ IN x", "%@ IN x", "ANY %@ = x", "NOT x IN %@", "NOT ANY x IN %@",
        "NOT ANY %@ IN x", "%@ CONTAINS x", "x CONTAINS %@", "ANY x == %@", "x == %@", "ALL x IN %@",
    ]

    static var listLimitCases: [(String, Int)] {
        listForms.flatMap { form in [100, 101, 250, 251, 1000].map { (form, $0) } }
    }

    @Test("Every form that carries a list is rejected above 250 values and warned about above 100", arguments: listLimitCases)
    func listLimit(_ entry: (String, Int)) throws {
        let values: [JSONValue] = (0..<entry.1).map { .number(JSONNumber(Int64($0))) }
        let validation = try RecordPredicate(parsing: entry.0, arguments: [.array(values)]).validateForCloudKit()
        let rejected = validation.reasons.filter { $0.rule == .inListTooLong }
        let warned = validation.warnings.filter { $0.rule == .inListTooLong }
        #expect(rejected.count == (entry.1 > 250 ? 1 : 0), "\(validation.reasons)")
        #expect(warned.count == (entry.1 > 100 && entry.1 <= 250 ? 1 : 0), "\(validation.warnings)")
        if let reason = rejected.first {
            #expect(reason.message.contains("this one has \(entry.1)"))
            #expect(reason.span.line == 1 && reason.span.column > 0)
        }
    }

    @Test("CloudKit rejects each unsupported form with its rule and position", arguments: rejected)
    func rejects(_ entry: (String, CloudKitValidation.Rule, Int)) throws {
        let validation = try RecordPredicate(parsing: entry.0).validateForCloudKit()
        #expect(!validation.isAccepted)
        let first = try #require(validation.reasons.first)
        #expect(first.rule == entry.1, "\(validation.reasons)")
        #expect(first.span.column == entry.2, "\(first)")
        #expect(first.span.line == 1)
    }

    @Test("Every reason is reported, not only the first")
    func everyReason() throws {
        let validation = try RecordPredicate(parsing: "a.b == 1 OR name LIKE 'x' OR ALL tags == 1").validateForCloudKit()
        #expect(Set(validation.reasons.map(\.rule)) == [.or, .keyPath, .unsupportedOperator, .allOrNone])
    }

    @Test("Options on plain comparisons are warned about, and string equality notes case-insensitivity")
    func warnings() throws {
        let validation = try RecordPredicate(parsing: "name ==[c] 'x' AND title BEGINSWITH[c] 'y'").validateForCloudKit()
        #expect(validation.isAccepted)
        #expect(validation.warnings.contains { $0.rule == .undocumentedOptions })
        #expect(validation.warnings.contains { $0.rule == .caseInsensitiveEquality })
        let long = try RecordPredicate(parsing: "id IN %@", arguments: [.array((0..<150).map { .number(JSONNumber(Int64($0))) })])
        #expect(long.validateForCloudKit().warnings.contains { $0.rule == .inListTooLong })
    }

    // MARK: - Schema

    static let schemaText = """
    DEFINE SCHEMA
        CREATE ROLE Moderator;
        // Messages users send.
        RECORD TYPE Message (
            "___createTime" TIMESTAMP SORTABLE,
            "___recordID"   REFERENCE QUERYABLE,
            text            STRING QUERYABLE SEARCHABLE,
            title           STRING,
            count           INT64 QUERYABLE SORTABLE,
            score           NUMBER PREFERRED AS DOUBLE QUERYABLE,
            tags            LIST<STRING> QUERYABLE,
            location        LOCATION QUERYABLE,
            photo           ASSET,
            secret          ENCRYPTED BYTES,
            author          REFERENCE QUERYABLE,
            GRANT WRITE TO "_creator",
            GRANT READ, CREATE TO "_world"
        );
        /* users */
        RECORD TYPE Users (
            "___recordID" REFERENCE QUERYABLE,
            roles LIST<INT64>, -- the roles
            GRANT READ TO "_world"
        );
        RECORD TYPE Bare (
            name STRING
        );
    """

    @Test("The .ckdb schema language parses types, indexes, grants, roles and comments")
    func schemaParses() throws {
        let schema = try CloudKitSchema(parsing: Self.schemaText)
        #expect(schema.roles == ["Moderator"])
        #expect(schema.recordTypes.map(\.name) == ["Message", "Users", "Bare"])
        let message = try #require(schema.recordType(named: "Message"))
        #expect(message.fields.count == 11)
        #expect(message.field(named: "text")?.isSearchable == true)
        #expect(message.field(named: "count")?.isSortable == true)
        #expect(message.field(named: "tags")?.type.description == "LIST<STRING>")
        #expect(message.field(named: "score")?.type.description == "NUMBER PREFERRED AS DOUBLE")
        #expect(message.field(named: "secret")?.type.description == "ENCRYPTED BYTES")
        #expect(message.grants == [.init(permissions: ["WRITE"], role: "_creator"), .init(permissions: ["READ", "CREATE"], role: "_world")])
    }

    static let badSchemas: [(String, String, Int, Int)] = [
        ("", "'DEFINE'", 1, 1),
        ("DEFINE SCHEMA RECORD TYPE A ( x FLOAT );", "a field type", 1, 33),
        ("DEFINE SCHEMA RECORD TYPE A ( x STRING INDEXED );", "QUERYABLE", 1, 40),
        ("DEFINE SCHEMA RECORD TYPE A ( x STRING )", "';'", 1, 41),
        ("DEFINE SCHEMA\nRECORD TYPE A (\n  x LIST<STRING );", "'>'", 3, 17),
        ("DEFINE SCHEMA RECORD TYPE A ( GRANT FLY TO x );", "READ, CREATE or WRITE", 1, 37),
        ("DEFINE SCHEMA CREATE ROLE ;", "a role name", 1, 27),
        ("DEFINE SCHEMA /* open", "'*/'", 1, 15),
        ("DEFINE SCHEMA RECORD TYPE \"A", "closing double quote", 1, 27),
        ("DEFINE SCHEMA DROP TYPE A;", "CREATE ROLE or RECORD TYPE", 1, 15),
        ("DEFINE SCHEMA RECORD TYPE A ( x NUMBER PREFERRED AS STRING );", "INT64 or DOUBLE", 1, 53),
        ("DEFINE SCHEMA RECORD TYPE A ( x STRING ! );", "schema word", 1, 40),
    ]

    @Test("Bad schemas fail with what was expected and the line and column", arguments: badSchemas)
    func schemaErrors(_ entry: (String, String, Int, Int)) {
        do {
            _ = try CloudKitSchema(parsing: entry.0)
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains(entry.1), "\(error.message)")
            #expect(error.line == entry.2)
            #expect(error.column == entry.3, "\(error)")
        }
    }

    static let schemaCases: [(String, String, CloudKitValidation.Rule?)] = [
        ("Message", "text == 'x'", nil),
        ("Message", "count > 5", nil),
        ("Message", "SELF CONTAINS 'hello'", nil),
        ("Message", "ANY tags BEGINSWITH 'a'", nil),
        ("Message", "tags CONTAINS 'a'", nil),
        ("Message", "distanceToLocation:fromLocation:(location, %@) < 5", nil),
        ("Message", "creationDate > %@", nil),
        ("Message", "TRUEPREDICATE", nil),
        ("Message", "missing == 1", .unknownField),
        ("Message", "title == 'x'", .notQueryable),
        ("Message", "score > 1", .notSortable),
        ("Message", "text BETWEEN {'a', 'b'}", .notSortable),
        ("Message", "count == 'x'", .typeMismatch),
        ("Message", "text == 5", .typeMismatch),
        ("Message", "photo == 'x'", .assetField),
        ("Message", "text CONTAINS 'x'", .stringContains),
        ("Message", "count BEGINSWITH 'x'", .beginsWithNonString),
        ("Message", "tags BEGINSWITH 'x'", .beginsWithNonString),
        ("Message", "'a' IN text", .typeMismatch),
        ("Message", "distanceToLocation:fromLocation:(text, %@) < 5", .typeMismatch),
        ("Message", "modificationDate > %@", .notSortable),
        ("Message", "ANY {'a'} = tags", .typeMismatch),
        ("Message", "ANY {'a'} IN text", .typeMismatch),
        ("Message", "ANY text == 'a'", .typeMismatch),
        ("Message", "ANY tags IN {'a', 'b'}", nil),
        ("Message", "ANY {'a', 'b'} = text", nil),
        ("Message", "ANY {'a', 'b'} IN tags", nil),
        ("Message", "ANY {1, 2} = count", nil),
        ("Message", "ANY {'a', 2} = count", .typeMismatch),
        ("Users", "roles CONTAINS 1", .usersType),
        ("Nope", "a == 1", .unknownRecordType),
        ("Bare", "TRUEPREDICATE", .notQueryable),
        ("Bare", "SELF CONTAINS 'x'", .notSearchable),
    ]

    @Test("With a schema, fields must exist, fit the operator and have the needed index", arguments: schemaCases)
    func schemaChecks(_ entry: (String, String, CloudKitValidation.Rule?)) throws {
        let schema = try CloudKitSchema(parsing: Self.schemaText)
        let validation = try RecordPredicate(parsing: entry.1).validateForCloudKit(recordType: entry.0, schema: schema)
        if let rule = entry.2 {
            #expect(validation.reasons.contains { $0.rule == rule }, "\(validation.reasons)")
        } else {
            #expect(validation.isAccepted, "\(validation.reasons)")
        }
    }

    @Test("Sorting needs a SORTABLE field")
    func sortKeys() throws {
        let schema = try CloudKitSchema(parsing: Self.schemaText)
        let predicate = try RecordPredicate(parsing: "count > 1")
        #expect(predicate.validateForCloudKit(recordType: "Message", schema: schema, sortKeys: ["count"]).isAccepted)
        #expect(predicate.validateForCloudKit(recordType: "Message", schema: schema, sortKeys: ["text"]).reasons.map(\.rule) == [.notSortable])
    }

    // MARK: - filterBy

    static let filterCases: [(String, String?, String)] = [
        ("TRUEPREDICATE", nil, "[]"),
        ("name == 'x'", nil, #"[{"comparator":"EQUALS","fieldName":"name","fieldValue":{"value":"x","type":"STRING"}}]"#),
        ("'x' == name", nil, #"[{"comparator":"EQUALS","fieldName":"name","fieldValue":{"value":"x","type":"STRING"}}]"#),
        ("count != 3", nil, #"[{"comparator":"NOT_EQUALS","fieldName":"count","fieldValue":{"value":3,"type":"INT64"}}]"#),
        ("score < 2.5", nil, #"[{"comparator":"LESS_THAN","fieldName":"score","fieldValue":{"value":2.5,"type":"DOUBLE"}}]"#),
        ("count <= 3", nil, #"[{"comparator":"LESS_THAN_OR_EQUALS","fieldName":"count","fieldValue":{"value":3,"type":"INT64"}}]"#),
        ("count > 3", nil, #"[{"comparator":"GREATER_THAN","fieldName":"count","fieldValue":{"value":3,"type":"INT64"}}]"#),
        ("count >= 3", nil, #"[{"comparator":"GREATER_THAN_OR_EQUALS","fieldName":"count","fieldValue":{"value":3,"type":"INT64"}}]"#),
        ("count BETWEEN {1, 9}", nil,
         #"[{"comparator":"GREATER_THAN_OR_EQUALS","fieldName":"count","fieldValue":{"value":1,"type":"INT64"}},{"comparator":"LESS_THAN_OR_EQUALS","fieldName":"count","fieldValue":{"value":9,"type":"INT64"}}]"#),
        ("name BEGINSWITH 'fe'", nil, #"[{"comparator":"BEGINS_WITH","fieldName":"name","fieldValue":{"value":"fe","type":"STRING"}}]"#),
        ("NOT name BEGINSWITH 'fe'", nil, #"[{"comparator":"NOT_BEGINS_WITH","fieldName":"name","fieldValue":{"value":"fe","type":"STRING"}}]"#),
        ("name IN %@", #"[["a", "b"]]"#, #"[{"comparator":"IN","fieldName":"name","fieldValue":{"value":["a","b"],"type":"STRING_LIST"}}]"#),
        ("NOT count IN {1, 2}", nil, #"[{"comparator":"NOT_IN","fieldName":"count","fieldValue":{"value":[1,2],"type":"INT64_LIST"}}]"#),
        ("NOT name == 'x'", nil, #"[{"comparator":"NOT_EQUALS","fieldName":"name","fieldValue":{"value":"x","type":"STRING"}}]"#),
        ("NOT NOT name == 'x'", nil, #"[{"comparator":"EQUALS","fieldName":"name","fieldValue":{"value":"x","type":"STRING"}}]"#),
        ("NOT FALSEPREDICATE AND a == 1", nil, #"[{"comparator":"EQUALS","fieldName":"a","fieldValue":{"value":1,"type":"INT64"}}]"#),
        ("NOT ANY tags == 'a'", nil, #"[{"comparator":"NOT_LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("NONE tags IN {'a', 'b'}", nil,
         #"[{"comparator":"NOT_LIST_CONTAINS_ANY","fieldName":"tags","fieldValue":{"value":["a","b"],"type":"STRING_LIST"}}]"#),
        ("NOT ANY tags BEGINSWITH 'a'", nil,
         #"[{"comparator":"NOT_LIST_MEMBER_BEGINS_WITH","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("NOT ANY {'a', 'b'} = name", nil, #"[{"comparator":"NOT_IN","fieldName":"name","fieldValue":{"value":["a","b"],"type":"STRING_LIST"}}]"#),
        ("tags CONTAINS 'a'", nil, #"[{"comparator":"LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("'a' IN tags", nil, #"[{"comparator":"LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("ANY tags == 'a'", nil, #"[{"comparator":"LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("NOT tags CONTAINS 'a'", nil, #"[{"comparator":"NOT_LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("ANY tags BEGINSWITH 'a'", nil, #"[{"comparator":"LIST_MEMBER_BEGINS_WITH","fieldName":"tags","fieldValue":{"value":"a","type":"STRING"}}]"#),
        ("SELF CONTAINS 'ferry boat'", nil, #"[{"comparator":"CONTAINS_ANY_TOKENS","fieldName":"allTokens","fieldValue":{"value":"ferry boat","type":"STRING"}}]"#),
        ("SELF CONTAINS 'ferry' AND SELF CONTAINS 'boat'", nil, #"[{"comparator":"CONTAINS_ALL_TOKENS","fieldName":"allTokens","fieldValue":{"value":"ferry boat","type":"STRING"}}]"#),
        ("distanceToLocation:fromLocation:(location, %@) < 1000", #"[{"$location": [47.5, 8.25]}]"#,
         #"[{"comparator":"NEAR","fieldName":"location","fieldValue":{"value":{"latitude":47.5,"longitude":8.25},"type":"LOCATION"},"distance":1000.0}]"#),
        ("creationDate > %@", #"[{"$date": "2024-05-01T12:00:00Z"}]"#,
         #"[{"comparator":"GREATER_THAN","systemFieldName":"createdTimestamp","fieldValue":{"value":1714564800000,"type":"TIMESTAMP"}}]"#),
        ("recordID == %@", #"[{"$reference": "r1"}]"#,
         #"[{"comparator":"EQUALS","systemFieldName":"recordName","fieldValue":{"value":{"recordName":"r1","action":"NONE"},"type":"REFERENCE"}}]"#),
        ("ANY {'a', 'b'} = name", nil, #"[{"comparator":"IN","fieldName":"name","fieldValue":{"value":["a","b"],"type":"STRING_LIST"}}]"#),
        ("ANY tags IN {'a', 'b'}", nil,
         #"[{"comparator":"LIST_CONTAINS_ANY","fieldName":"tags","fieldValue":{"value":["a","b"],"type":"STRING_LIST"}}]"#),
        ("ANY %@ IN refs", #"[[{"$reference": "r1"}, {"$reference": "r2"}]]"#,
         #"[{"comparator":"LIST_CONTAINS_ANY","fieldName":"refs","fieldValue":{"value":[{"recordName":"r1","action":"NONE"},{"recordName":"r2","action":"NONE"}],"type":"REFERENCE_LIST"}}]"#),
        ("ALL tokenize('ferry boat', 'Cdl') IN allTokens", nil,
         #"[{"comparator":"CONTAINS_ALL_TOKENS","fieldName":"allTokens","fieldValue":{"value":"ferry boat","type":"STRING"}}]"#),
        ("author == %@ AND count > 1", #"[{"$reference": "u1"}]"#,
         #"[{"comparator":"EQUALS","fieldName":"author","fieldValue":{"value":{"recordName":"u1","action":"NONE"},"type":"REFERENCE"}},{"comparator":"GREATER_THAN","fieldName":"count","fieldValue":{"value":1,"type":"INT64"}}]"#),
    ]

    @Test("Accepted predicates translate to the CKWS filterBy JSON", arguments: filterCases)
    func filterBy(_ entry: (String, String?, String)) throws {
        let predicate = try RecordPredicate(parsing: entry.0, arguments: parseArguments(entry.1))
        let filters = try predicate.cloudKitFilterBy()
        #expect(filters == (try JSONValue(parsing: entry.2)), "\(filters)")
    }

    @Test("Rejected or unsubstituted predicates have no filterBy form",
          arguments: ["a == 1 OR b == 2", "name LIKE 'x'", "name == %@", "FALSEPREDICATE", "a.b == 1"])
    func filterByRejects(_ text: String) throws {
        let predicate = try RecordPredicate(parsing: text)
        #expect(throws: PredicateError.self) { try predicate.cloudKitFilterBy() }
    }

    @Test("A predicate CloudKit rejects has no filterBy form, and the error names every reason")
    func filterByReasons() throws {
        let predicate = try RecordPredicate(parsing: "a.b == 1 OR c ENDSWITH 'x'")
        do {
            _ = try predicate.cloudKitFilterBy()
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .cloudKit)
            #expect(Set(error.cloudKitReasons.map(\.rule)) == [.or, .keyPath, .unsupportedOperator])
            #expect(error.span.isKnown)
        }
    }
}
