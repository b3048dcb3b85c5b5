import CSQLite
import FerryIO
import FerryInternals

// The only file of FerryStore that calls SQLite's C API. Each `sqlite3*` is owned by one
// `SQLiteConnection`, each `sqlite3_stmt*` by one `SQLiteStatement`; each finalizes its handle in
// `deinit`, and a statement keeps its connection alive, so a connection is never closed under a
// statement. Every return code is checked at the call and turned into a ``StoreError`` carrying
// the code, SQLite's message and the SQL or file it came from.

/// A result code of SQLite (`SQLITE_OK`, `SQLITE_BUSY`, extended codes such as
/// `SQLITE_CONSTRAINT_UNIQUE`), with its name as `sqlite3_errstr` gives it.
package struct SQLiteCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    package var primary: Int32 { rawValue & 0xFF }

    package static let ok = SQLiteCode(rawValue: SQLITE_OK)
    package static let busy = SQLiteCode(rawValue: SQLITE_BUSY)
    package static let locked = SQLiteCode(rawValue: SQLITE_LOCKED)
    package static let constraint = SQLiteCode(rawValue: SQLITE_CONSTRAINT)
    package static let corrupt = SQLiteCode(rawValue: SQLITE_CORRUPT)
    package static let notADatabase = SQLiteCode(rawValue: SQLITE_NOTADB)
    package static let readOnly = SQLiteCode(rawValue: SQLITE_READONLY)
    package static let cantOpen = SQLiteCode(rawValue: SQLITE_CANTOPEN)
    package static let full = SQLiteCode(rawValue: SQLITE_FULL)
    package static let interrupt = SQLiteCode(rawValue: SQLITE_INTERRUPT)

    /// SQLite's English name of the code (`sqlite3_errstr`).
    package var description: String { String(cString: sqlite3_errstr(rawValue)) }
}

/// The storage class of a column value (`sqlite3_column_type`).
enum SQLiteType {
    case integer, real, text, blob, null
}

/// One connection to a database file (`sqlite3_open_v2`), closed in `deinit` (`sqlite3_close_v2`).
///
/// Not thread-safe (opened with `SQLITE_OPEN_NOMUTEX`): one thread uses a connection at a time.
final class SQLiteConnection {
    /// How a file is opened.
    struct OpenMode: Sendable {
        var readOnly = false
        var create = false
        /// Read-only, with SQLite told the file cannot change (`immutable=1`: no locks, no WAL
        /// index): for a store in a folder no process may write, where SQLite can neither create
        /// the index nor see a writer.
        var immutable = false
        /// `SQLITE_OPEN_EXRESCODE`: extended result codes everywhere.
        static let readWrite = OpenMode()
        static let createIfMissing = OpenMode(create: true)
        static let readOnly = OpenMode(readOnly: true)
        static let immutable = OpenMode(readOnly: true, immutable: true)
    }

    /// SQLite's process-wide settings, made once before the first connection initializes it:
    /// no memory statistics (their mutex is taken on every allocation of every connection).
    private static let configured: Void = { _ = ferry_sqlite3_disable_memory_statistics() }()

    let handle: OpaquePointer
    /// The file, for messages.
    let path: String

    /// Opens `path`. Throws when SQLite cannot open it (the handle is closed then).
    init(path: String, mode: OpenMode) throws {
        _ = Self.configured
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= mode.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if mode.create && !mode.readOnly { flags |= SQLITE_OPEN_CREATE }
        var name = path
        if mode.immutable {
            flags |= SQLITE_OPEN_URI
            // `file://` and an absolute path (an empty authority), so that `//x` is not read as
            // the authority `x`.
            name = (path.hasPrefix("/") ? "file://" : "file:") + Self.uriPath(path) + "?immutable=1"
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard let db else {
            throw StoreError(.sqlite, "cannot open the store: out of memory", path: path, sqliteCode: SQLiteCode(rawValue: rc))
        }
        guard rc == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            sqlite3_close_v2(db)
            throw StoreError(Self.storeCode(for: SQLiteCode(rawValue: rc)), "cannot open the store: \(message)", path: path,
                             sqliteCode: SQLiteCode(rawValue: rc), sqliteMessage: message)
        }
        handle = db
        self.path = path
        fileKey = OpenStoreFiles.opened(path)
    }

    /// The file's identity while this connection holds it open (``OpenStoreFiles``).
    private let fileKey: FileSystem.FileKey?

    /// `path` for a `file:` URI: bytes other than letters, digits and `/-._~` percent-encoded.
    static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.digits(of: byte, width: 2)
            }
        }
        return out
    }

    deinit {
        sqlite3_close_v2(handle)
        if let fileKey { OpenStoreFiles.closed(fileKey) }
    }

    /// The ``StoreError/Code-swift.enum`` a SQLite code means.
    static func storeCode(for code: SQLiteCode) -> StoreError.Code {
        switch code.primary {
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_CORRUPT: .corrupt
        case SQLITE_NOTADB: .notAStore
        case SQLITE_READONLY: .readOnly
        case SQLITE_CONSTRAINT: .conflict
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_FULL: .io
        default: .sqlite
        }
    }

    /// The error for a failed call: SQLite's code and message, and what was being done.
    func error(_ rc: Int32, _ what: String, sql: String? = nil) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        let code = SQLiteCode(rawValue: rc)
        return StoreError(Self.storeCode(for: code), "\(what): \(message)", path: path, sqliteCode: code,
                          sqliteMessage: message, sql: sql)
    }

    /// Runs one or more statements that return no rows (`sqlite3_exec`).
    func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            let code = SQLiteCode(rawValue: rc)
            throw StoreError(Self.storeCode(for: code), message, path: path, sqliteCode: code, sqliteMessage: message, sql: sql)
        }
    }

    /// Compiles `sql` (`sqlite3_prepare_v3`); `persistent` for statements reused many times.
    func prepare(_ sql: String, persistent: Bool = false) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw error(rc, "cannot prepare a statement", sql: sql)
        }
        return SQLiteStatement(statement, connection: self, sql: sql)
    }

    /// Waits up to `milliseconds` for a lock held by another connection (`sqlite3_busy_timeout`).
    /// Waits up to `seconds` for another connection's lock (`sqlite3_busy_timeout`, in whole
    /// milliseconds): none for 0, less or NaN; at most `Int32.max` milliseconds (infinity too).
    func setBusyTimeout(seconds: Double) {
        let milliseconds = seconds * 1000
        let wait: Int32 = !(milliseconds > 0) ? 0 : milliseconds >= Double(Int32.max) ? .max : Int32(milliseconds)
        sqlite3_busy_timeout(handle, wait)
    }

    /// Rows changed by the latest INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the latest INSERT (`sqlite3_last_insert_rowid`).
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether no transaction is open (`sqlite3_get_autocommit`).
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// The single integer a query returns (a PRAGMA, a count); `nil` for no row or NULL.
    func integer(_ sql: String) throws -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.optionalInt64(at: 0)
    }

    /// Runs `body` (statements that build indexes: `CREATE INDEX`) with SQLite's sorter spread
    /// over `threads` threads (`PRAGMA threads`), then restores the connection's settings.
    ///
    /// The sorter hands work to its threads only when its in-memory list outgrows the page
    /// cache, so the cache is made small meanwhile (4 MiB): the keys are sorted in runs on every
    /// core and merged, where one large cache sorts them all on this thread. Making the name index
    /// of 1M imported records took 1.3 s of one core with the 256 MiB cache, ~0.9 s this way.
    /// Dirty pages the smaller cache cannot hold are written to the file early, as a commit would.
    /// With fewer than 2 threads, `body` runs as it is (runs would only go to temporary files).
    /// The sorted runs go to SQLite's temporary files (in `SQLITE_TMPDIR`, `TMPDIR`, `/var/tmp`
    /// or `/tmp`): about 50 bytes per record for the name index.
    func sortingOnThreads<T>(_ threads: Int, _ body: () throws -> T) throws -> T {
        guard threads > 1 else { return try body() }
        let cache = try integer("PRAGMA cache_size") ?? -2000
        let previous = try integer("PRAGMA threads") ?? 0
        defer { try? execute("PRAGMA threads = \(previous); PRAGMA cache_size = \(cache)") }
        try execute("PRAGMA threads = \(threads); PRAGMA cache_size = -4096")
        return try body()
    }

    /// The single text a query returns; `nil` for no row or NULL.
    func text(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// Registers Ferry's SQL function `ferry_may_contain(text, needle, options)` on this
    /// connection (`sqlite3_create_function_v2`; deterministic, innocuous): see ``FoldingSearch``.
    func registerFunctions() throws(StoreError) {
        let rc = sqlite3_create_function_v2(handle, "ferry_may_contain", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                            nil, { context, count, arguments in
            guard count == 3, let arguments, let textValue = arguments[0], let needleValue = arguments[1] else {
                sqlite3_result_int(context, 1)
                return
            }
            guard let text = sqlite3_value_text(textValue), let needle = sqlite3_value_text(needleValue) else {
                sqlite3_result_int(context, 0) // NULL text: CONTAINS is false
                return
            }
            let options = arguments[2].flatMap { sqlite3_value_text($0) }.map { String(cString: $0) } ?? "c"
            let found = FoldingSearch.mayContain(
                UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(textValue))),
                needle: UnsafeRawBufferPointer(start: needle, count: Int(sqlite3_value_bytes(needleValue))),
                diacritics: options.contains("d"))
            sqlite3_result_int(context, found ? 1 : 0)
        }, nil, nil, nil)
        if rc != SQLITE_OK { throw error(rc, "cannot register ferry_may_contain") }
    }

    /// The library's version (`sqlite3_libversion`).
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

/// A compiled statement (`sqlite3_stmt*`), finalized in `deinit` (`sqlite3_finalize`).
///
/// Text and blob columns read with ``textBytes(at:)`` point into SQLite's memory and are valid
/// only until the next ``step()``, ``reset()`` or the statement's end; copy them out before.
final class SQLiteStatement {
    let handle: OpaquePointer
    /// Keeps the connection open while this statement lives.
    let connection: SQLiteConnection
    let sql: String

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding (1-based indices, as SQLite numbers parameters)

    func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value), "cannot bind parameter \(index)")
    }

    func bind(_ value: Int64?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    func bind(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(handle, index, value), "cannot bind parameter \(index)")
    }

    /// Binds text, copied by SQLite (`SQLITE_TRANSIENT`).
    func bind(_ text: String?, at index: Int32) throws {
        guard var text else { return try bindNull(at: index) }
        let rc = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                // A zero-length text needs a non-NULL pointer, or SQLite binds NULL.
                chars.baseAddress == nil ? sqlite3_bind_text(handle, index, "", 0, nil)
                    : sqlite3_bind_text(handle, index, chars.baseAddress, Int32(chars.count), ferry_sqlite3_transient())
            }
        }
        try check(rc, "cannot bind parameter \(index)")
    }

    /// Binds UTF-8 bytes as text without copying them (`SQLITE_STATIC`): the bytes must stay
    /// valid and unchanged until the statement is stepped and reset, or rebound.
    func bind(borrowedText bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
        // A zero-length text needs a non-NULL pointer, or SQLite binds NULL.
        let rc = base == nil ? sqlite3_bind_text(handle, index, "", 0, nil)
                             : sqlite3_bind_text(handle, index, base, Int32(bytes.count), nil)
        try check(rc, "cannot bind parameter \(index)")
    }

    /// Binds UTF-8 bytes as text, copied by SQLite.
    func bind(copiedText bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
        let rc = base == nil ? sqlite3_bind_text(handle, index, "", 0, nil)
                             : sqlite3_bind_text(handle, index, base, Int32(bytes.count), ferry_sqlite3_transient())
        try check(rc, "cannot bind parameter \(index)")
    }

    /// Binds bytes as a blob, copied by SQLite (`sqlite3_bind_blob`, `SQLITE_TRANSIENT`).
    func bind(copiedBlob bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        // A zero-length blob needs a non-NULL pointer, or SQLite binds NULL.
        let rc = bytes.baseAddress == nil || bytes.isEmpty ? sqlite3_bind_zeroblob(handle, index, 0)
            : sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), ferry_sqlite3_transient())
        try check(rc, "cannot bind parameter \(index)")
    }

    func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index), "cannot bind parameter \(index)")
    }

    /// Binds a value of the ``SQLValue`` kinds.
    func bind(_ value: SQLValue, at index: Int32) throws {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let v): try bind(v, at: index)
        case .real(let v): try bind(v, at: index)
        case .text(let v): try bind(v, at: index)
        case .textBytes(let bytes):
            let rc = bytes.withUnsafeBytes { raw in
                raw.baseAddress == nil ? sqlite3_bind_text(handle, index, "", 0, nil)
                    : sqlite3_bind_text(handle, index, raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(raw.count),
                                        ferry_sqlite3_transient())
            }
            try check(rc, "cannot bind parameter \(index)")
        }
    }

    /// Binds values to parameters 1, 2, ….
    func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// The 1-based index of a named parameter (`:name`), 0 when there is none.
    func parameterIndex(_ name: String) -> Int32 { sqlite3_bind_parameter_index(handle, name) }

    // MARK: Running

    /// Runs the statement one step: `true` with a row to read, `false` when done.
    @discardableResult
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            // The statement's error replaces the generic one after a failed step.
            throw connection.error(rc, "statement failed", sql: sql)
        }
    }

    /// Makes the statement ready to run again; bindings are kept (`sqlite3_reset`).
    func reset() {
        sqlite3_reset(handle)
    }

    /// Resets and clears every binding.
    func clearBindings() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows to its end, then resets it.
    func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    // MARK: Columns (0-based)

    var columnCount: Int32 { sqlite3_column_count(handle) }

    func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(handle, index)) }

    func type(at index: Int32) -> SQLiteType {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    func optionalInt64(at index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }

    func double(at index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// The column as text (copied into a `String`); `nil` for NULL.
    func text(at index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let bytes = textBytes(at: index)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The column's bytes as text, in SQLite's memory: valid until the next step or reset.
    func textBytes(at index: Int32) -> UnsafeRawBufferPointer {
        guard let pointer = sqlite3_column_text(handle, index) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let count = Int(sqlite3_column_bytes(handle, index))
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }

    /// The column's bytes as a blob (`sqlite3_column_blob`), valid until the next step or reset.
    func blobBytes(at index: Int32) -> UnsafeRawBufferPointer {
        guard let pointer = sqlite3_column_blob(handle, index) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// The column as a value of the ``SQLValue`` kinds (text copied).
    func value(at index: Int32) -> SQLValue {
        switch type(at: index) {
        case .integer: .integer(int64(at: index))
        case .real: .real(double(at: index))
        case .text, .blob: .text(text(at: index) ?? "")
        case .null: .null
        }
    }

    /// SQLite's plan of this statement (`EXPLAIN QUERY PLAN`), one line per step, indented.
    func queryPlan(parameters: [SQLValue]) throws -> [String] {
        let explain = try connection.prepare("EXPLAIN QUERY PLAN " + sql)
        try explain.bind(parameters)
        var depth: [Int64: Int] = [0: 0]
        var lines: [String] = []
        while try explain.step() {
            let id = explain.int64(at: 0), parent = explain.int64(at: 1)
            let level = (depth[parent] ?? 0) + 1
            depth[id] = level
            lines.append(String(repeating: "  ", count: level - 1) + (explain.text(at: 3) ?? ""))
        }
        return lines
    }

    /// Throws unless `rc` is `SQLITE_OK`; the message is made only then.
    @inline(__always)
    private func check(_ rc: Int32, _ what: @autoclosure () -> String) throws {
        if rc != SQLITE_OK { throw connection.error(rc, what(), sql: sql) }
    }
}

/// A value bound to or read from SQL.
package enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// UTF-8 bytes bound as text (not necessarily valid UTF-8: used for byte-wise upper bounds).
    case textBytes([UInt8])
}
