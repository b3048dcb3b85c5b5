/// Checks a predicate against "What CloudKit's CKQuery accepts" and, with a schema, against the
/// record type's fields and indexes.
struct CloudKitValidator {
    let recordType: String?
    let schema: CloudKitSchema?
    var reasons: [CloudKitValidation.Finding] = []
    var warnings: [CloudKitValidation.Finding] = []
    private var notedCaseInsensitive = false

    init(recordType: String?, schema: CloudKitSchema?) {
        self.recordType = recordType
        self.schema = schema
    }

    /// The CloudKit system keys a predicate may use, and their schema field names.
    static let systemKeys: [String: String] = [
        "recordID": "___recordID", "creationDate": "___createTime", "modificationDate": "___modTime",
        "creatorUserRecordID": "___createdBy", "lastModifiedUserRecordID": "___modifiedBy",
    ]

    private mutating func reject(_ rule: CloudKitValidation.Rule, _ message: String, _ span: SourceSpan) {
        reasons.append(.init(rule: rule, message: message, span: span))
    }

    private mutating func warn(_ rule: CloudKitValidation.Rule, _ message: String, _ span: SourceSpan) {
        warnings.append(.init(rule: rule, message: message, span: span))
    }

    private var schemaType: CloudKitSchema.RecordType? {
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
            reject(.or, "CloudKit does not support OR (run one query per alternative and merge the results)",
                   span.isKnown ? span : firstSpan(of: predicate))
            for operand in operands { visit(operand) }
        case .not(let operand, let span):
            switch operand {
            case .comparison(let comparison):
                if comparison.quantifier == .any {
                    reject(.allOrNone, "CloudKit does not support NONE (NOT ANY)", span)
                    return
                }
                let kind = leaf(comparison)
                if let kind, !kind.isNegatable {
                    reject(.notOperand, "CloudKit supports NOT only over an equality, IN, BEGINSWITH or list-membership comparison, not over \(kind.name)", span)
                }
            case .and:
                reject(.notOperand, "CloudKit does not support NOT over an AND", span)
                visit(operand)
            default:
                reject(.notOperand, "CloudKit supports NOT only over a single comparison", span)
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

    /// What a comparison is, for the NOT rule and for translation.
    enum LeafKind {
        case equality, ordering, between, beginsWith, inList, listContains, listBeginsWith, fullText, location
        var isNegatable: Bool { [.equality, .inList, .beginsWith, .listContains, .listBeginsWith].contains(self) }
        var name: String {
            switch self {
            case .equality: "an equality"
            case .ordering: "an ordering comparison"
            case .between: "BETWEEN"
            case .beginsWith: "BEGINSWITH"
            case .inList: "IN"
            case .listContains: "list membership"
            case .listBeginsWith: "ANY … BEGINSWITH"
            case .fullText: "a full-text search"
            case .location: "a location query"
            }
        }
    }

    /// A side of a comparison as CloudKit sees it.
    private enum Side {
        case field(String)
        case constant(PredicateExpression)
        case distance(String, PredicateExpression)
        case evaluatedObject
        case other
    }

    private mutating func side(_ expression: PredicateExpression, span: SourceSpan) -> Side {
        switch expression {
        case .keyPath(let components):
            if components.count > 1 || components.contains(where: { $0.hasPrefix("@") }) {
                reject(.keyPath, "CloudKit does not support key paths with '.' or '@' (\(components.joined(separator: ".")))", span)
                return .other
            }
            return checkField(components[0], span: span) ? .field(components[0]) : .other
        case .evaluatedObject: return .evaluatedObject
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

    private func schemaField(_ name: String) -> CloudKitSchema.Field? {
        guard let type = schemaType else { return nil }
        return type.field(named: Self.systemKeys[name] ?? name)
    }

    private mutating func checkIndex(_ name: String, needs rule: CloudKitValidation.Rule, span: SourceSpan) {
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

    private mutating func checkConstantType(_ name: String, _ constant: PredicateExpression, list: Bool, span: SourceSpan) {
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

    private mutating func leaf(_ c: PredicateComparison) -> LeafKind? {
        if c.quantifier == .all {
            reject(.allOrNone, "CloudKit does not support ALL", c.leftSpan)
            return nil
        }
        switch c.operator {
        case .endsWith, .like, .matches, .utiConformsTo, .utiEquals, .customSelector:
            reject(.unsupportedOperator, "CloudKit does not support \(c.operator.text)", c.span)
            return nil
        default: break
        }
        if !c.options.isEmpty, c.operator != .tokenMatches {
            warn(.undocumentedOptions, "options such as [\(c.options.letters)] are undocumented for CloudKit; it may reject or ignore them", c.span)
        }
        if c.operator == .tokenMatches {
            guard c.left == .keyPath(["allTokens"]), c.options.isSuperset(of: [.caseInsensitive, .diacriticInsensitive, .localeSensitive]),
                  c.right.isConstant || c.right.isPlaceholder else {
                reject(.tokenMatches, "CloudKit's token search is written allTokens TOKENMATCHES[cdl] \"words\"", c.span)
                return nil
            }
            return .fullText
        }
        let left = side(c.left, span: c.leftSpan)
        let right = side(c.right, span: c.rightSpan)
        switch (left, right) {
        case (.other, _), (_, .other):
            return nil
        case (.evaluatedObject, .constant(let words)):
            guard c.operator == .contains, c.quantifier == .direct else {
                reject(.unsupportedForm, "SELF is only supported in SELF CONTAINS \"words\" (full-text search)", c.leftSpan)
                return nil
            }
            guard words.isPlaceholder || { if case .string = words { true } else { false } }() else {
                reject(.typeMismatch, "full-text search needs a string of words", c.rightSpan)
                return nil
            }
            if let type = schemaType, !type.fields.contains(where: \.isSearchable) {
                reject(.notSearchable, "full-text search needs a SEARCHABLE string field in \(type.name)", c.span)
            }
            return .fullText
        case (.distance(let field, _), .constant):
            guard c.quantifier == .direct, c.operator == .lessThan || c.operator == .lessThanOrEqualTo else {
                reject(.distanceDirection, "CloudKit only finds locations inside a circle: use distanceToLocation:fromLocation:(…) < radius", c.span)
                return nil
            }
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            if let f = schemaField(field), f.type.base != "LOCATION" {
                reject(.typeMismatch, "\(field) is \(f.type), not LOCATION", c.leftSpan)
            }
            return .location
        case (.constant, .field(let field)):
            if c.quantifier == .direct, c.operator == .equalTo {
                checkConstantType(field, c.left, list: false, span: c.leftSpan)
                checkIndex(field, needs: .notQueryable, span: c.rightSpan)
                noteCaseInsensitive(c.left, c.span)
                return .equality
            }
            if c.quantifier == .direct, c.operator == .in {
                if let f = schemaField(field), !f.type.isList {
                    reject(.typeMismatch, "constant IN \(field) needs a list field; \(field) is \(f.type)", c.rightSpan)
                }
                checkIndex(field, needs: .notQueryable, span: c.rightSpan)
                return .listContains
            }
            reject(.unsupportedForm, "with the constant on the left CloudKit supports only constant == field and constant IN listField", c.span)
            return nil
        case (.field(let field), .constant(let constant)):
            return fieldLeaf(c, field: field, constant: constant)
        case (.field, .field), (.distance, .field), (.field, .distance):
            reject(.fieldToField, "CloudKit compares a field with a constant, not with another field", c.rightSpan)
            return nil
        default:
            reject(.fieldToField, "CloudKit needs a field on one side and a constant on the other", c.span)
            return nil
        }
    }

    private mutating func fieldLeaf(_ c: PredicateComparison, field: String, constant: PredicateExpression) -> LeafKind? {
        let schemaList = schemaField(field)?.type.isList
        if c.quantifier == .any {
            switch c.operator {
            case .equalTo, .in:
                checkIndex(field, needs: .notQueryable, span: c.leftSpan)
                return .listContains
            case .beginsWith:
                checkIndex(field, needs: .notQueryable, span: c.leftSpan)
                return .listBeginsWith
            default:
                reject(.unsupportedForm, "with ANY CloudKit supports only ==, IN and BEGINSWITH", c.span)
                return nil
            }
        }
        switch c.operator {
        case .equalTo, .notEqualTo:
            checkConstantType(field, constant, list: false, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            noteCaseInsensitive(constant, c.span)
            return .equality
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            checkConstantType(field, constant, list: false, span: c.rightSpan)
            checkIndex(field, needs: .notSortable, span: c.leftSpan)
            return .ordering
        case .between:
            if case .aggregate(let bounds) = constant, bounds.count != 2 {
                reject(.unsupportedForm, "BETWEEN needs two bounds {low, high}", c.rightSpan)
                return nil
            }
            if !constant.isPlaceholder, !{ if case .aggregate = constant { true } else { false } }() {
                reject(.unsupportedForm, "BETWEEN needs two bounds {low, high}", c.rightSpan)
                return nil
            }
            checkConstantType(field, constant, list: true, span: c.rightSpan)
            checkIndex(field, needs: .notSortable, span: c.leftSpan)
            return .between
        case .beginsWith:
            if !constant.isPlaceholder, !{ if case .string = constant { true } else { false } }() {
                reject(.beginsWithNonString, "BEGINSWITH needs a string constant", c.rightSpan)
                return nil
            }
            if let f = schemaField(field), f.type.base != "STRING" || f.type.isList {
                reject(.beginsWithNonString, "BEGINSWITH needs a STRING field; \(field) is \(f.type)\(f.type.isList ? " (use ANY \(field) BEGINSWITH …)" : "")", c.leftSpan)
            }
            if c.options.contains(.caseInsensitive) {
                warn(.undocumentedOptions, "CloudKit's BEGINSWITH is case-sensitive", c.span)
            }
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            return .beginsWith
        case .in:
            if case .string = constant {
                reject(.stringContains, "CloudKit does not support substring search (x IN \"string\")", c.span)
                return nil
            }
            if case .aggregate(let items) = constant, items.count > 250 {
                reject(.inListTooLong, "IN lists are limited to 250 values (this one has \(items.count)); CloudKit fails with \"Query filter exceeds the limit of values: 250\" — batch at 100", c.rightSpan)
            } else if case .aggregate(let items) = constant, items.count > 100 {
                warn(.inListTooLong, "IN lists over ~200 values fail in practice; users batch at 100 (this one has \(items.count))", c.rightSpan)
            }
            checkConstantType(field, constant, list: true, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            return .inList
        case .contains:
            if schemaList == false {
                reject(.stringContains, "CloudKit does not support substring search (CONTAINS on the string field \(field)); use BEGINSWITH, full-text SELF CONTAINS, or a list field", c.span)
                return nil
            }
            if schemaList == nil, case .string = constant {
                warn(.stringContains, "CONTAINS on \(field) works in CloudKit only if \(field) is a list; substring search on strings is rejected", c.span)
            }
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            return .listContains
        default:
            reject(.unsupportedOperator, "CloudKit does not support \(c.operator.text)", c.span)
            return nil
        }
    }

    private mutating func noteCaseInsensitive(_ constant: PredicateExpression, _ span: SourceSpan) {
        guard !notedCaseInsensitive, case .string = constant else { return }
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
}
