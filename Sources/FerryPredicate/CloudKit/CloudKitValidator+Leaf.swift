/// Classifying one comparison: which CKQuery form it is (and so which filterBy comparator), or
/// every reason CloudKit would reject it.
extension CloudKitValidator {
    /// What an accepted comparison is, for the NOT rule and for translation.
    enum LeafKind {
        /// `field == value`, `field != value`, `value == field`: EQUALS, NOT_EQUALS.
        case equality
        /// `< <= > >=`.
        case ordering
        /// `field BETWEEN {low, high}`.
        case between
        /// `stringField BEGINSWITH "prefix"`: BEGINS_WITH.
        case beginsWith
        /// `field IN {…}` or `ANY {…} = field`: IN.
        case inList
        /// `listField CONTAINS value`, `value IN listField`, `ANY listField == value`: LIST_CONTAINS.
        case listContains
        /// `ANY listField IN {…}` or `ANY {…} IN listField`: LIST_CONTAINS_ANY.
        case listContainsAny
        /// `ANY listField BEGINSWITH "prefix"`: LIST_MEMBER_BEGINS_WITH.
        case listBeginsWith
        /// `SELF CONTAINS "words"`, `allTokens TOKENMATCHES[cdl] "words"`,
        /// `ALL tokenize("words", "Cdl") IN allTokens`.
        case fullText
        /// `distanceToLocation:fromLocation:(field, location) < radius`: NEAR.
        case location

        var isNegatable: Bool { [.equality, .inList, .beginsWith, .listContains, .listContainsAny, .listBeginsWith].contains(self) }

        /// Why CloudKit cannot take NOT over this kind: Apple's rule where it names it, else the
        /// Web Services API's missing comparator.
        var notReason: String {
            switch self {
            case .between: "CloudKit does not support NOT over BETWEEN (Apple's CKQuery rules)"
            case .fullText: "CloudKit does not support NOT in a full-text (tokenized) search (Apple's CKQuery rules)"
            case .location: "CloudKit does not support NOT with distanceToLocation:fromLocation: (Apple's CKQuery rules)"
            default:
                "CloudKit Web Services has no negated ordering comparator, and NOT a > 1 is not a <= 1: a record without the field matches the first and not the second (write the opposite comparison if records always have the field)"
            }
        }

        var name: String {
            switch self {
            case .equality: "an equality"
            case .ordering: "an ordering comparison"
            case .between: "BETWEEN"
            case .beginsWith: "BEGINSWITH"
            case .inList: "IN"
            case .listContains: "list membership"
            case .listContainsAny: "ANY … IN"
            case .listBeginsWith: "ANY … BEGINSWITH"
            case .fullText: "a full-text search"
            case .location: "a location query"
            }
        }
    }

    /// The kind of a comparison CloudKit accepts, after checking that its constant has a CloudKit
    /// field value; `nil` (with the reasons recorded) when CloudKit rejects it.
    mutating func leaf(_ c: PredicateComparison) -> LeafKind? {
        let kind = classify(c)
        if let kind { checkValues(c, kind: kind) }
        return kind
    }

    /// Records why the constant of an accepted comparison has no CloudKit field value (nil, a
    /// mixed list, a system field compared with another type, a date TIMESTAMP cannot hold),
    /// rounding dates as the translator does (``CloudKitFieldValue/Rounding``).
    private mutating func checkValues(_ c: PredicateComparison, kind: LeafKind) {
        let field: String, constant: PredicateExpression, span: SourceSpan
        if case .keyPath(let path) = c.left, path.count == 1 {
            (field, constant, span) = (path[0], c.right, c.rightSpan)
        } else if case .keyPath(let path) = c.right, path.count == 1 {
            (field, constant, span) = (path[0], c.left, c.leftSpan)
        } else {
            return
        }
        switch kind {
        case .fullText, .location: return
        case .ordering: checkValue(constant, field: field, rounding: .init(c.operator), span: span)
        case .between:
            guard case .aggregate(let bounds) = constant, bounds.count == 2 else { return }
            checkValue(bounds[0], field: field, rounding: .up, span: span)
            checkValue(bounds[1], field: field, rounding: .down, span: span)
        default: checkValue(constant, field: field, rounding: .exact, span: span)
        }
    }

    private mutating func checkValue(_ constant: PredicateExpression, field: String, rounding: CloudKitFieldValue.Rounding, span: SourceSpan) {
        do throws(CloudKitFieldValue.Problem) {
            _ = try CloudKitFieldValue.encode(constant, field: field, rounding: rounding)
        } catch {
            if case .rejected(let rule, let message) = error { reject(rule, message, span) }
        }
    }

    private mutating func classify(_ c: PredicateComparison) -> LeafKind? {
        if Self.isTokenizeSearch(c) { return tokenizeLeaf(c) }
        var isBlocked = false
        if c.quantifier == .all {
            reject(.allOrNone, "CloudKit does not support ALL", c.leftSpan)
            isBlocked = true
        }
        switch c.operator {
        case .endsWith, .like, .matches, .utiConformsTo, .utiEquals, .customSelector:
            reject(.unsupportedOperator, "CloudKit does not support \(c.operator.text)", c.span)
            isBlocked = true
        default: break
        }
        if !c.options.isEmpty, c.operator != .tokenMatches {
            warn(.undocumentedOptions, "options such as [\(c.options.letters)] are undocumented for CloudKit; it may reject or ignore them", c.span)
        }
        if c.operator == .tokenMatches, !isBlocked {
            guard c.left == .keyPath(["allTokens"]), c.options.isSuperset(of: [.caseInsensitive, .diacriticInsensitive, .localeSensitive]),
                  c.right.isConstant || c.right.isPlaceholder else {
                reject(.tokenMatches, "CloudKit's token search is written allTokens TOKENMATCHES[cdl] \"words\"", c.span)
                return nil
            }
            return .fullText
        }
        let left = side(c.left, span: c.leftSpan)
        let right = side(c.right, span: c.rightSpan)
        checkListLength(left, span: c.leftSpan)
        checkListLength(right, span: c.rightSpan)
        if isBlocked { return nil }
        switch (left, right) {
        case (.other, _), (_, .other):
            return nil
        case (.evaluatedObject, .constant(let words)):
            return fullTextLeaf(c, words: words)
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
        case (.constant(let constant), .field(let field)):
            return constantLeftLeaf(c, constant: constant, field: field)
        case (.field(let field), .constant(let constant)):
            return c.quantifier == .any ? quantifiedLeaf(c, field: field, constant: constant) : fieldLeaf(c, field: field, constant: constant)
        case (.field, .field), (.distance, .field), (.field, .distance):
            reject(.fieldToField, "CloudKit compares a field with a constant, not with another field", c.rightSpan)
            return nil
        default:
            reject(.fieldToField, "CloudKit needs a field on one side and a constant on the other", c.span)
            return nil
        }
    }

    // MARK: - Forms

    /// `field OP constant` without a quantifier.
    private mutating func fieldLeaf(_ c: PredicateComparison, field: String, constant: PredicateExpression) -> LeafKind? {
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
            guard checkBetweenBounds(constant, span: c.rightSpan) else { return nil }
            checkConstantType(field, constant, list: true, span: c.rightSpan)
            checkIndex(field, needs: .notSortable, span: c.leftSpan)
            return .between
        case .beginsWith:
            if !constant.isPlaceholder, !constant.isString {
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
            if constant.isString {
                reject(.stringContains, "CloudKit does not support substring search (x IN \"string\")", c.span)
                return nil
            }
            guard constant.isAggregate || constant.isPlaceholder else {
                reject(.unsupportedForm, "IN needs a list of values {…} or %@ on its right", c.rightSpan)
                return nil
            }
            checkConstantType(field, constant, list: true, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            noteCaseInsensitive(constant, c.span)
            return .inList
        case .contains:
            if constant.isAggregate {
                reject(.unsupportedForm, "\(field) CONTAINS {…} asks whether \(field) holds the whole list as one element; to match any of several values write ANY \(field) IN {…}", c.rightSpan)
                return nil
            }
            let isList = isListField(field)
            if isList == false {
                reject(.stringContains, "CloudKit does not support substring search (CONTAINS on the string field \(field)); use BEGINSWITH, full-text SELF CONTAINS, or a list field", c.span)
                return nil
            }
            if isList == nil, constant.isString {
                warn(.stringContains, "CONTAINS on \(field) works in CloudKit only if \(field) is a list; substring search on strings is rejected", c.span)
            }
            checkConstantType(field, constant, list: false, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            return .listContains
        default:
            reject(.unsupportedOperator, "CloudKit does not support \(c.operator.text)", c.span)
            return nil
        }
    }

    /// `ANY listField OP constant`: list membership tests.
    private mutating func quantifiedLeaf(_ c: PredicateComparison, field: String, constant: PredicateExpression) -> LeafKind? {
        switch c.operator {
        case .equalTo:
            if constant.isAggregate {
                reject(.unsupportedForm, "ANY \(field) == needs one value; to match any of several write ANY \(field) IN {…}", c.rightSpan)
                return nil
            }
            requireListField(field, span: c.leftSpan)
            checkConstantType(field, constant, list: false, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            noteCaseInsensitive(constant, c.span)
            return .listContains
        case .in:
            if constant.isString {
                reject(.stringContains, "CloudKit does not support substring search (ANY \(field) IN \"string\")", c.span)
                return nil
            }
            guard constant.isAggregate || constant.isPlaceholder else {
                reject(.unsupportedForm, "ANY \(field) IN needs a list of values {…} or %@ on its right", c.rightSpan)
                return nil
            }
            requireListField(field, span: c.leftSpan)
            checkConstantType(field, constant, list: true, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            return .listContainsAny
        case .contains:
            if constant.isAggregate {
                reject(.unsupportedForm, "ANY \(field) CONTAINS needs one value; to match any of several write ANY \(field) IN {…}", c.rightSpan)
                return nil
            }
            requireListField(field, span: c.leftSpan)
            checkConstantType(field, constant, list: false, span: c.rightSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            warn(.quantifiedContains, "CloudKit documents ANY … CONTAINS as list membership, but in memory Apple and Ferry test each element of \(field) for a substring; write \(field) CONTAINS … to mean membership in both", c.span)
            return .listContains
        case .beginsWith:
            if !constant.isPlaceholder, !constant.isString {
                reject(.beginsWithNonString, "BEGINSWITH needs a string constant", c.rightSpan)
                return nil
            }
            requireListField(field, span: c.leftSpan)
            checkIndex(field, needs: .notQueryable, span: c.leftSpan)
            return .listBeginsWith
        default:
            reject(.unsupportedForm, "with ANY CloudKit supports only ==, IN, CONTAINS and BEGINSWITH", c.span)
            return nil
        }
    }

    /// `constant OP field`: the documented forms are `value == field`, `value IN listField`,
    /// `ANY {…} = field` (IN) and `ANY {…} IN listField` (LIST_CONTAINS_ANY).
    private mutating func constantLeftLeaf(_ c: PredicateComparison, constant: PredicateExpression, field: String) -> LeafKind? {
        switch (c.quantifier, c.operator) {
        case (.direct, .equalTo):
            checkConstantType(field, c.left, list: false, span: c.leftSpan)
            checkIndex(field, needs: .notQueryable, span: c.rightSpan)
            noteCaseInsensitive(c.left, c.span)
            return .equality
        case (.direct, .in):
            if constant.isAggregate {
                reject(.unsupportedForm, "{…} IN \(field) asks whether \(field) holds the whole list as one element; to match records whose \(field) holds any of the values write ANY {…} IN \(field)", c.leftSpan)
                return nil
            }
            if let f = schemaField(field), !f.type.isList {
                reject(.typeMismatch, "constant IN \(field) needs a list field; \(field) is \(f.type)", c.rightSpan)
            }
            checkConstantType(field, constant, list: false, span: c.leftSpan)
            checkIndex(field, needs: .notQueryable, span: c.rightSpan)
            return .listContains
        case (.any, .equalTo):
            guard constant.isAggregate || constant.isPlaceholder else {
                reject(.unsupportedForm, "ANY needs a list of values on its side: ANY {…} = \(field)", c.leftSpan)
                return nil
            }
            if isListField(field) == true {
                reject(.typeMismatch, "ANY {…} = \(field) compares each value with the whole list \(field); write ANY \(field) IN {…}", c.rightSpan)
            }
            checkConstantType(field, constant, list: true, span: c.leftSpan)
            checkIndex(field, needs: .notQueryable, span: c.rightSpan)
            noteCaseInsensitive(constant, c.span)
            return .inList
        case (.any, .in):
            guard constant.isAggregate || constant.isPlaceholder else {
                reject(.unsupportedForm, "ANY needs a list of values on its side: ANY {…} IN \(field)", c.leftSpan)
                return nil
            }
            if let f = schemaField(field), !f.type.isList {
                reject(.typeMismatch, "ANY {…} IN \(field) needs a list field; \(field) is \(f.type) (write \(field) IN {…})", c.rightSpan)
            }
            checkConstantType(field, constant, list: true, span: c.leftSpan)
            checkIndex(field, needs: .notQueryable, span: c.rightSpan)
            return .listContainsAny
        default:
            var hint = ""
            if c.quantifier == .direct, let mirrored = Self.mirrored(c.operator) {
                hint = " (write \(field) \(mirrored.text) \(constant.expressionFormat))"
            } else if c.quantifier == .direct, c.operator == .contains, constant.isAggregate {
                hint = " (write \(field) IN {…})"
            }
            reject(.unsupportedForm, "with the constant on the left CloudKit supports only value == field, value IN listField, ANY {…} = field and ANY {…} IN listField\(hint)", c.span)
            return nil
        }
    }

    /// `SELF CONTAINS "words"`: full-text search over SEARCHABLE string fields.
    private mutating func fullTextLeaf(_ c: PredicateComparison, words: PredicateExpression) -> LeafKind? {
        guard c.operator == .contains, c.quantifier == .direct else {
            reject(.unsupportedForm, "SELF is only supported in SELF CONTAINS \"words\" (full-text search)", c.leftSpan)
            return nil
        }
        guard words.isPlaceholder || words.isString else {
            reject(.typeMismatch, "full-text search needs a string of words", c.rightSpan)
            return nil
        }
        checkSearchable(c.span)
        return .fullText
    }

    /// `ALL tokenize("words", "Cdl") IN allTokens`: CKQuery's `tokenize:using:` function, every word.
    private mutating func tokenizeLeaf(_ c: PredicateComparison) -> LeafKind? {
        guard case .function(_, let arguments) = c.left,
              arguments[0].isString || arguments[0].isPlaceholder, arguments[1].isString || arguments[1].isPlaceholder else {
            reject(.tokenMatches, "CloudKit's tokenize search is written ALL tokenize(\"words\", \"Cdl\") IN allTokens", c.leftSpan)
            return nil
        }
        checkSearchable(c.span)
        return .fullText
    }

    static func isTokenizeSearch(_ c: PredicateComparison) -> Bool {
        guard c.quantifier == .all, c.operator == .in, c.right == .keyPath(["allTokens"]),
              case .function(let name, let arguments) = c.left, arguments.count == 2 else { return false }
        return name == "tokenize" || name == "tokenize:using:"
    }

    private mutating func checkSearchable(_ span: SourceSpan) {
        if let type = schemaType, !type.fields.contains(where: \.isSearchable) {
            reject(.notSearchable, "full-text search needs a SEARCHABLE string field in \(type.name)", span)
        }
    }

    /// Both bounds of BETWEEN must be single values (strings, numbers, dates) or `%@`.
    private mutating func checkBetweenBounds(_ constant: PredicateExpression, span: SourceSpan) -> Bool {
        if constant.isPlaceholder { return true }
        guard case .aggregate(let bounds) = constant, bounds.count == 2 else {
            reject(.betweenBounds, "BETWEEN needs two bounds {low, high}, found \(constant.expressionFormat)", span)
            return false
        }
        for (name, bound) in zip(["low", "high"], bounds) {
            switch bound {
            case .string, .integer, .double, .date, .placeholder: continue
            default:
                reject(.betweenBounds, "BETWEEN needs single-value bounds {low, high}; the \(name) bound is \(bound.expressionFormat)", span)
                return false
            }
        }
        return true
    }

    /// Without a schema, any field may be a list; with one, `ANY` needs a declared list.
    private mutating func requireListField(_ field: String, span: SourceSpan) {
        if let f = schemaField(field), !f.type.isList {
            reject(.typeMismatch, "ANY needs a list field; \(field) is \(f.type)", span)
        }
    }

    /// `constant OP field` written as `field OP' constant`.
    private static func mirrored(_ op: PredicateComparison.Operator) -> PredicateComparison.Operator? {
        switch op {
        case .lessThan: .greaterThan
        case .lessThanOrEqualTo: .greaterThanOrEqualTo
        case .greaterThan: .lessThan
        case .greaterThanOrEqualTo: .lessThanOrEqualTo
        case .notEqualTo: .notEqualTo
        default: nil
        }
    }
}
