import FerryRecords

/// Compiles a predicate into closures once; the common record filter (a field compared with a
/// constant) gets a specialised closure that reads the field value without conversion.
struct PredicateCompiler {
    func compile(_ predicate: RecordPredicate) throws(PredicateError) -> BoolFunction {
        switch predicate {
        case .constant(let value):
            return { _, _ in value }
        case .comparison(let comparison):
            return try compile(comparison)
        case .and(let operands, _):
            let parts = try operands.map { (operand) throws(PredicateError) in try compile(operand) }
            if parts.count == 2 {
                let a = parts[0], b = parts[1]
                return { record, context throws(PredicateError) in
                    if !(try a(record, context)) { return false }
                    return try b(record, context)
                }
            }
            return { record, context throws(PredicateError) in
                for part in parts {
                    if !(try part(record, context)) { return false }
                }
                return true
            }
        case .or(let operands, _):
            let parts = try operands.map { (operand) throws(PredicateError) in try compile(operand) }
            return { record, context throws(PredicateError) in
                for part in parts {
                    if try part(record, context) { return true }
                }
                return false
            }
        case .not(let operand, _):
            let inner = try compile(operand)
            return { record, context throws(PredicateError) in !(try inner(record, context)) }
        }
    }

    func compile(_ comparison: PredicateComparison) throws(PredicateError) -> BoolFunction {
        let op = comparison.operator
        let options = comparison.options
        let expressions = ExpressionCompiler()

        // SELF CONTAINS "words" on a record is CloudKit's full-text search.
        if comparison.quantifier == .direct, op == .contains, comparison.left == .evaluatedObject,
           case .string(let words) = comparison.right {
            let tokens = Set(StringMatching.tokens(StringMatching.fold(words, [.caseInsensitive, .diacriticInsensitive])))
            let prepared = try PreparedOperand(.string(words), operator: op, options: options)
            return { record, context throws(PredicateError) in
                if context.pointee.isRecord { return ComparisonSemantics.fullText(record.pointee, tokens: tokens) }
                return try ComparisonSemantics.evaluate(op, context.pointee.root, prepared.value, options, prepared: prepared)
            }
        }

        let left = try expressions.compile(comparison.left)
        let constant = RuntimeValue(constant: comparison.right)
        let prepared = try constant.map { (value) throws(PredicateError) in try PreparedOperand(value, operator: op, options: options) }
        let right: ValueFunction
        if let constant { right = { @Sendable _, _ in constant } } else { right = try expressions.compile(comparison.right) }

        if comparison.quantifier == .direct, let prepared,
           case .keyPath(let components) = comparison.left, components.count == 1, !components[0].hasPrefix("@"),
           let fast = Self.fastPath(key: components[0], op: op, options: options, prepared: prepared) {
            return fast
        }

        switch comparison.quantifier {
        case .direct:
            return { record, context throws(PredicateError) in
                try ComparisonSemantics.evaluate(op, left(record, context), right(record, context), options, prepared: prepared)
            }
        case .any, .all:
            let isAll = comparison.quantifier == .all
            return { record, context throws(PredicateError) in
                let value = try left(record, context)
                if value.isNull { return false }
                guard let items = value.elements else {
                    throw PredicateError.evaluation("expected a collection after \(isAll ? "ALL" : "ANY"), found \(value.kindName)")
                }
                let rhs = try right(record, context)
                for item in items {
                    let holds = try ComparisonSemantics.evaluate(op, item, rhs, options, prepared: prepared)
                    if isAll && !holds { return false }
                    if !isAll && holds { return true }
                }
                return isAll
            }
        }
    }

    /// `field OP constant` on records without converting the field value; anything unusual falls
    /// back to the general semantics.
    static func fastPath(key name: String, op: PredicateComparison.Operator, options: PredicateComparison.Options,
                         prepared: PreparedOperand) -> BoolFunction? {
        let key = RecordKey(name)
        let general: @Sendable (RuntimeValue) throws(PredicateError) -> Bool = { value throws(PredicateError) in
            try ComparisonSemantics.evaluate(op, value, prepared.value, options, prepared: prepared)
        }
        let plainOptions = options.subtracting([.normalized, .localeSensitive]).isEmpty

        if case .recordType = key, case .string(let wanted) = prepared.value, plainOptions, op == .equalTo || op == .notEqualTo {
            let equal = op == .equalTo
            return { record, context throws(PredicateError) in
                guard context.pointee.isRecord else { return try general(context.pointee.value(forRootKey: key, name: name, record: record.pointee)) }
                return (record.pointee.recordType == wanted) == equal
            }
        }
        guard case .field = key else { return nil }

        // The field's value, or nil when absent; `fields` is scanned without building a value.
        @Sendable @inline(__always) func field(_ record: borrowing Record) -> FieldValue? {
            guard let fields = record.fields else { return nil }
            for entry in fields.entries where entry.name == name { return entry.field.value }
            return nil
        }

        switch (op, prepared.value) {
        case (.contains, .string(let needle)) where options.contains(.caseInsensitive)
            && !options.contains(.diacriticInsensitive) && needle.utf8.allSatisfy({ $0 < 0x80 }):
            let folded = Array((prepared.folded ?? needle).utf8)
            return { record, context throws(PredicateError) in
                guard context.pointee.isRecord else { return try general(context.pointee.value(forRootKey: key, name: name, record: record.pointee)) }
                guard let value = field(record.pointee) else { return false }
                if case .string(let text) = value, let found = StringMatching.asciiContainsFolded(text, needle: folded) {
                    return found
                }
                return try general(RuntimeValue(value))
            }
        case (.equalTo, .string(let wanted)) where plainOptions, (.notEqualTo, .string(let wanted)) where plainOptions:
            let equal = op == .equalTo
            return { record, context throws(PredicateError) in
                guard context.pointee.isRecord else { return try general(context.pointee.value(forRootKey: key, name: name, record: record.pointee)) }
                guard let value = field(record.pointee) else { return !equal }
                if case .string(let text) = value { return (text == wanted) == equal }
                return try general(RuntimeValue(value))
            }
        case (.equalTo, .integer(let wanted)), (.notEqualTo, .integer(let wanted)), (.lessThan, .integer(let wanted)),
             (.lessThanOrEqualTo, .integer(let wanted)), (.greaterThan, .integer(let wanted)),
             (.greaterThanOrEqualTo, .integer(let wanted)):
            return { record, context throws(PredicateError) in
                guard context.pointee.isRecord else { return try general(context.pointee.value(forRootKey: key, name: name, record: record.pointee)) }
                guard let value = field(record.pointee) else { return op == .notEqualTo }
                if case .int64(let v) = value {
                    switch op {
                    case .equalTo: return v == wanted
                    case .notEqualTo: return v != wanted
                    case .lessThan: return v < wanted
                    case .lessThanOrEqualTo: return v <= wanted
                    case .greaterThan: return v > wanted
                    default: return v >= wanted
                    }
                }
                return try general(RuntimeValue(value))
            }
        default:
            return { record, context throws(PredicateError) in
                guard context.pointee.isRecord else { return try general(context.pointee.value(forRootKey: key, name: name, record: record.pointee)) }
                guard let value = field(record.pointee) else { return try general(.null) }
                return try general(RuntimeValue(value))
            }
        }
    }
}
