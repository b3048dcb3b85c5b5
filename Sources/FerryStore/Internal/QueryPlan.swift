import FerryPredicate
import FerryRecords

/// The SQL of a query: the filters on types and zones, the pushed-down predicate, the order and
/// the cursor's position; and the compiled filter for what SQL cannot decide.
struct QueryPlan {
    var sql: String
    var parameters: [SQLValue]
    /// SQL expressions of the sort keys, selected after `id` and `body`.
    var sortExpressions: [String]
    var pushdown: PredicatePushdown
    /// The compiled filter, when the SQL condition is not exact.
    var filter: RecordFilter?
    /// A `LIMIT` was put in the SQL (exact conditions only): one more than the page, to see
    /// whether another page follows.
    var sqlLimit: Int?
    let fingerprint: String

    init(_ query: StoreQuery) throws {
        fingerprint = query.fingerprint
        pushdown = PredicatePushdown(query.predicate)
        if let predicate = query.predicate, !pushdown.isExact {
            do {
                filter = try RecordFilter(predicate)
            } catch {
                throw StoreError(.invalidArgument, "cannot compile the predicate: \(error)", underlying: error)
            }
        }
        var conditions: [String] = []
        parameters = []
        if !query.recordTypes.isEmpty {
            // Literals, not parameters: SQLite uses a partial index (`WHERE record_type = 'T'`, as
            // `ferry index` makes them) only when the query's condition names the same literal.
            conditions.append(Self.typeCondition(query.recordTypes))
        }
        if !query.zoneNames.isEmpty || query.database != nil {
            var zone: [String] = []
            if !query.zoneNames.isEmpty {
                zone.append("zone_name IN (\(Self.marks(query.zoneNames.count)))")
                parameters += query.zoneNames.map(SQLValue.text)
            }
            if let database = query.database {
                zone.append("database_id = ?")
                parameters.append(.integer(try StoreCodec.databaseID(database)))
            }
            conditions.append("r.zone_id IN (SELECT id FROM zones WHERE \(zone.joined(separator: " AND ")))")
        }
        if pushdown.sql != "1" {
            conditions.append(pushdown.sql)
            parameters += pushdown.parameters
        }
        sortExpressions = try query.sortKeys.map(Self.expression)
        if let text = query.cursor {
            let cursor = try QueryCursor(parsing: text, fingerprint: fingerprint, sortCount: sortExpressions.count)
            let (condition, values) = Self.after(cursor, sortExpressions, query.sortKeys)
            conditions.append(condition)
            parameters += values
        }
        var sql = "SELECT r.id, r.body" + sortExpressions.map { ", " + $0 }.joined() + ", r.zone_id FROM records r"
        if !conditions.isEmpty {
            if sortExpressions.isEmpty && query.limit == nil && query.cursor == nil {
                // All matches in stored order: the ids are found first, by whatever index serves the
                // conditions best, then the rows read in id order (no sort of the rows, and no scan of
                // the table for the order's sake).
                sql += " WHERE r.id IN (SELECT r.id FROM records r WHERE " + conditions.joined(separator: " AND ") + ")"
            } else {
                sql += " WHERE " + conditions.joined(separator: " AND ")
            }
        }
        // Ties go in stored order, or its reverse after a descending last key, so that an index on
        // the key (which holds each value's rows in id order) gives the whole order, either way.
        let order = zip(sortExpressions, query.sortKeys).map { "\($0) \($1.ascending ? "ASC" : "DESC")" }
            + ["r.id " + (Self.tiesAscending(query.sortKeys) ? "ASC" : "DESC")]
        sql += " ORDER BY " + order.joined(separator: ", ")
        if filter == nil, let limit = query.limit {
            // One more row than the page tells whether more follow; a page of Int.max rows has
            // no more.
            let rows = limit == Int.max ? limit : limit + 1
            sqlLimit = rows
            sql += " LIMIT \(rows)"
        }
        self.sql = sql
    }

    /// Whether ties after the sort keys go in ascending row id order (not after a descending last key).
    static func tiesAscending(_ keys: [StoreSortKey]) -> Bool { keys.last?.ascending ?? true }

    static func marks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }

    /// `r.record_type = 'T'` (or `IN ('T', 'U')`) with the types as SQL literals.
    static func typeCondition(_ types: [String]) -> String {
        types.count == 1 ? "r.record_type = \(RecordStore.literal(types[0]))"
            : "r.record_type IN (\(types.map(RecordStore.literal).joined(separator: ", ")))"
    }

    /// The SQL value of a sort key.
    static func expression(_ key: StoreSortKey) throws -> String {
        switch key.key {
        case "recordName", "recordID": return "r.record_name"
        case "recordType": return "r.record_type"
        case "creationDate", "created": return "r.created_at"
        case "modificationDate", "modified": return "r.modified_at"
        case "recordChangeTag": return "r.change_tag"
        case "zoneName": return "(SELECT zone_name FROM zones WHERE id = r.zone_id)"
        default:
            guard let expression = StoreFieldPath.valueExpression(key.key) else {
                throw StoreError(.invalidArgument, "cannot sort by the field \"\(key.key)\": its name has quotes, backslashes or control characters")
            }
            return expression
        }
    }

    /// The condition "strictly after the cursor's position" in the query's order: ties on every
    /// sort key are broken by row id (``tiesAscending(_:)``). NULL sorts first ascending and last
    /// descending, as SQLite orders them.
    static func after(_ cursor: QueryCursor, _ expressions: [String], _ keys: [StoreSortKey]) -> (String, [SQLValue]) {
        var alternatives: [String] = []
        var parameters: [SQLValue] = []
        var equalPrefix: [String] = []
        var prefixParameters: [SQLValue] = []
        for (index, expression) in expressions.enumerated() {
            let value = cursor.sortValues[index]
            var beyond: String
            var beyondParameters: [SQLValue] = []
            switch (keys[index].ascending, value) {
            case (true, .null): beyond = "\(expression) IS NOT NULL"
            case (true, _): beyond = "\(expression) > ?"; beyondParameters = [value]
            case (false, .null): beyond = "0"
            case (false, _): beyond = "(\(expression) < ? OR \(expression) IS NULL)"; beyondParameters = [value]
            }
            alternatives.append((equalPrefix + [beyond]).joined(separator: " AND "))
            parameters += prefixParameters + beyondParameters
            equalPrefix.append("\(expression) IS ?")
            prefixParameters.append(value)
        }
        alternatives.append((equalPrefix + [tiesAscending(keys) ? "r.id > ?" : "r.id < ?"]).joined(separator: " AND "))
        parameters += prefixParameters + [.integer(cursor.rowID)]
        var condition = "(" + alternatives.map { "(" + $0 + ")" }.joined(separator: " OR ") + ")"
        // A bound SQLite can seek to in an index on the first key (ascending, not NULL).
        if let first = expressions.first, keys[0].ascending, cursor.sortValues[0] != .null {
            condition = "\(first) >= ? AND " + condition
            parameters.insert(cursor.sortValues[0], at: 0)
        }
        return (condition, parameters)
    }
}

/// Runs a plan: steps its statement and keeps the rows the compiled filter matches.
final class QueryExecution {
    let plan: QueryPlan
    /// The store read (for the file and the record a damaged body's error names).
    private let store: RecordStore
    private let statement: SQLiteStatement
    private let selection: FieldSelection?
    /// Rows SQL returned.
    private(set) var candidates = 0
    /// Rows whose evaluation failed (they do not match).
    private(set) var evaluationFailures = 0
    /// The first record the filter could not be evaluated on: its name and why.
    private(set) var firstFailure: (recordName: String, message: String)?
    /// ``firstFailure`` as one line: `record "NAME": MESSAGE`.
    var firstEvaluationFailure: String? {
        firstFailure.map { "record \(JSONOutput.literal($0.recordName)): \($0.message)" }
    }

    init(plan: QueryPlan, store: RecordStore) throws {
        self.plan = plan
        self.store = store
        statement = try store.connection.prepare(plan.sql)
        try statement.bind(plan.parameters)
        selection = plan.filter?.fieldSelection
    }

    /// Moves to the next matching row; `false` at the end. The row's columns are valid until the
    /// next call.
    func next() throws -> Bool {
        while try step() {
            candidates += 1
            guard let filter = plan.filter else { return true }
            let body = statement.textBytes(at: 1)
            // A body that does not decode is a damaged store, not a record the predicate cannot
            // be evaluated on.
            let record: Record
            do throws(RecordFormatError) {
                if let selection {
                    record = try RecordJSON.decodeRecord(body, selecting: selection)
                } else {
                    record = try RecordJSON.decodeRecord(body)
                }
            } catch {
                throw store.locating(StoreCodec.damagedBody(error, path: store.path), rowID: rowID)
            }
            do {
                if try filter.matches(record) { return true }
            } catch {
                evaluationFailures += 1
                if firstFailure == nil { firstFailure = (record.recordName, error.message) }
            }
        }
        return false
    }

    /// Steps the statement. SQL that reads a body (a pushed-down predicate, a sort key) fails on
    /// a damaged one with SQLite's bare `malformed JSON`: the first such body is then found and
    /// reported as every reader reports it, naming the record.
    private func step() throws -> Bool {
        do {
            return try statement.step()
        } catch let error as StoreError where error.sqliteCode == 1 && (error.sqliteMessage ?? "").contains("malformed JSON") {
            throw store.firstDamagedBody() ?? error
        }
    }

    /// The current row's id.
    var rowID: Int64 { statement.int64(at: 0) }
    /// The current row's record JSON (valid until the next call).
    var body: UnsafeRawBufferPointer { statement.textBytes(at: 1) }
    /// The current row's record, decoded (``RecordStore/record(fromBody:rowID:)``).
    func record() throws -> Record { try store.record(fromBody: body, rowID: rowID) }
    /// The current row's record JSON, checked for handing on as stored
    /// (``RecordStore/checkBody(_:rowID:)``); valid until the next call.
    func checkedBody() throws -> UnsafeRawBufferPointer {
        let body = body
        try store.checkBody(body, rowID: rowID)
        return body
    }
    /// The current row's zone (its row id).
    var zoneRowID: Int64 { statement.int64(at: Int32(plan.sortExpressions.count + 2)) }
    /// The current row's sort values.
    var sortValues: [SQLValue] { (0..<plan.sortExpressions.count).map { statement.value(at: Int32($0 + 2)) } }

    /// The cursor positioned after the current row.
    var cursorAfterCurrent: String {
        QueryCursor(fingerprint: plan.fingerprint, sortValues: sortValues, rowID: rowID).encoded
    }
}
