import FerryPredicate
import FerryRecords
import Testing

/// The constants of a filterBy: TIMESTAMP milliseconds, list types, system fields and nil.
@Suite("CloudKit field values")
struct CloudKitValueTests {
    /// The rules a predicate breaks, or `[]` when CloudKit accepts it.
    static func rules(_ text: String, _ arguments: String? = nil) throws -> [CloudKitValidation.Rule] {
        try RecordPredicate(parsing: text, arguments: parseArguments(arguments)).validateForCloudKit().reasons.map(\.rule)
    }

    /// The only filter of an accepted one-comparison predicate.
    static func filter(_ text: String, _ arguments: String? = nil) throws -> JSONValue {
        let filters = try RecordPredicate(parsing: text, arguments: parseArguments(arguments)).cloudKitFilterBy()
        guard case .array(let items) = filters, items.count == 1 else {
            Issue.record("expected one filter, found \(filters)")
            return .null
        }
        return items[0]
    }

    // MARK: - Dates

    static let outOfRangeDates: [(String, String?)] = [
        ("x > CAST(1e20, \"NSDate\")", nil),
        ("x > CAST(-1e20, \"NSDate\")", nil),
        ("x > %@", #"[{"$date": 9.3e15}]"#),
        ("x > %@", #"[{"$date": -1e17}]"#),
        ("x > %@", #"[{"$date": 1e300}]"#),
        ("x == %@", #"[{"$date": 1e300}]"#),
        ("x IN {CAST(1, \"NSDate\"), CAST(1e20, \"NSDate\")}", nil),
        ("x BETWEEN {CAST(1, \"NSDate\"), CAST(1e20, \"NSDate\")}", nil),
        ("creationDate < %@", #"[{"$date": 1e300}]"#),
    ]

    @Test("A date whose milliseconds do not fit 64 bits is rejected, never sent as TIMESTAMP 0", arguments: outOfRangeDates)
    func outOfRangeDate(_ entry: (String, String?)) throws {
        #expect(try Self.rules(entry.0, entry.1) == [.timestamp])
        let predicate = try RecordPredicate(parsing: entry.0, arguments: parseArguments(entry.1))
        #expect(throws: PredicateError.self) { try predicate.cloudKitFilterBy() }
    }

    @Test("The largest date that fits is still translated")
    func largestDate() throws {
        let filter = try Self.filter("x > %@", #"[{"$date": 9.2e15}]"#)
        #expect(filter["fieldValue"] == .object(["value": .number(JSONNumber(Int64(9_200_000_000_000_000_000))), "type": .string("TIMESTAMP")]))
    }

    /// 12:00:00.0005, half a millisecond after 1714564800000.
    static let half = #"[{"$date": "2024-05-01T12:00:00.0005Z"}]"#

    static let subMillisecond: [(String, String?, [String: Int64])] = [
        ("t > %@", half, ["GREATER_THAN": 1_714_564_800_000]),
        ("t >= %@", half, ["GREATER_THAN_OR_EQUALS": 1_714_564_800_001]),
        ("t < %@", half, ["LESS_THAN": 1_714_564_800_001]),
        ("t <= %@", half, ["LESS_THAN_OR_EQUALS": 1_714_564_800_000]),
        ("t > %@", #"[{"$date": "1969-12-31T23:59:59.9995Z"}]"#, ["GREATER_THAN": -1]),
        ("t >= %@", #"[{"$date": "1969-12-31T23:59:59.9995Z"}]"#, ["GREATER_THAN_OR_EQUALS": 0]),
        ("t == %@", #"[{"$date": "2024-05-01T12:00:00.001Z"}]"#, ["EQUALS": 1_714_564_800_001]),
        ("t == CAST(736257600.001, \"NSDate\")", nil, ["EQUALS": 1_714_564_800_001]),
    ]

    @Test("A date with a fraction of a millisecond rounds so that the comparison keeps its meaning", arguments: subMillisecond)
    func subMillisecondDate(_ entry: (String, String?, [String: Int64])) throws {
        let filter = try Self.filter(entry.0, entry.1)
        let (comparator, value) = try #require(entry.2.first)
        #expect(filter["comparator"] == .string(comparator), "\(filter)")
        #expect(filter["fieldValue"]?["value"] == .number(JSONNumber(value)), "\(filter)")
    }

    @Test("Equality with a fraction of a millisecond matches no TIMESTAMP, and is reported instead of rounded",
          arguments: ["t == %@", "t != %@", "NOT t == %@", "t IN {%@}", "NOT t IN {%@}", "ts CONTAINS %@", "ANY ts IN {%@}", "%@ == t"])
    func fractionalEquality(_ text: String) throws {
        #expect(try Self.rules(text, Self.half) == [.timestamp])
    }

    @Test("BETWEEN rounds its low bound up and its high bound down")
    func fractionalBetween() throws {
        let filters = try RecordPredicate(parsing: "t BETWEEN %@", arguments: parseArguments(
            #"[[{"$date": "2024-05-01T12:00:00.0005Z"}, {"$date": "2024-05-01T12:00:01.0005Z"}]]"#)).cloudKitFilterBy()
        #expect(filters.arrayValue?[0]["fieldValue"]?["value"] == .number(JSONNumber(Int64(1_714_564_800_001))))
        #expect(filters.arrayValue?[1]["fieldValue"]?["value"] == .number(JSONNumber(Int64(1_714_564_801_000))))
    }

    /// What a filterBy comparator says about a TIMESTAMP field holding `ms`.
    static func cloudKitMatches(_ filter: JSONValue, _ ms: Int64) -> Bool {
        guard case .string(let comparator)? = filter["comparator"], let value = filter["fieldValue"]?["value"]?.numberValue?.doubleValue else {
            return false
        }
        let v = Double(ms)
        switch comparator {
        case "EQUALS": return v == value
        case "NOT_EQUALS": return v != value
        case "LESS_THAN": return v < value
        case "LESS_THAN_OR_EQUALS": return v <= value
        case "GREATER_THAN": return v > value
        case "GREATER_THAN_OR_EQUALS": return v >= value
        default: return false
        }
    }

    static let agreementDates = [
        "2024-05-01T12:00:00.0005Z", "2024-05-01T12:00:00.001Z", "2024-05-01T12:00:00.0015Z", "2024-05-01T12:00:00.999999Z",
        "1969-12-31T23:59:59.9995Z", "2024-05-01T12:00:00.123456789Z", "2024-05-01T12:00:00Z",
    ]

    @Test("eval and filterBy agree on every TIMESTAMP near a date, for every ordering and equality",
          arguments: ["t > %@", "t >= %@", "t < %@", "t <= %@", "t == %@", "t != %@"])
    func evalAgreesWithFilterBy(_ text: String) throws {
        for date in Self.agreementDates {
            let predicate = try RecordPredicate(parsing: text, arguments: [.object(["$date": .string(date)])])
            guard let filters = try? predicate.cloudKitFilterBy() else {
                // Only an equality with a fraction of a millisecond is refused.
                #expect(text.contains("="), "\(text) with \(date)")
                continue
            }
            let filter = try #require(filters.arrayValue?.first)
            let center = try #require(filter["fieldValue"]?["value"]?.numberValue?.int64Value)
            let compiled = try predicate.compile()
            for ms in (center - 2)...(center + 2) {
                let record = Record(recordName: "r", fields: ["t": RecordField(.timestamp(ms))])
                #expect(try compiled.matches(record) == Self.cloudKitMatches(filter, ms), "\(text) with \(date) on \(ms)")
            }
        }
    }

    // MARK: - Lists

    static let listTypes: [(String, String?, String)] = [
        ("x IN {1, 2.5}", nil, #"{"value":[1.0,2.5],"type":"DOUBLE_LIST"}"#),
        ("x IN {2.5, 1}", nil, #"{"value":[2.5,1.0],"type":"DOUBLE_LIST"}"#),
        ("x IN %@", "[[1, 2.5]]", #"{"value":[1.0,2.5],"type":"DOUBLE_LIST"}"#),
        ("x IN {1, 2}", nil, #"{"value":[1,2],"type":"INT64_LIST"}"#),
        ("ANY tags IN {'a', 'b'}", nil, #"{"value":["a","b"],"type":"STRING_LIST"}"#),
    ]

    @Test("A list's type comes from all its values: integers mixed with doubles are a DOUBLE_LIST", arguments: listTypes)
    func listType(_ entry: (String, String?, String)) throws {
        #expect(try Self.filter(entry.0, entry.1)["fieldValue"] == (try JSONValue(parsing: entry.2)))
    }

    @Test("A list mixing CloudKit types is rejected",
          arguments: ["x IN {1, 'a'}", "ANY tags IN {'a', 1}", "NOT x IN {'a', CAST('r', 'CKReference')}",
                      "x IN {1, {2}}", "x IN {1, nil}", "ANY {1, 'a'} = x"])
    func mixedList(_ text: String) throws {
        #expect(try Self.rules(text) == [.listType])
        #expect(throws: PredicateError.self) { try RecordPredicate(parsing: text).cloudKitFilterBy() }
    }

    // MARK: - System fields and nil

    @Test("A system field is compared only with values of its type",
          arguments: ["creationDate > 'x'", "creationDate == 5", "modificationDate IN {'a'}", "recordID == 5",
                      "creatorUserRecordID == %@", "lastModifiedUserRecordID IN {CAST(1, 'NSDate')}"])
    func systemFieldTypes(_ text: String) throws {
        let arguments = text.contains("%@") ? #"[{"$date": 0}]"# : nil
        #expect(try Self.rules(text, arguments) == [.typeMismatch])
    }

    static let systemFields: [(String, String?, String)] = [
        ("recordID == 'r1'", nil, #"{"value":{"recordName":"r1"},"type":"REFERENCE"}"#),
        ("creatorUserRecordID == %@", #"[{"$reference": "_u"}]"#, #"{"value":{"recordName":"_u","action":"NONE"},"type":"REFERENCE"}"#),
        ("recordID IN {'a', 'b'}", nil, #"{"value":[{"recordName":"a"},{"recordName":"b"}],"type":"REFERENCE_LIST"}"#),
        ("creationDate > %@", #"[{"$date": 0}]"#, #"{"value":0,"type":"TIMESTAMP"}"#),
    ]

    @Test("System fields translate values of their type", arguments: systemFields)
    func systemFieldValues(_ entry: (String, String?, String)) throws {
        #expect(try Self.filter(entry.0, entry.1)["fieldValue"] == (try JSONValue(parsing: entry.2)))
    }

    @Test("CloudKit has no nil value: comparing with nil is rejected",
          arguments: ["a == nil", "a != nil", "NOT a == nil", "nil == a", "tags CONTAINS nil"])
    func nilComparison(_ text: String) throws {
        #expect(try Self.rules(text) == [.nilValue])
        #expect(throws: PredicateError.self) { try RecordPredicate(parsing: text).cloudKitFilterBy() }
    }
}
