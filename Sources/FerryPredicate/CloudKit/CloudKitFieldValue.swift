import FerryInternals
import FerryRecords

/// A constant as a CKWS `fieldValue` (`{"value": …, "type": …}`), or the reason CloudKit cannot
/// take it. The validator and the translator both ask here, so what `check --cloudkit` accepts is
/// exactly what `filterby` can write.
enum CloudKitFieldValue {
    /// How a date with a fraction of a millisecond becomes whole TIMESTAMP milliseconds, so that
    /// the comparison keeps its meaning on whole milliseconds: `t > x.5` is `t > x` (down),
    /// `t >= x.5` is `t >= x + 1` (up), `t < x.5` is `t < x + 1` (up), `t <= x.5` is `t <= x` (down).
    /// An equality (`exact`) with a fraction can never hold, and is refused.
    enum Rounding {
        case exact, down, up

        /// The rounding of an ordering comparison `field OP date`.
        init(_ op: PredicateComparison.Operator) {
            switch op {
            case .greaterThan, .lessThanOrEqualTo: self = .down
            case .greaterThanOrEqualTo, .lessThan: self = .up
            default: self = .exact
            }
        }
    }

    /// Why a constant has no field value.
    enum Problem: Error {
        /// CloudKit cannot take it: the rule and a sentence.
        case rejected(CloudKitValidation.Rule, String)
        /// Not a constant yet (an unsubstituted `%@`, `now()`).
        case notConstant
    }

    /// The system keys a predicate may filter on: the `systemFieldName` and the type of its values.
    static let systemFields: [String: (name: String, type: String)] = [
        "recordID": ("recordName", "REFERENCE"),
        "creationDate": ("createdTimestamp", "TIMESTAMP"),
        "modificationDate": ("modifiedTimestamp", "TIMESTAMP"),
        "creatorUserRecordID": ("createdUserRecordName", "REFERENCE"),
        "lastModifiedUserRecordID": ("modifiedUserRecordName", "REFERENCE"),
    ]

    /// `{"value": …, "type": …}` for `constant` compared with `field`.
    static func encode(_ constant: PredicateExpression, field: String, rounding: Rounding) throws(Problem) -> JSONValue {
        let (value, type) = try raw(constant, field: field, rounding: rounding)
        return .object(["value": value, "type": .string(type)])
    }

    private static func raw(_ constant: PredicateExpression, field: String, rounding: Rounding) throws(Problem) -> (JSONValue, String) {
        let system = systemFields[field]?.type
        func mismatch() -> Problem {
            .rejected(.typeMismatch, "\(field) holds \(system == "TIMESTAMP" ? "dates" : "references") in CloudKit; it cannot be compared with \(constant.expressionFormat)")
        }
        switch constant {
        case .null:
            throw .rejected(.nilValue, "CloudKit compares fields with strings, numbers, dates, references, locations or lists of them, never with nil (a query cannot ask whether \(field) is missing)")
        case .string(let text):
            if system == "REFERENCE" { return (.object(["recordName": .string(text)]), "REFERENCE") }
            if system != nil { throw mismatch() }
            return (.string(text), "STRING")
        case .integer(let value):
            if system != nil { throw mismatch() }
            return (.number(JSONNumber(value)), "INT64")
        case .double(let value):
            if system != nil { throw mismatch() }
            return (.number(JSONNumber(value)), "DOUBLE")
        case .date(let seconds):
            if system != nil, system != "TIMESTAMP" { throw mismatch() }
            return (.number(JSONNumber(try milliseconds(seconds, rounding: rounding))), "TIMESTAMP")
        case .reference(let name):
            if system != nil, system != "REFERENCE" { throw mismatch() }
            return (.object(["recordName": .string(name), "action": .string("NONE")]), "REFERENCE")
        case .location(let lat, let lon):
            if system != nil { throw mismatch() }
            return (.object(["latitude": .number(JSONNumber(lat)), "longitude": .number(JSONNumber(lon))]), "LOCATION")
        case .aggregate(let items):
            return try list(items, field: field, rounding: rounding)
        default:
            throw .notConstant
        }
    }

    /// A `*_LIST` of values of one type; integers mixed with doubles are a DOUBLE_LIST.
    private static func list(_ items: [PredicateExpression], field: String, rounding: Rounding) throws(Problem) -> (JSONValue, String) {
        var values: [JSONValue] = []
        var types: [String] = []
        for item in items {
            switch item {
            case .aggregate:
                throw .rejected(.listType, "a list of values cannot hold another list (\(item.expressionFormat))")
            case .null:
                throw .rejected(.listType, "a list of values cannot hold nil")
            default:
                let (value, type) = try raw(item, field: field, rounding: rounding)
                values.append(value)
                if !types.contains(type) { types.append(type) }
            }
        }
        if types.count <= 1 { return (.array(values), (types.first ?? "STRING") + "_LIST") }
        if Set(types) == ["INT64", "DOUBLE"] {
            let doubles = items.map { item -> JSONValue in .number(JSONNumber(item.numberValue ?? .nan)) }
            return (.array(doubles), "DOUBLE_LIST")
        }
        throw .rejected(.listType, "a list of values has one CloudKit type (integers may mix with doubles); this one mixes \(types.joined(separator: " and "))")
    }

    /// The whole TIMESTAMP milliseconds of a date (seconds since 2001), rounded as `rounding` says.
    static func milliseconds(_ secondsSinceReferenceDate: Double, rounding: Rounding) throws(Problem) -> Int64 {
        let ms = ISO8601.milliseconds(seconds: secondsSinceReferenceDate + PredicateExpression.referenceDateOffset)
        let date = PredicateExpression.date(secondsSinceReferenceDate: secondsSinceReferenceDate).expressionFormat
        let whole: Double
        switch rounding {
        case .down: whole = ms.rounded(.down)
        case .up: whole = ms.rounded(.up)
        case .exact:
            whole = ms
            if ms.isFinite, ms != ms.rounded() {
                throw .rejected(.timestamp, "TIMESTAMP values are whole milliseconds, so no field equals \(date), which falls between two (round the date to the millisecond)")
            }
        }
        guard let value = Int64(exactly: whole) else {
            throw .rejected(.timestamp, "\(date) is outside the dates a TIMESTAMP holds (milliseconds since 1970 in 64 bits, about 292 million years either way)")
        }
        return value
    }
}
