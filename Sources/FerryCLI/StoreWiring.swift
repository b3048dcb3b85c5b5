import ArgumentParser
import FerryArchive
import FerryChangeLog
import FerryCompression
import FerryIO
import FerryInternals
import FerryRecords
import FerryStore

// The thin glue between the commands and FerryStore: stores recognised by content as inputs.

/// Opens `path` as a store reader when it holds a store (by content, whatever its name); `nil`
/// for other files. A SQLite file of another program, or `--from store` on something else, is an
/// error naming what the file is.
func openStoreReader(_ path: String, declared: RecordFormat?) throws -> StoreRecordReader? {
    guard path != "-" else { return nil }
    let kind = StoreFile.kind(at: path)
    switch kind {
    case .store:
        return try StoreRecordReader(path: path)
    case .otherSQLite:
        throw CommandFailure(message: "\(path): " + StoreFile.notAStoreMessage(kind))
    default:
        if declared == .store { throw CommandFailure(message: "\(path): " + StoreFile.notAStoreMessage(kind)) }
        return nil
    }
}

extension StoreWriter.Mode: ExpressibleByArgument {}

/// `convert STORE OUT --changes-since TOKEN`: the store's journal after the token as a change log.
/// The summary goes to stderr (`--json`: one JSON object, on stdout unless the log goes there).
func exportChanges(from path: String, since text: String, to output: String, gzip: Bool, level: Int, quiet: Bool, json: Bool) throws {
    let file: OutputFile
    do {
        let store = try RecordStore(path: path)
        let token = text == "0" ? nil : try StoreToken(parsing: text)
        file = try OutputFile(path: output)
        do {
            let sink: ByteSink = gzip || RecordFormat.impliesGzip(output)
                ? try GzipSink(wrapping: file, configuration: .init(level: level)) : file
            let writer = ChangeLogWriter(sink: sink)
            let end = try store.writeChanges(since: token, to: writer)
            try writer.finish()
            try file.commit()
            if json {
                let object: JSONObject = ["events": .number(JSONNumber(Int64(writer.eventCount))), "since": .string(text),
                                          "token": .string(end.description)]
                writeSummary(render(.object(object)), outputIsStdout: output == "-")
            } else if !quiet {
                StandardError.write("ferry: \(Plural.count(writer.eventCount, "event")) after \(text); the store's token is now \(end)\n")
            }
        } catch {
            file.abandon()
            throw error
        }
    } catch {
        throw dataFailure(error)
    }
}

/// Carries what an archive holds besides records into a store (zone tokens, a store's journal),
/// and what a store holds besides records into an archive.
enum StoreCarryOver {
    /// Before reading an archive into a store: a store's journal in it (one member per database)
    /// replaces the journal the import writes, so the store's tokens keep working.
    static func begin(from input: ArchiveRecordReader, into output: StoreWriter) {
        let previous = input.archive.onMember
        input.archive.onMember = { member, source in
            let name = String(member.path.split(separator: "/").last ?? "")
            if member.kind == .changes, name.hasPrefix(journalPrefix), name.hasSuffix(".ndjson") {
                let database = String(name.dropFirst(journalPrefix.count).dropLast(".ndjson".count))
                var journal = ChangeLogReader.Configuration()
                journal.keepsTombstones = true // rows the store held, tombstones included
                try output.restoreJournal(from: ChangeLogReader(source: source, configuration: journal), database: database)
            }
            try previous?(member, source)
        }
    }

    /// After reading an archive into a store: its zones (with or without records) and their change tokens.
    static func finish(from input: ArchiveRecordReader, into output: StoreWriter) throws {
        for zone in input.archive.manifest.zones {
            try output.setSyncToken(zone.changeToken, for: zone.zoneID, database: zone.database)
        }
    }

    /// After reading a store into an archive: its zones, their change tokens and its journal,
    /// one change log per database (`changes/ferry-store-journal.<database>.ndjson`).
    static func finish(from input: StoreRecordReader, into output: ArchiveRecordWriter) throws {
        let zones = try input.zones()
        for zone in zones where !zone.isDeleted {
            try output.archive.addZone(zone.zoneID, database: zone.database)
            if let token = zone.syncToken { try output.archive.setChangeToken(token, for: zone.zoneID, database: zone.database) }
        }
        FileSystem.removeStaleTemporaries(in: FileSystem.temporaryDirectory)
        guard let directory = FileSystem.makeTemporaryFolder(prefix: FileSystem.temporaryDirectory + "/.ferry-journal-") else {
            throw CommandFailure(message: "cannot make a temporary folder for the store's journal in \(FileSystem.temporaryDirectory)")
        }
        defer { FileSystem.removeTemporaryFolder(directory) }
        for database in Set(zones.map(\.database)).sorted() {
            let path = directory + "/journal.ndjson"
            let file = try OutputFile(path: path)
            let writer = ChangeLogWriter(sink: file)
            try input.store.writeChanges(since: nil, database: database, to: writer, checkpointEach: true)
            try writer.finish()
            try file.commit()
            try output.archive.addChangeLog(named: journalPrefix + database + ".ndjson", from: try InputFile(path: path))
        }
    }

    static let journalPrefix = "ferry-store-journal."
}

/// What `inspect` shows of a store: its zones and tokens, counts per type, journal and indexes.
struct StoreSummary {
    var path: String
    var storeID: String
    var formatVersion: Int
    var bytes: Int
    var zones: [StoreZone]
    var counts: [(database: String, zoneName: String, ownerRecordName: String?, recordType: String?, count: Int)]
    var journalCount: Int
    var token: StoreToken
    var indexes: [RecordStore.FieldIndex]

    init(path: String) throws {
        let store = try RecordStore(path: path)
        self.path = path
        storeID = store.storeID
        formatVersion = store.formatVersion
        bytes = FileSystem.size(of: path) ?? 0
        zones = try store.zones()
        counts = try store.typeCounts()
        journalCount = try store.journalCount()
        token = try store.currentToken()
        indexes = try store.fieldIndexes()
    }

    var recordCount: Int { counts.reduce(0) { $0 + $1.count } }

    var text: String {
        let liveZones = zones.filter { !$0.isDeleted }.count
        var lines = ["\(path): Ferry store, format \(formatVersion), store \(storeID), \(bytes) bytes (SQLite \(RecordStore.sqliteVersion))",
                     "\(Plural.count(recordCount, "record")) in \(Plural.count(liveZones, "zone")), \(Plural.count(journalCount, "journal entry", plural: "journal entries")), token \(token)", ""]
        var rows = [["DATABASE", "ZONE", "OWNER", "RECORDS", "TYPES", "CHANGE TOKEN"]]
        for zone in zones {
            let types = counts.filter { $0.database == zone.database && $0.zoneName == zone.zoneID.zoneName && $0.ownerRecordName == zone.zoneID.ownerRecordName }
                .map { "\($0.recordType ?? "(none)") \($0.count)" }.joined(separator: ", ")
            rows.append([zone.database, zone.zoneID.zoneName + (zone.isDeleted ? " (deleted)" : ""), zone.zoneID.ownerRecordName ?? "-",
                         String(zone.recordCount), types.isEmpty ? "-" : types, zone.syncToken ?? "-"])
        }
        lines += table(rows)
        if !indexes.isEmpty {
            lines.append("")
            lines += table([["INDEX", "TYPE", "FIELD", "KIND"]] + indexes.map { [$0.name, $0.recordType, $0.fieldName, $0.kind] })
        }
        return lines.joined(separator: "\n") + "\n"
    }

    var json: JSONValue {
        .object([
            "path": .string(path), "storeID": .string(storeID), "formatVersion": .number(JSONNumber(Int64(formatVersion))),
            "bytes": .number(JSONNumber(Int64(bytes))), "records": .number(JSONNumber(Int64(recordCount))),
            "journalEntries": .number(JSONNumber(Int64(journalCount))), "token": .string(token.description),
            "zones": .array(zones.map { zone in
                var object: JSONObject = ["database": .string(zone.database), "zoneID": .string(zone.zoneID.zoneName),
                                          "records": .number(JSONNumber(Int64(zone.recordCount))), "deleted": .bool(zone.isDeleted)]
                if let owner = zone.zoneID.ownerRecordName { object.append(key: "ownerRecordName", value: .string(owner)) }
                if let token = zone.syncToken { object.append(key: "syncToken", value: .string(token)) }
                object.append(key: "recordTypes", value: .object(JSONObject(counts.filter {
                    $0.database == zone.database && $0.zoneName == zone.zoneID.zoneName && $0.ownerRecordName == zone.zoneID.ownerRecordName
                }.map { .init(key: $0.recordType ?? "", value: .number(JSONNumber(Int64($0.count)))) })))
                return .object(object)
            }),
            "indexes": .array(indexes.map { .object(["name": .string($0.name), "recordType": .string($0.recordType),
                                                     "field": .string($0.fieldName), "kind": .string($0.kind)]) }),
        ])
    }
}

extension StoreReplayer.Configuration.TransactionUnit: ExpressibleByArgument {}
