import FerryRecords

extension RecordPredicate {
    /// The predicate a CKWS `query.filterBy` array means: its filters AND-ed, each comparator
    /// written in the form ``cloudKitFilterBy()`` translates back to it (`EQUALS` is `field == v`,
    /// `LIST_CONTAINS` is `field CONTAINS v`, `LIST_CONTAINS_ANY` is `ANY field IN {…}`,
    /// `NEAR` is `distanceToLocation:fromLocation:(field, location) < distance`, the token
    /// comparators full-text searches, the `NOT_` comparators the negation of the others).
    ///
    /// System fields (`systemFieldName`) become the predicate's system keys (`recordName` →
    /// `recordID`, `createdTimestamp` → `creationDate`, …). A value is read by its `type` (or,
    /// without one, by its JSON kind); with `numbersAsStrings`, INT64, DOUBLE and TIMESTAMP values
    /// may be strings.
    ///
    /// - Throws: ``PredicateError`` (``PredicateError/Code/cloudKit``) naming the filter for what
    ///   CloudKit answers with BAD_REQUEST: not an array of objects, an unknown comparator, no
    ///   field name, a missing value, a value of the wrong type for its `type`, an unknown type, a
    ///   list where one value belongs or the reverse, a list of more than
    ///   ``CloudKitValidation/maximumListValues`` values.
    public init(cloudKitFilterBy filters: JSONValue, numbersAsStrings: Bool = false) throws(PredicateError) {
        let operands = try Self.cloudKitFilters(filters, numbersAsStrings: numbersAsStrings)
        switch operands.count {
        case 0: self = .constant(true)
        case 1: self = operands[0]
        default: self = .and(operands)
        }
    }

    /// The predicate of each filter of a `filterBy` array, in order (their AND is
    /// ``init(cloudKitFilterBy:numbersAsStrings:)``).
    public static func cloudKitFilters(_ filters: JSONValue, numbersAsStrings: Bool = false) throws(PredicateError) -> [RecordPredicate] {
        guard case .array(let items) = filters else {
            throw PredicateError(.cloudKit, "expected filterBy to be an array of filters, found \(FilterByReader.kind(filters))")
        }
        let reader = FilterByReader(numbersAsStrings: numbersAsStrings)
        var operands: [RecordPredicate] = []
        for (index, item) in items.enumerated() {
            operands.append(try reader.predicate(item, index: index))
        }
        return operands
    }
}

/// Reads one CKWS filter into a predicate (``RecordPredicate/init(cloudKitFilterBy:numbersAsStrings:)``).
struct FilterByReader {
    var numbersAsStrings: Bool

    /// The predicate's system key of each CKWS `systemFieldName`.
    static let systemKeys: [String: String] = [
        "recordName": "recordID", "createdTimestamp": "creationDate", "modifiedTimestamp": "modificationDate",
        "createdUserRecordName": "creatorUserRecordID", "modifiedUserRecordName": "lastModifiedUserRecordID",
        "share": "share", "parent": "parent",
    ]

    /// Every CKWS comparator.
    static let comparators: Set<String> = [
        "EQUALS", "NOT_EQUALS", "LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUALS", "NEAR",
        "CONTAINS_ALL_TOKENS", "CONTAINS_ANY_TOKENS", "IN", "NOT_IN", "LIST_CONTAINS", "NOT_LIST_CONTAINS", "LIST_CONTAINS_ANY",
        "NOT_LIST_CONTAINS_ANY", "BEGINS_WITH", "NOT_BEGINS_WITH", "LIST_MEMBER_BEGINS_WITH", "NOT_LIST_MEMBER_BEGINS_WITH",
        "LIST_CONTAINS_ALL", "NOT_LIST_CONTAINS_ALL",
    ]

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private func fail(_ index: Int, _ message: String) -> PredicateError {
        PredicateError(.cloudKit, "filterBy[\(index)]: \(message)")
    }

    func predicate(_ item: JSONValue, index: Int) throws(PredicateError) -> RecordPredicate {
        guard case .object(let filter) = item else {
            throw fail(index, "expected a filter object {comparator, fieldName, fieldValue}, found \(Self.kind(item))")
        }
        guard case .string(let comparator)? = filter["comparator"] else {
            throw fail(index, "expected a comparator string, found \(filter["comparator"].map(Self.kind) ?? "none")")
        }
        guard Self.comparators.contains(comparator) else {
            throw fail(index, "unknown comparator \(JSONOutput.literal(comparator))")
        }
        let field: String
        let isSystem: Bool
        if case .string(let name)? = filter["systemFieldName"] {
            guard let key = Self.systemKeys[name] else { throw fail(index, "unknown systemFieldName \(JSONOutput.literal(name))") }
            (field, isSystem) = (key, true)
        } else if case .string(let name)? = filter["fieldName"], !name.isEmpty {
            (field, isSystem) = (name, false)
        } else if comparator == "CONTAINS_ALL_TOKENS" || comparator == "CONTAINS_ANY_TOKENS" {
            (field, isSystem) = ("allTokens", false)
        } else {
            throw fail(index, "expected a fieldName or systemFieldName string, found none")
        }
        guard case .object(let fieldValue)? = filter["fieldValue"], let raw = fieldValue["value"] else {
            throw fail(index, "expected a fieldValue object with a value, found \(filter["fieldValue"].map(Self.kind) ?? "none")")
        }
        var type: String?
        if let given = fieldValue["type"] {
            guard case .string(let name) = given else { throw fail(index, "expected fieldValue.type to be a string, found \(Self.kind(given))") }
            type = name
        }
        let key = PredicateExpression.keyPath([field])
        func comparison(_ left: PredicateExpression, _ op: PredicateComparison.Operator, _ right: PredicateExpression,
                        quantifier: PredicateComparison.Quantifier = .direct, options: PredicateComparison.Options = []) -> RecordPredicate {
            .comparison(PredicateComparison(left, op, right, quantifier: quantifier, options: options))
        }
        func single() throws(PredicateError) -> PredicateExpression {
            let value = try constant(raw, type: type, index: index, isSystem: isSystem)
            if case .aggregate = value { throw fail(index, "\(comparator) compares with one value, found a list") }
            return value
        }
        func list() throws(PredicateError) -> [PredicateExpression] {
            guard case .aggregate(let items) = try constant(raw, type: type, index: index, isSystem: isSystem) else {
                throw fail(index, "\(comparator) needs a list value (a *_LIST type), found one value")
            }
            return items
        }
        switch comparator {
        case "EQUALS": return comparison(key, .equalTo, try single())
        case "NOT_EQUALS": return comparison(key, .notEqualTo, try single())
        case "LESS_THAN": return comparison(key, .lessThan, try single())
        case "LESS_THAN_OR_EQUALS": return comparison(key, .lessThanOrEqualTo, try single())
        case "GREATER_THAN": return comparison(key, .greaterThan, try single())
        case "GREATER_THAN_OR_EQUALS": return comparison(key, .greaterThanOrEqualTo, try single())
        case "IN": return comparison(key, .in, .aggregate(try list()))
        case "NOT_IN": return .not(comparison(key, .in, .aggregate(try list())))
        case "BEGINS_WITH", "NOT_BEGINS_WITH", "LIST_MEMBER_BEGINS_WITH", "NOT_LIST_MEMBER_BEGINS_WITH":
            let prefix = try single()
            guard case .string = prefix else { throw fail(index, "\(comparator) needs a STRING value") }
            let member = comparator.hasSuffix("MEMBER_BEGINS_WITH")
            let leaf = comparison(key, .beginsWith, prefix, quantifier: member ? .any : .direct)
            return comparator.hasPrefix("NOT_") ? .not(leaf) : leaf
        case "LIST_CONTAINS": return comparison(key, .contains, try single())
        case "NOT_LIST_CONTAINS": return .not(comparison(key, .contains, try single()))
        case "LIST_CONTAINS_ANY": return comparison(key, .in, .aggregate(try list()), quantifier: .any)
        case "NOT_LIST_CONTAINS_ANY": return .not(comparison(key, .in, .aggregate(try list()), quantifier: .any))
        case "LIST_CONTAINS_ALL", "NOT_LIST_CONTAINS_ALL":
            let all = RecordPredicate.and(try list().map { comparison(key, .contains, $0) })
            return comparator.hasPrefix("NOT_") ? .not(all) : all
        case "CONTAINS_ALL_TOKENS", "CONTAINS_ANY_TOKENS":
            guard case .string(let words) = try single() else { throw fail(index, "\(comparator) needs a STRING value") }
            // Every word in a full-text search of its own (the form cloudKitFilterBy joins back).
            let each = words.split(whereSeparator: \.isWhitespace).map { comparison(.evaluatedObject, .contains, .string(String($0))) }
            if comparator == "CONTAINS_ALL_TOKENS", each.count > 1 { return .and(each) }
            return comparison(.evaluatedObject, .contains, .string(words))
        default: // NEAR
            guard case .location(let latitude, let longitude) = try single() else {
                throw fail(index, "NEAR needs a LOCATION value")
            }
            guard let distance = filter["distance"]?.numberValue?.doubleValue, distance.isFinite, distance >= 0 else {
                throw fail(index, "NEAR needs a distance, a number of at least 0")
            }
            return comparison(.function("distanceToLocation:fromLocation:", [key, .location(latitude: latitude, longitude: longitude)]),
                              .lessThan, .double(distance))
        }
    }

    /// A fieldValue's value as a constant, read by `type` (by its JSON kind without one).
    func constant(_ value: JSONValue, type: String?, index: Int, isSystem: Bool) throws(PredicateError) -> PredicateExpression {
        let type = type ?? Self.inferredType(value)
        if type.hasSuffix("_LIST") {
            guard case .array(let items) = value else {
                throw fail(index, "a \(type) value is an array, found \(Self.kind(value))")
            }
            guard items.count <= CloudKitValidation.maximumListValues else {
                throw fail(index, "Query filter exceeds the limit of values: \(CloudKitValidation.maximumListValues) (found \(items.count))")
            }
            let element = String(type.dropLast(5))
            var constants: [PredicateExpression] = []
            for item in items {
                if case .array = item { throw fail(index, "a \(type) holds single values, found an array") }
                constants.append(try constant(item, type: element == "UNKNOWN" ? nil : element, index: index, isSystem: isSystem))
            }
            return .aggregate(constants)
        }
        func wrong() -> PredicateError { fail(index, "a \(type) value cannot be \(Self.kind(value))") }
        func number() -> JSONNumber? {
            switch value {
            case .number(let number): number
            case .string(let text) where numbersAsStrings: JSONValue.number(JSONNumber(text: text)).numberValue
            default: nil
            }
        }
        switch type {
        case "STRING":
            guard case .string(let text) = value else { throw wrong() }
            return .string(text)
        case "INT64", "NUMBER_INT64":
            guard let number = number(), let integer = number.int64Value else { throw wrong() }
            return .integer(integer)
        case "DOUBLE":
            guard let number = number(), let double = Double(number.text), double.isFinite else { throw wrong() }
            return .double(double)
        case "TIMESTAMP":
            guard let number = number(), let ms = Int64(number.text) else { throw wrong() }
            return .date(secondsSinceReferenceDate: Double(ms) / 1000 - PredicateExpression.referenceDateOffset)
        case "REFERENCE":
            let name: String
            switch value {
            case .object(let object):
                guard case .string(let text)? = object["recordName"] else { throw wrong() }
                name = text
            case .string(let text) where isSystem: name = text
            default: throw wrong()
            }
            return isSystem ? .string(name) : .reference(name)
        case "LOCATION":
            guard case .object(let object) = value, let latitude = object["latitude"]?.numberValue?.doubleValue,
                  let longitude = object["longitude"]?.numberValue?.doubleValue, latitude.isFinite, longitude.isFinite else { throw wrong() }
            return .location(latitude: latitude, longitude: longitude)
        default:
            throw fail(index, "unknown or unfilterable value type \(JSONOutput.literal(type))")
        }
    }

    /// The type a value without one has: its JSON kind's.
    static func inferredType(_ value: JSONValue) -> String {
        switch value {
        case .string: "STRING"
        case .number(let number): number.isInteger ? "INT64" : "DOUBLE"
        case .object(let object): object["latitude"] != nil ? "LOCATION" : "REFERENCE"
        case .array(let items): (items.first.map(inferredType) ?? "STRING") + "_LIST"
        case .null, .bool: "NULL"
        }
    }
}
