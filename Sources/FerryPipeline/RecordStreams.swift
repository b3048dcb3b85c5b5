import FerryIO
import FerryRecords

/// What a record reader does with an input it cannot read as a record.
public enum RecordErrorPolicy {
    /// Stop at the first bad input and throw its error.
    case fail
    /// Skip it: write it verbatim to `rejects` (when given), report it, and go on.
    case skip(rejects: ByteSink?)

    /// Whether bad inputs are skipped.
    public var skips: Bool {
        if case .skip = self { true } else { false }
    }
}

/// A stream of records read from one input in some format (NDJSON, XML, an archive).
///
/// Every reader streams: memory does not grow with the input. Errors name the input and the
/// position (line and column, or byte offset) and say what was expected.
public protocol RecordReader: AnyObject {
    /// The input's name, for messages.
    var sourceName: String { get }
    /// Returns the next record, or `nil` at the end of the input.
    func next() throws -> Record?
    /// The 1-based index of the latest record or rejected input.
    var recordIndex: Int { get }
    /// Records returned so far.
    var recordCount: Int { get }
    /// Inputs rejected under ``RecordErrorPolicy/skip(rejects:)``.
    var rejectedCount: Int { get }
    /// Bytes consumed from the input so far (decompressed).
    var bytesRead: Int { get }
    /// Called for every input skipped under ``RecordErrorPolicy/skip(rejects:)``.
    var onReject: ((any Error) -> Void)? { get set }
    /// The responses read so far that list zones and hold no records (only JSON inputs have them).
    var zoneListings: [ZoneListing] { get }
    /// The database (`public`, `private`, `shared`) of the record ``next()`` returned last, for
    /// inputs that keep databases apart (stores, archives); `nil` when the input does not say.
    var currentDatabase: String? { get }
    /// The 1-based line where the record ``next()`` returned last starts, for messages about it;
    /// `nil` when the input has no lines to tell.
    var recordLine: Int? { get }
}

extension RecordReader {
    public var zoneListings: [ZoneListing] { [] }
    public var currentDatabase: String? { nil }
    public var recordLine: Int? { nil }
}

/// A destination of records in some format. Nothing is visible under the output's final name
/// until ``finish()`` succeeds.
public protocol RecordWriter: AnyObject {
    /// Writes one record.
    func write(_ record: Record) throws
    /// Writes one record that came from `database` (`public`, `private`, `shared`), for writers
    /// that keep databases apart (archives, stores); others ignore it.
    func write(_ record: Record, database: String?) throws
    /// Flushes everything and commits the output.
    func finish() throws
    /// Records written so far.
    var recordCount: Int { get }
    /// Bytes handed to the output so far (before compression).
    var bytesWritten: Int { get }
    /// Whether the writer takes records already encoded as NDJSON lines
    /// (``write(encodedLines:records:)``): sources that encode on worker threads then hand
    /// their bytes over instead of records.
    var acceptsEncodedLines: Bool { get }
    /// Writes `records` records given as compact NDJSON lines (each ended by a newline), byte for
    /// byte. Only when ``acceptsEncodedLines``. Sources hand over what `RecordJSON.encode` writes
    /// (members in the encoder's order), and a writer that reads columns, as a store does, may
    /// read a line's system keys from its start alone; a writer that only copies the bytes (NDJSON)
    /// also takes other compact records, such as a replayed state's.
    func write(encodedLines bytes: UnsafeRawBufferPointer, records: Int) throws
}

extension RecordWriter {
    public func write(_ record: Record, database: String?) throws { try write(record) }
    public var acceptsEncodedLines: Bool { false }
    public func write(encodedLines bytes: UnsafeRawBufferPointer, records: Int) throws {
        preconditionFailure("\(Self.self) does not take encoded lines")
    }
}
