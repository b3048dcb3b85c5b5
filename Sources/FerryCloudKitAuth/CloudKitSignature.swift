#if CloudKit
import Crypto
import FerryInternals
import Foundation

/// The parts of CKWS server-to-server signing that the signer and the verifier share: the header
/// names, the date format, the subpath and the signed message.
///
/// A request is signed with ECDSA P-256 / SHA-256 over the UTF-8 string
/// `{date}:{base64(sha256(body))}:{subpath}`, where `date` is `YYYY-MM-DDTHH:MM:SSZ` and `subpath`
/// is the URL path from `/database/` on (no scheme, host or query). The DER signature travels in
/// base64 in ``signatureHeader``.
public enum CloudKitSignature {
    /// The key ID header (`X-Apple-CloudKit-Request-KeyID`).
    public static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    /// The date header (`X-Apple-CloudKit-Request-ISO8601Date`), `YYYY-MM-DDTHH:MM:SSZ`.
    public static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    /// The signature header (`X-Apple-CloudKit-Request-SignatureV1`).
    public static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"

    /// The path from `/database/` on, without a query or fragment: what is signed.
    ///
    /// `/database/1/iCloud.x/development/public/records/query?ckAPIToken=…` and
    /// `https://host/prefix/database/1/…` both give `/database/1/…`; a path without `/database/`
    /// gives `nil`.
    public static func subpath(of path: String) -> String? {
        var path = Substring(path)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            path = path[..<end]
        }
        guard let start = path.range(of: "/database/") else { return nil }
        return String(path[start.lowerBound...])
    }

    /// `base64(sha256(body))`, the middle field of the signed message.
    public static func bodyHash(_ body: some Sequence<UInt8>) -> String {
        Data(SHA256.hash(data: Array(body))).base64EncodedString()
    }

    /// The signed message, `{date}:{hashField}:{subpath}` in UTF-8.
    public static func message(date: String, hashField: String, subpath: String) -> [UInt8] {
        Array("\(date):\(hashField):\(subpath)".utf8)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for a time in seconds since 1970 (whole seconds; no fraction, as
    /// CKWS wants).
    public static func dateString(secondsSince1970 seconds: Int64) -> String {
        let full = ISO8601.format(milliseconds: seconds * 1000)  // YYYY-MM-DDTHH:MM:SS.000Z
        return String(full.dropLast(5)) + "Z"
    }

    /// Seconds since 1970 for a `YYYY-MM-DDTHH:MM:SSZ` date, or `nil` for anything else (a
    /// fraction of a second, an offset, a date without `Z`).
    public static func seconds(parsingDate text: String) -> Int64? {
        guard text.utf8.count == 20, let milliseconds = ISO8601.parse(text) else { return nil }
        return milliseconds / 1000
    }
}
#endif
