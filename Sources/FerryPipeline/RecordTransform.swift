import FerryPredicate
import FerryRecords

/// What happens to every record between a source and a sink: keep only some types and zones,
/// keep only records matching a predicate (`--where`, compiled once), keep only some fields.
///
/// Sources apply it where it is cheapest — a JSON source on its worker threads, after looking at
/// raw lines for the predicate's literals; a store in SQL — but always with the same result as
/// ``apply(_:)`` on each record.
public struct RecordTransform: Sendable {
    /// Record types to keep (all when empty).
    public var types: Set<String>
    /// Zone names to keep (all when empty).
    public var zones: Set<String>
    /// The predicate records must match, compiled.
    public var filter: RecordFilter?
    /// Fields to keep (system fields are always kept); all when `nil`.
    public var keys: Set<String>?
    /// A further step for library users and tests: `false` drops the record; it may change it.
    public var custom: (@Sendable (inout Record) throws -> Bool)?

    public init(types: Set<String> = [], zones: Set<String> = [], filter: RecordFilter? = nil, keys: Set<String>? = nil,
                custom: (@Sendable (inout Record) throws -> Bool)? = nil) {
        self.types = types
        self.zones = zones
        self.filter = filter
        self.keys = keys
        self.custom = custom
    }

    /// Whether the transform keeps every record unchanged.
    public var isIdentity: Bool { types.isEmpty && zones.isEmpty && filter == nil && keys == nil && custom == nil }

    /// Applies the transform: `false` when the record is dropped; projection changes it.
    ///
    /// - Throws: ``PredicateError`` when the predicate cannot be evaluated on the record, or what
    ///   ``custom`` throws.
    public func apply(_ record: inout Record) throws -> Bool {
        try apply(&record, filterMatched: false)
    }

    /// Applies the transform to a record already known to match ``filter`` (a source evaluated
    /// it on the fields it reads): the predicate is not evaluated again.
    public func apply(_ record: inout Record, filterMatched: Bool) throws -> Bool {
        if !types.isEmpty && !types.contains(record.recordType ?? "") { return false }
        if !zones.isEmpty && !zones.contains(record.zoneName) { return false }
        // (Optional chaining, not a binding: a bound copy of the filter retains all it holds,
        // and every decoding thread shares it.)
        if !filterMatched, try filter?.matches(record) == false { return false }
        if let keys, var fields = record.fields {
            fields.entries.removeAll { !keys.contains($0.name) }
            record.fields = fields
        }
        if let custom { return try custom(&record) }
        return true
    }
}
