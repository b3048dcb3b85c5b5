#if CloudKit
import FerryCloudKit
import FerryCloudKitAuth
import FerryIO
import Foundation

/// What stands between an HTTP request and the responder: authentication of `/database/…`
/// paths, then fault injection, then the responder. A ``CloudKitResponder`` itself, so tests can
/// call it without HTTP.
struct RequestGate: CloudKitResponder {
    let responder: any CloudKitResponder
    let authentication: CloudKitServer.Authentication
    let faults: FaultDraw?

    init(responder: any CloudKitResponder, authentication: CloudKitServer.Authentication, faultInjection: CloudKitFaultInjection?) {
        self.responder = responder
        self.authentication = authentication
        self.faults = faultInjection.flatMap { $0.isActive ? FaultDraw($0) : nil }
    }

    func respond(to request: CloudKitRequest) async -> CloudKitResponse {
        guard let decoded = request.path.removingPercentEncoding else {
            return CloudKitResponse(error: CloudKitError(.badRequest, "expected a percent-encoded URL path, found a malformed escape"))
        }
        guard decoded.hasPrefix("/database/") else {
            return await responder.respond(to: request)  // asset URLs: their URL is the credential
        }
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if segments.contains(where: { $0 == "." || $0 == ".." }) {
            return CloudKitResponse(error: CloudKitError(.badRequest, "expected a path without . or .. segments, found \(request.path.prefix(200))"))
        }
        // database/1/{container}/{environment}/{database}/…
        let database = segments.count > 4 ? segments[segments.startIndex + 4] : ""
        if let refusal = authenticate(request, privateDatabase: database == "private" || database == "shared") {
            return refusal
        }
        if let faults, let injected = faults.draw() {
            return injected
        }
        return await responder.respond(to: request)
    }

    /// `nil` when the request may pass, else the CKWS error that refuses it.
    private func authenticate(_ request: CloudKitRequest, privateDatabase: Bool) -> CloudKitResponse? {
        if authentication.isNone {
            return nil
        }
        do {
            if privateDatabase {
                guard let apiToken = authentication.apiToken else {
                    return CloudKitResponse(error: CloudKitError(.authenticationFailed, "server-to-server keys reach the public database only; this server takes no API token for private and shared"))
                }
                try apiToken.verify(
                    apiToken: request.queryValue(CloudKitAPIToken.apiTokenParameter),
                    webAuthToken: request.queryValue(CloudKitAPIToken.webAuthTokenParameter), needsWebAuthToken: true)
                return nil
            }
            let signed = request.header(CloudKitSignature.keyIDHeader) != nil
            if let verifier = authentication.serverToServer, signed || authentication.apiToken == nil {
                try verifier.verify(
                    keyID: request.header(CloudKitSignature.keyIDHeader), date: request.header(CloudKitSignature.dateHeader),
                    signature: request.header(CloudKitSignature.signatureHeader), path: request.path, body: request.body)
            } else if let apiToken = authentication.apiToken {
                try apiToken.verify(
                    apiToken: request.queryValue(CloudKitAPIToken.apiTokenParameter), webAuthToken: nil, needsWebAuthToken: false)
            }
            return nil
        } catch {  // every throw above is a CloudKitAuthError
            switch error.code {
            case .missingWebAuthToken, .wrongWebAuthToken:
                return CloudKitResponse(error: CloudKitError(.authenticationRequired, error.message))
            default:
                return CloudKitResponse(error: CloudKitError(.authenticationFailed, error.message))
            }
        }
    }
}

/// The draws of fault injection, one per request, under a lock (requests run concurrently).
final class FaultDraw: @unchecked Sendable {  // `generator` is touched under `lock` only
    private let injection: CloudKitFaultInjection
    private let lock = Lock()
    private var generator: SplitMix64?

    init(_ injection: CloudKitFaultInjection) {
        self.injection = injection
        generator = injection.seed.map(SplitMix64.init(seed:))
    }

    /// The injected error for the next request, or `nil` to let it through.
    func draw() -> CloudKitResponse? {
        let value: Double = lock.withLock {
            if generator != nil {
                return Double.random(in: 0..<1, using: &generator!)
            }
            return Double.random(in: 0..<1)
        }
        if value < injection.throttle {
            return CloudKitResponse(error: CloudKitError(.throttled, "request throttled (injected by --inject)", retryAfter: injection.retryAfterSeconds))
        }
        if value < injection.throttle + injection.unavailable {
            return CloudKitResponse(error: CloudKitError(.tryAgainLater, "service unavailable, try again later (injected by --inject)",
                retryAfter: injection.retryAfterSeconds))
        }
        return nil
    }
}
#endif
