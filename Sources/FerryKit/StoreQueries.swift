import FerryIO
import FerryInternals
import FerryRecords
import FerryStore

/// A store's records read as CloudKit gives them, as `ferry query` and `ferry fetch` print them:
/// a page of a query (NDJSON, or one `records/query` response with its continuation marker) and
/// records looked up by name (NDJSON, or one `records/lookup` response with `NOT_FOUND` entries).
///
/// ```swift
/// let queries = try StoreQueries(path: "chat.sqlite")
/// let summary = try queries.writePage(StoreQuery(recordTypes: ["Message"], limit: 10), as: .response, to: "-")
/// ```
public struct StoreQueries {
    /// How records are written.
    public enum Form: Sendable {
        /// One record dictionary per line.
        case ndjson
        /// One CloudKit Web Services response (`records/query`, `records/lookup`).
        case response
    }

    /// The store read.
    public let store: RecordStore

    /// Queries on the store at `path`.
    ///
    /// - Throws: ``FerryError`` when it is not a store or cannot be opened.
    public init(path: String) throws(FerryError) {
        store = try FerryError.catching { try RecordStore(path: path) }
    }

    /// Queries on an open store.
    public init(store: RecordStore) {
        self.store = store
    }

    /// The page `query` asks for, decoded: its records, and the cursor of the next page when
    /// more records follow.
    ///
    /// - Throws: ``FerryError`` for a bad cursor or a record whose stored JSON was damaged.
    public func page(_ query: StoreQuery) throws(FerryError) -> (records: [Record], cursor: String?) {
        try FerryError.catching {
            let page = try store.query(query)
            return (try page.records(), page.continuationMarker)
        }
    }

    /// Writes the page `query` asks for to the file at `path` (`-` is standard output), each
    /// record's JSON as the store keeps it, and returns what was written. The file appears only
    /// when all of it was written.
    ///
    /// - Throws: ``FerryError`` for a bad cursor, a record whose stored JSON was damaged, and
    ///   failures to write.
    public func writePage(_ query: StoreQuery, as form: Form = .ndjson, to path: String = "-") throws(FerryError) -> QueryPageSummary {
        try FerryError.catching {
            let output = try OutputFile(path: path)
            let response = form == .response
            var count = 0
            if response { try output.write("{\"records\":[") }
            let (next, failures) = try store.forEachMatch(query) { json in
                if response && count > 0 { try output.write(",") }
                try output.write(json)
                if !response { try output.write("\n") }
                count += 1
                return true
            }
            if response {
                var tail = JSONOutput(capacity: 256)
                tail.append("]")
                if let next {
                    tail.append(",\"continuationMarker\":")
                    tail.appendString(next)
                }
                tail.append("}\n")
                try output.write(tail.bytes)
            }
            try output.commit()
            return QueryPageSummary(recordCount: count, cursor: next, unevaluatedCount: failures)
        }
    }

    /// How `query` runs, as `ferry query --explain` prints it: the SQL, SQLite's plan, what is
    /// pushed into SQL and what Swift evaluates.
    public func explain(_ query: StoreQuery) throws(FerryError) -> String {
        let explanation = try FerryError.catching { try store.explain(query) }
        var lines = ["SQL:", "  " + explanation.sql]
        if !explanation.parameters.isEmpty { lines.append("  parameters: " + explanation.parameters.joined(separator: ", ")) }
        lines.append("SQLite's plan:")
        lines += explanation.plan.map { "  " + $0 }
        lines.append("Pushed into SQL:")
        lines += explanation.pushedDown.isEmpty ? ["  (nothing)"] : explanation.pushedDown.map { "  " + $0 }
        lines.append("Evaluated in Swift on the rows SQL returns:")
        if explanation.usesCompiledFilter {
            lines += explanation.evaluatedInSwift.map { "  " + $0 }
            lines.append("  (the compiled filter runs on the whole predicate for each candidate)")
        } else {
            lines.append("  (nothing: the SQL condition is exact)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the records named `names` (of `zone`, default `_defaultZone`; of `database`, or any)
    /// to the file at `path` (`-` is standard output), in the order asked, and returns the names
    /// not found. As a response, a name not found is a `NOT_FOUND` entry in its place.
    ///
    /// - Throws: ``FerryError`` for a record whose stored JSON was damaged, and failures to write.
    public func writeLookup(names: [String], zone: String? = nil, database: String? = nil, desiredKeys: [String]? = nil,
                            as form: Form = .ndjson, to path: String = "-") throws(FerryError) -> LookupSummary {
        try FerryError.catching {
            let result = try store.fetch(names: names, zone: zone, database: database, desiredKeys: desiredKeys)
            let output = try OutputFile(path: path)
            let summary = LookupSummary(requestedCount: names.count, missing: result.missing)
            guard form == .response else {
                for json in result.recordsJSON {
                    try json.withUnsafeBytes { try output.write($0) }
                    try output.write("\n")
                }
                try output.commit()
                return summary
            }
            var out = JSONOutput()
            out.append("{\"records\":[")
            var found = result.recordsJSON.makeIterator()
            let missing = Set(result.missing)
            for (index, name) in names.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if missing.contains(name) {
                    out.append("{\"recordName\":")
                    out.appendString(name)
                    out.append(",\"reason\":\"Record not found\",\"serverErrorCode\":\"NOT_FOUND\"}")
                } else if let json = found.next() {
                    json.withUnsafeBytes { out.append($0) }
                }
            }
            out.append("]}\n")
            try output.write(out.bytes)
            try output.commit()
            return summary
        }
    }
}

/// What ``StoreQueries/writePage(_:as:to:)`` wrote, with the summary `ferry query` prints.
public struct QueryPageSummary: Sendable {
    /// Records written.
    public var recordCount: Int
    /// The cursor of the next page, when more records follow.
    public var cursor: String?
    /// Records the predicate could not be evaluated on (they do not match).
    public var unevaluatedCount: Int

    /// `N records; next page: --cursor C`.
    public var line: String {
        Plural.count(recordCount, "record") + (cursor.map { "; next page: --cursor \($0)" } ?? "")
    }

    /// What is said of records the predicate could not be evaluated on; `nil` when there were none.
    public var unevaluatedNote: String? {
        unevaluatedCount > 0 ? "\(Plural.count(unevaluatedCount, "record")) could not be evaluated (they do not match)" : nil
    }

    /// The summary as one JSON object: records, cursor, unevaluated.
    public var json: String {
        JSONValue.object(["records": recordCount.json, "cursor": cursor.map(JSONValue.string) ?? .null,
                          "unevaluated": unevaluatedCount.json]).compactText
    }
}

/// What ``StoreQueries/writeLookup(names:zone:database:desiredKeys:as:to:)`` found.
public struct LookupSummary: Sendable {
    /// Names asked for.
    public var requestedCount: Int
    /// Names the store does not hold, in the order asked.
    public var missing: [String]

    /// `N of M records not found`, when some were not; `nil` when all were.
    public var failure: String? {
        missing.isEmpty ? nil : "\(missing.count) of \(Plural.count(requestedCount, "record")) not found"
    }
}
