// A CloudKit Web Services HTTP server whose responder echoes each request back as JSON: the HTTP
// layer (authentication, fault injection, limits, the request log, shutdown on SIGINT/SIGTERM)
// without a store, for trying a client's signing and retries. Needs the CloudKit trait:
//
//     swift run --traits CloudKit ferry-example-echo-server [PORT] [KEY_ID PUBLIC_KEY_PEM] [--inject SPEC]
#if CloudKit
import FerryCloudKit
import FerryCloudKitAuth
import FerryServer
import Foundation

struct Echo: CloudKitResponder {
    func respond(to request: CloudKitRequest) async -> CloudKitResponse {
        let object: [String: Any] = [
            "method": request.method, "path": request.path,
            "body": String(decoding: request.body, as: UTF8.self),
        ]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return CloudKitResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body))
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var configuration = CloudKitServer.Configuration(container: "iCloud.com.example.echo", environment: "development")
if let index = arguments.firstIndex(of: "--inject"), index + 1 < arguments.count {
    configuration.faultInjection = try CloudKitFaultInjection(parsing: arguments[index + 1])
    arguments.removeSubrange(index...index + 1)
}
if let port = arguments.first.flatMap({ Int($0) }) {
    configuration.port = port
}
if arguments.count >= 3 {
    configuration.authentication.serverToServer = try CloudKitVerifier(keyID: arguments[1], publicKeyFile: arguments[2])
}
try await CloudKitServer(configuration: configuration, responder: Echo()).run()
#else
print("ferry-example-echo-server needs the CloudKit trait: swift run --traits CloudKit ferry-example-echo-server")
#endif
