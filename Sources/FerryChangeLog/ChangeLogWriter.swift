import FerryIO
import FerryRecords

/// Writes Ferry's change-log format: one compact JSON event per line (see `Docs/ChangeLogFormat.md`).
///
/// Events are encoded into a buffer handed to the sink in large pieces; ``finish()`` flushes and
/// commits the sink (for files: the atomic rename), so a failed run leaves no partial log.
public final class ChangeLogWriter {
    private let sink: ByteSink
    private var output = JSONOutput(capacity: 1 << 20)
    private let flushThreshold: Int
    /// Events written.
    public private(set) var eventCount = 0

    /// Creates a writer onto `sink`.
    public init(sink: ByteSink, flushThreshold: Int = 1 << 20) {
        self.sink = sink
        self.flushThreshold = flushThreshold
    }

    /// Writes one event and a newline.
    public func write(_ event: ChangeEvent) throws {
        switch event {
        case .zoneSaved(let zone): writeZoneEvent("{\"event\":\"zoneSaved\",\"zoneID\":", zone)
        case .zoneDeleted(let zone): writeZoneEvent("{\"event\":\"zoneDeleted\",\"zoneID\":", zone)
        case .zonePurged(let zone): writeZoneEvent("{\"event\":\"zonePurged\",\"zoneID\":", zone)
        case .recordSaved(let record):
            output.append("{\"event\":\"recordSaved\",\"record\":")
            RecordJSON.encode(record, into: &output)
            output.append("}\n")
        case .recordDeleted(let id, let type):
            output.append("{\"event\":\"recordDeleted\",\"recordName\":")
            output.appendString(id.recordName)
            output.append(",\"zoneID\":")
            RecordJSON.encode(id.zoneID, into: &output)
            if let type {
                output.append(",\"recordType\":")
                output.appendString(type)
            }
            output.append("}\n")
        case .checkpoint(let checkpoint):
            output.append("{\"event\":\"checkpoint\"")
            if let zone = checkpoint.zoneID {
                output.append(",\"zoneID\":")
                RecordJSON.encode(zone, into: &output)
            }
            output.append(",\"syncToken\":")
            output.appendString(checkpoint.syncToken)
            output.append(checkpoint.moreComing ? ",\"moreComing\":true}\n" : ",\"moreComing\":false}\n")
        }
        try counted()
    }

    private func writeZoneEvent(_ prefix: StaticString, _ zone: ZoneID) {
        output.append(prefix)
        RecordJSON.encode(zone, into: &output)
        output.append("}\n")
    }

    private func counted() throws {
        eventCount += 1
        if output.count >= flushThreshold { try flush() }
    }

    /// Hands what is buffered to the sink (whose own buffering may hold it further).
    public func flush() throws {
        guard output.count > 0 else { return }
        try sink.write(output.bytes)
        output.removeAll()
    }

    /// Flushes everything and commits the sink.
    public func finish() throws {
        try flush()
        try sink.commit()
    }
}
