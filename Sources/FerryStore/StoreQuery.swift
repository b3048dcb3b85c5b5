import FerryPredicate
import FerryRecords

/// A query of a store's records, as `CKQueryOperation` asks one: a record type, zones, a
/// predicate, sort keys, desired keys, a page size and a continuation cursor.
///
/// ```swift
/// var query = StoreQuery(recordTypes: ["Message"], predicate: try RecordPredicate(parsing: "count > 50"))
/// query.sortKeys = [StoreSortKey(parsing: "sentAt:desc")!]
/// query.limit = 100
/// let page = try store.query(query)            // page.continuationMarker → query.cursor for the next
/// ```
public struct StoreQuery: Sendable, Equatable {
    /// Keep only records of these types (all when empty).
    public var recordTypes: [String]
    /// Keep only records in zones of these names (all when empty).
    public var zoneNames: [String]
    /// Keep only records of this database (`public`, `private`, `shared`; all when `nil`).
    public var database: String?
    /// Keep only records the predicate matches. A record the predicate cannot be evaluated on
    /// (comparing a string with a number, say) does not match; ``StoreQueryPage/evaluationFailures``
    /// counts them.
    public var predicate: RecordPredicate?
    /// The order: each key a field or system key (`recordName`, `recordType`, `creationDate`,
    /// `modificationDate`, `recordChangeTag`), ties broken by the order records were stored.
    public var sortKeys: [StoreSortKey]
    /// The fields to return (system fields are always returned); all when `nil`.
    public var desiredKeys: [String]?
    /// The most records in a page; all when `nil`.
    public var limit: Int?
    /// The ``StoreQueryPage/continuationMarker`` of the previous page of the same query.
    public var cursor: String?

    /// Creates a query.
    public init(recordTypes: [String] = [], zoneNames: [String] = [], database: String? = nil, predicate: RecordPredicate? = nil,
                sortKeys: [StoreSortKey] = [], desiredKeys: [String]? = nil, limit: Int? = nil, cursor: String? = nil) {
        self.recordTypes = recordTypes
        self.zoneNames = zoneNames
        self.database = database
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.desiredKeys = desiredKeys
        self.limit = limit
        self.cursor = cursor
    }

    /// What identifies the query for its cursors: everything but the limit, the keys and the cursor.
    var fingerprint: String {
        var text = "types=" + recordTypes.sorted().joined(separator: "\u{1}")
        text += "\u{0}zones=" + zoneNames.sorted().joined(separator: "\u{1}")
        text += "\u{0}db=" + (database ?? "")
        text += "\u{0}where=" + (predicate?.predicateFormat ?? "")
        text += "\u{0}sort=" + sortKeys.map { $0.key + ($0.ascending ? ":asc" : ":desc") }.joined(separator: "\u{1}")
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// A sort key: a field or system key, ascending or descending.
public struct StoreSortKey: Sendable, Hashable {
    /// The field or system key.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Creates a sort key.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// Parses `key`, `key:asc` or `key:desc`; `nil` for anything else.
    public init?(parsing text: String) {
        var name = Substring(text)
        ascending = true
        if let colon = text.lastIndex(of: ":") {
            switch text[text.index(after: colon)...].lowercased() {
            case "asc": ascending = true
            case "desc": ascending = false
            default: return nil
            }
            name = text[..<colon]
        }
        guard !name.isEmpty else { return nil }
        key = String(name)
    }
}

/// One page of a query's results.
public struct StoreQueryPage: Sendable {
    /// The records of the page, each as compact CKWS JSON (only the desired fields, when given).
    public var recordsJSON: [[UInt8]]
    /// Pass as ``StoreQuery/cursor`` to get the next page; `nil` when this page is the last.
    public var continuationMarker: String?
    /// Records skipped because the predicate could not be evaluated on them.
    public var evaluationFailures: Int
    /// The first such failure, described.
    public var firstEvaluationFailure: String?

    /// The records of the page, decoded.
    public func records() throws -> [Record] {
        try recordsJSON.map { json in try json.withUnsafeBytes { try StoreCodec.record(fromBody: $0, path: nil) } }
    }
}

/// How a query is run: the SQL, SQLite's plan (which index), and what is evaluated in Swift.
public struct StoreQueryExplanation: Sendable {
    /// The SQL statement.
    public var sql: String
    /// The parameters bound to it, as text.
    public var parameters: [String]
    /// SQLite's `EXPLAIN QUERY PLAN`, one step per line.
    public var plan: [String]
    /// Parts of the predicate turned into SQL.
    public var pushedDown: [String]
    /// Parts of the predicate the compiled filter evaluates on the rows SQL returns (a pushed
    /// part that only narrows the candidates appears in both lists).
    public var evaluatedInSwift: [String]
    /// Whether the compiled filter runs at all.
    public var usesCompiledFilter: Bool
}
