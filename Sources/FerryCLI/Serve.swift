import ArgumentParser
import FerryKit
#if CloudKit
import Dispatch
import FerryCloudKit
import FerryIO
import FerryCloudKitAuth
import FerryServer
import FerryStore
#endif

/// `ferry serve STORE`: the store served as CloudKit Web Services over HTTP.
///
/// Parses options into FerryCloudKit's and FerryServer's configurations and runs the server;
/// everything served lives in `CloudKitService`, everything about HTTP in `CloudKitServer`.
/// Listed in every build; it serves only in a build with the `CloudKit` package trait.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store as CloudKit Web Services (CKWS) over HTTP, for development and tests.",
        discussion: """
        Answers /database/1/{container}/{environment}/{public|private|shared}/… as CloudKit does: \
        records/query, records/lookup, records/modify, records/changes, changes/database, \
        changes/zone, zones/list, zones/lookup, zones/modify, zones/changes and assets/upload, \
        with CloudKit's JSON, error bodies and limits (Docs/Serve.md says what differs). Writes go \
        into the store and its journal, so ferry query and ferry convert can read the store while \
        it serves. A line per request on stderr (method, path, status, ms) unless --quiet; SIGINT \
        or SIGTERM stops the server after the requests in flight.

        Authentication: --key-id with --public-key checks server-to-server signatures (public \
        database); --api-token checks ckAPIToken (and ckWebAuthToken for private and shared). \
        With neither, requests are not checked and the server listens on loopback only.

        Needs a build with the CloudKit trait: swift build -c release --traits CloudKit.

        Examples:
          ferry convert Samples/chat.ndjson chat.sqlite && ferry serve chat.sqlite
          ferry serve chat.sqlite --port 8081 --container iCloud.com.example --quiet
          ferry serve chat.sqlite --key-id 1a2b3c --public-key eckey.pub.pem
          ferry serve chat.sqlite --inject throttle=0.05,unavailable=0.01
        """
    )

    @Argument(help: ArgumentHelp("The store (a Ferry SQLite store; made by ferry convert).", valueName: "STORE"))
    var store: String

    @Option(help: "The address to listen on (anything but loopback needs authentication).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (1–65535).")
    var port = 8080

    @Option(help: ArgumentHelp("Serve only this container (default: any).", valueName: "ID"))
    var container: String?

    @Option(help: ArgumentHelp("Serve only this environment: development or production.", valueName: "NAME"))
    var environment = "development"

    @Flag(name: .customLong("read-only"), help: "Refuse every write (ACCESS_DENIED); the store is opened for reading only.")
    var readOnly = false

    @Option(help: ArgumentHelp("A CloudKit schema (.ckdb): filters and sorts on fields that are not QUERYABLE or SORTABLE are refused.",
                               valueName: "FILE"))
    var schema: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp("The server-to-server key ID (with --public-key).", valueName: "ID"))
    var keyID: String?

    @Option(name: .customLong("public-key"), help: ArgumentHelp("The server-to-server public key, PEM (with --key-id).", valueName: "FILE"))
    var publicKey: String?

    @Option(name: .customLong("api-token"), help: ArgumentHelp("The API token requests must carry as ckAPIToken.", valueName: "TOKEN"))
    var apiToken: String?

    @Option(name: .customLong("web-auth-token"),
            help: ArgumentHelp("With --api-token: the ckWebAuthToken private and shared requests must carry (default: any non-empty one).",
                               valueName: "TOKEN"))
    var webAuthToken: String?

    @Option(help: ArgumentHelp("Answer a fraction of requests with THROTTLED (429) or TRY_AGAIN_LATER (503): throttle=F,unavailable=F.",
                               valueName: "FAULTS"))
    var inject: String?

    @Option(name: .customLong("base-url"),
            help: ArgumentHelp("The URL clients reach the server at, for the asset URLs it hands out (default: http://HOST:PORT).",
                               valueName: "URL"))
    var baseURL: String?

    @Flag(help: "Print no line per request (the start line and errors still go to stderr).")
    var quiet = false

    func validate() throws {
        guard Ferry.validatesOptions else { return }
        guard (1...65535).contains(port) else { throw ValidationError("--port expects 1 to 65535, found \(port)") }
        guard ["development", "production"].contains(environment) else {
            throw ValidationError("--environment expects development or production, found '\(environment)'")
        }
        if (keyID == nil) != (publicKey == nil) { throw ValidationError("--key-id and --public-key go together") }
        if webAuthToken != nil && apiToken == nil { throw ValidationError("--web-auth-token needs --api-token") }
        try checkInputsExist([store] + [schema, publicKey].compactMap { $0 })
    }

    #if CloudKit
    func run() throws {
        var authentication = CloudKitServer.Authentication()
        do {
            if let keyID, let publicKey {
                authentication.serverToServer = try CloudKitVerifier(keyID: keyID, publicKeyFile: publicKey)
            }
        } catch {
            throw CommandFailure(message: "\(publicKey ?? ""): \(error)")
        }
        if let apiToken { authentication.apiToken = CloudKitAPIToken(apiToken: apiToken, webAuthToken: webAuthToken) }
        let faults: CloudKitFaultInjection?
        do {
            faults = try inject.map { text throws(CloudKitServerError) in try CloudKitFaultInjection(parsing: text) }
        } catch {
            throw ValidationError("--inject: \(error.message)")
        }
        let schemaValue = try schema.map { path throws(FerryError) in try StoreIndexes.schema(at: path) }
        let service: CloudKitService
        do {
            service = try CloudKitService(storePath: store, configuration: .init(
                containerIdentifier: container, environment: environment == "production" ? .production : .development,
                isReadOnly: readOnly, schema: schemaValue, baseURL: baseURL ?? "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"))
        } catch {
            throw CommandFailure(message: "\(store): \(error)")
        }
        let server: CloudKitServer
        do {
            server = try CloudKitServer(configuration: .init(
                host: host, port: port, container: container, environment: environment, authentication: authentication,
                faultInjection: faults, isQuiet: quiet), responder: service)
        } catch {
            throw ValidationError(error.message)
        }
        let outcome = ServeOutcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { try await server.run() } catch { outcome.set("\(error)") }
            done.signal()
        }
        done.wait()
        if let failure = outcome.failure { throw CommandFailure(message: failure) }
    }
    #else
    func run() throws {
        throw CommandFailure(
            message: "serve needs a build with the CloudKit trait: swift build -c release --traits CloudKit", exitCode: 2)
    }
    #endif
}

#if CloudKit
/// How the server's run ended, handed from its task to the waiting command.
private final class ServeOutcome: @unchecked Sendable {
    private let lock = Lock()
    private var message: String?

    func set(_ text: String) { lock.withLock { message = text } }
    var failure: String? { lock.withLock { message } }
}
#endif
