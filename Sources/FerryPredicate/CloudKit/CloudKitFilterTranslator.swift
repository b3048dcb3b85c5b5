import FerryRecords

/// Translates an accepted predicate into CKWS `query.filterBy` JSON (reference: "Mapping to
/// CloudKit Web Services filters").
struct CloudKitFilterTranslator {
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
        case .not(.not(let inner, _), _): try visit(inner)
        case .not(.constant(let value), _): try visit(.constant(!value))
        default:
            throw PredicateError(.cloudKit, "this predicate has no CloudKit filter form; run check --cloudkit for the reasons")
        }
    }

    private func fieldKey(_ name: String) -> (String, String) {
        if let system = CloudKitFieldValue.systemFields[name] { return ("systemFieldName", system.name) }
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
            switch (kind, c.operator) {
            case (.between, _):
                guard case .aggregate(let bounds) = constant, bounds.count == 2 else { throw unsubstituted() }
                add("GREATER_THAN_OR_EQUALS", field: field, value: try typed(bounds[0], field: field, rounding: .up))
                add("LESS_THAN_OR_EQUALS", field: field, value: try typed(bounds[1], field: field, rounding: .down))
            case (.inList, _):
                add(negated ? "NOT_IN" : "IN", field: field, value: try typed(constant, field: field))
            case (.beginsWith, _):
                add(negated ? "NOT_BEGINS_WITH" : "BEGINS_WITH", field: field, value: try typed(constant, field: field))
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
                let rounding = kind == .ordering ? CloudKitFieldValue.Rounding(c.operator) : .exact
                add(comparator, field: field, value: try typed(constant, field: field, rounding: rounding))
            }
        case .listContains:
            let (field, constant) = try fieldAndConstant(c)
            add(negated ? "NOT_LIST_CONTAINS" : "LIST_CONTAINS", field: field, value: try typed(constant, field: field))
        case .listContainsAny:
            let (field, constant) = try fieldAndConstant(c)
            add(negated ? "NOT_LIST_CONTAINS_ANY" : "LIST_CONTAINS_ANY", field: field, value: try typed(constant, field: field))
        case .listBeginsWith:
            let (field, constant) = try fieldAndConstant(c)
            add(negated ? "NOT_LIST_MEMBER_BEGINS_WITH" : "LIST_MEMBER_BEGINS_WITH", field: field, value: try typed(constant, field: field))
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

    /// `{"value": …, "type": …}` for a constant compared with `field` (see ``CloudKitFieldValue``).
    private func typed(_ constant: PredicateExpression, field: String, rounding: CloudKitFieldValue.Rounding = .exact) throws(PredicateError) -> JSONValue {
        do throws(CloudKitFieldValue.Problem) {
            return try CloudKitFieldValue.encode(constant, field: field, rounding: rounding)
        } catch {
            switch error {
            case .notConstant: throw unsubstituted()
            case .rejected(let rule, let message): throw PredicateError(.cloudKit, "CloudKit would reject this predicate: \(message) [\(rule.rawValue)]")
            }
        }
    }
}
