#if CloudKit
import AsyncHTTPClient
import FerryCloudKit
import FerryServer
import Foundation
import Logging
import NIOHTTP1
import ServiceLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct RobustnessTests {
    @Test func aBodyOverTheLimitIsAnswered413AndTheServerGoesOn() async throws {
        try await Harness.with(.init(maxBodyBytes: 1024)) { server in
            #expect(try await server.send(.POST, publicQuery, body: Array(repeating: 0x20, count: 1024)).status == 200)
            let answer = try await server.send(.POST, publicQuery, body: Array(repeating: 0x20, count: 64 * 1024))
            answer.expectError("QUOTA_EXCEEDED", 413)
            #expect(try await server.send(.POST, publicQuery, body: queryBody).status == 200)
        }
    }

    /// Bytes that are not HTTP, a bad escape, odd methods and paths: each is answered or the
    /// connection closed, and the server answers a good request afterwards.
    @Test func malformedRequestsNeverTakeTheServerDown() async throws {
        try await Harness.with { server in
            let raw: [String] = [
                "GARBAGE\r\n\r\n",
                "\u{0}\u{1}\u{2}\u{FF}not http at all",
                "POST /database/1/c/development/public/records/query HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999999999999\r\n\r\n{",
                "POST /database/1/c/development/public/records/query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n",
                "GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
                "POST /database/1/c/development/public/records/query HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"a",
            ]
            for text in raw {
                _ = try RawSocket.exchange(Array(text.utf8), port: server.address.port)
                #expect(try await server.send(.POST, publicQuery, body: queryBody).status == 200, "after \(text.prefix(40))")
            }
            let badEscape = try RawSocket.exchange(
                Array("GET /database/1/c/development/%ZZpublic/zones/list HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                port: server.address.port)
            #expect(String(decoding: badEscape, as: UTF8.self).contains("BAD_REQUEST"))
            for method: HTTPMethod in [.GET, .PUT, .DELETE] {
                let answer = try await server.send(method, publicQuery, body: [0xFF, 0xFE, 0x00])
                // The echo responder answers anything: the HTTP layer passes every method on.
                #expect(answer.status == 200, "\(method) \(answer.status) \(answer.text)")
            }
            // A method HTTP's parser does not know is refused by the parser itself (a bare 400,
            // the connection closed) before any request exists: no CKWS body, but no harm either.
            let unknown = try await server.send(.RAW(value: "FROB"), publicQuery, body: queryBody)
            #expect(unknown.status == 400)
            #expect(try await server.send(.POST, publicQuery, body: queryBody).status == 200)
        }
    }

    @Test func gracefulShutdownLetsAnInFlightRequestFinish() async throws {
        let gate = Gate()
        let server = try CloudKitServer(configuration: .init(port: 0, isQuiet: true), responder: HeldResponder(gate: gate))
        let (addresses, continuation) = AsyncStream.makeStream(of: CloudKitServer.Address.self)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: server.service { continuation.yield($0) })], logger: Logger(label: "test")))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init())
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = addresses.makeAsyncIterator()
            let address = try #require(await iterator.next())
            let harness = Harness(address: address, client: client)
            async let answer = harness.send(.POST, publicQuery, body: queryBody)
            await gate.waitUntilEntered()  // the request is inside the responder
            await group.triggerGracefulShutdown()
            await gate.release()
            let finished = try await answer
            #expect(finished.status == 200)
            #expect(finished.text == "finished")
            try await tasks.waitForAll()  // the server stopped
        }
        try await client.shutdown()
    }
}

/// Holds each request until released, and tells when one has arrived.
actor Gate {
    private var entered = false
    private var enteredWaiters: [CheckedContinuation<Void, Never>] = []
    private var released = false
    private var releaseWaiters: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        entered = true
        enteredWaiters.forEach { $0.resume() }
        enteredWaiters = []
        if !released {
            await withCheckedContinuation { releaseWaiters.append($0) }
        }
    }

    func waitUntilEntered() async {
        if !entered {
            await withCheckedContinuation { enteredWaiters.append($0) }
        }
    }

    func release() {
        released = true
        releaseWaiters.forEach { $0.resume() }
        releaseWaiters = []
    }
}

struct HeldResponder: CloudKitResponder {
    let gate: Gate

    func respond(to request: CloudKitRequest) async -> CloudKitResponse {
        await gate.enter()
        return CloudKitResponse(status: 200, body: Array("finished".utf8))
    }
}

/// A TCP connection to 127.0.0.1 that writes bytes and reads until the server closes (reads
/// time out after 10 s, so a test cannot hang).
enum RawSocket {
    struct Failure: Error { var call: String }

    static func exchange(_ bytes: [UInt8], port: Int) throws -> [UInt8] {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(call: "socket") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        let noSignal: Int32 = 0
        #else
        let noSignal = Int32(MSG_NOSIGNAL)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(call: "connect") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignal) }
            guard written > 0 else { break }  // the server may close early on garbage
            offset += written
        }
        shutdown(fd, Int32(SHUT_WR))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer.append(contentsOf: buffer[..<count])
        }
        return answer
    }
}
#endif
