#if CloudKit
import Crypto
import Foundation

/// Verifies CKWS server-to-server signatures (the server's side).
///
/// A request passes when its key ID is known, its date is `YYYY-MM-DDTHH:MM:SSZ` within
/// ``Configuration/dateWindowSeconds`` of now (either way), and its signature verifies over
/// `{date}:{base64(sha256(body))}:{subpath}` with that key. A request with no body passes signed
/// over either an empty hash field (`{date}::{subpath}`) or the hash of the empty body: clients
/// do both.
public struct CloudKitVerifier: Sendable {
    /// How strict the verifier is.
    public struct Configuration: Sendable {
        /// How far (in seconds, either way) a request's date may be from the server's clock:
        /// 300 (5 minutes) by default. Apple documents no window; clients sign just before sending.
        public var dateWindowSeconds: Int64

        public init(dateWindowSeconds: Int64 = 300) {
            self.dateWindowSeconds = dateWindowSeconds
        }
    }

    private let keys: [String: P256.Signing.PublicKey]
    /// How strict the verifier is.
    public let configuration: Configuration

    /// A verifier for one key: its ID and its public key in PEM (`-----BEGIN PUBLIC KEY-----`,
    /// what `openssl ec -pubout` writes).
    public init(keyID: String, publicKeyPEM: String, configuration: Configuration = Configuration()) throws(CloudKitAuthError) {
        let key: P256.Signing.PublicKey
        do {
            key = try P256.Signing.PublicKey(pemRepresentation: publicKeyPEM)
        } catch {
            throw CloudKitAuthError(.invalidKey, "expected a P-256 public key in PEM (PUBLIC KEY), found \(CloudKitKeys.describe(pem: publicKeyPEM)) (\(error))")
        }
        self.keys = [keyID: key]
        self.configuration = configuration
    }

    /// A verifier for one key whose public key is the PEM file at `path`.
    public init(keyID: String, publicKeyFile path: String, configuration: Configuration = Configuration()) throws(CloudKitAuthError) {
        try self.init(keyID: keyID, publicKeyPEM: try CloudKitKeys.readPEM(path), configuration: configuration)
    }

    /// The key IDs this verifier knows.
    public var keyIDs: [String] { keys.keys.sorted() }

    /// Checks a request's three signature headers against its path and body.
    ///
    /// - Parameters:
    ///   - keyID, date, signature: the header values as sent (`nil` when absent).
    ///   - path: the URL path as sent; the part from `/database/` on is what was signed.
    ///   - body: the request body as received.
    ///   - now: the server's clock, seconds since 1970.
    public func verify(
        keyID: String?, date: String?, signature: String?, path: String, body: [UInt8],
        now: Int64 = Int64(Date().timeIntervalSince1970)
    ) throws(CloudKitAuthError) {
        guard let keyID, !keyID.isEmpty else {
            throw CloudKitAuthError(.missingSignatureHeader, "expected the \(CloudKitSignature.keyIDHeader) header, found none")
        }
        guard let date, !date.isEmpty else {
            throw CloudKitAuthError(.missingSignatureHeader, "expected the \(CloudKitSignature.dateHeader) header, found none")
        }
        guard let signature, !signature.isEmpty else {
            throw CloudKitAuthError(.missingSignatureHeader, "expected the \(CloudKitSignature.signatureHeader) header, found none")
        }
        guard let key = keys[keyID] else {
            throw CloudKitAuthError(.unknownKeyID, "expected a known key ID, found one this server was not given")
        }
        guard let seconds = CloudKitSignature.seconds(parsingDate: date) else {
            throw CloudKitAuthError(.malformedDate, "expected the date as YYYY-MM-DDTHH:MM:SSZ (no fraction), found \(date.prefix(40))")
        }
        let skew = seconds - now
        guard abs(skew) <= configuration.dateWindowSeconds else {
            throw CloudKitAuthError(
                .staleDate,
                "expected a date within \(configuration.dateWindowSeconds) s of the server's clock, found \(date), \(abs(skew)) s \(skew < 0 ? "behind" : "ahead")")
        }
        guard let der = Data(base64Encoded: signature),
              let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: der) else {
            throw CloudKitAuthError(.malformedSignature, "expected the signature as base64 of a DER ECDSA signature, found \(signature.count) characters that are not")
        }
        guard let subpath = CloudKitSignature.subpath(of: path) else {
            throw CloudKitAuthError(.missingSubpath, "expected a path containing /database/, found \(path.prefix(200))")
        }
        var hashFields = [CloudKitSignature.bodyHash(body)]
        if body.isEmpty {
            hashFields.append("")
        }
        for hashField in hashFields {
            let message = CloudKitSignature.message(date: date, hashField: hashField, subpath: subpath)
            if key.isValidSignature(ecdsa, for: message) {
                return
            }
        }
        throw CloudKitAuthError(
            .signatureMismatch,
            "expected a signature over date:base64(sha256(body)):\(subpath) with key \(keyID), found one that does not verify (signed another path, body or date, or with another key?)")
    }
}
#endif
