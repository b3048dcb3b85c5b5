import FerryIO
import FerryPredicate
import FerryRecords
import FerryStore

/// A store's field indexes, as `ferry index` makes and lists them: a partial SQLite index for
/// every QUERYABLE or SORTABLE field of a CloudKit schema (`.ckdb`).
public enum StoreIndexes {
    /// Makes the indexes the schema at `schema` (`-` is standard input) calls for in the store at
    /// `store`, waiting up to `busyTimeout` seconds for another writer, and returns every index
    /// the store has.
    ///
    /// - Throws: ``FerryError`` for a schema that does not parse (naming where), a file that is
    ///   not a store, and failures to write.
    public static func make(store: String, schema: String, busyTimeout: Double = 5) throws(FerryError) -> [RecordStore.FieldIndex] {
        let parsed = try Self.schema(at: schema)
        return try FerryError.catching {
            let store = try RecordStore(path: store, access: .readWrite, configuration: .init(busyTimeout: busyTimeout, cacheMiB: 256))
            return try store.makeIndexes(for: parsed)
        }
    }

    /// The CloudKit schema (`.ckdb`) in the file at `path` (`-` is standard input).
    ///
    /// - Throws: ``FerryError`` for an unreadable file or a schema that does not parse (naming where).
    public static func schema(at path: String) throws(FerryError) -> CloudKitSchema {
        try FerryError.catching {
            let text = String(decoding: try InputFile(path: path).readAll(limit: 64 << 20), as: UTF8.self)
            do {
                return try CloudKitSchema(parsing: text)
            } catch let error as PredicateError {
                throw FerryError.data("\(path): \(error.rendered())", underlying: error)
            }
        }
    }

    /// The indexes of the store at `store`.
    public static func list(store: String) throws(FerryError) -> [RecordStore.FieldIndex] {
        try FerryError.catching { try RecordStore(path: store).fieldIndexes() }
    }

    /// The indexes as a table (`ferry index`), or `no indexes`.
    public static func text(_ indexes: [RecordStore.FieldIndex]) -> String {
        guard !indexes.isEmpty else { return "no indexes" }
        let rows = [["INDEX", "TYPE", "FIELD", "KIND", "EXPRESSION"]]
            + indexes.map { [$0.name, $0.recordType, $0.fieldName, $0.kind, $0.expression] }
        return TextTable.lines(rows).joined(separator: "\n")
    }

    /// The indexes as a JSON array of objects (name, recordType, fieldName, kind, expression).
    public static func json(_ indexes: [RecordStore.FieldIndex]) -> String {
        JSONValue.array(indexes.map { index in
            .object(["name": .string(index.name), "recordType": .string(index.recordType), "fieldName": .string(index.fieldName),
                     "kind": .string(index.kind), "expression": .string(index.expression)])
        }).compactText
    }
}
