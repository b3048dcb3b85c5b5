#if CloudKit
/// Why a CloudKit Web Services request was not authenticated, or why a key could not be loaded.
///
/// One error type for the module: a ``Code`` to switch on and a message saying what was
/// expected and what was found. Messages never contain a token, a key or a signature.
public struct CloudKitAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// A PEM key could not be read (wrong PEM type, not P-256, damaged).
        case invalidKey
        /// A server-to-server header (key ID, date or signature) is missing.
        case missingSignatureHeader
        /// The key ID is not one this verifier knows.
        case unknownKeyID
        /// The date header is not `YYYY-MM-DDTHH:MM:SSZ`.
        case malformedDate
        /// The date is outside the window around now.
        case staleDate
        /// The signature header is not base64 of a DER ECDSA signature.
        case malformedSignature
        /// The signature does not verify over `date:hash:subpath` (wrong key, body, path or date).
        case signatureMismatch
        /// The path does not contain `/database/`, so there is no subpath to sign.
        case missingSubpath
        /// `ckAPIToken` is missing.
        case missingAPIToken
        /// `ckAPIToken` is not the configured token.
        case wrongAPIToken
        /// `ckWebAuthToken` is missing (private and shared databases).
        case missingWebAuthToken
        /// `ckWebAuthToken` is not the configured token.
        case wrongWebAuthToken
    }

    /// What went wrong.
    public var code: Code
    /// What was expected and what was found.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
#endif
