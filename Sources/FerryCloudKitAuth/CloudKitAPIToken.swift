#if CloudKit
/// CKWS API-token authentication: the `ckAPIToken` query parameter, plus `ckWebAuthToken` for
/// the private and shared databases.
public struct CloudKitAPIToken: Sendable {
    /// The query parameter carrying the API token.
    public static let apiTokenParameter = "ckAPIToken"
    /// The query parameter carrying the user's web auth token (private and shared databases).
    public static let webAuthTokenParameter = "ckWebAuthToken"

    /// The API token requests must carry (CKWS tokens are 64 hex digits; any text is accepted here).
    public var apiToken: String
    /// The web auth token private and shared requests must carry; `nil` accepts any non-empty
    /// token (a local server has no iCloud users to sign in).
    public var webAuthToken: String?

    public init(apiToken: String, webAuthToken: String? = nil) {
        self.apiToken = apiToken
        self.webAuthToken = webAuthToken
    }

    /// Checks the tokens a request carries.
    ///
    /// - Parameters:
    ///   - apiToken, webAuthToken: the query parameters as sent (`nil` when absent).
    ///   - needsWebAuthToken: whether the database is private or shared.
    public func verify(apiToken sent: String?, webAuthToken sentWebAuth: String?, needsWebAuthToken: Bool) throws(CloudKitAuthError) {
        guard let sent, !sent.isEmpty else {
            throw CloudKitAuthError(.missingAPIToken, "expected the \(Self.apiTokenParameter) query parameter, found none")
        }
        guard constantTimeEqual(sent, apiToken) else {
            throw CloudKitAuthError(.wrongAPIToken, "expected this server's API token in \(Self.apiTokenParameter), found another")
        }
        guard needsWebAuthToken else { return }
        guard let sentWebAuth, !sentWebAuth.isEmpty else {
            throw CloudKitAuthError(.missingWebAuthToken, "expected the \(Self.webAuthTokenParameter) query parameter (private and shared databases), found none")
        }
        if let webAuthToken, !constantTimeEqual(sentWebAuth, webAuthToken) {
            throw CloudKitAuthError(.wrongWebAuthToken, "expected this server's web auth token in \(Self.webAuthTokenParameter), found another")
        }
    }

    /// Compares two tokens in time that depends on their lengths only.
    private func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices {
            difference |= x[i] ^ y[i]
        }
        return difference == 0
    }
}
#endif
