import FerryChangeLog
import FerryRecords

extension RecordStore {
    /// One change of the journal, as a change-log event with its place.
    public struct JournalChange: Sendable {
        /// The journal sequence number.
        public var sequence: Int64
        /// The database of the zone.
        public var database: String
        /// The zone, as the store keeps its ID.
        public var zoneID: ZoneID
        /// The change: a zone saved, deleted or purged, a record saved (its current version) or deleted.
        public var event: ChangeEvent
    }

    /// Calls `body` with each change after `token` (all when `nil`) in journal order, as
    /// CloudKit's change feeds give them: a record saved several times is given once, at its last
    /// save, with its current contents; deletions and zone changes are given as they happened.
    /// Returns the store's token after the last change: pass it next time.
    ///
    /// - Throws: ``StoreError/Code-swift.enum/invalidToken`` for a token of another store, or one
    ///   beyond the journal's end.
    ///
    /// With `database`, only the changes of that database's zones.
    @discardableResult
    public func changes(since token: StoreToken?, database: String? = nil, _ body: (JournalChange) throws -> Void) throws -> StoreToken {
        try changes(since: token, database: database, inZones: nil) { change in
            try body(change)
            return true
        }.token
    }

    /// A page of a change feed: the changes after `token` of the zones `inZones` accepts (every
    /// zone when `nil`), in journal order as ``changes(since:database:_:)`` gives them, until
    /// `body` returns `false`. The journal is read only as far as the page needs, so paging
    /// through a feed costs what its pages hold, not the journal's length after each token.
    /// Returns the store's token after its last change, and whether `body` stopped the reading.
    @discardableResult
    public func changes(since token: StoreToken?, database: String? = nil, inZones accepts: ((ZoneID) -> Bool)?,
                        _ body: (JournalChange) throws -> Bool) throws -> (token: StoreToken, stopped: Bool) {
        let start = try validate(token)
        try connection.execute("BEGIN")
        defer { if !connection.isAutocommit { try? connection.execute("COMMIT") } }
        let end = try currentToken()
        let zones = try zoneTable()
        // The zones asked for, by row ID (integers written into the SQL; none: no row matches).
        var zoneFilter = ""
        if let accepts {
            let ids = zones.filter { accepts($0.value.zoneID) }.keys.sorted().map(String.init)
            zoneFilter = " AND j.zone_id IN (\(ids.isEmpty ? "NULL" : ids.joined(separator: ",")))"
        }
        let statement = try connection.prepare("""
            SELECT j.seq, j.zone_id, j.kind, j.record_name, j.record_type, r.seq, r.body
            FROM journal j LEFT JOIN records r ON r.zone_id = j.zone_id AND r.record_name = j.record_name
                                               AND j.kind IN ('created', 'modified')
            WHERE j.seq > ?1 AND (?2 IS NULL OR j.zone_id IN (SELECT id FROM zones WHERE database_id = ?2))\(zoneFilter) ORDER BY j.seq
            """)
        try statement.bind(start, at: 1)
        try statement.bind(try database.map(StoreCodec.databaseID), at: 2)
        while try statement.step() {
            let seq = statement.int64(at: 0)
            guard let zone = zones[statement.int64(at: 1)] else {
                throw StoreError(.corrupt, "the journal entry \(seq) names the zone \(statement.int64(at: 1)), which the store lacks", path: path)
            }
            let event: ChangeEvent
            switch statement.text(at: 2) ?? "" {
            case "created", "modified":
                // Only a record's last save is given, with what it holds now.
                guard statement.optionalInt64(at: 5) == seq else { continue }
                event = .recordSaved(try StoreCodec.record(fromBody: statement.textBytes(at: 6), path: path))
            case "deleted":
                event = .recordDeleted(RecordID(recordName: statement.text(at: 3) ?? "", zoneID: zone.zoneID), recordType: statement.text(at: 4))
            case "zoneSaved": event = .zoneSaved(zone.zoneID)
            case "zoneDeleted": event = .zoneDeleted(zone.zoneID)
            case "zonePurged": event = .zonePurged(zone.zoneID)
            case let kind:
                throw StoreError(.corrupt, "expected a journal kind (created, modified, deleted, zoneSaved, zoneDeleted, zonePurged), found \"\(kind)\" at \(seq)", path: path)
            }
            guard try body(JournalChange(sequence: seq, database: zone.database, zoneID: zone.zoneID, event: event)) else {
                return (end, true)
            }
        }
        return (end, false)
    }

    /// Writes the changes after `token` as a Ferry change log (`Docs/ChangeLogFormat.md`), closed by
    /// a checkpoint for every zone with a change, carrying the store's token: the log replays into
    /// the same records, and the token continues it.
    ///
    /// With `checkpointEach`, every change is followed by a checkpoint of its zone carrying the
    /// store's token at that change (how an archive keeps a store's journal, to restore it).
    @discardableResult
    public func writeChanges(since token: StoreToken?, database: String? = nil, to writer: ChangeLogWriter,
                             checkpointEach: Bool = false) throws -> StoreToken {
        var touched: [ZoneID] = []
        var seen = Set<String>()
        // With checkpointEach, the upstream checkpoints the store applied go at their places too,
        // so a store restored from the log knows every token it applied (and a replay of the same
        // history changes nothing).
        var upstream = checkpointEach ? try upstreamCheckpoints(database: database) : []
        var nextUpstream = 0
        func writeUpstream(through sequence: Int64) throws {
            while nextUpstream < upstream.count, upstream[nextUpstream].sequence <= sequence {
                try writer.write(.checkpoint(upstream[nextUpstream].checkpoint))
                nextUpstream += 1
            }
        }
        let end = try changes(since: token, database: database) { change in
            if checkpointEach { try writeUpstream(through: change.sequence - 1) }
            try writer.write(change.event)
            let zone = change.zoneID
            if checkpointEach {
                try writer.write(.checkpoint(.init(zoneID: zone, syncToken: StoreToken(storeID: storeID, sequence: change.sequence).description)))
            }
            if seen.insert(change.database + "\u{0}" + zone.zoneName + "\u{0}" + (zone.ownerRecordName ?? "")).inserted { touched.append(zone) }
        }
        if checkpointEach {
            try writeUpstream(through: .max)
            upstream.removeAll()
        } else {
            for zone in touched { try writer.write(.checkpoint(.init(zoneID: zone, syncToken: end.description))) }
        }
        return end
    }

    /// The upstream checkpoints the store applied (CloudKit's tokens), in the order applied, with
    /// the journal position of each.
    func upstreamCheckpoints(database: String?) throws -> [(sequence: Int64, checkpoint: ChangeEvent.Checkpoint)] {
        let zones = try zoneTable()
        let statement = try connection.prepare("""
            SELECT seq, zone_id, sync_token, more_coming FROM checkpoints WHERE ?1 IS NULL OR database_id = ?1 ORDER BY seq, id
            """)
        try statement.bind(try database.map(StoreCodec.databaseID), at: 1)
        var result: [(Int64, ChangeEvent.Checkpoint)] = []
        while try statement.step() {
            let zone = statement.int64(at: 1)
            result.append((statement.int64(at: 0), ChangeEvent.Checkpoint(zoneID: zone == 0 ? nil : zones[zone]?.zoneID,
                                                                          syncToken: statement.text(at: 2) ?? "",
                                                                          moreComing: statement.int64(at: 3) != 0)))
        }
        return result
    }

    /// The journal position a token names, checked against this store.
    func validate(_ token: StoreToken?) throws -> Int64 {
        guard let token else { return 0 }
        guard token.storeID == storeID else {
            throw StoreError(.invalidToken, "expected a token of this store (fs1.\(storeID).…), found \(token): it belongs to another store", path: path)
        }
        let end = try currentToken()
        guard token.sequence <= end.sequence else {
            throw StoreError(.invalidToken, "expected a token at most \(end), found \(token): the journal ends before it", path: path)
        }
        return token.sequence
    }

    /// Every zone by row id: its zone ID and database.
    func zoneTable() throws -> [Int64: (zoneID: ZoneID, database: String)] {
        let statement = try connection.prepare("SELECT z.id, z.zone_json, z.database_id FROM zones z")
        var zones: [Int64: (ZoneID, String)] = [:]
        while try statement.step() {
            zones[statement.int64(at: 0)] = (try StoreCodec.zoneID(fromJSON: statement.textBytes(at: 1)),
                                            StoreCodec.databaseName(statement.int64(at: 2)))
        }
        return zones
    }
}
