import FerryInternals
import FerryPredicate
import FerryRecords

/// Translates a predicate into a SQL condition on `records r` that keeps every record the
/// predicate matches (a superset), and says when the condition is exact (keeps nothing else).
///
/// The rule every translation obeys: **whenever the compiled filter returns `true` for a record,
/// the SQL condition is true for its row.** The query then evaluates the compiled filter on the
/// rows the SQL keeps, unless every part was exact, so results equal evaluating the predicate on
/// every record. What can be pushed, and why each form is safe, is listed in `Docs/StoreFormat.md`;
/// the pushdown property test is the judge. In short:
/// - Strings are compared by bytes in SQL but by canonical equivalence in Swift, so a string
///   constant is pushed only when it is ASCII without `K`, `;` or `` ` `` (the only ASCII
///   characters with a non-ASCII canonical equivalent: U+212A, U+037E, U+1FEF).
/// - Numbers are pushed when both sides compare alike in SQLite and in Swift: integers of at
///   most 2^53 in magnitude and doubles below 2^53 (both compare an Int64 with a Double exactly;
///   the bound keeps the translation simple to check).
/// - Dates are compared in milliseconds, widened by one millisecond each way (never exact).
/// - `CONTAINS`, `IN` a field, `ANY … ==` become a byte search of the whole record JSON, which
///   holds every string value unescaped when the constant has no `"`, `\` or control characters;
///   `[c]` searches ASCII-case-insensitively and keeps records with a character that case-folds
///   into ASCII letters; `[d]` keeps any record with a non-ASCII character (`ferry_may_contain`).
/// - `!=`, string ordering, LIKE, MATCHES, ENDSWITH, `[c]`/`[d]` equality, key paths with dots,
///   functions and subqueries stay in Swift. A NOT is pushed only over an exact condition.
struct PredicatePushdown {
    /// One translated part.
    struct Clause {
        var sql: String
        var parameters: [SQLValue]
        /// Whether the condition keeps exactly the matching records (and never evaluates to NULL).
        var isExact: Bool
    }

    /// The condition for the whole predicate ("1" when nothing could be pushed).
    var sql = "1"
    var parameters: [SQLValue] = []
    /// Whether the SQL condition alone decides (the compiled filter need not run).
    var isExact = true
    /// The conjuncts pushed into SQL, as predicate text.
    var pushed: [String] = []
    /// The conjuncts left (wholly or partly) to the compiled filter, as predicate text.
    var residual: [String] = []

    init(_ predicate: RecordPredicate?) {
        guard let predicate else { return }
        let conjuncts: [RecordPredicate]
        if case .and(let items, _) = predicate { conjuncts = items } else { conjuncts = [predicate] }
        var parts: [String] = []
        for conjunct in conjuncts {
            if let clause = Self.translate(conjunct, nullSafe: false) {
                parts.append("(" + clause.sql + ")")
                parameters += clause.parameters
                pushed.append(conjunct.predicateFormat)
                if !clause.isExact {
                    isExact = false
                    residual.append(conjunct.predicateFormat)
                }
            } else {
                isExact = false
                residual.append(conjunct.predicateFormat)
            }
        }
        if !parts.isEmpty { sql = parts.joined(separator: " AND ") }
    }

    // MARK: Translation

    /// `nullSafe`: the condition must be 0 or 1, never NULL (under a NOT). Elsewhere NULL and 0
    /// both reject a row, and a bare comparison lets SQLite use an index.
    static func translate(_ predicate: RecordPredicate, nullSafe: Bool) -> Clause? {
        switch predicate {
        case .constant(let value):
            return Clause(sql: value ? "1" : "0", parameters: [], isExact: true)
        case .and(let items, _):
            var sql: [String] = [], parameters: [SQLValue] = [], exact = true
            for item in items {
                guard let clause = translate(item, nullSafe: nullSafe) else { exact = false; continue }
                sql.append("(" + clause.sql + ")")
                parameters += clause.parameters
                exact = exact && clause.isExact
            }
            guard !sql.isEmpty else { return items.isEmpty ? Clause(sql: "1", parameters: [], isExact: true) : nil }
            return Clause(sql: sql.joined(separator: " AND "), parameters: parameters, isExact: exact)
        case .or(let items, _):
            var sql: [String] = [], parameters: [SQLValue] = [], exact = true
            for item in items {
                guard let clause = translate(item, nullSafe: nullSafe) else { return nil }
                sql.append("(" + clause.sql + ")")
                parameters += clause.parameters
                exact = exact && clause.isExact
            }
            guard !sql.isEmpty else { return Clause(sql: "0", parameters: [], isExact: true) }
            return Clause(sql: sql.joined(separator: " OR "), parameters: parameters, isExact: exact)
        case .not(let inner, _):
            guard let clause = translate(inner, nullSafe: true), clause.isExact else { return nil }
            return Clause(sql: "NOT (" + clause.sql + ")", parameters: clause.parameters, isExact: true)
        case .comparison(let comparison):
            return translate(comparison, nullSafe: nullSafe)
        }
    }

    /// A comparison `key OP constant` (or `constant OP key` for the forms that allow it).
    static func translate(_ c: PredicateComparison, nullSafe: Bool) -> Clause? {
        // Options other than [c] and [d] change nothing Ferry evaluates ([n], [l]); any are rare.
        let options = c.options.subtracting([.normalized, .localeSensitive])
        switch (c.left, c.right) {
        case (.keyPath(let path), let constant) where path.count == 1 && constant.isConstant:
            return translate(key: path[0], c.operator, constant, options: options, quantifier: c.quantifier, nullSafe: nullSafe)
        case (let constant, .keyPath(let path)) where path.count == 1 && constant.isConstant && c.quantifier == .direct:
            switch c.operator {
            case .equalTo: return translate(key: path[0], .equalTo, constant, options: options, quantifier: .direct, nullSafe: nullSafe)
            case .in: return containsClause(key: path[0], constant, options: options)
            default: return nil
            }
        default:
            return nil
        }
    }

    static func translate(key: String, _ op: PredicateComparison.Operator, _ constant: PredicateExpression,
                          options: PredicateComparison.Options, quantifier: PredicateComparison.Quantifier, nullSafe: Bool) -> Clause? {
        switch quantifier {
        case .all: return nil
        case .any:
            // ANY list == x: some element equals x.
            guard op == .equalTo || op == .in, options.isEmpty || options == [.caseInsensitive], !isSystemKey(key) else { return nil }
            if op == .in {
                guard case .aggregate(let members) = constant else { return nil }
                var parts: [Clause] = []
                for member in members {
                    guard let clause = containsClause(key: key, member, options: options) else { return nil }
                    parts.append(clause)
                }
                return any(parts)
            }
            return containsClause(key: key, constant, options: options)
        case .direct:
            break
        }
        if let column = SystemColumn(key) {
            return column.clause(op, constant, options: options, nullSafe: nullSafe)
        }
        guard let value = fieldValueSQL(key) else { return nil }
        switch op {
        case .equalTo:
            guard options.isEmpty else { return nil }
            return fieldEquality(key: key, value: value, constant)
        case .in:
            guard options.isEmpty, case .aggregate(let members) = constant else {
                // `field IN "text"`: the field is a substring of the text; not pushed.
                return nil
            }
            var parts: [Clause] = []
            for member in members {
                guard let clause = fieldEquality(key: key, value: value, member) else { return nil }
                parts.append(clause)
            }
            return any(parts)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard options.isEmpty else { return nil }
            if let number = safeNumber(constant) {
                return Clause(sql: "\(value) \(sqlOperator(op)) ?", parameters: [number], isExact: false)
            }
            if let ms = dateMilliseconds(constant) {
                return Clause(sql: "\(value) \(sqlOperator(op)) ?", parameters: [.real(widened(ms, op))], isExact: false)
            }
            return nil
        case .between:
            guard options.isEmpty, case .aggregate(let bounds) = constant, bounds.count == 2 else { return nil }
            if let low = safeNumber(bounds[0]), let high = safeNumber(bounds[1]) {
                return Clause(sql: "\(value) BETWEEN ? AND ?", parameters: [low, high], isExact: false)
            }
            if let low = dateMilliseconds(bounds[0]), let high = dateMilliseconds(bounds[1]) {
                return Clause(sql: "\(value) BETWEEN ? AND ?", parameters: [.real(low - 1), .real(high + 1)], isExact: false)
            }
            return nil
        case .beginsWith:
            guard options.isEmpty, case .string(let prefix) = constant, isSafeASCII(prefix) else { return nil }
            return Clause(sql: "\(value) >= ? AND \(value) < ?",
                          parameters: [.text(prefix), .textBytes(Array(prefix.utf8) + [0xFF])], isExact: false)
        case .contains:
            return containsClause(key: key, constant, options: options)
        default:
            return nil
        }
    }

    /// `field == constant`.
    static func fieldEquality(key: String, value: String, _ constant: PredicateExpression) -> Clause? {
        if let number = safeNumber(constant) {
            return Clause(sql: "\(value) = ?", parameters: [number], isExact: false)
        }
        switch constant {
        case .string(let text), .reference(let text):
            // A REFERENCE field equals a string naming its record.
            guard isSafeASCII(text), let reference = fieldValueSQL(key, member: "recordName") else { return nil }
            var sql = "(\(value) = ? OR \(reference) = ?)"
            var parameters: [SQLValue] = [.text(text), .text(text)]
            if isUnescaped(text) && !text.isEmpty {
                // Cheap first: the record's JSON holds the text (then the JSON is parsed).
                sql = "instr(r.body, ?) > 0 AND " + sql
                parameters.insert(.text(text), at: 0)
            }
            return Clause(sql: sql, parameters: parameters, isExact: false)
        case .null:
            return Clause(sql: "\(value) IS NULL", parameters: [], isExact: false)
        case .date:
            guard let ms = dateMilliseconds(constant) else { return nil }
            return Clause(sql: "\(value) BETWEEN ? AND ?", parameters: [.real(ms - 1), .real(ms + 1)], isExact: false)
        default:
            return nil
        }
    }

    /// `field CONTAINS x`, `x IN field`, `ANY field == x`: the record's JSON holds x.
    static func containsClause(key: String, _ constant: PredicateExpression, options: PredicateComparison.Options) -> Clause? {
        guard !isSystemKey(key) else { return nil }
        switch constant {
        case .integer, .double:
            // Membership of a number: its JSON text is not unique (1.0, 1e0); not pushed.
            return nil
        case .string(let text), .reference(let text):
            guard isSafeASCII(text), isUnescaped(text) else { return nil }
            if text.isEmpty { return Clause(sql: "1", parameters: [], isExact: false) }
            if options.isEmpty {
                return Clause(sql: "instr(r.body, ?) > 0", parameters: [.text(text)], isExact: false)
            }
            // [c], [d], [cd]: Ferry's byte search (FoldingSearch): the needle ASCII-case-insensitively,
            // or a character that case-folds into ASCII ([c]) or any non-ASCII character ([d]).
            let lowered = String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
            return Clause(sql: "ferry_may_contain(r.body, ?, ?)",
                          parameters: [.text(lowered), .text(options.contains(.diacriticInsensitive) ? "cd" : "c")], isExact: false)
        default:
            return nil
        }
    }

    static func any(_ clauses: [Clause]) -> Clause? {
        guard !clauses.isEmpty else { return Clause(sql: "0", parameters: [], isExact: true) }
        return Clause(sql: clauses.map { "(" + $0.sql + ")" }.joined(separator: " OR "),
                      parameters: clauses.flatMap(\.parameters), isExact: clauses.allSatisfy(\.isExact))
    }

    // MARK: System keys

    /// A system key with a column the store keeps.
    enum SystemColumn {
        case recordName, recordType, changeTag, createdAt, modifiedAt, createdBy, modifiedBy, parent, share, zoneName

        init?(_ key: String) {
            switch key {
            case "recordName", "recordID": self = .recordName
            case "recordType": self = .recordType
            case "recordChangeTag": self = .changeTag
            case "creationDate": self = .createdAt
            case "modificationDate": self = .modifiedAt
            case "creatorUserRecordID": self = .createdBy
            case "lastModifiedUserRecordID": self = .modifiedBy
            case "parent": self = .parent
            case "share": self = .share
            case "zoneName": self = .zoneName
            default: return nil
            }
        }

        var column: String {
            switch self {
            case .recordName: "r.record_name"
            case .recordType: "r.record_type"
            case .changeTag: "r.change_tag"
            case .createdAt: "r.created_at"
            case .modifiedAt: "r.modified_at"
            case .createdBy: "r.created_by"
            case .modifiedBy: "r.modified_by"
            case .parent: "r.parent_name"
            case .share: "r.share_name"
            case .zoneName: "r.zone_id"
            }
        }

        /// Whether the column holds exactly what the compiled filter reads (the change tag column
        /// holds a store-made tag for records saved without one).
        var isExactColumn: Bool { self != .changeTag }

        func clause(_ op: PredicateComparison.Operator, _ constant: PredicateExpression,
                    options: PredicateComparison.Options, nullSafe: Bool) -> Clause? {
            guard options.isEmpty else { return nil }
            switch self {
            case .createdAt, .modifiedAt:
                return dateClause(op, constant)
            default:
                break
            }
            switch op {
            case .equalTo:
                guard let text = Self.name(constant) else { return nil }
                return equality([text], nullSafe: nullSafe)
            case .in:
                guard case .aggregate(let members) = constant else { return nil }
                var names: [String] = []
                for member in members {
                    guard let text = Self.name(member) else { return nil }
                    names.append(text)
                }
                return equality(names, nullSafe: nullSafe)
            case .beginsWith:
                guard case .string(let prefix) = constant, self != .zoneName, self == .recordName || self == .recordType || self == .changeTag,
                      isSafeASCII(prefix) else { return nil }
                return Clause(sql: "\(column) >= ? AND \(column) < ?",
                              parameters: [.text(prefix), .textBytes(Array(prefix.utf8) + [0xFF])], isExact: false)
            default:
                return nil
            }
        }

        /// The name a constant compares equal with: a string, or a reference's record name for the
        /// reference-valued keys (recordID, parent, share, creator, modifier) and names.
        static func name(_ constant: PredicateExpression) -> String? {
            switch constant {
            case .string(let text), .reference(let text): isSafeASCII(text) ? text : nil
            default: nil
            }
        }

        func equality(_ names: [String], nullSafe: Bool) -> Clause {
            guard !names.isEmpty else { return Clause(sql: "0", parameters: [], isExact: true) }
            let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
            if self == .recordType {
                // Literals, for partial indexes (see QueryPlan.typeCondition).
                let test = QueryPlan.typeCondition(names)
                return Clause(sql: nullSafe ? "coalesce(\(test), 0)" : test, parameters: [], isExact: true)
            }
            if self == .zoneName {
                return Clause(sql: "r.zone_id IN (SELECT id FROM zones WHERE zone_name IN (\(marks)))",
                              parameters: names.map(SQLValue.text), isExact: true)
            }
            let test = "\(column) IN (\(marks))"
            return Clause(sql: nullSafe ? "coalesce(\(test), 0)" : test, parameters: names.map(SQLValue.text), isExact: isExactColumn)
        }

        func dateClause(_ op: PredicateComparison.Operator, _ constant: PredicateExpression) -> Clause? {
            switch op {
            case .equalTo:
                guard let ms = dateMilliseconds(constant) else { return nil }
                return Clause(sql: "\(column) BETWEEN ? AND ?", parameters: [.real(ms - 1), .real(ms + 1)], isExact: false)
            case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
                guard let ms = dateMilliseconds(constant) else { return nil }
                return Clause(sql: "\(column) \(sqlOperator(op)) ?", parameters: [.real(widened(ms, op))], isExact: false)
            case .between:
                guard case .aggregate(let bounds) = constant, bounds.count == 2,
                      let low = dateMilliseconds(bounds[0]), let high = dateMilliseconds(bounds[1]) else { return nil }
                return Clause(sql: "\(column) BETWEEN ? AND ?", parameters: [.real(low - 1), .real(high + 1)], isExact: false)
            default:
                return nil
            }
        }
    }

    static func isSystemKey(_ key: String) -> Bool {
        ["recordName", "recordID", "recordType", "creationDate", "modificationDate", "creatorUserRecordID",
         "lastModifiedUserRecordID", "recordChangeTag", "parent", "share", "zoneName"].contains(key)
    }

    // MARK: Values

    /// The SQL of a field's value, `json_extract(r.body, '$.fields.NAME.value')` (or a member of
    /// the value); `nil` for names that cannot be written in a JSON path literal.
    static func fieldValueSQL(_ name: String, member: String? = nil) -> String? {
        guard let path = StoreFieldPath.valuePath(name, member: member) else { return nil }
        return "json_extract(r.body, '\(path)')"
    }

    /// A number both SQLite and Swift compare alike with any field value.
    static func safeNumber(_ constant: PredicateExpression) -> SQLValue? {
        switch constant {
        case .integer(let value) where value.magnitude <= 1 << 53: .integer(value)
        case .double(let value) where value.isFinite && value.magnitude < 9_007_199_254_740_992: .real(value)
        default: nil
        }
    }

    /// A date constant in milliseconds since 1970, when a double holds it and the millisecond
    /// either side exactly (below 2^52 ms, the year 142,000); `nil` for others, which are then
    /// not pushed down (widened by 1 ms in a double, a bound past 2^53 would not move).
    static func dateMilliseconds(_ constant: PredicateExpression) -> Double? {
        guard case .date(let seconds) = constant else { return nil }
        let ms = ISO8601.milliseconds(seconds: seconds + PredicateExpression.referenceDateOffset)
        return ms.isFinite && ms.magnitude < 4_503_599_627_370_496 ? ms : nil
    }

    /// A millisecond bound moved one millisecond outwards, so rounding never drops a match.
    static func widened(_ ms: Double, _ op: PredicateComparison.Operator) -> Double {
        switch op {
        case .lessThan, .lessThanOrEqualTo: ms + 1
        default: ms - 1
        }
    }

    static func sqlOperator(_ op: PredicateComparison.Operator) -> String {
        switch op {
        case .lessThan: "<"
        case .lessThanOrEqualTo: "<="
        case .greaterThan: ">"
        default: ">="
        }
    }

    /// ASCII without the three characters that have non-ASCII canonical equivalents.
    static func isSafeASCII(_ text: String) -> Bool {
        // U+0000: SQLite's json_extract ends a stored text at it (3.40), so SQL would compare
        // another text than the record holds.
        text.utf8.allSatisfy { $0 != 0 && $0 < 0x80 && $0 != UInt8(ascii: "K") && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "`") }
    }

    /// Whether JSON writes the text as it is (no quote, backslash or control character).
    static func isUnescaped(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}
