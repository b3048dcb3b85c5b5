#if CloudKit
import FerryCloudKitAuth
import FerryServer
import Foundation
import Testing

/// The signing vector FerryCloudKitAuthTests checks (made by Scripts/ckws-signing-vector.py).
struct Vector: Decodable {
    var keyID: String
    var privateKeyPEM: String
    var publicKeyPEM: String
    var date: String
    var noBodySubpath: String
    var noBodySignatureEmptyHashField: String
    var noBodySignatureEmptyBodyHash: String

    static func load(file: StaticString = #filePath) throws -> Vector {
        let tests = URL(fileURLWithPath: "\(file)").deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: tests.appendingPathComponent("FerryCloudKitAuthTests/Vectors/ckws-signing-vector.json"))
        return try JSONDecoder().decode(Vector.self, from: data)
    }

    func signer() throws -> CloudKitSigner { try CloudKitSigner(keyID: keyID, privateKeyPEM: privateKeyPEM) }

    func authentication(dateWindowSeconds: Int64 = 300, apiToken: CloudKitAPIToken? = nil) throws -> CloudKitServer.Authentication {
        CloudKitServer.Authentication(
            serverToServer: try CloudKitVerifier(
                keyID: keyID, publicKeyPEM: publicKeyPEM, configuration: .init(dateWindowSeconds: dateWindowSeconds)),
            apiToken: apiToken)
    }
}

let publicQuery = Harness.database + "/public/records/query"
let queryBody = Array(#"{"query":{"recordType":"Message"}}"#.utf8)
let token = String(repeating: "0123456789abcdef", count: 4)

@Suite struct SignedRequestTests {
    @Test func aSignedRequestReachesTheResponderWithItsBody() async throws {
        let vector = try Vector.load()
        let signer = try vector.signer()
        try await Harness.with(.init(authentication: try vector.authentication())) { server in
            let answer = try await server.send(.POST, publicQuery, headers: try signer.headers(path: publicQuery, body: queryBody), body: queryBody)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.json["path"] as? String == publicQuery)
            #expect(answer.json["body"] as? String == String(decoding: queryBody, as: UTF8.self))
        }
    }

    /// Each mistake a client makes, refused with AUTHENTICATION_FAILED 401 and a CKWS body.
    @Test(arguments: ["wrong signature", "stale date", "tampered body", "wrong path", "missing signature header",
                      "missing date header", "full URL signed", "hex digest"])
    func aWronglySignedRequestIsRefused(mistake: String) async throws {
        let vector = try Vector.load()
        let signer = try vector.signer()
        let otherSigner = try CloudKitSigner(keyID: vector.keyID, privateKeyPEM: Self.otherKeyPEM)
        try await Harness.with(.init(authentication: try vector.authentication())) { server in
            var path = publicQuery
            var body = queryBody
            var headers = try signer.headers(path: path, body: body)
            switch mistake {
            case "wrong signature": headers = try otherSigner.headers(path: path, body: body)
            case "stale date": headers = try signer.headers(path: path, body: body, secondsSince1970: Int64(Date().timeIntervalSince1970) - 3600)
            case "tampered body": body = Array(#"{"query":{"recordType":"Secret"}}"#.utf8)
            case "wrong path": path = Harness.database + "/public/records/lookup"
            case "missing signature header": headers.removeAll { $0.name == CloudKitSignature.signatureHeader }
            case "missing date header": headers.removeAll { $0.name == CloudKitSignature.dateHeader }
            case "full URL signed":
                let date = CloudKitSignature.dateString(secondsSince1970: Int64(Date().timeIntervalSince1970))
                let signature = signer.signature(date: date, subpath: server.address.url + path, body: body)
                headers = [(CloudKitSignature.keyIDHeader, vector.keyID), (CloudKitSignature.dateHeader, date), (CloudKitSignature.signatureHeader, signature)]
            case "hex digest":
                headers = headers.map { $0.name == CloudKitSignature.signatureHeader ? ($0.name, "3045022100" + String(repeating: "ab", count: 32)) : $0 }
            default: Issue.record("no case \(mistake)")
            }
            let answer = try await server.send(.POST, path, headers: headers, body: body)
            answer.expectError("AUTHENTICATION_FAILED", 401)
            #expect(answer.json["path"] == nil)  // the responder never saw it
        }
    }

    /// Python's signatures of a body-less `zones/list` (the vector), one over an empty hash field
    /// and one over the hash of the empty body, both accepted over HTTP. The vector is dated
    /// 2026-11-25, so this server's window is made wide enough to hold it.
    @Test func aRequestWithNoBodyIsAcceptedSignedEitherWay() async throws {
        let vector = try Vector.load()
        let wide = try vector.authentication(dateWindowSeconds: 100 * 365 * 86_400)
        try await Harness.with(.init(authentication: wide)) { server in
            for signature in [vector.noBodySignatureEmptyHashField, vector.noBodySignatureEmptyBodyHash] {
                let headers = [
                    (CloudKitSignature.keyIDHeader, vector.keyID), (CloudKitSignature.dateHeader, vector.date),
                    (CloudKitSignature.signatureHeader, signature),
                ]
                let answer = try await server.send(.GET, vector.noBodySubpath, headers: headers)
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.json["method"] as? String == "GET")
            }
            // The Swift signer's no-body signature (the empty body's hash), with a query after the path.
            let path = Harness.database + "/public/zones/list"
            let answer = try await server.send(.GET, path + "?x=1", headers: try vector.signer().headers(path: path, body: []))
            #expect(answer.status == 200, "\(answer.text)")
        }
    }

    @Test func keysReachThePublicDatabaseOnly() async throws {
        let vector = try Vector.load()
        let path = Harness.database + "/private/records/query"
        try await Harness.with(.init(authentication: try vector.authentication())) { server in
            let answer = try await server.send(.POST, path, headers: try vector.signer().headers(path: path, body: queryBody), body: queryBody)
            answer.expectError("AUTHENTICATION_FAILED", 401)
        }
    }

    @Test func otherPathsAreForwardedUnauthenticated() async throws {
        let vector = try Vector.load()
        try await Harness.with(.init(authentication: try vector.authentication())) { server in
            let answer = try await server.send(.POST, "/assets/upload/abc", body: [1, 2, 3])
            #expect(answer.status == 200)
            #expect(answer.json["path"] as? String == "/assets/upload/abc")
        }
    }

    @Test func anEncodedDatabaseSegmentCannotDodgeAuthentication() async throws {
        try await Harness.with(.init(authentication: .init(apiToken: CloudKitAPIToken(apiToken: token)))) { server in
            // `privat%65` is `private`: it needs the web auth token too.
            let answer = try await server.send(.POST, Harness.database + "/privat%65/records/query?ckAPIToken=\(token)", body: queryBody)
            answer.expectError("AUTHENTICATION_REQUIRED", 421)
            let dotted = try await server.send(.POST, Harness.database + "/public/../private/records/query?ckAPIToken=\(token)", body: queryBody)
            dotted.expectError("BAD_REQUEST", 400)
        }
    }

    /// A second P-256 key (not the vector's), for "signed with another key".
    static let otherKeyPEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIFRQJQOHkiBXYOvTomfa5Ygouh59QK+imoMlMQ1qCJx5oAoGCCqGSM49
        AwEHoUQDQgAELuglaZ5I1iqtZsu1r0hpPDIR8d4cSrhntMyFWIZpxYpSOCYFja45
        AAUnrJVvOaVWQAaAdYI5AuYZKkOuvCJWew==
        -----END EC PRIVATE KEY-----
        """
}

@Suite struct APITokenTests {
    let authentication = CloudKitServer.Authentication(apiToken: CloudKitAPIToken(apiToken: token))

    @Test func thePublicDatabaseTakesTheAPIToken() async throws {
        try await Harness.with(.init(authentication: authentication)) { server in
            let ok = try await server.send(.POST, publicQuery + "?ckAPIToken=\(token)", body: queryBody)
            #expect(ok.status == 200, "\(ok.text)")
            #expect((ok.json["query"] as? [[String]])?.first == ["ckAPIToken", token])
            try await server.send(.POST, publicQuery, body: queryBody).expectError("AUTHENTICATION_FAILED", 401)
            try await server.send(.POST, publicQuery + "?ckAPIToken=\(token.dropLast())0", body: queryBody)
                .expectError("AUTHENTICATION_FAILED", 401)
        }
    }

    @Test func privateAndSharedNeedAWebAuthTokenToo() async throws {
        try await Harness.with(.init(authentication: authentication)) { server in
            for database in ["private", "shared"] {
                let path = Harness.database + "/\(database)/records/query"
                try await server.send(.POST, path + "?ckAPIToken=\(token)", body: queryBody).expectError("AUTHENTICATION_REQUIRED", 421)
                try await server.send(.POST, path + "?ckWebAuthToken=user", body: queryBody).expectError("AUTHENTICATION_FAILED", 401)
                let ok = try await server.send(.POST, path + "?ckAPIToken=\(token)&ckWebAuthToken=some%2Buser", body: queryBody)
                #expect(ok.status == 200, "\(ok.text)")
                #expect((ok.json["query"] as? [[String]])?.last == ["ckWebAuthToken", "some+user"])
            }
        }
    }

    @Test func aConfiguredWebAuthTokenIsTheOnlyOneAccepted() async throws {
        let pinned = CloudKitServer.Authentication(apiToken: CloudKitAPIToken(apiToken: token, webAuthToken: "user-1"))
        try await Harness.with(.init(authentication: pinned)) { server in
            let path = Harness.database + "/private/zones/list?ckAPIToken=\(token)"
            #expect(try await server.send(.GET, path + "&ckWebAuthToken=user-1").status == 200)
            try await server.send(.GET, path + "&ckWebAuthToken=user-2").expectError("AUTHENTICATION_REQUIRED", 421)
        }
    }

    @Test func withAKeyAndATokenThePublicDatabaseTakesEither() async throws {
        let vector = try Vector.load()
        try await Harness.with(.init(authentication: try vector.authentication(apiToken: CloudKitAPIToken(apiToken: token)))) { server in
            #expect(try await server.send(.POST, publicQuery + "?ckAPIToken=\(token)", body: queryBody).status == 200)
            let signed = try await server.send(.POST, publicQuery, headers: try vector.signer().headers(path: publicQuery, body: queryBody), body: queryBody)
            #expect(signed.status == 200)
            // A request that carries a key ID is judged by its signature, whatever token it has.
            let badSignature = try await server.send(
                .POST, publicQuery + "?ckAPIToken=\(token)", headers: try vector.signer().headers(path: publicQuery, body: []), body: queryBody)
            badSignature.expectError("AUTHENTICATION_FAILED", 401)
        }
    }
}

@Suite struct UnauthenticatedServerTests {
    @Test func withoutAuthenticationOnlyLoopbackHostsAreAllowed() throws {
        for host in ["0.0.0.0", "192.0.2.1", "::", "example.com"] {
            let error = #expect(throws: CloudKitServerError.self) {
                _ = try CloudKitServer(configuration: .init(host: host), responder: EchoResponder())
            }
            #expect(error?.code == .unauthenticatedNonLoopback)
        }
        for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            _ = try CloudKitServer(configuration: .init(host: host), responder: EchoResponder())
        }
        _ = try CloudKitServer(
            configuration: .init(host: "0.0.0.0", authentication: .init(apiToken: CloudKitAPIToken(apiToken: token))), responder: EchoResponder())
    }

    @Test func theStartLineSaysRequestsAreUnauthenticated() throws {
        let server = try CloudKitServer(configuration: .init(container: "iCloud.x", environment: "development"), responder: EchoResponder())
        let line = server.startLine(.init(host: "127.0.0.1", port: 8080))
        #expect(line.hasPrefix("ferry serve: listening on http://127.0.0.1:8080 (container iCloud.x, environment development)"))
        #expect(line.contains("unauthenticated (loopback only)"))
    }

    @Test func everyRequestPassesWithoutAuthentication() async throws {
        try await Harness.with { server in
            let privateAnswer = try await server.send(.POST, Harness.database + "/private/records/query", body: queryBody)
            #expect(privateAnswer.status == 200)
            let publicAnswer = try await server.send(.POST, publicQuery, body: queryBody)
            #expect(publicAnswer.status == 200)
        }
    }
}
#endif
