import ArgumentParser
import FerryIO
import FerryInternals
import FerryRecords
import FerryStore

/// `ferry fetch STORE NAME…`: records by name, as CKFetchRecordsOperation gives them.
struct Fetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch records of a store by name.",
        discussion: """
        Prints the records found as NDJSON on stdout, in the order asked; each name the zone does \
        not hold is reported on stderr, and the exit code is then 1 (with --response, a CloudKit \
        records/lookup response lists them as NOT_FOUND entries and the exit code is 0). A record \
        whose stored JSON was damaged outside Ferry is refused with exit 1 and nothing printed.

        Examples:
          ferry fetch chat.sqlite 6E1F…-A3 9B20…-77 --zone Chats
          ferry fetch chat.sqlite m1 --zone Chats --keys text,sentAt --response
        """
    )

    @Argument(help: ArgumentHelp("The store.", valueName: "STORE"))
    var store: String

    @Argument(help: ArgumentHelp("Record names.", valueName: "NAME"))
    var names: [String] = []

    @Option(help: ArgumentHelp("The zone (default _defaultZone).", valueName: "NAME"))
    var zone: String?

    @Option(help: ArgumentHelp("The database: public, private or shared (default: any).", valueName: "NAME"))
    var database: String?

    @Option(help: ArgumentHelp("Return only these fields (comma-separated); system fields are kept.", valueName: "a,b"))
    var keys: String?

    @Flag(help: "Print one CloudKit records/lookup response on stdout.")
    var response = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard !names.isEmpty else { throw ValidationError("expected at least one NAME") }
        if let database, !["public", "private", "shared"].contains(database) {
            throw ValidationError("--database expects public, private or shared, found '\(database)'")
        }
        _ = try keyList(keys)
        try checkInputsExist([store])
    }

    func run() throws {
        let result: RecordStore.FetchResult
        do {
            let store = try RecordStore(path: store)
            result = try store.fetch(names: names, zone: zone, database: database,
                                     desiredKeys: try keyList(keys))
            let output = try OutputFile(path: "-")
            if response {
                var out = JSONOutput()
                out.append("{\"records\":[")
                var first = true
                var found = result.recordsJSON.makeIterator()
                let missing = Set(result.missing)
                for name in names {
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
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
            } else {
                for json in result.recordsJSON {
                    try json.withUnsafeBytes { try output.write($0) }
                    try output.write("\n")
                }
            }
            try output.commit()
        } catch {
            throw dataFailure(error)
        }
        if !response && !result.missing.isEmpty {
            for name in result.missing { StandardError.write("ferry: not found: \(name)\n") }
            throw CommandFailure(message: "\(result.missing.count) of \(Plural.count(names.count, "record")) not found")
        }
    }
}
