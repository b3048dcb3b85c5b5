import ArgumentParser
import FerryIO
#if CloudKit
import Dispatch
import FerryCloudKitClient
import FerryKit
import Foundation
#endif

/// The options `ferry pull` and `ferry push` share: which container and database, where, and
/// the credentials (flags, then `--credentials FILE`, then the environment; never printed).
struct CloudKitOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The container identifier (iCloud.com.example.app).", valueName: "ID"))
    var container: String

    @Option(help: ArgumentHelp("development or production.", valueName: "NAME"))
    var environment = "development"

    @Option(help: ArgumentHelp("public, private or shared.", valueName: "NAME"))
    var database = "private"

    @Option(help: ArgumentHelp("Where requests go: Apple's host by default, or a ferry serve (http://127.0.0.1:8080).", valueName: "URL"))
    var endpoint = "https://api.apple-cloudkit.com"

    @Option(name: .customLong("api-token"), help: ArgumentHelp("The container's API token (or CLOUDKIT_API_TOKEN).", valueName: "TOKEN"))
    var apiToken: String?

    @Option(name: .customLong("web-auth-token"),
            help: ArgumentHelp("The user's web auth token, private and shared databases (or CLOUDKIT_WEB_AUTH_TOKEN).", valueName: "TOKEN"))
    var webAuthToken: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp("A server-to-server key ID, public database (or CLOUDKIT_KEY_ID).", valueName: "ID"))
    var keyID: String?

    @Option(name: .customLong("key-file"),
            help: ArgumentHelp("The server-to-server private key, PEM (or CLOUDKIT_KEY_FILE).", valueName: "FILE"))
    var keyFile: String?

    @Option(help: ArgumentHelp("A file of NAME=VALUE lines setting the CLOUDKIT_* variables above.", valueName: "FILE"))
    var credentials: String?

    @Option(help: ArgumentHelp("Attempts per request before giving up, retries included (1–100).", valueName: "N"))
    var attempts = 8

    func validate() throws {
        guard Ferry.validatesOptions else { return }
        guard ["development", "production"].contains(environment) else {
            throw ValidationError("--environment expects development or production, found '\(environment)'")
        }
        guard ["public", "private", "shared"].contains(database) else {
            throw ValidationError("--database expects public, private or shared, found '\(database)'")
        }
        guard endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
            throw ValidationError("--endpoint expects an http:// or https:// URL, found '\(endpoint)'")
        }
        guard (1...100).contains(attempts) else { throw ValidationError("--attempts expects 1 to 100, found \(attempts)") }
        try checkInputsExist([credentials, keyFile].compactMap { $0 })
    }

    #if CloudKit
    /// The client's configuration; the credentials file's and the environment's variables fill
    /// what the flags leave out.
    func clientConfiguration() throws -> CloudKitClient.Configuration {
        let credentialValue: CloudKitCredentials
        do {
            let variables = try credentials.map { path throws(CloudKitClientError) in try CloudKitCredentials.variables(fromFile: path) }
            credentialValue = try CloudKitCredentials(apiToken: apiToken, webAuthToken: webAuthToken, keyID: keyID, keyFile: keyFile,
                                                      environment: variables ?? ProcessInfo.processInfo.environment)
            try credentialValue.check(database: database)
        } catch {
            throw error.code == .usage ? ValidationError(error.message) : CommandFailure(message: error.message)
        }
        var trimmedEndpoint = endpoint
        while trimmedEndpoint.hasSuffix("/") { trimmedEndpoint.removeLast() }
        return .init(endpoint: trimmedEndpoint, container: container, environment: environment, database: database,
                     credentials: credentialValue, retry: .init(maximumAttempts: attempts))
    }
    #endif
}

#if CloudKit
/// Runs `body` on `job` to its end on a task while the calling (synchronous) command waits:
/// the job is used by that task alone until it ends.
func runBlocking<Job: AnyObject, T: Sendable>(_ job: Job, _ body: @escaping @Sendable (Job) async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) let job = job
    Task.detached {
        do { outcome.set(.success(try await body(job))) } catch { outcome.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

private final class BlockingOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { lock.withLock { value = result } }
    var result: Result<T, any Error>? { lock.withLock { value } }
}

/// A pull or a push, as the commands run them.
protocol CloudKitJob: AnyObject, SendableMetatype {
    associatedtype Summary: CloudKitJobSummary
    var onProgress: ((Summary) -> Void)? { get set }
    func run() async throws(CloudKitClientError) -> Summary
}

/// What a job's summary shows: a line, a JSON object, and the counts its progress shows.
protocol CloudKitJobSummary: Sendable {
    var line: String { get }
    var json: String { get }
    var progressCounts: (records: Int, bytes: Int) { get }
}

extension CloudKitPull: CloudKitJob {}
extension CloudKitPush: CloudKitJob {}
extension CloudKitPull.Summary: CloudKitJobSummary {
    var progressCounts: (records: Int, bytes: Int) { (records, client.bytesReceived) }
}
extension CloudKitPush.Summary: CloudKitJobSummary {
    var progressCounts: (records: Int, bytes: Int) { (saved, client.bytesSent) }
}

/// Runs `job` to its end with progress on a terminal, ends the command with its error, and
/// prints its summary (a line, or JSON with `json`; nothing with `quiet`).
func runReporting<Job: CloudKitJob>(_ job: Job, quiet: Bool, json: Bool) throws {
    let progress = Progress(enabled: !quiet && StandardError.isTerminal)
    let clock = Stopwatch()
    job.onProgress = { summary in progress.update(records: summary.progressCounts.records, bytes: summary.progressCounts.bytes, clock: clock) }
    let summary: Job.Summary
    do {
        summary = try runBlocking(job) { try await $0.run() }
    } catch let error as CloudKitClientError {
        progress.clear()
        throw commandError(error)
    }
    progress.clear()
    if !quiet { print(json ? summary.json : summary.line) }
}

/// A client error as the command ends with it: usage errors exit 2, the rest 1.
func commandError(_ error: CloudKitClientError) -> any Error {
    error.code == .usage ? CommandFailure(message: error.message, exitCode: 2) : CommandFailure(message: error.message)
}
#endif
