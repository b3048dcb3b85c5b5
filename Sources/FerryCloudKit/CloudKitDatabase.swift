/// One of a container's three databases.
public enum CloudKitDatabase: String, Sendable, CaseIterable {
    case `public`, `private`, shared
}

/// A container's environment.
public enum CloudKitEnvironment: String, Sendable, CaseIterable {
    case development, production
}

/// A CKWS database path, `/database/1/{container}/{environment}/{database}/{operation}`, read.
public struct CloudKitPath: Sendable, Equatable {
    /// The container identifier (`iCloud.com.example.app`).
    public var container: String
    /// The environment segment as sent.
    public var environment: String
    /// The database.
    public var database: CloudKitDatabase
    /// The operation: `records/query`, `zones/list`, …
    public var operation: String

    /// Creates a path.
    public init(container: String, environment: String, database: CloudKitDatabase, operation: String) {
        self.container = container
        self.environment = environment
        self.database = database
        self.operation = operation
    }

    /// Reads a URL path; `nil` when it is not under `/database/1/`.
    ///
    /// - Throws: ``CloudKitError`` (BAD_REQUEST) for a path under `/database/1/` that names no database.
    public init?(parsing path: String) throws(CloudKitError) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0].isEmpty, parts[1] == "database" else { return nil }
        guard parts[2] == "1" else {
            throw CloudKitError(.notFound, "expected the protocol version 1 in /database/1/…, found \(JSONOutputLiteral(parts[2]))")
        }
        guard parts.count >= 7, !parts[3].isEmpty, !parts[4].isEmpty else {
            throw CloudKitError(.notFound, "expected /database/1/{container}/{environment}/{database}/{operation}, found \(JSONOutputLiteral(path))")
        }
        guard let database = CloudKitDatabase(rawValue: parts[5]) else {
            throw CloudKitError.badRequest("expected the database public, private or shared, found \(JSONOutputLiteral(parts[5]))")
        }
        self.init(container: parts[3], environment: parts[4], database: database, operation: parts[6...].joined(separator: "/"))
    }

    /// The path's text.
    public var text: String { "/database/1/\(container)/\(environment)/\(database.rawValue)/\(operation)" }
}
