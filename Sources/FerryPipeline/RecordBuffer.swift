import FerryRecords

/// A stage that holds records back and hands them on later in another order (sorting).
public protocol RecordBuffer: AnyObject {
    /// Takes a record.
    func add(_ record: Record) throws
    /// Hands every record on, in order, until `emit` returns `false`.
    func finish(_ emit: (Record) throws -> Bool) throws
}
