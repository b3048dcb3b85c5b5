import ArgumentParser
import FerryKit
#if CloudKit
import FerryCloudKit
import FerryCloudKitClient
import FerryIO
import FerryRecords
#endif

/// `ferry pull OUT`: a CloudKit database (Apple's, or a `ferry serve`) into a store or any output.
///
/// Parses options into `CloudKitPull`'s configuration, runs it and prints its summary.
struct Pull: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pull a CloudKit database into a store, NDJSON, XML or an archive.",
        discussion: """
        --changes (the default for the private and shared databases) fetches changes/database, \
        then changes/zone of every changed zone, every page, each committed to the store with its \
        token: a second pull fetches only what changed, and an interrupted pull continues where it \
        stopped. --type (the way for the public database) runs records/query, every page; a \
        --where predicate CloudKit cannot take as one query (OR, lists over 100 values) is split \
        into queries it takes, merged by record name. --names reads record names (one per line) and \
        fetches them with records/lookup. --tokens-only keeps only the change tokens. --assets DIR \
        downloads the assets' bytes, one file per checksum, checked against size and checksum.

        Credentials come from the flags, a --credentials file or the CLOUDKIT_* environment \
        variables, and are never printed. Requests answered THROTTLED or TRY_AGAIN_LATER are \
        retried after the retryAfter CloudKit asks for. Exit codes: 0 done, 1 a request or the \
        output failed, 2 usage.

        Needs a build with the CloudKit trait: swift build -c release --traits CloudKit.

        Examples:
          ferry pull app.sqlite --container iCloud.com.example.app \\
            --endpoint http://127.0.0.1:8080
          ferry pull posts.ndjson --container iCloud.com.example.app \\
            --database public --type Post --key-id ID --key-file key.pem \\
            --where 'author IN {"a","b"} OR likes > 10'
          ferry pull app.sqlite --container iCloud.com.example.app \\
            --credentials ck.env --json
        """
    )

    @Argument(help: ArgumentHelp("Where the records go: a store (default), .ndjson, .xml or an archive, by name.", valueName: "OUT"))
    var output: String

    @OptionGroup var cloudKit: CloudKitOptions

    @Flag(help: "Fetch changes per zone with tokens (default for private and shared).")
    var changes = false

    @Flag(name: .customLong("tokens-only"), help: "Fetch the change tokens only, no records (the bootstrap).")
    var tokensOnly = false

    @Option(help: ArgumentHelp("Query records of this type (every page).", valueName: "TYPE"))
    var type: String?

    @Option(name: .customLong("where"), help: ArgumentHelp("With --type: an NSPredicate the records match.", valueName: "PREDICATE"))
    var predicate: String?

    @Option(help: ArgumentHelp("With --type: sort by these fields, comma-separated; -field for descending.", valueName: "FIELDS"))
    var sort: String?

    @Option(help: ArgumentHelp("With --type or --names: fetch only these fields, comma-separated.", valueName: "FIELDS"))
    var keys: String?

    @Option(help: ArgumentHelp("A file of record names, one per line, fetched with records/lookup.", valueName: "FILE"))
    var names: String?

    @Option(help: ArgumentHelp("The zone of --type or --names (default: the default zone).", valueName: "NAME"))
    var zone: String?

    @Flag(name: .customLong("zone-wide"), help: "With --type: query every zone.")
    var zoneWide = false

    @Option(help: ArgumentHelp("Download the assets' bytes into this folder, one file per checksum (checked).", valueName: "DIR"))
    var assets: String?

    @Option(help: ArgumentHelp("The output's format when its name does not say.", valueName: "FORMAT"))
    var to: RecordFormat?

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
        guard Ferry.validatesOptions else { return }
        let modes = [changes, tokensOnly, type != nil, names != nil].filter { $0 }.count
        guard modes <= 1 else { throw ValidationError("--changes, --tokens-only, --type and --names are one at a time") }
        if predicate != nil || sort != nil || zoneWide, type == nil {
            throw ValidationError("--where, --sort and --zone-wide go with --type")
        }
        if keys != nil, type == nil && names == nil { throw ValidationError("--keys goes with --type or --names") }
        if modes == 0, cloudKit.database == "public" {
            throw ValidationError("the public database has no change feeds: pull it with --type (or --names)")
        }
        if output == "-" { throw ValidationError("pull writes a file (a store by default); name it") }
        try checkInputsExist([names].compactMap { $0 })
        _ = try keyList(keys)
    }

    #if CloudKit
    func run() throws {
        let client = try cloudKit.clientConfiguration()
        let mode: CloudKitPull.Mode
        let zoneID = zone.map { ZoneID(zoneName: $0) }
        if let type {
            mode = .query(.init(recordType: type, predicate: predicate, sortBy: CloudKitPull.sortKeys(parsing: sort ?? ""), desiredKeys: try keyList(keys),
                                zoneID: zoneID, zoneWide: zoneWide))
        } else if let names {
            do {
                mode = .names(try CloudKitPull.recordNames(fromFile: names), zoneID: zoneID)
            } catch {
                throw commandError(error)
            }
        } else {
            mode = tokensOnly ? .tokensOnly : .changes
        }
        let pull = CloudKitPull(configuration: .init(client: client, mode: mode, output: output, format: to, assets: assets))
        try runReporting(pull, quiet: quiet, json: json)
    }
    #else
    func run() throws {
        throw CommandFailure(message: "pull needs a build with the CloudKit trait: swift build -c release --traits CloudKit", exitCode: 2)
    }
    #endif
}
