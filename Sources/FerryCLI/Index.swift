import ArgumentParser
import FerryKit

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
        let indexes = try schema.map { schema throws(FerryError) in try StoreIndexes.make(store: store, schema: schema, busyTimeout: busyTimeout) }
            ?? StoreIndexes.list(store: store)
        if json { return print(StoreIndexes.json(indexes)) }
        if quiet && schema != nil { return }
        print(StoreIndexes.text(indexes))
    }
}
