import ArgumentParser
import FerryIO
import FerryInternals
import FerryPredicate
import FerryRecords
import FerryStore

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
        do {
            let store = try RecordStore(path: store)
            let query = StoreQuery(
                recordTypes: types, zoneNames: zones, database: database,
                predicate: try wherePredicate.map { try RecordPredicate(parsing: $0, arguments: try predicateInput.arguments()) },
                sortKeys: sort.compactMap(StoreSortKey.init(parsing:)),
                desiredKeys: try keyList(keys),
                limit: limit, cursor: cursor)
            if explain {
                print(Self.text(of: try store.explain(query)), terminator: "")
                return
            }
            let output = try OutputFile(path: "-")
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
            if json {
                guard !quiet else { return }
                let object: JSONObject = ["records": .number(JSONNumber(Int64(count))), "cursor": next.map(JSONValue.string) ?? .null,
                                          "unevaluated": .number(JSONNumber(Int64(failures)))]
                return StandardError.write(render(.object(object)) + "\n")
            }
            if failures > 0 && !quiet {
                StandardError.write("ferry: \(Plural.count(failures, "record")) could not be evaluated (they do not match)\n")
            }
            if !quiet && !response {
                StandardError.write("ferry: \(Plural.count(count, "record"))" + (next.map { "; next page: --cursor \($0)" } ?? "") + "\n")
            }
        } catch {
            throw dataFailure(error)
        }
    }

    static func text(of explanation: StoreQueryExplanation) -> String {
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
}

extension OutputFile {
    func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }
}
