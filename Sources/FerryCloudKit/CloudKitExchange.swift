/// One HTTP exchange as the CloudKit Web Services (CKWS) service sees it, whatever HTTP server
/// carries it: the server module turns its requests into these and writes the answers back.
///
/// The boundary between the service (paths, JSON, the store) and the HTTP layer (sockets,
/// authentication, fault injection, the request log) is ``CloudKitResponder``.
public struct CloudKitRequest: Sendable {
    /// `GET`, `POST`, … as sent.
    public var method: String
    /// The URL path as sent, percent-encoded, without the query (`/database/1/iCloud.x/development/public/records/query`).
    public var path: String
    /// The query parameters, percent-decoded, in the order sent (`ckAPIToken`, `ckWebAuthToken`, …).
    public var query: [(name: String, value: String)]
    /// Header fields in the order sent; names as sent (compare them case-insensitively).
    public var headers: [(name: String, value: String)]
    /// The request body.
    public var body: [UInt8]

    public init(
        method: String, path: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first header named `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The first query parameter named `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// The answer to a ``CloudKitRequest``.
public struct CloudKitResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header fields (`Content-Type` among them).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What answers CloudKit requests: the service over a store, or a layer around it.
public protocol CloudKitResponder: Sendable {
    func respond(to request: CloudKitRequest) async -> CloudKitResponse
}
