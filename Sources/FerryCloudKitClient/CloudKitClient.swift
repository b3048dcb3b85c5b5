#if CloudKit
import AsyncHTTPClient
import FerryCloudKit
import FerryCloudKitAuth
import FerryRecords
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A CloudKit Web Services client for one database of one container: requests written with the
/// wire model ``FerryCloudKit`` shares with the server, sent over async-http-client, signed or
/// carrying tokens, retried as CloudKit asks, answers read with the record model's one JSON engine.
///
/// ```swift
/// let client = CloudKitClient(configuration: .init(
///     container: "iCloud.com.example.app", database: "private",
///     credentials: try CloudKitCredentials(apiToken: token, webAuthToken: webAuthToken)))
/// let page = try await client.query(CloudKitQueryRequest(query: CloudKitQuery(recordType: "Message")))
/// ```
///
/// Requests go through the process's one shared `HTTPClient` (`HTTPClient.shared`), so a client
/// needs no shutdown. Tokens travel as query parameters and are never logged or put in errors.
public final class CloudKitClient: Sendable {
    /// Where requests go, as whom, and how they are retried.
    public struct Configuration: Sendable {
        /// Apple's CKWS host.
        public static let appleEndpoint = "https://api.apple-cloudkit.com"

        /// The scheme, host and port (and any path prefix) requests go to: Apple's host, or a
        /// `ferry serve` such as `http://127.0.0.1:8080`.
        public var endpoint: String
        /// The container identifier (`iCloud.com.example.app`).
        public var container: String
        /// `development` or `production`.
        public var environment: String
        /// `public`, `private` or `shared`.
        public var database: String
        /// How requests authenticate.
        public var credentials: CloudKitCredentials
        /// How failed requests are retried.
        public var retry: CloudKitRetryPolicy
        /// Seconds one request may take, answer included.
        public var timeout: Double
        /// The largest answer read, in bytes.
        public var maximumResponseBytes: Int

        public init(endpoint: String = Configuration.appleEndpoint, container: String, environment: String = "development",
                    database: String = "private", credentials: CloudKitCredentials = CloudKitCredentials(),
                    retry: CloudKitRetryPolicy = CloudKitRetryPolicy(), timeout: Double = 120, maximumResponseBytes: Int = 256 << 20) {
            self.endpoint = endpoint
            self.container = container
            self.environment = environment
            self.database = database
            self.credentials = credentials
            self.retry = retry
            self.timeout = timeout
            self.maximumResponseBytes = maximumResponseBytes
        }
    }

    /// What the client has sent so far.
    public struct Statistics: Sendable, Equatable {
        /// Requests sent, retries included.
        public var requests = 0
        /// Requests sent again after an answer worth retrying or a failed connection.
        public var retries = 0
        /// Of those, the ones answered THROTTLED or 429.
        public var throttled = 0
        /// Of those, the ones answered TRY_AGAIN_LATER, ZONE_BUSY or 503.
        public var unavailable = 0
        /// Seconds spent waiting before retries.
        public var secondsWaited = 0.0
        /// Seconds spent waiting where CloudKit named the wait (`retryAfter`, `Retry-After`).
        public var secondsAsked = 0.0
        /// Body bytes sent and received.
        public var bytesSent = 0, bytesReceived = 0
    }

    /// Where requests go, as whom, and how they are retried.
    public let configuration: Configuration
    private let counters = Mutex(Statistics())
    private let http: HTTPClient
    /// Waits before a retry; tests may measure it.
    private let sleep: @Sendable (Double) async throws -> Void

    /// A client as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
        http = HTTPClient.shared
        sleep = { seconds in try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9)) }
    }

    /// What the client has sent so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// The URL path of `operation` (`records/query`) in the configured database.
    public func path(_ operation: String) -> String {
        "/database/1/\(configuration.container)/\(configuration.environment)/\(configuration.database)/\(operation)"
    }

    // MARK: Endpoints

    /// `records/query`: one page.
    public func query(_ request: CloudKitQueryRequest) async throws(CloudKitClientError) -> RecordsResponse {
        try records(try await send("records/query", json: request.json), "records/query")
    }

    /// `records/lookup`.
    public func lookup(_ request: CloudKitLookupRequest) async throws(CloudKitClientError) -> RecordsResponse {
        try records(try await send("records/lookup", json: request.json), "records/lookup")
    }

    /// `records/modify`: one entry per operation, a record or an error dictionary.
    public func modify(_ request: CloudKitModifyRequest) async throws(CloudKitClientError) -> RecordsResponse {
        try records(try await send("records/modify", json: request.json), "records/modify")
    }

    /// `changes/database`: one page of the zones changed after a token.
    public func databaseChanges(_ request: CloudKitDatabaseChangesRequest) async throws(CloudKitClientError) -> ZonesResponse {
        let operation = request.isLegacy ? "zones/changes" : "changes/database"
        return try zones(try await send(operation, json: request.json), operation)
    }

    /// `changes/zone`: one page of each zone's record changes, with the answer's bytes (a saved
    /// change response, which a replay reads as it is).
    public func zoneChanges(_ request: CloudKitZoneChangesRequest) async throws(CloudKitClientError) -> (ZonesResponse, body: [UInt8]) {
        let body = try await send("changes/zone", json: request.json)
        return (try zones(body, "changes/zone"), body)
    }

    /// `zones/list`.
    public func listZones() async throws(CloudKitClientError) -> ZonesResponse {
        try zones(try await send("zones/list", method: .GET, body: nil), "zones/list")
    }

    /// `zones/modify`.
    public func modifyZones(_ request: CloudKitZonesModifyRequest) async throws(CloudKitClientError) -> ZonesResponse {
        try zones(try await send("zones/modify", json: request.json), "zones/modify")
    }

    // MARK: Sending

    /// Sends `json` to `operation` and returns the answer's body.
    public func send(_ operation: String, json: JSONValue) async throws(CloudKitClientError) -> [UInt8] {
        var out = JSONOutput(capacity: 1024)
        out.appendValue(json)
        return try await send(operation, method: .POST, body: Array(out.bytes))
    }

    /// Sends one request to `operation` of the configured database, retried as the policy says,
    /// and returns the body of its successful answer.
    ///
    /// - Throws: ``CloudKitClientError``: `server` with CloudKit's error for an answer not worth
    ///   retrying, `retriesExhausted` when the policy's attempts ran out, `transport` when no
    ///   answer came, `invalidResponse` for an answer over the size limit.
    public func send(_ operation: String, method: HTTPMethod, body: [UInt8]?) async throws(CloudKitClientError) -> [UInt8] {
        let path = path(operation)
        return try await exchange(url: configuration.endpoint + path + queryString(), signedPath: path, method: method, body: body,
                                  label: operation)
    }

    /// Sends one request to `url`, retried as the policy says, and returns the body of its
    /// successful answer: signed over `signedPath` when the credentials hold a key and the
    /// database is public; `label` names it in errors.
    func exchange(url: String, signedPath: String?, method: HTTPMethod, body: [UInt8]?, contentType: String = "application/json; charset=UTF-8",
                  label: String) async throws(CloudKitClientError) -> [UInt8] {
        var attempt = 0
        while true {
            attempt += 1
            let outcome = await sendOnce(url: url, signedPath: signedPath, method: method, body: body, contentType: contentType)
            let retryAfter: Double?
            let failure: CloudKitClientError
            switch outcome {
            case .success(let answer):
                if (200..<300).contains(answer.status) { return answer.body }
                let error = Self.serverError(status: answer.status, body: answer.body)
                let message = "\(label): CloudKit answered \(answer.status) \(error.code.rawValue): \(error.reason)"
                failure = CloudKitClientError(.server, message, server: error, status: answer.status)
                guard CloudKitRetryPolicy.isRetryable(status: answer.status, error: error) else { throw failure }
                retryAfter = error.retryAfter.map(Double.init) ?? answer.retryAfterHeader
                counters.withLock {
                    if answer.status == 429 || error.code == .throttled { $0.throttled += 1 } else { $0.unavailable += 1 }
                }
            case .failure(let error):
                guard error.code == .transport else { throw error }
                failure = error
                retryAfter = nil
            }
            guard attempt < configuration.retry.maximumAttempts else {
                throw CloudKitClientError(.retriesExhausted, "\(failure.message) (gave up after \(attempt) attempts)",
                                          server: failure.server, status: failure.status)
            }
            let wait = configuration.retry.delay(afterAttempt: attempt, retryAfter: retryAfter, unit: Double.random(in: 0...1))
            counters.withLock {
                $0.retries += 1
                $0.secondsWaited += wait
                if retryAfter != nil { $0.secondsAsked += wait }
            }
            do {
                try await sleep(wait)
            } catch {
                throw CloudKitClientError(.transport, "\(label): cancelled while waiting to retry")
            }
        }
    }

    private struct Answer {
        var status: Int
        var body: [UInt8]
        var retryAfterHeader: Double?
    }

    private func sendOnce(url: String, signedPath: String?, method: HTTPMethod, body: [UInt8]?,
                          contentType: String) async -> Result<Answer, CloudKitClientError> {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(body)
        }
        if let signedPath, let signer = configuration.credentials.signer, configuration.database == "public" {
            do {
                for (name, value) in try signer.headers(path: signedPath, body: body ?? []) {
                    request.headers.add(name: name, value: value)
                }
            } catch {
                return .failure(CloudKitClientError(.usage, "signing \(signedPath): \(error.message)"))
            }
        }
        let shown = signedPath ?? "an asset URL"
        counters.withLock {
            $0.requests += 1
            $0.bytesSent += body?.count ?? 0
        }
        do {
            let response = try await http.execute(request, timeout: .milliseconds(Int64(configuration.timeout * 1000)))
            let buffer: ByteBuffer
            do {
                buffer = try await response.body.collect(upTo: configuration.maximumResponseBytes)
            } catch is NIOTooManyBytesError {
                return .failure(CloudKitClientError(.invalidResponse, "\(shown): the answer is larger than \(configuration.maximumResponseBytes) bytes"))
            }
            let bytes = Array(buffer.readableBytesView)
            counters.withLock { $0.bytesReceived += bytes.count }
            return .success(Answer(status: Int(response.status.code), body: bytes,
                                   retryAfterHeader: response.headers.first(name: "Retry-After").flatMap(Double.init)))
        } catch {
            return .failure(CloudKitClientError(.transport, "\(shown): no answer from \(configuration.endpoint): \(error)"))
        }
    }

    /// `?ckAPIToken=…&ckWebAuthToken=…`, percent-encoded, or nothing.
    private func queryString() -> String {
        var parameters: [(String, String)] = []
        if let token = configuration.credentials.apiToken { parameters.append((CloudKitAPIToken.apiTokenParameter, token)) }
        if let token = configuration.credentials.webAuthToken, configuration.database != "public" {
            parameters.append((CloudKitAPIToken.webAuthTokenParameter, token))
        }
        guard !parameters.isEmpty else { return "" }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return "?" + parameters.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    /// CloudKit's error in an error answer's body, or one made from the status when the body is
    /// not an error body.
    static func serverError(status: Int, body: [UInt8]) -> CloudKitError {
        if case .object(let object)? = try? JSONValue(parsing: String(decoding: body, as: UTF8.self)),
           let code = object["serverErrorCode"]?.stringValue {
            let retryAfter = object["retryAfter"]?.numberValue.map { Int($0.doubleValue.rounded(.up)) }
            return CloudKitError(CloudKitError.Code(rawValue: code), object["reason"]?.stringValue ?? "", retryAfter: retryAfter)
        }
        let code: CloudKitError.Code = switch status {
        case 429: .throttled
        case 503: .tryAgainLater
        case 401: .authenticationFailed
        case 404: .notFound
        default: .internalError
        }
        return CloudKitError(code, "HTTP \(status) with a body that is not a CloudKit error")
    }

    // MARK: Reading answers

    private func document(_ body: [UInt8], _ operation: String) throws(CloudKitClientError) -> RecordDocument {
        do {
            return try body.withUnsafeBytes { (buffer) throws(RecordFormatError) -> RecordDocument in try RecordJSON.decodeDocument(buffer) }
        } catch {
            throw CloudKitClientError(.invalidResponse, "\(operation): the answer is not a CloudKit response: \(error)")
        }
    }

    private func records(_ body: [UInt8], _ operation: String) throws(CloudKitClientError) -> RecordsResponse {
        guard case .response(let response) = try document(body, operation) else {
            throw CloudKitClientError(.invalidResponse, "\(operation): expected an answer with a records array, found another shape")
        }
        return response
    }

    private func zones(_ body: [UInt8], _ operation: String) throws(CloudKitClientError) -> ZonesResponse {
        guard case .zones(let response) = try document(body, operation) else {
            throw CloudKitClientError(.invalidResponse, "\(operation): expected an answer with a zones array, found another shape")
        }
        return response
    }
}
#endif
