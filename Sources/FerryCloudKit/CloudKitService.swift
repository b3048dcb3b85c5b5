import FerryIO
import FerryPredicate
import FerryRecords
import FerryStore

/// CloudKit Web Services over a Ferry store: answers CKWS requests
/// (`/database/1/{container}/{environment}/{database}/{operation}`) from a ``RecordStore`` file,
/// with CKWS's JSON (pretty-printed as CloudKit prints it), errors and limits. See `Docs/Serve.md`.
///
/// Reads run on connections of their own, concurrently (the store is in WAL mode); writes
/// (`records/modify`, `zones/modify`) take the one writer in turn and apply each request in one
/// transaction through the store's replay core, journaled, so `changes/*` return them.
/// ``respond(to:)`` may be called from any number of threads or tasks at once.
///
/// ```swift
/// let service = try CloudKitService(storePath: "chat.sqlite",
///                                   configuration: .init(containerIdentifier: "iCloud.com.example.chat"))
/// let answer = await service.respond(to: CloudKitRequest(method: "POST",
///     path: "/database/1/iCloud.com.example.chat/development/private/records/lookup",
///     body: Array(#"{"records":[{"recordName":"m1"}]}"#.utf8)))
/// ```
public final class CloudKitService: CloudKitResponder, @unchecked Sendable {
    /// How the service answers.
    public struct Configuration: Sendable {
        /// The container served: a request for another container is refused (BAD_REQUEST);
        /// `nil` serves any.
        public var containerIdentifier: String?
        /// The environment served: a request for the other one is refused (BAD_REQUEST).
        public var environment: CloudKitEnvironment
        /// Refuse every write (ACCESS_DENIED); the store is opened for reading only.
        public var isReadOnly: Bool
        /// A `.ckdb` schema: with one, a filter or sort on a field that is not QUERYABLE or
        /// SORTABLE is refused as CloudKit refuses it (``FerryPredicate/CloudKitSchema/init(parsing:)``).
        public var schema: CloudKitSchema?
        /// The URL the server is reached at (`http://127.0.0.1:8080`), for the URLs it hands out.
        public var baseURL: String
        /// The `userRecordName` written into `created` and `modified` of the records saved, and the
        /// `ownerRecordName` of zones that have none.
        public var userRecordName: String
        /// The largest request body accepted (QUOTA_EXCEEDED above it).
        public var maximumBodyBytes: Int
        /// How the store's connections are opened.
        public var store: RecordStore.Configuration

        /// Creates a configuration.
        public init(containerIdentifier: String? = nil, environment: CloudKitEnvironment = .development, isReadOnly: Bool = false,
                    schema: CloudKitSchema? = nil, baseURL: String = "http://127.0.0.1:8080",
                    userRecordName: String = "_ferry", maximumBodyBytes: Int = 16 << 20, store: RecordStore.Configuration = .init()) {
            self.containerIdentifier = containerIdentifier
            self.environment = environment
            self.isReadOnly = isReadOnly
            self.schema = schema
            self.baseURL = baseURL
            self.userRecordName = userRecordName
            self.maximumBodyBytes = maximumBodyBytes
            self.store = store
        }
    }

    /// The most records a query page, a lookup or a change page answers (CKWS's documented limit).
    public static let maximumResultsLimit = 200

    /// The store file.
    public let storePath: String
    /// The configuration.
    public let configuration: Configuration
    let connections: StoreConnections
    /// The deepest nesting of a request body.
    static let maximumDepth = 64

    /// Opens the store at `storePath` (for writing unless ``Configuration/isReadOnly``).
    ///
    /// - Throws: ``FerryStore/StoreError`` when the file is not a store or cannot be opened.
    public init(storePath: String, configuration: Configuration = .init()) throws {
        self.storePath = storePath
        self.configuration = configuration
        connections = try StoreConnections(path: storePath, readOnly: configuration.isReadOnly, configuration: configuration.store)
    }

    /// Answers one request.
    public func respond(to request: CloudKitRequest) async -> CloudKitResponse {
        answer(request)
    }

    /// Answers one request on the calling thread (``respond(to:)`` without the suspension).
    public func answer(_ request: CloudKitRequest) -> CloudKitResponse {
        do {
            return try route(request)
        } catch {
            return Self.response(for: Self.cloudKitError(error))
        }
    }

    /// The CKWS error a failure is answered with.
    static func cloudKitError(_ error: any Error) -> CloudKitError {
        switch error {
        case let error as CloudKitError: return error
        case let error as StoreError:
            switch error.code {
            case .busy: return CloudKitError(.tryAgainLater, "the store is busy: \(error.message)", retryAfter: 1)
            case .invalidToken, .invalidCursor, .invalidArgument, .invalidRecord: return .badRequest(error.message)
            case .notFound: return CloudKitError(.notFound, error.message)
            case .conflict: return CloudKitError(.conflict, error.message)
            default: return CloudKitError(.internalError, error.message)
            }
        case let error as PredicateError: return .badRequest(error.message)
        default: return CloudKitError(.internalError, "\(error)")
        }
    }

    /// A failed request's answer: the status of its code and its error body.
    static func response(for error: CloudKitError) -> CloudKitResponse { CloudKitResponse(error: error) }

    /// A 200 answer with `out`'s JSON, pretty-printed.
    static func ok(_ out: borrowing JSONOutput) -> CloudKitResponse {
        CloudKitResponse(status: 200, headers: [(name: "Content-Type", value: "application/json; charset=UTF-8")], body: WireJSON.pretty(out))
    }

    // MARK: Routing

    private func route(_ request: CloudKitRequest) throws -> CloudKitResponse {
        guard request.body.count <= configuration.maximumBodyBytes else {
            throw CloudKitError(.quotaExceeded, "expected a request body of at most \(configuration.maximumBodyBytes) bytes, found \(request.body.count)")
        }
        if request.path.hasPrefix(Self.uploadPathPrefix) {
            return try upload(token: request.path.dropFirst(Self.uploadPathPrefix.count), request: request)
        }
        if request.path.hasPrefix(Self.downloadPathPrefix) {
            return try download(request.path.dropFirst(Self.downloadPathPrefix.count), request: request)
        }
        guard let path = try CloudKitPath(parsing: request.path) else {
            throw CloudKitError(.notFound, "no such endpoint: \(JSONOutputLiteral(request.path)); paths start /database/1/")
        }
        if let container = configuration.containerIdentifier, path.container != container {
            throw CloudKitError.badRequest("unknown container \(JSONOutputLiteral(path.container)): this server serves \(JSONOutputLiteral(container))")
        }
        guard path.environment == configuration.environment.rawValue else {
            throw CloudKitError.badRequest("expected the environment \(configuration.environment.rawValue), found \(JSONOutputLiteral(path.environment))")
        }
        let method = request.method.uppercased()
        let allowsGet = path.operation == "zones/list"
        guard method == "POST" || (allowsGet && method == "GET") else {
            throw CloudKitError.badRequest("expected POST\(allowsGet ? " or GET" : "") for \(path.operation), found \(JSONOutputLiteral(request.method))")
        }
        let database = path.database
        switch path.operation {
        case "records/query": return try query(CloudKitQueryRequest(json: body(request)), database: database)
        case "records/lookup": return try lookup(CloudKitLookupRequest(json: body(request)), database: database)
        case "records/modify": return try modify(CloudKitModifyRequest(json: body(request)), database: database)
        case "records/changes": return try recordChanges(CloudKitRecordChangesRequest(json: body(request)), database: database)
        case "changes/zone":
            try requirePrivateOrShared(database, path.operation)
            return try zoneChanges(CloudKitZoneChangesRequest(json: body(request)), database: database)
        case "changes/database":
            try requirePrivateOrShared(database, path.operation)
            return try databaseChanges(CloudKitDatabaseChangesRequest(json: body(request), isLegacy: false), database: database)
        case "zones/changes":
            return try databaseChanges(CloudKitDatabaseChangesRequest(json: body(request), isLegacy: true), database: database)
        case "assets/upload": return try uploadTokens(body(request))
        case "zones/list": return try listZones(database: database)
        case "zones/lookup": return try lookupZones(CloudKitZonesLookupRequest(json: body(request)), database: database)
        case "zones/modify": return try modifyZones(CloudKitZonesModifyRequest(json: body(request)), database: database)
        default:
            throw CloudKitError(.notFound, "no such operation: \(JSONOutputLiteral(path.operation)) in \(JSONOutputLiteral(path.text))")
        }
    }

    private func body(_ request: CloudKitRequest) throws(CloudKitError) -> JSONObject {
        try WireJSON.parseObject(request.body, maximumDepth: Self.maximumDepth)
    }

    private func requirePrivateOrShared(_ database: CloudKitDatabase, _ operation: String) throws(CloudKitError) {
        guard database != .public else {
            throw CloudKitError.badRequest("\(operation) is served for the private and shared databases only, as in CloudKit")
        }
    }

    // MARK: Zones

    /// The store's live zones of `database`, the default zone first (always there).
    func liveZones(_ store: RecordStore, database: CloudKitDatabase) throws -> [StoreZone] {
        var zones = try store.zones().filter { $0.database == database.rawValue && !$0.isDeleted }
        if !zones.contains(where: { $0.zoneID.isDefaultZone }) {
            zones.insert(StoreZone(describing: .default, database: database.rawValue, changeToken: StoreToken(storeID: store.storeID, sequence: 0)), at: 0)
        }
        return zones
    }

    /// The store's zone a request names (by name; the owner is the user's), or `nil`.
    func zone(named requested: ZoneID?, in zones: [StoreZone]) -> StoreZone? {
        let name = requested?.zoneName ?? ZoneID.defaultZoneName
        return zones.first { $0.zoneID.zoneName == name }
    }

    /// A zone ID as answers give it: with its owner and `zoneType`.
    func answered(_ zone: ZoneID) -> ZoneID {
        var zone = zone
        if zone.ownerRecordName == nil { zone.ownerRecordName = configuration.userRecordName }
        if zone.zoneType == nil { zone.zoneType = zone.isDefaultZone ? "DEFAULT_ZONE" : "REGULAR_CUSTOM_ZONE" }
        return zone
    }

    func appendZoneID(_ zone: ZoneID, into out: inout JSONOutput) {
        RecordJSON.encode(answered(zone), into: &out)
    }

    // MARK: Records in answers

    /// Appends a stored record's JSON, its numbers as strings when asked.
    static func appendRecord(_ json: [UInt8], numbersAsStrings: Bool, into out: inout JSONOutput) {
        guard numbersAsStrings, case .object(let object)? = json.withUnsafeBytes({ try? RecordJSON.parseValue($0) }) else {
            json.withUnsafeBytes { out.append($0) }
            return
        }
        out.appendValue(.object(WireJSON.convertingNumbers(object, toStrings: true)))
    }

    /// The page size a request asks for: `resultsLimit` (at most 200), 200 by default.
    static func resultsLimit(_ asked: Int?) throws(CloudKitError) -> Int {
        guard let asked else { return maximumResultsLimit }
        guard asked >= 1 else { throw .badRequest("expected resultsLimit to be at least 1, found \(asked)") }
        guard asked <= maximumResultsLimit else {
            throw .badRequest("expected resultsLimit to be at most \(maximumResultsLimit), found \(asked)")
        }
        return asked
    }
}
