#if CloudKit
import Crypto
import Foundation

/// Signs CKWS requests with a server-to-server key (the client's side).
///
/// ```swift
/// let signer = try CloudKitSigner(keyID: keyID, privateKeyPEM: pem)
/// for (name, value) in try signer.headers(path: "/database/1/iCloud.x/development/public/records/query", body: body) {
///     request.headers.add(name: name, value: value)
/// }
/// ```
public struct CloudKitSigner: Sendable {
    /// The key ID CloudKit's dashboard gave the key (`X-Apple-CloudKit-Request-KeyID`).
    public let keyID: String
    private let privateKey: P256.Signing.PrivateKey

    /// A signer for a P-256 private key in PEM: `-----BEGIN EC PRIVATE KEY-----` (what
    /// `openssl ecparam -name prime256v1 -genkey -noout` writes) or `-----BEGIN PRIVATE KEY-----`
    /// (PKCS #8).
    public init(keyID: String, privateKeyPEM: String) throws(CloudKitAuthError) {
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw CloudKitAuthError(.invalidKey, "expected a P-256 private key in PEM (EC PRIVATE KEY or PRIVATE KEY), found \(CloudKitKeys.describe(pem: privateKeyPEM)) (\(error))")
        }
        self.keyID = keyID
    }

    /// A signer for the P-256 private key in the PEM file at `path`.
    public init(keyID: String, privateKeyFile path: String) throws(CloudKitAuthError) {
        try self.init(keyID: keyID, privateKeyPEM: try CloudKitKeys.readPEM(path))
    }

    /// The public half, in PEM (`-----BEGIN PUBLIC KEY-----`), for a ``CloudKitVerifier``.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// The base64 DER signature of `{date}:{base64(sha256(body))}:{subpath}`.
    ///
    /// - Parameters:
    ///   - date: `YYYY-MM-DDTHH:MM:SSZ` (``CloudKitSignature/dateString(secondsSince1970:)``).
    ///   - subpath: the path from `/database/` on.
    ///   - body: the request body (an empty body is hashed like any other).
    public func signature(date: String, subpath: String, body: some Sequence<UInt8>) -> String {
        let message = CloudKitSignature.message(date: date, hashField: CloudKitSignature.bodyHash(body), subpath: subpath)
        // Signing P-256 with a valid key and a SHA-256 digest cannot fail; CryptoKit's API throws
        // only for its hardware-backed keys.
        let signature = try! privateKey.signature(for: message)
        return signature.derRepresentation.base64EncodedString()
    }

    /// The three headers that sign a request to `path` (a URL path; the part from `/database/` on
    /// is signed) with `body`, dated `secondsSince1970` (now by default).
    public func headers(
        path: String, body: some Sequence<UInt8>, secondsSince1970: Int64 = Int64(Date().timeIntervalSince1970)
    ) throws(CloudKitAuthError) -> [(name: String, value: String)] {
        guard let subpath = CloudKitSignature.subpath(of: path) else {
            throw CloudKitAuthError(.missingSubpath, "expected a path containing /database/, found \(path)")
        }
        let date = CloudKitSignature.dateString(secondsSince1970: secondsSince1970)
        return [
            (CloudKitSignature.keyIDHeader, keyID),
            (CloudKitSignature.dateHeader, date),
            (CloudKitSignature.signatureHeader, signature(date: date, subpath: subpath, body: body)),
        ]
    }
}
#endif
