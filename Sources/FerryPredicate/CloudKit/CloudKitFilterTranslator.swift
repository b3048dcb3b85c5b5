import FerryRecords

/// Translates an accepted predicate into CKWS `query.filterBy` JSON (reference: "Mapping to
/// CloudKit Web Services filters").
struct CloudKitFilterTranslator {
    static let systemFieldNames: [String: String] = [
        "recordID": "recordName", "creationDate": "createdTimestamp", "modificationDate": "modifiedTimestamp",
        "creatorUserRecordID": "createdUserRecordName", "lastModifiedUserRecordID": "modifiedUserRecordName",
    ]

    var filters: [JSONValue] = []
    var tokens: [String] = []
    var tokenLeaves = 0

    mutating func translate(_ predicate: RecordPredicate) throws(PredicateError) -> JSONValue {
        try visit(predicate)
        if tokenLeaves > 0 {
            filters.append(.object([
                "comparator": .string(tokenLeaves > 1 ? "CONTAINS_ALL_TOKENS" : tokens.count > 0 && allTokens ? "CONTAINS_ALL_TOKENS" : "CONTAINS_ANY_TOKENS"),
                "fieldName": .string("allTokens"),
                "fieldValue": .object(["value": .string(tokens.joined(separator: " ")), "type": .string("STRING")]),
            ]))
        }
        return .array(filters)
    }

    private var allTokens = false

    private mutating func visit(_ predicate: RecordPredicate) throws(PredicateError) {
        switch predicate {
        case .constant(true): break
        case .constant(false):
            throw PredicateError(.cloudKit, "FALSEPREDICATE has no CloudKit filter form (skip the query instead)")
        case .and(let operands, _):
            for operand in operands { try visit(operand) }
        case .comparison(let comparison): try leaf(comparison, negated: false)
        case .not(.comparison(let comparison), _): try leaf(comparison, negated: true)
        default:
            throw PredicateError(.cloudKit, "this predicate has no CloudKit filter form; run check --cloudkit for the reasons")
        }
    }

    private func fieldKey(_ name: String) -> (String, String) {
        if let system = Self.systemFieldNames[name] { return ("systemFieldName", system) }
        return ("fieldName", name)
    }

    private mutating func add(_ comparator: String, field: String, value: JSONValue, distance: Double? = nil) {
        let (key, name) = fieldKey(field)
        var object: JSONObject = ["comparator": .string(comparator)]
        object[key] = .string(name)
        object["fieldValue"] = value
        if let distance { object["distance"] = .number(JSONNumber(distance)) }
        filters.append(.object(object))
    }

    private mutating func leaf(_ c: PredicateComparison, negated: Bool) throws(PredicateError) {
        guard let kind = CloudKitValidator.kind(of: c) else {
            throw PredicateError(.cloudKit, "\(RecordPredicate.comparison(c)) has no CloudKit filter form; run check --cloudkit for the reasons")
        }
        switch kind {
        case .fullText:
            let isTokenize = CloudKitValidator.isTokenizeSearch(c)
            var text = c.right
            if isTokenize, case .function(_, let arguments) = c.left { text = arguments[0] }
            guard case .string(let words) = text else { throw unsubstituted() }
            tokens.append(words)
            tokenLeaves += 1
            if c.operator == .tokenMatches || isTokenize { allTokens = true }
        case .location:
            guard case .function(_, let args) = c.left, case .keyPath(let path) = args[0],
                  case .location(let lat, let lon) = args[1], let radius = c.right.numberValue else { throw unsubstituted() }
            add("NEAR", field: path[0],
                value: .object(["value": .object(["latitude": .number(JSONNumber(lat)), "longitude": .number(JSONNumber(lon))]),
                                "type": .string("LOCATION")]),
                distance: radius)
        case .equality, .ordering, .beginsWith, .inList, .between:
            let (field, constant) = try fieldAndConstant(c)
            let isSystem = Self.systemFieldNames[field] != nil
            switch (kind, c.operator) {
            case (.between, _):
                guard case .aggregate(let bounds) = constant, bounds.count == 2 else { throw unsubstituted() }
                add("GREATER_THAN_OR_EQUALS", field: field, value: try typed(bounds[0], system: isSystem))
                add("LESS_THAN_OR_EQUALS", field: field, value: try typed(bounds[1], system: isSystem))
            case (.inList, _):
                add(negated ? "NOT_IN" : "IN", field: field, value: try typed(constant, system: isSystem))
            case (.beginsWith, _):
                add(negated ? "NOT_BEGINS_WITH" : "BEGINS_WITH", field: field, value: try typed(constant, system: isSystem))
            default:
                var comparator = switch c.operator {
                case .equalTo: "EQUALS"
                case .notEqualTo: "NOT_EQUALS"
                case .lessThan: "LESS_THAN"
                case .lessThanOrEqualTo: "LESS_THAN_OR_EQUALS"
                case .greaterThan: "GREATER_THAN"
                default: "GREATER_THAN_OR_EQUALS"
                }
                if negated { comparator = comparator == "EQUALS" ? "NOT_EQUALS" : "EQUALS" }
                add(comparator, field: field, value: try typed(constant, system: isSystem))
            }
        case .listContains:
            let (field, constant) = try fieldAndConstant(c)
            add(negated ? "NOT_LIST_CONTAINS" : "LIST_CONTAINS", field: field, value: try typed(constant, system: false))
        case .listContainsAny:
            let (field, constant) = try fieldAndConstant(c)
            add(negated ? "NOT_LIST_CONTAINS_ANY" : "LIST_CONTAINS_ANY", field: field, value: try typed(constant, system: false))
        case .listBeginsWith:
            let (field, constant) = try fieldAndConstant(c)
            add(negated ? "NOT_LIST_MEMBER_BEGINS_WITH" : "LIST_MEMBER_BEGINS_WITH", field: field, value: try typed(constant, system: false))
        }
    }

    private func fieldAndConstant(_ c: PredicateComparison) throws(PredicateError) -> (String, PredicateExpression) {
        if case .keyPath(let path) = c.left { return (path[0], c.right) }
        if case .keyPath(let path) = c.right { return (path[0], c.left) }
        throw unsubstituted()
    }

    private func unsubstituted() -> PredicateError {
        PredicateError(.argument, "the predicate still has format specifiers; give arguments to translate it to filterBy")
    }

    /// `{"value": …, "type": …}` for a constant.
    private func typed(_ constant: PredicateExpression, system: Bool) throws(PredicateError) -> JSONValue {
        let (value, type) = try raw(constant, system: system)
        return .object(["value": value, "type": .string(type)])
    }

    private func raw(_ constant: PredicateExpression, system: Bool) throws(PredicateError) -> (JSONValue, String) {
        switch constant {
        case .string(let s) where system: return (.object(["recordName": .string(s)]), "REFERENCE")
        case .string(let s): return (.string(s), "STRING")
        case .integer(let i): return (.number(JSONNumber(i)), "INT64")
        case .double(let d): return (.number(JSONNumber(d)), "DOUBLE")
        case .date(let seconds):
            let ms = ((seconds + PredicateExpression.referenceDateOffset) * 1000).rounded()
            return (.number(JSONNumber(Int64(exactly: ms) ?? 0)), "TIMESTAMP")
        case .reference(let name): return (.object(["recordName": .string(name), "action": .string("NONE")]), "REFERENCE")
        case .location(let lat, let lon):
            return (.object(["latitude": .number(JSONNumber(lat)), "longitude": .number(JSONNumber(lon))]), "LOCATION")
        case .null: return (.null, "STRING")
        case .aggregate(let items):
            var values: [JSONValue] = []
            var elementType = "STRING"
            for (i, item) in items.enumerated() {
                let (v, t) = try raw(item, system: system)
                if i == 0 { elementType = t }
                values.append(v)
            }
            return (.array(values), elementType + "_LIST")
        default:
            throw unsubstituted()
        }
    }
}
