import ArgumentParser
import FerryIO
import FerryPredicate
import FerryRecords
import FerryStore

/// `ferry index STORE --schema app.ckdb`: SQLite indexes for the schema's QUERYABLE and SORTABLE fields.
struct Index: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a store's indexes from a CloudKit schema's QUERYABLE and SORTABLE fields.",
        discussion: """
        For every QUERYABLE or SORTABLE field of each record type in the schema (.ckdb, the \
        CloudKit schema language), makes a partial SQLite index on the field's value within the \
        type, then updates SQLite's statistics. Queries on those fields (ferry query, convert \
        --where) then read the index instead of every record: --explain says which one served. \
        Lists, assets and locations are not indexed. Without --schema, lists the indexes made. \
        The schema file may be - (stdin).

        Examples:
          ferry index chat.sqlite --schema app.ckdb
          ferry index chat.sqlite
          ferry index chat.sqlite --json | jq -r '.[].name'
        """
    )

    @Argument(help: ArgumentHelp("The store.", valueName: "STORE"))
    var store: String

    @Option(help: ArgumentHelp("A CloudKit schema file (.ckdb; - is stdin).", valueName: "FILE"))
    var schema: String?

    @Flag(help: "Print the store's indexes as a JSON array on stdout instead of a table.")
    var json = false

    @Flag(help: "With --schema: print nothing on success.")
    var quiet = false

    @Option(name: .customLong("busy-timeout"), parsing: .unconditional,
            help: "Seconds to wait for another process writing to the store (at most 2147483, about 24 days).")
    var busyTimeout: Double = 5

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        try checkBusyTimeout(busyTimeout)
        if quiet && schema == nil { throw ValidationError("--quiet needs --schema: without it, index prints the indexes made") }
        try checkInputsExist([store] + (schema.map { [$0] } ?? []))
    }

    func run() throws {
        do {
            let indexes: [RecordStore.FieldIndex]
            if let schema {
                let text = String(decoding: try InputFile(path: schema).readAll(limit: 64 << 20), as: UTF8.self)
                let parsed: CloudKitSchema
                do {
                    parsed = try CloudKitSchema(parsing: text)
                } catch {
                    throw CommandFailure(message: "\(schema): \(error.rendered())")
                }
                let store = try RecordStore(path: store, access: .readWrite, configuration: .init(busyTimeout: busyTimeout, cacheMiB: 256))
                indexes = try store.makeIndexes(for: parsed)
            } else {
                indexes = try RecordStore(path: store).fieldIndexes()
            }
            if json { return print(Self.json(indexes)) }
            if quiet && schema != nil { return }
            var rows = [["INDEX", "TYPE", "FIELD", "KIND", "EXPRESSION"]]
            rows += indexes.map { [$0.name, $0.recordType, $0.fieldName, $0.kind, $0.expression] }
            print(indexes.isEmpty ? "no indexes" : table(rows).joined(separator: "\n"))
        } catch {
            throw dataFailure(error)
        }
    }

    /// The indexes as a JSON array of objects (name, recordType, fieldName, kind, expression).
    static func json(_ indexes: [RecordStore.FieldIndex]) -> String {
        let values = indexes.map { index -> JSONValue in
            .object(["name": .string(index.name), "recordType": .string(index.recordType), "fieldName": .string(index.fieldName),
                     "kind": .string(index.kind), "expression": .string(index.expression)])
        }
        return render(.array(values))
    }
}
