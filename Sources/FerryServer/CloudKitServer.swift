#if CloudKit
import FerryCloudKit
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A CloudKit Web Services HTTP server around any ``CloudKitResponder`` (Hummingbird 2).
///
/// Every HTTP request becomes a ``CloudKitRequest``; `/database/1/{container}/{environment}/{database}/…`
/// paths are authenticated as CKWS does (see ``Authentication``) and may get injected faults
/// (``CloudKitFaultInjection``); other paths (asset upload and download URLs) go straight to the
/// responder. Refusals, oversize bodies (413) and unreadable requests are answered with CKWS
/// error bodies `{uuid, serverErrorCode, reason}`; the server never stops on bad input.
///
/// ```swift
/// let server = try CloudKitServer(configuration: .init(port: 8080, container: id), responder: service)
/// try await server.run()  // prints the start line; serves until SIGINT or SIGTERM
/// ```
public struct CloudKitServer: Sendable {
    /// Where the server listens, whom it lets in, and what it injects.
    public let configuration: Configuration
    private let responder: any CloudKitResponder

    /// A server for `responder`; checks the configuration.
    ///
    /// - Throws: ``CloudKitServerError`` with `unauthenticatedNonLoopback` when no
    ///   authentication is configured and the host is not a loopback address, or
    ///   `invalidConfiguration` for a port outside 0–65535 or a body limit below 1.
    public init(configuration: Configuration, responder: any CloudKitResponder) throws(CloudKitServerError) {
        guard (0...65535).contains(configuration.port) else {
            throw CloudKitServerError(.invalidConfiguration, "expected a port from 0 to 65535 (0: any free port), found \(configuration.port)")
        }
        guard configuration.maxBodyBytes > 0 else {
            throw CloudKitServerError(.invalidConfiguration, "expected a body limit of 1 byte or more, found \(configuration.maxBodyBytes)")
        }
        if configuration.authentication.isNone && !Self.isLoopback(configuration.host) {
            throw CloudKitServerError(
                .unauthenticatedNonLoopback,
                "expected a loopback host (127.0.0.1, ::1, localhost) when no authentication is configured, found \(configuration.host); "
                    + "set an API token or a server-to-server key to listen on other addresses")
        }
        self.configuration = configuration
        self.responder = responder
    }

    /// Serves until SIGINT or SIGTERM, then stops taking connections and lets in-flight requests
    /// finish. Prints the start line (address, container, authentication) on stderr once
    /// listening.
    public func run() async throws {
        let service = self.service { address in
            FileHandle.standardError.write(Data((startLine(address) + "\n").utf8))
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: Self.logger))
        try await group.run()
    }

    /// The server as a ``Service`` to run in a `ServiceGroup` of your own (tests, a program that
    /// runs other services beside it): it serves until the group shuts down gracefully, letting
    /// in-flight requests finish. `onStart` is called once it listens, with the bound address
    /// (the port is the one taken when the configuration asked for 0).
    public func service(onStart: @escaping @Sendable (Address) async -> Void = { _ in }) -> some Service {
        let gate = RequestGate(
            responder: responder, authentication: configuration.authentication, faultInjection: configuration.faultInjection)
        let adaptor = HTTPAdaptor(gate: gate, maxBodyBytes: configuration.maxBodyBytes, log: configuration.isQuiet ? nil : RequestLog())
        let host = configuration.host
        return Application(
            responder: adaptor,
            configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "Ferry"),
            onServerRunning: { channel in
                await onStart(Address(host: host, port: channel.localAddress?.port ?? 0))
            },
            logger: Self.logger)
    }

    /// What ``run()`` prints once listening: the URL, what is served, and how requests are
    /// authenticated (or that they are not).
    public func startLine(_ address: Address) -> String {
        var line = "ferry serve: listening on \(address.url)"
        let served = [configuration.container.map { "container \($0)" }, configuration.environment.map { "environment \($0)" }]
            .compactMap { $0 }
        if !served.isEmpty {
            line += " (\(served.joined(separator: ", ")))"
        }
        line += "; authentication: \(configuration.authentication.summary)"
        if let faults = configuration.faultInjection, faults.isActive {
            line += "; injecting THROTTLED into \(faults.throttle * 100)% and TRY_AGAIN_LATER into \(faults.unavailable * 100)% of /database requests"
        }
        return line
    }

    /// Where a running server listens.
    public struct Address: Sendable, Equatable {
        /// The host as configured.
        public var host: String
        /// The bound port.
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `http://host:port` (IPv6 hosts in brackets).
        public var url: String {
            host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
        }
    }

    /// Whether `host` names a loopback address: `localhost`, `::1`, or `127.x.x.x`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" {
            return true
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Hummingbird's own log: warnings and errors only (the request log is ours).
    private static var logger: Logger {
        var logger = Logger(label: "ferry.serve")
        logger.logLevel = .warning
        return logger
    }
}
#endif
