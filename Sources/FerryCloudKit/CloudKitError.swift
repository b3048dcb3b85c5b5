import FerryRecords

/// A CKWS error: the `serverErrorCode`, the `reason`, and the HTTP status CloudKit answers it
/// with. A failed request is answered with its body, `{uuid, serverErrorCode, reason}`; a failed
/// record or zone of a request that succeeded appears as an error dictionary inside the answer.
public struct CloudKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A `serverErrorCode`: the documented ones as constants, any other kept as its string.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let accessDenied = Code(rawValue: "ACCESS_DENIED")
        public static let atomicError = Code(rawValue: "ATOMIC_ERROR")
        public static let authenticationFailed = Code(rawValue: "AUTHENTICATION_FAILED")
        public static let authenticationRequired = Code(rawValue: "AUTHENTICATION_REQUIRED")
        public static let badRequest = Code(rawValue: "BAD_REQUEST")
        public static let conflict = Code(rawValue: "CONFLICT")
        public static let exists = Code(rawValue: "EXISTS")
        public static let internalError = Code(rawValue: "INTERNAL_ERROR")
        public static let notFound = Code(rawValue: "NOT_FOUND")
        public static let quotaExceeded = Code(rawValue: "QUOTA_EXCEEDED")
        public static let throttled = Code(rawValue: "THROTTLED")
        public static let tryAgainLater = Code(rawValue: "TRY_AGAIN_LATER")
        public static let validatingReferenceError = Code(rawValue: "VALIDATING_REFERENCE_ERROR")
        public static let zoneNotFound = Code(rawValue: "ZONE_NOT_FOUND")

        /// The HTTP status CKWS answers a failed request of this code with (500 for a code it
        /// does not document).
        public var status: Int {
            switch rawValue {
            case "ACCESS_DENIED": 403
            case "ATOMIC_ERROR", "BAD_REQUEST": 400
            case "AUTHENTICATION_FAILED": 401
            case "AUTHENTICATION_REQUIRED": 421
            case "CONFLICT", "EXISTS": 409
            case "NOT_FOUND", "ZONE_NOT_FOUND": 404
            case "QUOTA_EXCEEDED": 413
            case "THROTTLED": 429
            case "TRY_AGAIN_LATER": 503
            case "VALIDATING_REFERENCE_ERROR": 412
            default: 500
            }
        }

        public var description: String { rawValue }
    }

    /// The `serverErrorCode`.
    public var code: Code
    /// The `reason`: what was expected and what was found.
    public var reason: String
    /// Seconds to wait before retrying (THROTTLED, TRY_AGAIN_LATER).
    public var retryAfter: Int?

    /// Creates an error.
    public init(_ code: Code, _ reason: String, retryAfter: Int? = nil) {
        self.code = code
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// The HTTP status of a request failing with this error.
    public var status: Int { code.status }

    public var description: String { "\(code.rawValue): \(reason)" }

    /// A BAD_REQUEST.
    static func badRequest(_ reason: String) -> CloudKitError { CloudKitError(.badRequest, reason) }

    /// The request's error body, `{uuid, serverErrorCode, reason, retryAfter?}`, pretty-printed.
    public func body(uuid: String = CloudKitError.makeUUID()) -> [UInt8] {
        var out = JSONOutput(capacity: 256)
        out.append("{\"uuid\":")
        out.appendString(uuid)
        out.append(",\"serverErrorCode\":")
        out.appendString(code.rawValue)
        out.append(",\"reason\":")
        out.appendString(reason)
        if let retryAfter {
            out.append(",\"retryAfter\":")
            out.appendInteger(Int64(retryAfter))
        }
        out.append("}")
        return WireJSON.pretty(out)
    }

    /// The error dictionary of one record in an answer: `{recordName, reason, serverErrorCode}`.
    func appendRecordError(recordName: String, into out: inout JSONOutput) {
        out.append("{\"recordName\":")
        out.appendString(recordName)
        out.append(",\"reason\":")
        out.appendString(reason)
        out.append(",\"serverErrorCode\":")
        out.appendString(code.rawValue)
        if let retryAfter {
            out.append(",\"retryAfter\":")
            out.appendInteger(Int64(retryAfter))
        }
        out.append("}")
    }

    /// A random version 4 UUID, upper-case as CloudKit writes them.
    public static func makeUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let digits: [Character] = Array("0123456789ABCDEF")
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }
}

extension CloudKitResponse {
    /// The answer of a request that fails with `error`: its HTTP status, its body
    /// (`{uuid, serverErrorCode, reason, retryAfter?}`, pretty-printed) and, with `retryAfter`, a
    /// `Retry-After` header. The service and the HTTP layer answer every failure with it.
    public init(error: CloudKitError) {
        var headers = [(name: "Content-Type", value: "application/json; charset=UTF-8")]
        if let retryAfter = error.retryAfter { headers.append((name: "Retry-After", value: String(retryAfter))) }
        self.init(status: error.status, headers: headers, body: error.body())
    }
}
