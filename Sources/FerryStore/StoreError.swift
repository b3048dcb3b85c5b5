import FerryRecords

/// A store that cannot be opened, read or written: what was expected, what was found, where, and
/// SQLite's code and message when SQLite said so.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of problem, stable for scripts.
    public enum Code: String, Sendable {
        /// The file is not a Ferry store (not SQLite, or SQLite without Ferry's marker).
        case notAStore
        /// SQLite reports the file damaged, or Ferry's invariants do not hold.
        case corrupt
        /// The store was written by a newer Ferry (its format version is higher than this one knows).
        case newerFormat
        /// Another connection holds the write lock beyond the busy timeout.
        case busy
        /// The file or its folder cannot be written.
        case readOnly
        /// An insert met a record that exists (`--mode insert`).
        case conflict
        /// A zone, record or token that the store does not hold.
        case notFound
        /// A continuation cursor that is malformed or belongs to another query.
        case invalidCursor
        /// A change token that is malformed or belongs to another store.
        case invalidToken
        /// A record that cannot be stored or read back (its JSON, its name).
        case invalidRecord
        /// A request that makes no sense (an empty name, an unknown database).
        case invalidArgument
        /// A file operation failed.
        case io
        /// Any other SQLite failure.
        case sqlite
    }

    /// The kind of problem.
    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// The store file.
    public var path: String?
    /// SQLite's extended result code, when SQLite failed.
    public var sqliteCode: Int32?
    /// SQLite's message (`sqlite3_errmsg`), when SQLite failed.
    public var sqliteMessage: String?
    /// The statement that failed, when one did.
    public var sql: String?
    /// The record concerned, when one is.
    public var recordName: String?
    /// The error underneath (a record's JSON error, a file error), described.
    public var underlying: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, path: String? = nil, recordName: String? = nil,
                underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.recordName = recordName
        self.underlying = underlying.map { String(describing: $0) }
    }

    /// An error from a SQLite call.
    init(_ code: Code, _ message: String, path: String?, sqliteCode: SQLiteCode, sqliteMessage: String? = nil, sql: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.sqliteCode = sqliteCode.rawValue
        self.sqliteMessage = sqliteMessage
        self.sql = sql
    }

    /// `path: message (SQLite code N, name)`.
    public var description: String {
        var text = (path.map { $0 + ": " } ?? "") + message
        if let recordName {
            let quoted = JSONOutput.literal(recordName)
            if !message.contains(quoted) { text += " (record \(quoted))" }
        }
        if let sqliteCode { text += " [SQLite \(sqliteCode): \(SQLiteCode(rawValue: sqliteCode))]" }
        if let underlying, !message.contains(underlying) { text += ": " + underlying }
        return text
    }

    /// The same error about another file (a temporary file's errors name the target).
    func at(_ path: String) -> StoreError {
        var copy = self
        copy.path = path
        return copy
    }
}
