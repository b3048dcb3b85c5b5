import ArgumentParser
import FerryKit

/// `ferry query STORE --type T …`: one page of a store's records, as CKQueryOperation gives it.
struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Query a store: records of a type matching a predicate, sorted, a page at a time.",
        discussion: """
        Prints the page's records as NDJSON on stdout and, when more follow, the cursor of the next \
        page on stderr (--response prints one CloudKit records/query response instead: \
        {"records": [...], "continuationMarker": "..."}). A cursor continues the same query after \
        the last record of its page, so pages stay stable while records outside them change.

        The predicate (NSPredicate format, as in convert --where) is turned into SQL where that \
        cannot change the result — system fields, scalar fields, list membership — and the compiled \
        filter decides on the rows SQL returns. --explain shows the SQL, which index SQLite uses \
        (ferry index makes them from a .ckdb schema) and what is evaluated in Swift. Records a \
        predicate cannot be evaluated on (a string compared with a number) do not match; they are \
        counted on stderr. A record whose stored JSON was damaged outside Ferry stops the query \
        (exit 1, naming the record); nothing of it is printed.

        Examples:
          ferry query chat.sqlite --type Message \\
              --where 'count > 50 AND text CONTAINS[c] "hello"'
          ferry query chat.sqlite --type Message --sort sentAt:desc --limit 100
          ferry query chat.sqlite --type Message --sort sentAt:desc --limit 100 \\
              --cursor eyJ2Ijox…
          ferry query chat.sqlite --type Message --zone Chats --keys text,sentAt \\
              --response | jq .
          ferry query chat.sqlite --type Message --where 'count > 50' --explain
          ferry query chat.sqlite --type Message --limit 100 --json 2>summary.json
        """
    )

    @Argument(help: ArgumentHelp("The store.", valueName: "STORE"))
    var store: String

    @Option(name: .customLong("type"), help: "Keep only records of this type (repeatable).")
    var types: [String] = []

    @Option(name: .customLong("zone"), help: "Keep only records in this zone (repeatable).")
    var zones: [String] = []

    @Option(help: ArgumentHelp("Keep only records of this database: public, private or shared.", valueName: "NAME"))
    var database: String?

    @Option(name: .customLong("where"), help: ArgumentHelp("Keep only records matching this NSPredicate format string.", valueName: "PREDICATE"))
    var wherePredicate: String?

    @OptionGroup var predicateInput: PredicateInput

    @Option(help: ArgumentHelp("Sort by a field or system key (repeatable: later keys break ties).", valueName: "key[:desc]"))
    var sort: [String] = []

    @Option(help: ArgumentHelp("Return only these fields (comma-separated); system fields are kept.", valueName: "a,b"))
    var keys: String?

    @Option(parsing: .unconditional, help: "The most records in the page.")
    var limit: Int?

    @Option(help: ArgumentHelp("The cursor a previous page of this query printed.", valueName: "CURSOR"))
    var cursor: String?

    @Flag(help: "Print how the query runs (SQL, SQLite's plan, what Swift evaluates) instead of running it.")
    var explain = false

    @Flag(help: "Print one CloudKit records/query response on stdout instead of NDJSON.")
    var response = false

    @Flag(help: "Nothing on stderr but errors, not even with --json (the cursor is still printed with --response).")
    var quiet = false

    @Flag(help: "The summary as one JSON object on stderr (stdout holds the records): records, cursor, unevaluated.")
    var json = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        for key in sort where StoreSortKey(parsing: key) == nil {
            throw ValidationError("--sort expects key[:asc|:desc], found '\(key)'")
        }
        if let limit { try checkNumber(limit, of: "--limit", in: 0...Int.max) }
        if let database, !["public", "private", "shared"].contains(database) {
            throw ValidationError("--database expects public, private or shared, found '\(database)'")
        }
        if explain {
            for (flag, used) in [("--response", response), ("--json", json)] where used {
                throw ValidationError("\(flag) does not apply with --explain, which prints the query's plan instead of running it")
            }
        }
        if predicateInput.args != nil && wherePredicate == nil {
            throw ValidationError("--args needs --where: it gives the values of the predicate's %@ and %K")
        }
        _ = try keyList(keys)
        if let wherePredicate {
            do {
                _ = try RecordFilter(parsing: wherePredicate, arguments: try predicateInput.arguments())
            } catch let error as PredicateError {
                throw ValidationError("--where: " + error.rendered())
            }
        }
        try checkInputsExist([store])
    }

    func run() throws {
        let queries = try StoreQueries(path: store)
        let query = StoreQuery(
            recordTypes: types, zoneNames: zones, database: database,
            predicate: try wherePredicate.map { try RecordPredicate(parsing: $0, arguments: try predicateInput.arguments()) },
            sortKeys: sort.compactMap(StoreSortKey.init(parsing:)), desiredKeys: try keyList(keys), limit: limit, cursor: cursor)
        if explain { return print(try queries.explain(query), terminator: "") }
        let page = try queries.writePage(query, as: response ? .response : .ndjson, to: "-")
        if json {
            if !quiet { StandardError.write(page.json + "\n") }
            return
        }
        if !quiet, let unevaluated = page.unevaluatedNote { note(unevaluated) }
        if !quiet && !response { note(page.line) }
    }
}
