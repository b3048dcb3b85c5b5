import FerryRecords

extension RecordStore {
    /// What ``verify(deep:)`` found.
    public struct Verification: Sendable {
        /// Problems found, each a sentence naming what was expected and what was found.
        public var problems: [String]
        /// Live records.
        public var recordCount: Int
        /// Zones, deleted ones included.
        public var zoneCount: Int
        /// Journal entries.
        public var journalCount: Int
        /// The store's token (its journal's end).
        public var token: StoreToken
        /// Whether nothing is wrong.
        public var isIntact: Bool { problems.isEmpty }
    }

    /// Checks the store: SQLite's `PRAGMA integrity_check`, then Ferry's invariants — every
    /// record in a live zone, each zone's count of records, each record's journal entry (its
    /// latest change, of its zone and name), each zone's latest change, known journal kinds,
    /// checkpoints of known zones. With `deep`, every record's JSON is also decoded and compared
    /// with its columns. Reads in one transaction; changes nothing.
    public func verify(deep: Bool = false) throws -> Verification {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        var problems: [String] = []
        let integrity = try connection.prepare("PRAGMA integrity_check(20)")
        var integrityRows: [String] = []
        while try integrity.step() { integrityRows.append(integrity.text(at: 0) ?? "") }
        if integrityRows != ["ok"] {
            problems += integrityRows.map { "SQLite's integrity check: " + $0 }
        }
        func count(_ sql: String) throws -> Int64 { try connection.integer(sql) ?? 0 }
        func check(_ sql: String, _ describe: (Int64) -> String) throws {
            let n = try count(sql)
            if n != 0 { problems.append(describe(n)) }
        }
        try check("SELECT count(*) FROM records WHERE zone_id NOT IN (SELECT id FROM zones)") {
            "expected every record in a zone of the store, found \($0) records whose zone is missing"
        }
        try check("SELECT count(*) FROM records WHERE zone_id IN (SELECT id FROM zones WHERE is_deleted <> 0)") {
            "expected no records in deleted zones, found \($0)"
        }
        let counts = try connection.prepare("""
            SELECT z.zone_name, z.record_count, coalesce(c.n, 0) FROM zones z
            LEFT JOIN (SELECT zone_id, count(*) AS n FROM records GROUP BY zone_id) c ON c.zone_id = z.id
            WHERE z.record_count <> coalesce(c.n, 0)
            """)
        while try counts.step() {
            problems.append("expected the zone \(counts.text(at: 0) ?? "") to hold \(counts.int64(at: 1)) records as zones.record_count "
                            + "says, found \(counts.int64(at: 2))")
        }
        try check("""
            SELECT count(*) FROM records r LEFT JOIN journal j ON j.seq = r.seq
            WHERE j.seq IS NULL OR j.zone_id <> r.zone_id OR j.record_name IS NOT r.record_name OR j.kind NOT IN ('created', 'modified')
            """) { "expected every record's seq to name its own creation or modification in the journal, found \($0) records that do not" }
        try check("""
            SELECT count(*) FROM journal j JOIN records r ON r.zone_id = j.zone_id AND r.record_name = j.record_name WHERE j.seq > r.seq
            """) { "expected each record's seq to be its latest change, found \($0) journal entries after the change records name" }
        try check("""
            SELECT count(*) FROM zones z LEFT JOIN (SELECT zone_id, max(seq) AS last FROM journal GROUP BY zone_id) j ON j.zone_id = z.id
            WHERE z.change_seq <> coalesce(j.last, 0)
            """) { "expected each zone's change_seq to be its latest journal entry, found \($0) zones where it is not" }
        try check("""
            SELECT count(*) FROM journal WHERE kind NOT IN ('created', 'modified', 'deleted', 'zoneSaved', 'zoneDeleted', 'zonePurged')
            """) { "expected journal kinds created, modified, deleted, zoneSaved, zoneDeleted, zonePurged, found \($0) other entries" }
        try check("SELECT count(*) FROM journal WHERE zone_id NOT IN (SELECT id FROM zones)") {
            "expected every journal entry to name a zone of the store, found \($0) that do not"
        }
        try check("SELECT count(*) FROM checkpoints WHERE zone_id <> 0 AND zone_id NOT IN (SELECT id FROM zones)") {
            "expected every checkpoint to name a zone of the store, found \($0) that do not"
        }
        try check("SELECT count(*) FROM records WHERE seq > (SELECT coalesce(max(seq), 0) FROM journal)") {
            "expected records' seq within the journal, found \($0) beyond its end"
        }
        if deep {
            let zones = try zoneTable()
            let rows = try connection.prepare("""
                SELECT zone_id, record_name, record_type, body, change_tag, created_at, created_by, modified_at, modified_by,
                       parent_name, share_name FROM records
                """)
            var reported = 0
            while try rows.step() {
                let name = rows.text(at: 1) ?? ""
                do {
                    let record = try StoreCodec.record(fromBody: rows.textBytes(at: 3), path: path)
                    let zone = zones[rows.int64(at: 0)]?.zoneID
                    func integer(_ column: Int32) -> Int64? { rows.type(at: column) == .null ? nil : rows.int64(at: column) }
                    var differing: [String] = []
                    if record.recordName != name { differing.append("name") }
                    if record.recordType != rows.text(at: 2) { differing.append("type") }
                    if (record.zoneID ?? .default).zoneName != zone?.zoneName { differing.append("zone") }
                    // A record saved without a tag gets one from the store.
                    if let tag = record.recordChangeTag, tag != rows.text(at: 4) { differing.append("change tag") }
                    if record.created?.timestamp != integer(5) || record.created?.userRecordName != rows.text(at: 6) {
                        differing.append("created")
                    }
                    if record.modified?.timestamp != integer(7) || record.modified?.userRecordName != rows.text(at: 8) {
                        differing.append("modified")
                    }
                    if record.parent?.recordName != rows.text(at: 9) { differing.append("parent") }
                    if record.share?.recordName != rows.text(at: 10) { differing.append("share") }
                    if !differing.isEmpty {
                        problems.append("expected the record \"\(name)\"'s JSON to agree with its columns, found it does not in: "
                                        + differing.joined(separator: ", "))
                        reported += 1
                    }
                } catch {
                    problems.append("expected the record \"\(name)\" to hold a valid record dictionary: \(error)")
                    reported += 1
                }
                if reported >= 20 { break }
            }
        }
        return Verification(problems: problems, recordCount: Int(try count("SELECT count(*) FROM records")),
                            zoneCount: Int(try count("SELECT count(*) FROM zones")),
                            journalCount: Int(try count("SELECT count(*) FROM journal")), token: try currentToken())
    }
}
