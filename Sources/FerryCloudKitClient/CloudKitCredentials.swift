#if CloudKit
import FerryCloudKitAuth
import Foundation

/// How a client authenticates: an API token (with a web auth token for the private and shared
/// databases), a server-to-server key (the public database), or both.
///
/// Credentials are never printed: `description` names which ones are set, not their values.
public struct CloudKitCredentials: Sendable, CustomStringConvertible {
    /// The container's API token (`ckAPIToken`).
    public var apiToken: String?
    /// The user's web auth token (`ckWebAuthToken`), for the private and shared databases.
    public var webAuthToken: String?
    /// The server-to-server key signing requests to the public database.
    public var signer: CloudKitSigner?

    public init(apiToken: String? = nil, webAuthToken: String? = nil, signer: CloudKitSigner? = nil) {
        self.apiToken = apiToken
        self.webAuthToken = webAuthToken
        self.signer = signer
    }

    /// The environment variables ``init(environment:keyID:keyFile:)`` reads.
    public enum Variable {
        public static let apiToken = "CLOUDKIT_API_TOKEN"
        public static let webAuthToken = "CLOUDKIT_WEB_AUTH_TOKEN"
        public static let keyID = "CLOUDKIT_KEY_ID"
        public static let keyFile = "CLOUDKIT_KEY_FILE"
    }

    /// Credentials from explicit values, falling back to the environment (`CLOUDKIT_API_TOKEN`,
    /// `CLOUDKIT_WEB_AUTH_TOKEN`, `CLOUDKIT_KEY_ID`, `CLOUDKIT_KEY_FILE`) for each one not given.
    ///
    /// - Parameters:
    ///   - apiToken, webAuthToken: the tokens, or `nil` to read the environment.
    ///   - keyID, keyFile: the server-to-server key's ID and its PEM private key file.
    ///   - environment: the variables to read (the process's by default).
    /// - Throws: ``CloudKitClientError`` (usage) for a key ID without a key file or the reverse,
    ///   or a key that cannot be read.
    public init(apiToken: String? = nil, webAuthToken: String? = nil, keyID: String? = nil, keyFile: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(CloudKitClientError) {
        func value(_ given: String?, _ variable: String) -> String? {
            let text = given ?? environment[variable]
            return text?.isEmpty == false ? text : nil
        }
        self.apiToken = value(apiToken, Variable.apiToken)
        self.webAuthToken = value(webAuthToken, Variable.webAuthToken)
        let keyID = value(keyID, Variable.keyID), keyFile = value(keyFile, Variable.keyFile)
        switch (keyID, keyFile) {
        case (nil, nil):
            signer = nil
        case (let keyID?, let keyFile?):
            do {
                signer = try CloudKitSigner(keyID: keyID, privateKeyFile: keyFile)
            } catch {
                throw CloudKitClientError(.usage, "the server-to-server key \(keyFile): \(error.message)")
            }
        case (nil, _):
            throw CloudKitClientError(.usage, "expected a key ID (--key-id or \(Variable.keyID)) with the key file, found none")
        case (_, nil):
            throw CloudKitClientError(.usage, "expected a key file (--key-file or \(Variable.keyFile)) with the key ID, found none")
        }
    }

    /// `environment` with the `CLOUDKIT_*` variables a credentials file sets (`NAME=VALUE` lines;
    /// blank lines and `#` comments skipped) added over it.
    ///
    /// - Throws: ``CloudKitClientError``: `data` when the file cannot be read, `usage` for a line
    ///   that is not `CLOUDKIT_NAME=VALUE` (its number given, its text not: it may hold a token).
    public static func variables(fromFile path: String, over environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(CloudKitClientError) -> [String: String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CloudKitClientError(.data, "\(path): cannot read the credentials file (\(error.localizedDescription))")
        }
        var variables = environment
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals].hasPrefix("CLOUDKIT_") else {
                throw CloudKitClientError(.usage, "\(path):\(index + 1): expected NAME=VALUE with a CLOUDKIT_ name, found another line")
            }
            variables[String(trimmed[..<equals])] = String(trimmed[trimmed.index(after: equals)...])
        }
        return variables
    }

    /// Checks that these credentials can reach `database` as CloudKit allows: a server-to-server
    /// key reaches the public database only, and an API token reaches the private and shared
    /// databases only with a web auth token. No credentials at all is left to the server (a
    /// local `ferry serve` on loopback takes requests without them).
    public func check(database: String) throws(CloudKitClientError) {
        guard database != "public", apiToken != nil || signer != nil else { return }
        guard apiToken != nil, webAuthToken != nil else {
            throw CloudKitClientError(.usage, "expected an API token and a web auth token (--api-token, --web-auth-token) for the \(database) database (server-to-server keys reach the public database only), found \(apiToken == nil ? "no API token" : "no web auth token")")
        }
    }

    public var description: String {
        var parts: [String] = []
        if apiToken != nil { parts.append("API token") }
        if webAuthToken != nil { parts.append("web auth token") }
        if let signer { parts.append("server-to-server key \(signer.keyID)") }
        return parts.isEmpty ? "no credentials" : parts.joined(separator: ", ")
    }
}
#endif
