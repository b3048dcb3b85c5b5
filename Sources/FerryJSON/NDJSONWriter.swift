import FerryIO
import FerryPipeline
import FerryRecords

/// Writes records as NDJSON: one compact record dictionary per line.
///
/// Records are encoded into a buffer handed to the sink in large pieces; ``finish()`` flushes and
/// commits the sink (for files: the atomic rename), so a failed run leaves no partial output.
public final class NDJSONWriter: RecordWriter {
    /// The sink records are written to.
    public let sink: ByteSink
    private var output = JSONOutput(capacity: 1 << 20)
    private let flushThreshold: Int
    /// Records written.
    public private(set) var recordCount = 0
    /// Bytes handed to the sink so far.
    public private(set) var bytesWritten = 0

    /// Creates a writer onto `sink`.
    public init(sink: ByteSink, flushThreshold: Int = 1 << 20) {
        self.sink = sink
        self.flushThreshold = flushThreshold
    }

    /// Writes one record and a newline.
    public func write(_ record: Record) throws {
        RecordJSON.encode(record, into: &output)
        output.append(0x0A)
        recordCount += 1
        if output.count >= flushThreshold { try flush() }
    }

    /// Writes one record given as its compact JSON (one line, no newline), byte for byte: for
    /// callers that hold records already encoded.
    package func write(encodedRecord bytes: UnsafeRawBufferPointer) throws {
        output.append(bytes)
        output.append(0x0A)
        recordCount += 1
        if output.count >= flushThreshold { try flush() }
    }

    /// NDJSON writers take records already encoded (by workers that encode in parallel).
    public var acceptsEncodedLines: Bool { true }

    /// Writes lines of compact records (each ended by a newline), `records` of them, byte for
    /// byte: for callers that gather records already encoded.
    public func write(encodedLines bytes: UnsafeRawBufferPointer, records: Int) throws {
        try flush()
        try sink.write(bytes)
        bytesWritten += bytes.count
        recordCount += records
    }

    /// Hands everything buffered to the sink (without committing it), so others may write to
    /// the sink next.
    public func flush() throws {
        guard output.count > 0 else { return }
        try sink.write(output.bytes)
        bytesWritten += output.count
        output.removeAll()
    }

    /// Flushes everything and commits the sink.
    public func finish() throws {
        try flush()
        try sink.commit()
    }
}
