/// Checks a predicate against "What CloudKit's CKQuery accepts" and, with a schema, against the
/// record type's fields and indexes. Comparisons are classified in `CloudKitValidator+Leaf.swift`.
struct CloudKitValidator {
    let recordType: String?
    let schema: CloudKitSchema?
    var reasons: [CloudKitValidation.Finding] = []
    var warnings: [CloudKitValidation.Finding] = []
    var notedCaseInsensitive = false

    init(recordType: String?, schema: CloudKitSchema?) {
        self.recordType = recordType
        self.schema = schema
    }

    /// The CloudKit system keys a predicate may use, and their schema field names.
    static let systemKeys: [String: String] = [
        "recordID": "___recordID", "creationDate": "___createTime", "modificationDate": "___modTime",
        "creatorUserRecordID": "___createdBy", "lastModifiedUserRecordID": "___modifiedBy",
    ]

    mutating func reject(_ rule: CloudKitValidation.Rule, _ message: String, _ span: SourceSpan) {
        reasons.append(.init(rule: rule, message: message, span: span))
    }

    mutating func warn(_ rule: CloudKitValidation.Rule, _ message: String, _ span: SourceSpan) {
        warnings.append(.init(rule: rule, message: message, span: span))
    }

    var schemaType: CloudKitSchema.RecordType? {
        guard let schema, let recordType else { return nil }
        return schema.recordType(named: recordType)
    }

    mutating func validate(_ predicate: RecordPredicate, sortKeys: [String]) {
        if recordType == "Users" {
            reject(.usersType, "records of type Users cannot be queried", .unknown)
        } else if let schema, let recordType, schema.recordType(named: recordType) == nil {
            reject(.unknownRecordType, "the schema has no record type \(recordType)", .unknown)
        }
        if case .constant(true) = predicate, let type = schemaType, type.field(named: "___recordID")?.isQueryable != true {
            reject(.notQueryable, "an unfiltered query needs ___recordID marked QUERYABLE in \(type.name)", .unknown)
        }
        visit(predicate)
        for key in sortKeys { checkIndex(key, needs: .notSortable, span: .unknown) }
    }

    private mutating func visit(_ predicate: RecordPredicate) {
        switch predicate {
        case .constant: break
        case .comparison(let comparison): _ = leaf(comparison)
        case .and(let operands, _):
            for operand in operands { visit(operand) }
        case .or(let operands, let span):
            reject(.or, "CloudKit does not support OR (ferry predicate split writes one query per alternative)",
                   span.isKnown ? span : firstSpan(of: predicate))
            for operand in operands { visit(operand) }
        case .not(let operand, let span):
            switch operand {
            // NOT NOT p is p; NOT TRUEPREDICATE is FALSEPREDICATE: exact rewrites, as translated.
            case .not(let inner, _): visit(inner)
            case .constant: break
            case .comparison(let comparison):
                // NOT ANY (NONE) is the negation of a list test: NOT_LIST_CONTAINS,
                // NOT_LIST_CONTAINS_ANY, NOT_LIST_MEMBER_BEGINS_WITH; CKQuery rules out only ALL.
                let kind = leaf(comparison)
                if let kind, !kind.isNegatable {
                    reject(.notOperand, kind.notReason, span)
                }
            case .and:
                reject(.notOperand, "CloudKit does not support NOT over an AND (ferry predicate split rewrites it as one query per negated operand)", span)
                visit(operand)
            case .or:
                reject(.notOperand, "CloudKit has no OR, under NOT too (ferry predicate split rewrites NOT (p OR q) as NOT p AND NOT q)", span)
                visit(operand)
            }
        }
    }

    private func firstSpan(of predicate: RecordPredicate) -> SourceSpan {
        switch predicate {
        case .comparison(let c): c.leftSpan
        case .and(let ops, _), .or(let ops, _): ops.first.map(firstSpan) ?? .unknown
        case .not(_, let span): span
        case .constant: .unknown
        }
    }

    // MARK: - Sides

    /// A side of a comparison as CloudKit sees it.
    enum Side {
        case field(String)
        case constant(PredicateExpression)
        case distance(String, PredicateExpression)
        case evaluatedObject
        case other
    }

    mutating func side(_ expression: PredicateExpression, span: SourceSpan) -> Side {
        switch expression {
        case .keyPath(let components):
            if components.count > 1 || components.contains(where: { $0.hasPrefix("@") }) {
                reject(.keyPath, "CloudKit does not support key paths with '.' or '@' (\(components.joined(separator: ".")))", span)
                return .other
            }
            return checkField(components[0], span: span) ? .field(components[0]) : .other
        case .evaluatedObject: return .evaluatedObject
        // An unsubstituted %K names a field; every other specifier stands for a value.
        case .placeholder(let specifier) where specifier == PredicateExpression.keyPlaceholder:
            return .field(PredicateExpression.keyPlaceholder)
        case .placeholder: return .constant(expression)
        case .function(let name, let arguments) where name == "distanceToLocation:fromLocation:" && arguments.count == 2:
            guard case .keyPath(let components) = arguments[0], components.count == 1 else {
                reject(.unsupportedExpression, "distanceToLocation:fromLocation: needs a location field first", span)
                return .other
            }
            guard arguments[1].isConstant || arguments[1].isPlaceholder else {
                reject(.fieldToField, "distanceToLocation:fromLocation: needs a constant location second", span)
                return .other
            }
            return checkField(components[0], span: span) ? .distance(components[0], arguments[1]) : .other
        case .function(let name, _) where name.lowercased() == "now":
            return .constant(expression)
        default:
            if expression.isConstant { return .constant(expression) }
            let what = switch expression {
            case .subquery: "SUBQUERY"
            case .method: "FUNCTION"
            case .ternary: "TERNARY"
            case .arithmetic(let op, _, _): "the operator \(op.rawValue)"
            case .negation: "unary minus"
            case .index: "an index [ ]"
            case .variable, .assignment: "variables"
            case .function(let name, _): "the function \(name)"
            default: "this expression"
            }
            reject(.unsupportedExpression, "CloudKit does not support \(what) in a query", span)
            return .other
        }
    }

    // MARK: - Fields and the schema

    /// Checks a field name; false when it cannot be queried at all.
    private mutating func checkField(_ name: String, span: SourceSpan) -> Bool {
        if name == "parent" {
            reject(.parent, "CloudKit cannot query the parent reference", span)
            return false
        }
        if RecordKey.systemNames.contains(name), Self.systemKeys[name] == nil {
            reject(.systemKey, "CloudKit does not filter on \(name)\(name == "recordType" ? " (the record type is given with the query, not in the predicate)" : "")", span)
            return false
        }
        let isValid = name.utf8.first.map { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A } == true
            && name.utf8.allSatisfy { ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
        if !isValid {
            reject(.nameFormat, "CloudKit field names match [a-zA-Z][a-zA-Z0-9_]*; '\(name)' does not", span)
            return false
        }
        if let type = schemaType, Self.systemKeys[name] == nil {
            guard let field = type.field(named: name) else {
                reject(.unknownField, "the record type \(type.name) has no field \(name)", span)
                return false
            }
            if field.type.base == "ASSET" {
                reject(.assetField, "asset fields such as \(name) cannot be queried", span)
                return false
            }
        }
        return true
    }

    func schemaField(_ name: String) -> CloudKitSchema.Field? {
        guard let type = schemaType else { return nil }
        return type.field(named: Self.systemKeys[name] ?? name)
    }

    mutating func checkIndex(_ name: String, needs rule: CloudKitValidation.Rule, span: SourceSpan) {
        guard let type = schemaType else { return }
        guard let field = schemaField(name) else {
            if Self.systemKeys[name] != nil {
                reject(rule, "\(Self.systemKeys[name] ?? name) is not marked \(rule == .notSortable ? "SORTABLE" : "QUERYABLE") in \(type.name)", span)
            }
            return
        }
        switch rule {
        case .notQueryable where !field.isQueryable:
            reject(rule, "Field '\(name)' is not marked queryable (equality needs a QUERYABLE index)", span)
        case .notSortable where !field.isSortable:
            reject(rule, "Field '\(name)' is not marked sortable (ordering and sorting need a SORTABLE index)", span)
        default: break
        }
    }

    mutating func checkConstantType(_ name: String, _ constant: PredicateExpression, list: Bool, span: SourceSpan) {
        guard let field = schemaField(name) else { return }
        let values: [PredicateExpression]
        if list, case .aggregate(let items) = constant { values = items } else { values = [constant] }
        for value in values {
            let fits: Bool = switch value {
            case .string: field.type.base == "STRING" || field.type.base == "REFERENCE"
            case .integer, .double: field.type.isNumeric
            case .date: field.type.base == "TIMESTAMP"
            case .reference: field.type.base == "REFERENCE"
            case .location: field.type.base == "LOCATION"
            default: true
            }
            if !fits {
                reject(.typeMismatch, "\(name) is \(field.type) but is compared with \(value.expressionFormat)", span)
                return
            }
        }
    }

    /// Whether the schema declares `name` as a list (`nil` without a schema or for an unknown field).
    func isListField(_ name: String) -> Bool? {
        schemaField(name)?.type.isList
    }

    /// Every list of values a comparison carries counts against CloudKit's limit, whatever its
    /// form (`x IN L`, `ANY x IN L`, `ANY L IN x`, `ANY L = x`, their NOT forms…).
    mutating func checkListLength(_ side: Side, span: SourceSpan) {
        guard case .constant(.aggregate(let items)) = side else { return }
        let limit = CloudKitValidation.maximumListValues, recommended = CloudKitValidation.recommendedListValues
        if items.count > limit {
            reject(.inListTooLong, "lists of values are limited to \(limit) (this one has \(items.count)); CloudKit fails with \"Query filter exceeds the limit of values: \(limit)\" (ferry predicate split batches it at \(recommended))", span)
        } else if items.count > recommended {
            warn(.inListTooLong, "lists over ~200 values have failed in practice; users batch at \(recommended) (this one has \(items.count); ferry predicate split batches it)", span)
        }
    }

    mutating func noteCaseInsensitive(_ constant: PredicateExpression, _ span: SourceSpan) {
        let isString: Bool = switch constant {
        case .string: true
        case .aggregate(let items): items.contains { if case .string = $0 { true } else { false } }
        default: false
        }
        guard !notedCaseInsensitive, isString else { return }
        notedCaseInsensitive = true
        warn(.caseInsensitiveEquality, "CloudKit compares strings case-insensitively; Ferry's in-memory == is case-sensitive", span)
    }

    /// The kind of an accepted leaf, for translation.
    static func kind(of comparison: PredicateComparison) -> LeafKind? {
        var validator = CloudKitValidator(recordType: nil, schema: nil)
        return validator.leaf(comparison)
    }
}

extension PredicateExpression {
    var isPlaceholder: Bool { if case .placeholder = self { true } else { false } }
    var isAggregate: Bool { if case .aggregate = self { true } else { false } }
    var isString: Bool { if case .string = self { true } else { false } }
}
