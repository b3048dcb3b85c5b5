import FerryRecords

/// What a compiled predicate evaluates against, besides the record: the JSON value when it is not
/// a record, and variables.
///
/// The record itself is a separate parameter of every compiled closure. When a JSON value is
/// evaluated, the record parameter is an empty placeholder and ``isRecord`` is `false`.
struct EvaluationContext: Sendable {
    /// Whether the record parameter is the evaluated object.
    var isRecord: Bool
    /// The evaluated object when it is not a record.
    var root: RuntimeValue
    /// `$name` bindings.
    var variables: [String: RuntimeValue]

    /// The record parameter of JSON evaluations.
    static let placeholder = Record(recordName: "")

    /// `SELF`.
    func evaluatedObject(_ record: Record) -> RuntimeValue {
        isRecord ? .record(record) : root
    }

    /// The value of a key of the evaluated object.
    func value(forRootKey key: RecordKey, name: String, record: Record) throws(PredicateError) -> RuntimeValue {
        if isRecord { return key.value(in: record) }
        return try root.value(forKey: name)
    }
}

/// Compiled closures take the record and the context by address: passing them by value made
/// every call through a closure copy both (a record is a large struct), which cost more than the
/// comparisons. The pointers are valid only during the call.
typealias ValueFunction = @Sendable (UnsafePointer<Record>, UnsafePointer<EvaluationContext>) throws(PredicateError) -> RuntimeValue
typealias BoolFunction = @Sendable (UnsafePointer<Record>, UnsafePointer<EvaluationContext>) throws(PredicateError) -> Bool
