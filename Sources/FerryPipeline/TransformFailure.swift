import FerryPredicate

/// A record the pipeline's predicate could not be evaluated on (an unlike type, an unbound
/// variable): where it was and why.
public struct TransformFailure: Error, CustomStringConvertible {
    /// The input's name.
    public var source: String
    /// The 1-based line of the record, when known.
    public var line: Int?
    /// The 1-based index of the record in its input.
    public var recordIndex: Int
    /// What evaluating the predicate (or a custom transform) threw.
    public var underlying: any Error

    public init(source: String, line: Int?, recordIndex: Int, underlying: any Error) {
        self.source = source
        self.line = line
        self.recordIndex = recordIndex
        self.underlying = underlying
    }

    public var description: String {
        let place = line.map { "\(source):\($0)" } ?? source
        let message = (underlying as? PredicateError)?.message ?? String(describing: underlying)
        return "\(place): record \(recordIndex): cannot evaluate the predicate: \(message)"
    }
}
