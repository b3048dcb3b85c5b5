#if CloudKit
import FerryCloudKit
import FerryRecords
import Foundation

/// The CKWS error answers the HTTP layer gives itself (authentication, injected faults, limits,
/// bad requests): `{uuid, serverErrorCode, reason}` pretty-printed as CloudKit prints it, with the
/// code's documented HTTP status.
enum CloudKitErrorBody {
    static let authenticationFailed = (code: "AUTHENTICATION_FAILED", status: 401)
    static let authenticationRequired = (code: "AUTHENTICATION_REQUIRED", status: 421)
    static let badRequest = (code: "BAD_REQUEST", status: 400)
    static let quotaExceeded = (code: "QUOTA_EXCEEDED", status: 413)
    static let throttled = (code: "THROTTLED", status: 429)
    static let tryAgainLater = (code: "TRY_AGAIN_LATER", status: 503)
    static let internalError = (code: "INTERNAL_ERROR", status: 500)

    /// The response for `error` with `reason`, plus `retryAfter` (and `Retry-After`) when given.
    static func response(_ error: (code: String, status: Int), reason: String, retryAfter: Int? = nil) -> CloudKitResponse {
        var text = "{\n"
        text += "  \"uuid\" : \(jsonString(UUID().uuidString.lowercased())),\n"
        text += "  \"serverErrorCode\" : \(jsonString(error.code)),\n"
        text += "  \"reason\" : \(jsonString(reason))"
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json; charset=UTF-8")]
        if let retryAfter {
            text += ",\n  \"retryAfter\" : \(retryAfter)"
            headers.append(("Retry-After", String(retryAfter)))
        }
        text += "\n}\n"
        return CloudKitResponse(status: error.status, headers: headers, body: Array(text.utf8))
    }

    /// `text` as a JSON string, by the one JSON writer.
    private static func jsonString(_ text: String) -> String {
        var out = JSONOutput(capacity: text.utf8.count + 16)
        out.appendString(text)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
#endif
