import ArgumentParser
import FerryKit

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
        let lookup = try StoreQueries(path: store).writeLookup(
            names: names, zone: zone, database: database, desiredKeys: try keyList(keys), as: response ? .response : .ndjson, to: "-")
        // A response lists what is missing as NOT_FOUND entries; NDJSON cannot, so it fails.
        guard !response, let failure = lookup.failure else { return }
        for name in lookup.missing { note("not found: \(name)") }
        throw CommandFailure(message: failure)
    }
}
