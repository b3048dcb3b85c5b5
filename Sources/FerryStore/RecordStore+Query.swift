import FerryPredicate
import FerryRecords

extension RecordStore {
    /// Runs a query and returns one page: at most ``StoreQuery/limit`` records in the query's
    /// order, and a cursor when more may follow.
    ///
    /// The predicate is pushed into SQL where that is exact or a safe narrowing (system fields,
    /// scalar fields, list membership; see `Docs/StoreFormat.md`); the compiled filter decides on
    /// the rows SQL returns, so the result is the records the predicate matches.
    public func query(_ query: StoreQuery) throws -> StoreQueryPage {
        let plan = try QueryPlan(query)
        let execution = try QueryExecution(plan: plan, store: self)
        let limit = query.limit ?? Int.max
        var page = StoreQueryPage(recordsJSON: [], continuationMarker: nil, evaluationFailures: 0)
        var lastCursor: String?
        while page.recordsJSON.count < limit, try execution.next() {
            page.recordsJSON.append(try json(ofBody: execution.body, rowID: execution.rowID, keys: query.desiredKeys))
            lastCursor = execution.cursorAfterCurrent
        }
        if page.recordsJSON.count == limit, limit > 0, try execution.next() {
            page.continuationMarker = lastCursor
        }
        page.evaluationFailures = execution.evaluationFailures
        page.firstEvaluationFailure = execution.firstEvaluationFailure
        return page
    }

    /// Calls `body` with each matching record's JSON (projected to the desired keys), in order,
    /// until it returns `false`; returns the cursor after the last record given when `body`
    /// stopped early or the limit was reached and more may follow. The bytes are valid only during
    /// the call.
    @discardableResult
    public func forEachMatch(_ query: StoreQuery, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> (cursor: String?, evaluationFailures: Int) {
        let plan = try QueryPlan(query)
        let execution = try QueryExecution(plan: plan, store: self)
        let limit = query.limit ?? Int.max
        var count = 0
        var cursor: String?
        while count < limit, try execution.next() {
            count += 1
            let keep: Bool
            if let keys = query.desiredKeys {
                let projected = Self.project(try execution.record(), keys: keys)
                keep = try projected.withUnsafeBytes { try body($0) }
            } else {
                keep = try body(try execution.checkedBody())
            }
            if !keep {
                return (execution.cursorAfterCurrent, execution.evaluationFailures)
            }
            cursor = execution.cursorAfterCurrent
        }
        if count == limit, limit > 0, try execution.next() { return (cursor, execution.evaluationFailures) }
        return (nil, execution.evaluationFailures)
    }

    /// How the query would run: its SQL, SQLite's plan (which index serves it) and what the
    /// compiled filter evaluates.
    public func explain(_ query: StoreQuery) throws -> StoreQueryExplanation {
        let plan = try QueryPlan(query)
        let statement = try connection.prepare(plan.sql)
        return StoreQueryExplanation(
            sql: plan.sql, parameters: plan.parameters.map(Self.describe),
            plan: try statement.queryPlan(parameters: plan.parameters),
            pushedDown: plan.pushdown.pushed, evaluatedInSwift: plan.pushdown.residual,
            usesCompiledFilter: plan.filter != nil)
    }

    static func describe(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let v): String(v)
        case .real(let v): String(v)
        case .text(let v): "'" + v.replacing("'", with: "''") + "'"
        case .textBytes(let v): "x'" + v.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "'"
        }
    }

    // MARK: Stored bodies

    /// Decodes the body stored in row `rowID` (``StoreCodec/record(fromBody:path:)``); a body
    /// damaged outside Ferry is refused with an error naming the file, the record and its zone.
    func record(fromBody body: UnsafeRawBufferPointer, rowID: Int64) throws -> Record {
        do {
            return try StoreCodec.record(fromBody: body, path: path)
        } catch let error as StoreError {
            throw locating(error, rowID: rowID)
        }
    }

    /// Checks the body stored in row `rowID` before it is handed on as stored, without decoding
    /// it (``StoreCodec/checkBody(_:path:)``); refuses a damaged body as
    /// ``record(fromBody:rowID:)`` does.
    func checkBody(_ body: UnsafeRawBufferPointer, rowID: Int64) throws {
        do {
            try StoreCodec.checkBody(body, path: path)
        } catch let error as StoreError {
            throw locating(error, rowID: rowID)
        }
    }

    /// The JSON to hand on for the body stored in row `rowID`: the body as stored, checked, or,
    /// given `keys`, the record with only those fields (system fields kept).
    func json(ofBody body: UnsafeRawBufferPointer, rowID: Int64, keys: [String]?) throws -> [UInt8] {
        guard let keys else {
            try checkBody(body, rowID: rowID)
            return Array(body)
        }
        return Self.project(try record(fromBody: body, rowID: rowID), keys: keys)
    }

    /// `record`'s compact JSON with only the fields named in `keys` (system fields kept).
    static func project(_ record: Record, keys: [String]) -> [UInt8] {
        var out = JSONOutput(capacity: 1024)
        RecordJSON.encode(projected(record, keys: keys), into: &out)
        return Array(out.bytes)
    }

    /// `record` with only the fields named in `keys` (system fields kept).
    static func projected(_ record: Record, keys: [String]) -> Record {
        var record = record
        if var fields = record.fields {
            let wanted = Set(keys)
            fields.entries.removeAll { !wanted.contains($0.name) }
            record.fields = fields
        }
        return record
    }

    // MARK: Fetch

    /// What ``fetch(names:zone:database:desiredKeys:)`` found.
    public struct FetchResult: Sendable {
        /// The records found, in the order asked, as compact JSON.
        public var recordsJSON: [[UInt8]]
        /// The names asked for that the zone does not hold, in the order asked.
        public var missing: [String]
    }

    /// Records by name (`CKFetchRecordsOperation`): from the zone named `zone` (any owner; the
    /// default zone when `nil`) of `database` (any when `nil`).
    public func fetch(names: [String], zone: String? = nil, database: String? = nil, desiredKeys: [String]? = nil) throws -> FetchResult {
        var sql = """
            SELECT r.body, r.id FROM records r JOIN zones z ON z.id = r.zone_id
            WHERE r.record_name = ?1 AND z.zone_name = ?2
            """
        if database != nil { sql += " AND z.database_id = ?3" }
        sql += " ORDER BY z.database_id, z.owner_record_name LIMIT 1"
        let statement = try preparedStatement(sql)
        var result = FetchResult(recordsJSON: [], missing: [])
        let databaseID = try database.map(StoreCodec.databaseID)
        for name in names {
            defer { statement.reset() }
            try statement.bind(name, at: 1)
            try statement.bind(zone ?? ZoneID.defaultZoneName, at: 2)
            if let databaseID { try statement.bind(databaseID, at: 3) }
            if try statement.step() {
                result.recordsJSON.append(try json(ofBody: statement.textBytes(at: 0), rowID: statement.int64(at: 1), keys: desiredKeys))
            } else {
                result.missing.append(name)
            }
        }
        return result
    }
}
