#if CloudKit
import FerryCloudKitAuth
import Foundation
import Testing

/// The known-answer vector made by Scripts/ckws-signing-vector.py (Python `cryptography`).
struct SigningVector: Decodable {
    var keyID: String
    var privateKeyPEM: String
    var privateKeySEC1PEM: String
    var publicKeyPEM: String
    var date: String
    var subpath: String
    var body: String
    var bodyHash: String
    var signature: String
    var noBodySubpath: String
    var noBodySignatureEmptyHashField: String
    var noBodySignatureEmptyBodyHash: String

    static func load(file: StaticString = #filePath) throws -> SigningVector {
        let folder = URL(fileURLWithPath: "\(file)").deletingLastPathComponent()
        let data = try Data(contentsOf: folder.appendingPathComponent("Vectors/ckws-signing-vector.json"))
        return try JSONDecoder().decode(SigningVector.self, from: data)
    }

    var bodyBytes: [UInt8] { Array(body.utf8) }
    /// The vector's date in seconds since 1970: "now" for the verifier.
    var now: Int64 { CloudKitSignature.seconds(parsingDate: date)! }
}

struct CloudKitSigningTests {
    @Test func pythonsSignatureOfTheVectorVerifies() throws {
        let vector = try SigningVector.load()
        #expect(CloudKitSignature.bodyHash(vector.bodyBytes) == vector.bodyHash)
        let verifier = try CloudKitVerifier(keyID: vector.keyID, publicKeyPEM: vector.publicKeyPEM)
        try verifier.verify(
            keyID: vector.keyID, date: vector.date, signature: vector.signature,
            path: vector.subpath, body: vector.bodyBytes, now: vector.now)
    }

    @Test func aNoBodyRequestVerifiesSignedOverAnEmptyHashFieldOrTheEmptyBodysHash() throws {
        let vector = try SigningVector.load()
        let verifier = try CloudKitVerifier(keyID: vector.keyID, publicKeyPEM: vector.publicKeyPEM)
        for signature in [vector.noBodySignatureEmptyHashField, vector.noBodySignatureEmptyBodyHash] {
            try verifier.verify(
                keyID: vector.keyID, date: vector.date, signature: signature,
                path: vector.noBodySubpath, body: [], now: vector.now)
        }
    }

    @Test func anEmptyHashFieldDoesNotVerifyARequestWithABody() throws {
        let vector = try SigningVector.load()
        let verifier = try CloudKitVerifier(keyID: vector.keyID, publicKeyPEM: vector.publicKeyPEM)
        #expect(throws: CloudKitAuthError.self) {
            try verifier.verify(
                keyID: vector.keyID, date: vector.date, signature: vector.noBodySignatureEmptyHashField,
                path: vector.noBodySubpath, body: [0x7B, 0x7D], now: vector.now)
        }
    }

    @Test func aSignatureFromTheSwiftSignerVerifiesWithTheVerifier() throws {
        let vector = try SigningVector.load()
        let signer = try CloudKitSigner(keyID: vector.keyID, privateKeyPEM: vector.privateKeyPEM)
        #expect(signer.publicKeyPEM == vector.publicKeyPEM.trimmingCharacters(in: .newlines))
        let headers = try signer.headers(path: vector.subpath + "?ckAPIToken=x", body: vector.bodyBytes, secondsSince1970: vector.now)
        let value = { (name: String) in headers.first { $0.name == name }?.value }
        #expect(value(CloudKitSignature.dateHeader) == vector.date)
        #expect(value(CloudKitSignature.keyIDHeader) == vector.keyID)
        let verifier = try CloudKitVerifier(keyID: vector.keyID, publicKeyPEM: vector.publicKeyPEM)
        try verifier.verify(
            keyID: value(CloudKitSignature.keyIDHeader), date: value(CloudKitSignature.dateHeader),
            signature: value(CloudKitSignature.signatureHeader), path: vector.subpath, body: vector.bodyBytes, now: vector.now)
    }

    /// Each way a request can be wrong, and the code it is refused with.
    @Test(arguments: [
        ("wrong signature", CloudKitAuthError.Code.signatureMismatch),
        ("tampered body", .signatureMismatch),
        ("wrong path", .signatureMismatch),
        ("other date in the window", .signatureMismatch),
        ("stale date", .staleDate),
        ("future date", .staleDate),
        ("milliseconds in the date", .malformedDate),
        ("missing key ID", .missingSignatureHeader),
        ("missing date", .missingSignatureHeader),
        ("missing signature", .missingSignatureHeader),
        ("unknown key ID", .unknownKeyID),
        ("signature not base64", .malformedSignature),
        ("no /database/ in the path", .missingSubpath),
    ])
    func aWrongRequestIsRefusedWithItsCode(wrong: String, code: CloudKitAuthError.Code) throws {
        let vector = try SigningVector.load()
        let verifier = try CloudKitVerifier(keyID: vector.keyID, publicKeyPEM: vector.publicKeyPEM)
        var keyID: String? = vector.keyID, date: String? = vector.date, signature: String? = vector.signature
        var path = vector.subpath, body = vector.bodyBytes, now = vector.now
        switch wrong {
        case "wrong signature": signature = vector.noBodySignatureEmptyBodyHash
        case "tampered body": body[body.count - 3] ^= 1
        case "wrong path": path = path.replacingOccurrences(of: "/public/", with: "/private/")
        case "other date in the window": date = CloudKitSignature.dateString(secondsSince1970: now + 1)
        case "stale date": now += 301
        case "future date": now -= 301
        case "milliseconds in the date": date = vector.date.replacingOccurrences(of: "Z", with: ".000Z")
        case "missing key ID": keyID = nil
        case "missing date": date = nil
        case "missing signature": signature = nil
        case "unknown key ID": keyID = String(repeating: "0", count: 64)
        case "signature not base64": signature = "not base64!"
        case "no /database/ in the path": path = "/records/query"
        default: Issue.record("no case \(wrong)")
        }
        let error = #expect(throws: CloudKitAuthError.self) {
            try verifier.verify(keyID: keyID, date: date, signature: signature, path: path, body: body, now: now)
        }
        #expect(error?.code == code)
    }

    @Test func theDateWindowIsConfigurableAndInclusive() throws {
        let vector = try SigningVector.load()
        let verifier = try CloudKitVerifier(
            keyID: vector.keyID, publicKeyPEM: vector.publicKeyPEM, configuration: .init(dateWindowSeconds: 10))
        try verifier.verify(
            keyID: vector.keyID, date: vector.date, signature: vector.signature,
            path: vector.subpath, body: vector.bodyBytes, now: vector.now + 10)
        #expect(throws: CloudKitAuthError.self) {
            try verifier.verify(
                keyID: vector.keyID, date: vector.date, signature: vector.signature,
                path: vector.subpath, body: vector.bodyBytes, now: vector.now + 11)
        }
    }

    @Test func theSubpathStartsAtDatabaseAndDropsTheQuery() {
        #expect(CloudKitSignature.subpath(of: "/database/1/c/development/public/zones/list?ckAPIToken=x") == "/database/1/c/development/public/zones/list")
        #expect(CloudKitSignature.subpath(of: "https://api.apple-cloudkit.com/database/1/c/e/public/records/query") == "/database/1/c/e/public/records/query")
        #expect(CloudKitSignature.subpath(of: "/assets/upload/1") == nil)
    }

    @Test func datesAreWholeSecondsInUTC() {
        #expect(CloudKitSignature.dateString(secondsSince1970: 1_795_590_000) == "2026-11-25T07:00:00Z")
        #expect(CloudKitSignature.seconds(parsingDate: "2026-11-25T07:00:00Z") == 1_795_590_000)
        #expect(CloudKitSignature.seconds(parsingDate: "2026-11-25T07:00:00.123Z") == nil)
        #expect(CloudKitSignature.seconds(parsingDate: "2026-11-25T07:00:00+00:00") == nil)
    }

    @Test func aKeyThatIsNotP256InPEMIsRefused() throws {
        let vector = try SigningVector.load()
        let error = #expect(throws: CloudKitAuthError.self) {
            _ = try CloudKitVerifier(keyID: "k", publicKeyPEM: vector.privateKeyPEM)
        }
        #expect(error?.code == .invalidKey)
        #expect(error?.message.contains("MIG") == false)  // never the key itself
        #expect(throws: CloudKitAuthError.self) { _ = try CloudKitSigner(keyID: "k", privateKeyPEM: "garbage") }
        #expect(throws: CloudKitAuthError.self) { _ = try CloudKitSigner(keyID: "k", privateKeyFile: "/nonexistent/key.pem") }
    }

    @Test func aSEC1PrivateKeyAsOpenSSLWritesItSigns() throws {
        // `-----BEGIN EC PRIVATE KEY-----`: what CloudKit's instructions (`openssl ecparam`) produce.
        let vector = try SigningVector.load()
        #expect(vector.privateKeySEC1PEM.hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        let signer = try CloudKitSigner(keyID: vector.keyID, privateKeyPEM: vector.privateKeySEC1PEM)
        #expect(signer.publicKeyPEM == vector.publicKeyPEM.trimmingCharacters(in: .newlines))
        let verifier = try CloudKitVerifier(keyID: vector.keyID, publicKeyPEM: signer.publicKeyPEM)
        let signature = signer.signature(date: vector.date, subpath: vector.subpath, body: vector.bodyBytes)
        try verifier.verify(keyID: vector.keyID, date: vector.date, signature: signature, path: vector.subpath, body: vector.bodyBytes, now: vector.now)
    }
}

struct CloudKitAPITokenTests {
    let tokens = CloudKitAPIToken(apiToken: String(repeating: "ab", count: 32))

    @Test func thePublicDatabaseNeedsTheAPITokenOnly() throws {
        try tokens.verify(apiToken: tokens.apiToken, webAuthToken: nil, needsWebAuthToken: false)
        #expect(throws: CloudKitAuthError(.missingAPIToken, "expected the ckAPIToken query parameter, found none")) {
            try tokens.verify(apiToken: nil, webAuthToken: nil, needsWebAuthToken: false)
        }
        let error = #expect(throws: CloudKitAuthError.self) {
            try tokens.verify(apiToken: String(repeating: "ab", count: 31) + "ac", webAuthToken: nil, needsWebAuthToken: false)
        }
        #expect(error?.code == .wrongAPIToken)
    }

    @Test func privateAndSharedNeedAWebAuthTokenAnyNonEmptyOneUnlessConfigured() throws {
        try tokens.verify(apiToken: tokens.apiToken, webAuthToken: "anyone", needsWebAuthToken: true)
        for missing in [nil, ""] as [String?] {
            let error = #expect(throws: CloudKitAuthError.self) {
                try tokens.verify(apiToken: tokens.apiToken, webAuthToken: missing, needsWebAuthToken: true)
            }
            #expect(error?.code == .missingWebAuthToken)
        }
        let pinned = CloudKitAPIToken(apiToken: tokens.apiToken, webAuthToken: "user-1")
        try pinned.verify(apiToken: tokens.apiToken, webAuthToken: "user-1", needsWebAuthToken: true)
        let error = #expect(throws: CloudKitAuthError.self) {
            try pinned.verify(apiToken: tokens.apiToken, webAuthToken: "user-2", needsWebAuthToken: true)
        }
        #expect(error?.code == .wrongWebAuthToken)
    }
}
#endif
