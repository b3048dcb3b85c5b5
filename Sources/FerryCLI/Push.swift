import ArgumentParser
import FerryKit
#if CloudKit
import FerryCloudKit
import FerryCloudKitClient
import FerryIO
#endif

/// `ferry push IN…`: records from a store or any input into a CloudKit database (Apple's, or a
/// `ferry serve`).
///
/// Parses options into `CloudKitPush`'s configuration, runs it and prints its summary.
struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Push records from a store, NDJSON, XML or an archive into a CloudKit database.",
        discussion: """
        Sends records/modify in batches of at most 200 operations and --batch-bytes, zones \
        created first when missing, each record after its parent and the records it references \
        (when those are pushed too). A batch CloudKit refuses as too large is split in half; \
        records answered THROTTLED or TRY_AGAIN_LATER are sent again after retryAfter. Asset \
        bytes in --assets DIR (as pull --assets writes them) are uploaded first. A record \
        CloudKit refuses goes to --rejects with its serverErrorCode; CONFLICT and EXISTS follow \
        --on-conflict. The default operation, forceReplace, makes a push repeatable: a rerun \
        after an interruption gives the same result. The input's records are held in memory (to \
        order them).

        Exit codes: 0 every record pushed (or conflicts skipped), 1 records refused or a request \
        failed, 2 usage.

        Needs a build with the CloudKit trait: swift build -c release --traits CloudKit.

        Examples:
          ferry push dev.sqlite --container iCloud.com.example.app \\
            --endpoint http://127.0.0.1:8080
          ferry pull dev.sqlite --container iCloud.com.example.app \\
            --credentials dev.env && \\
          ferry push dev.sqlite --container iCloud.com.example.app \\
            --environment production --credentials prod.env \\
            --rejects rejected.ndjson
        """
    )

    @Argument(help: ArgumentHelp("The records: stores, NDJSON, XML, archives (- for standard input).", valueName: "IN"))
    var inputs: [String]

    @OptionGroup var cloudKit: CloudKitOptions

    @Option(help: ArgumentHelp("The operation: create, update, forceUpdate, replace, forceReplace, delete or forceDelete.",
                               valueName: "OPERATION"))
    var mode = "forceReplace"

    @Flag(help: "Send each batch atomically (custom zones only, as CloudKit).")
    var atomic = false

    @Flag(name: .customLong("dry-run"), help: "Count the records, zones and batches; send nothing.")
    var dryRun = false

    @Option(name: .customLong("on-conflict"), help: ArgumentHelp("CONFLICT and EXISTS: fail, skip or overwrite.", valueName: "POLICY"))
    var onConflict = "fail"

    @Option(help: ArgumentHelp("Where refused records go, one JSON line each with its serverErrorCode.", valueName: "FILE"))
    var rejects: String?

    @Option(help: ArgumentHelp("Upload asset bytes from this folder (what pull --assets writes) before their records.", valueName: "DIR"))
    var assets: String?

    @Option(name: .customLong("batch-bytes"), help: ArgumentHelp("The most bytes of records in one request.", valueName: "BYTES"))
    var batchBytes = 1 << 20

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
        guard Ferry.validatesOptions else { return }
        guard !inputs.isEmpty else { throw ValidationError("name at least one input") }
        #if CloudKit
        guard CloudKitModifyRequest.OperationType(rawValue: mode) != nil else {
            throw ValidationError("--mode expects one of \(CloudKitModifyRequest.OperationType.allCases.map(\.rawValue).joined(separator: ", ")), found '\(mode)'")
        }
        guard CloudKitPush.ConflictPolicy(rawValue: onConflict) != nil else {
            throw ValidationError("--on-conflict expects fail, skip or overwrite, found '\(onConflict)'")
        }
        #endif
        guard batchBytes >= 1024 else { throw ValidationError("--batch-bytes expects at least 1024, found \(batchBytes)") }
        try checkInputsExist(inputs)
    }

    #if CloudKit
    func run() throws {
        let client = try cloudKit.clientConfiguration()
        let push = CloudKitPush(configuration: .init(
            client: client, inputs: inputs, operation: CloudKitModifyRequest.OperationType(rawValue: mode) ?? .forceReplace,
            isAtomic: atomic, isDryRun: dryRun, onConflict: CloudKitPush.ConflictPolicy(rawValue: onConflict) ?? .fail, rejects: rejects,
            batchBytes: batchBytes, assets: assets))
        try runReporting(push, quiet: quiet, json: json)
    }
    #else
    func run() throws {
        throw CommandFailure(message: "push needs a build with the CloudKit trait: swift build -c release --traits CloudKit", exitCode: 2)
    }
    #endif
}
