import FerryArchive
import FerryChangeLog
import FerryIO
import FerryStore

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
            throw FerryError.data("cannot make a temporary folder for the store's journal in \(FileSystem.temporaryDirectory)")
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
