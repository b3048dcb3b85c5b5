import FerryChangeLog
import FerryRecords

/// How a replay reads its histories, whatever it replays into (``StateReplay``, ``StoreReplay``):
/// which histories, the zone of what names none, the decoding threads and the line limit.
public struct HistoryReading: Sendable {
    /// The histories, in fetch order: files, folders (every file under them), `-` for standard input.
    public var histories: [String]
    /// The zone of responses and records that name none (default `_defaultZone`).
    public var defaultZone: String?
    /// Threads decoding the history (0 decodes on the calling thread); `nil` for the default.
    public var threads: Int?
    /// The longest history line (and pretty-printed response read from a stream) accepted.
    public var maximumLineBytes: Int

    /// Reading of `histories`.
    public init(histories: [String], defaultZone: String? = nil, threads: Int? = nil, maximumLineBytes: Int = 64 << 20) {
        self.histories = histories
        self.defaultZone = defaultZone
        self.threads = threads
        self.maximumLineBytes = maximumLineBytes
    }

    /// The change-log reader's configuration these settings make.
    public var reader: ChangeLogReader.Configuration {
        var reader = ChangeLogReader.Configuration(maximumLineBytes: maximumLineBytes)
        if let defaultZone { reader.defaultZone = ZoneID(zoneName: defaultZone) }
        return reader
    }

    /// What the run reads, as a command line names it (`HISTORY`).
    var files: [RunFiles.Named] { histories.map { .init(role: "HISTORY", path: $0) } }
}
