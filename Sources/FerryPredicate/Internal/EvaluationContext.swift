import FerryRecords

/// What a compiled predicate evaluates against: a record or a JSON value, plus variables.
struct EvaluationContext: Sendable {
    /// The record, when evaluating a record.
    var record: Record?
    /// The evaluated object when it is not a record.
    var root: RuntimeValue
    /// `$name` bindings.
    var variables: [String: RuntimeValue]

    /// `SELF`.
    var evaluatedObject: RuntimeValue {
        if let record { return .record(record) }
        return root
    }

    /// The value of a key of the evaluated object.
    func value(forRootKey key: RecordKey, name: String) throws(PredicateError) -> RuntimeValue {
        if let record { return key.value(in: record) }
        return try root.value(forKey: name)
    }
}

typealias ValueFunction = @Sendable (EvaluationContext) throws(PredicateError) -> RuntimeValue
typealias BoolFunction = @Sendable (EvaluationContext) throws(PredicateError) -> Bool
