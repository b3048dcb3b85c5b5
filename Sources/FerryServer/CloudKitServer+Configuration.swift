#if CloudKit
import FerryCloudKitAuth

extension CloudKitServer {
    /// Where the server listens, whom it lets in, and what it injects.
    public struct Configuration: Sendable {
        /// The address to bind: `127.0.0.1` by default. Without authentication only a loopback
        /// address (`127.x.x.x`, `::1`, `localhost`) is allowed.
        public var host: String
        /// The port: 8080 by default; 0 takes any free port (the start line and `onStart` say which).
        public var port: Int
        /// The container served, for the start line only (the responder decides what is served).
        public var container: String?
        /// The environment served, for the start line only.
        public var environment: String?
        /// Who may call `/database/…` paths.
        public var authentication: Authentication
        /// Errors injected into a fraction of `/database/…` requests; `nil` for none.
        public var faultInjection: CloudKitFaultInjection?
        /// No line per request on stderr (the start line is still printed by ``CloudKitServer/run()``).
        public var isQuiet: Bool
        /// The largest request body accepted, in bytes: 32 MiB by default; larger bodies are
        /// answered 413 QUOTA_EXCEEDED.
        public var maxBodyBytes: Int

        public init(
            host: String = "127.0.0.1", port: Int = 8080, container: String? = nil, environment: String? = nil,
            authentication: Authentication = Authentication(), faultInjection: CloudKitFaultInjection? = nil,
            isQuiet: Bool = false, maxBodyBytes: Int = 32 << 20
        ) {
            self.host = host
            self.port = port
            self.container = container
            self.environment = environment
            self.authentication = authentication
            self.faultInjection = faultInjection
            self.isQuiet = isQuiet
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// Who may call `/database/1/{container}/{environment}/{database}/…` paths.
    ///
    /// - public database: a server-to-server signature verified by ``serverToServer`` when the
    ///   request carries the key ID header or no API token is configured; otherwise `ckAPIToken`
    ///   checked by ``apiToken``.
    /// - private and shared databases: `ckAPIToken` and `ckWebAuthToken` checked by ``apiToken``
    ///   (server-to-server keys reach the public database only, as in CloudKit).
    /// - neither configured: every request is let in, and the server binds loopback only.
    ///
    /// Other paths (the asset upload and download URLs the service hands out) are not
    /// authenticated: their URLs are the credentials, as in CloudKit.
    public struct Authentication: Sendable {
        /// Verifies server-to-server signatures (`--key-id ID --public-key key.pem`).
        public var serverToServer: CloudKitVerifier?
        /// Checks `ckAPIToken` and `ckWebAuthToken` (`--api-token`).
        public var apiToken: CloudKitAPIToken?

        public init(serverToServer: CloudKitVerifier? = nil, apiToken: CloudKitAPIToken? = nil) {
            self.serverToServer = serverToServer
            self.apiToken = apiToken
        }

        /// Whether requests are let in unchecked.
        public var isNone: Bool { serverToServer == nil && apiToken == nil }

        /// What the start line says about authentication.
        public var summary: String {
            var parts: [String] = []
            if let serverToServer {
                parts.append("public database: server-to-server key \(serverToServer.keyIDs.joined(separator: ", ")) (date window ±\(serverToServer.configuration.dateWindowSeconds) s)")
            }
            if let apiToken {
                parts.append("API token (ckAPIToken) for \(serverToServer == nil ? "every database" : "the public database as well, and for private and shared")"
                    + "; private and shared also need ckWebAuthToken (\(apiToken.webAuthToken == nil ? "any non-empty value" : "the configured one"))")
            }
            if parts.isEmpty {
                return "none: requests are unauthenticated (loopback only)"
            }
            return parts.joined(separator: "; ")
        }
    }
}
#endif
