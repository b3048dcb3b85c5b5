#if CloudKit
import Foundation

/// Reading PEM key files, for the signer and the verifier.
enum CloudKitKeys {
    /// The text of the PEM file at `path`.
    static func readPEM(_ path: String) throws(CloudKitAuthError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CloudKitAuthError(.invalidKey, "expected a readable PEM key file at \(path), found none")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CloudKitAuthError(.invalidKey, "expected a PEM key file (text) at \(path), found binary data")
        }
        return text
    }

    /// What a PEM text holds, for messages: its `-----BEGIN …-----` line, never the key.
    static func describe(pem: String) -> String {
        guard let line = pem.split(separator: "\n").first(where: { $0.hasPrefix("-----BEGIN") }) else {
            return "no -----BEGIN line"
        }
        return String(line.prefix(60))
    }
}
#endif
