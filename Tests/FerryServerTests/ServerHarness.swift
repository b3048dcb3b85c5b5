#if CloudKit
import AsyncHTTPClient
import FerryCloudKit
import FerryServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization
import Testing

/// A real responder for the tests: answers every request with its method, path, query and body
/// as JSON, so a test sees exactly what the server passed through.
struct EchoResponder: CloudKitResponder {
    func respond(to request: CloudKitRequest) async -> CloudKitResponse {
        let object: [String: Any] = [
            "method": request.method,
            "path": request.path,
            "query": request.query.map { [$0.name, $0.value] },
            "body": String(decoding: request.body, as: UTF8.self),
        ]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return CloudKitResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body))
    }
}

/// Forwards to a responder set once the server has bound its port, so a ``CloudKitService`` can
/// be made with the bound address as its `baseURL` (the URLs it hands out must reach the server).
final class LateResponder: CloudKitResponder {
    private let responder = Mutex<(any CloudKitResponder)?>(nil)

    func set(_ responder: any CloudKitResponder) {
        self.responder.withLock { $0 = responder }
    }

    func respond(to request: CloudKitRequest) async -> CloudKitResponse {
        guard let responder = self.responder.withLock({ $0 }) else {
            return CloudKitResponse(status: 503, headers: [("Content-Type", "application/json")],
                                    body: Array(#"{"serverErrorCode":"SERVICE_UNAVAILABLE","reason":"not ready"}"#.utf8))
        }
        return await responder.respond(to: request)
    }
}

/// An answer from the server under test.
struct Answer {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
    var serverErrorCode: String? { json["serverErrorCode"] as? String }
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Checks that this is a CKWS error body with `code` and `status`.
    func expectError(_ code: String, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(text)", sourceLocation: sourceLocation)
        #expect(serverErrorCode == code, "\(text)", sourceLocation: sourceLocation)
        #expect((json["uuid"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect((json["reason"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
    }
}

/// A running server on 127.0.0.1 (any free port) and a client for it.
struct Harness {
    let address: CloudKitServer.Address
    let client: HTTPClient

    static let database = "/database/1/iCloud.com.example.ferry/development"

    /// Sends one request and reads the whole answer (bounded: 30 s, 16 MiB).
    func send(
        _ method: HTTPMethod = .POST, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: address.url + path)
        request.method = method
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(body)
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return Answer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            body: Array(buffer.readableBytesView))
    }

    /// Runs `body` against a server with `configuration` (its port replaced by 0) around a real
    /// ``CloudKitService`` over the store at `storePath`, its `baseURL` the server's bound address.
    static func serving<T: Sendable>(
        _ storePath: String, _ configuration: CloudKitServer.Configuration = .init(),
        service serviceConfiguration: CloudKitService.Configuration = .init(),
        _ body: (Harness, CloudKitService) async throws -> T
    ) async throws -> T {
        let late = LateResponder()
        return try await with(configuration, responder: late) { harness in
            var serviceConfiguration = serviceConfiguration
            serviceConfiguration.baseURL = harness.address.url
            let service = try CloudKitService(storePath: storePath, configuration: serviceConfiguration)
            late.set(service)
            return try await body(harness, service)
        }
    }

    /// Runs `body` against a server with `configuration` (its port replaced by 0) around
    /// `responder`, then shuts the server down gracefully and waits for it.
    static func with<T: Sendable>(
        _ configuration: CloudKitServer.Configuration = .init(), responder: any CloudKitResponder = EchoResponder(),
        _ body: (Harness) async throws -> T
    ) async throws -> T {
        var configuration = configuration
        configuration.port = 0
        configuration.isQuiet = true
        let server = try CloudKitServer(configuration: configuration, responder: responder)
        let (addresses, continuation) = AsyncStream.makeStream(of: CloudKitServer.Address.self)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: server.service { continuation.yield($0) })], logger: Logger(label: "test")))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init())
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = addresses.makeAsyncIterator()
            guard let address = await iterator.next() else { throw CancellationError() }
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await body(Harness(address: address, client: client)))
            } catch {
                outcome = .failure(error)
            }
            try await client.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try outcome.get()
        }
    }
}

#endif
