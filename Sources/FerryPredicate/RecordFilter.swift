import FerryRecords

/// A predicate compiled once into closures, ready to test many records or JSON objects.
///
/// Compiling resolves key names (system keys such as `recordType` and `creationDate` become
/// enum cases), converts constants, folds `[c]`/`[d]` constants, builds LIKE patterns and regular
/// expressions, and looks up functions; nothing is parsed per record. A filter is `Sendable`
/// and can be shared by threads.
///
/// ```swift
/// let filter = try RecordFilter(parsing: #"recordType == "Message" AND count > 50 AND text CONTAINS[c] "hello""#)
/// let kept = try records.filter { try filter.matches($0) }
/// ```
public struct RecordFilter: Sendable {
    /// The predicate this filter evaluates.
    public let predicate: RecordPredicate
    /// Byte strings a record's JSON must contain to match (see ``LiteralPrefilter``).
    public let literals: LiteralPrefilter?
    /// The record parts the predicate reads (see ``RecordPredicate/fieldSelection``).
    public let fieldSelection: FieldSelection?
    private let function: BoolFunction

    /// Compiles a parsed predicate.
    ///
    /// - Throws: ``PredicateError`` when the predicate still has format specifiers, names an
    ///   unknown function or collection operator, or has an invalid MATCHES pattern.
    public init(_ predicate: RecordPredicate) throws(PredicateError) {
        self.predicate = predicate
        function = try PredicateCompiler().compile(predicate)
        literals = LiteralPrefilter(predicate)
        fieldSelection = predicate.fieldSelection
    }

    /// Parses and compiles a predicate format string.
    public init(parsing text: String, arguments: [JSONValue]? = nil) throws(PredicateError) {
        try self.init(RecordPredicate(parsing: text, arguments: arguments))
    }

    /// Whether a record satisfies the predicate. Keys name fields, or the system keys
    /// `recordName`, `recordID`, `recordType`, `creationDate`, `modificationDate`,
    /// `creatorUserRecordID`, `lastModifiedUserRecordID`, `recordChangeTag`, `parent`, `share`,
    /// `zoneName` (system keys win over fields of the same name).
    ///
    /// - Throws: ``PredicateError`` with code `.evaluation` (unlike types, unbound variable…).
    public func matches(_ record: Record, variables: [String: JSONValue] = [:]) throws(PredicateError) -> Bool {
        let bindings = variables.isEmpty ? [:] : variables.mapValues(RuntimeValue.init)
        let context = EvaluationContext(isRecord: true, root: .null, variables: bindings)
        return try withUnsafePointer(to: record) { (recordPointer) throws(PredicateError) -> Bool in
            try withUnsafePointer(to: context) { (contextPointer) throws(PredicateError) -> Bool in
                try function(recordPointer, contextPointer)
            }
        }
    }

    /// Whether a JSON value satisfies the predicate; key paths walk nested objects. Typed
    /// objects (`{"$date": …}`, `{"$reference": …}`, `{"$location": […]}`) are read as dates,
    /// references and locations.
    public func evaluate(_ object: JSONValue, variables: [String: JSONValue] = [:]) throws(PredicateError) -> Bool {
        let context = EvaluationContext(isRecord: false, root: RuntimeValue(object), variables: variables.mapValues(RuntimeValue.init))
        return try withUnsafePointer(to: EvaluationContext.placeholder) { (recordPointer) throws(PredicateError) -> Bool in
            try withUnsafePointer(to: context) { (contextPointer) throws(PredicateError) -> Bool in
                try function(recordPointer, contextPointer)
            }
        }
    }
}

extension RecordPredicate {
    /// Compiles this predicate into a ``RecordFilter``.
    public func compile() throws(PredicateError) -> RecordFilter {
        try RecordFilter(self)
    }
}
