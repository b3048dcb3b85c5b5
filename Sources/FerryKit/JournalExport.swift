import FerryChangeLog
import FerryCompression
import FerryIO
import FerryInternals
import FerryRecords
import FerryStore

/// What ``Conversion/exportChanges()`` wrote: a store's journal after a token, as a change log.
public struct JournalExport: Sendable {
    /// Events written.
    public var eventCount: Int
    /// The token the journal was written after (`0` for all of it).
    public var since: String
    /// The store's token at the end of the log: the next export's `since`.
    public var token: StoreToken

    /// `N events after SINCE; the store's token is now TOKEN`.
    public var line: String {
        "\(Plural.count(eventCount, "event")) after \(since); the store's token is now \(token)"
    }

    /// The same as one JSON object: events, since, token.
    public var json: String {
        JSONValue.object(["events": eventCount.json, "since": .string(since), "token": .string(token.description)]).compactText
    }
}

extension Conversion {
    /// Writes the journal of the one store input after ``Configuration/changesSince`` as a Ferry
    /// change log into the output (gzip-compressed when its name ends in `.gz` or
    /// ``RecordOutput/Configuration/gzip``), committed only when all of it was written.
    ///
    /// - Throws: ``FerryError``: usage when the files clash; data for a token of another store,
    ///   or that does not parse, and for failures to read or write.
    public func exportChanges() throws(FerryError) -> JournalExport {
        try files.check()
        let output = configuration.output, since = configuration.changesSince ?? "0"
        let writing = configuration.writing
        return try FerryError.catching {
            let store = try RecordStore(path: configuration.inputs.first ?? "")
            let token = since == "0" ? nil : try StoreToken(parsing: since)
            let file = try OutputFile(path: output)
            do {
                let sink: ByteSink = writing.gzip || RecordFormat.impliesGzip(output)
                    ? try GzipSink(wrapping: file, configuration: .init(level: writing.level)) : file
                let writer = ChangeLogWriter(sink: sink)
                let end = try store.writeChanges(since: token, to: writer)
                try writer.finish()
                try file.commit()
                return JournalExport(eventCount: writer.eventCount, since: since, token: end)
            } catch {
                file.abandon()
                throw error
            }
        }
    }
}
