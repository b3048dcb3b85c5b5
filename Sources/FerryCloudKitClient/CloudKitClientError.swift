#if CloudKit
import FerryCloudKit

/// Why a CloudKit Web Services request, a pull or a push failed.
///
/// One error type for the module: a ``Code`` to switch on, a message saying what was expected
/// and what was found, and, for a request CloudKit refused, its ``CloudKitError``. Messages never
/// contain a token, a key or a signature.
public struct CloudKitClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// CloudKit answered the request with an error body (``CloudKitClientError/server``).
        case server
        /// The request could not be sent or its answer not received (connection refused, reset,
        /// timed out).
        case transport
        /// The request kept failing with errors worth retrying until the retry policy's cap.
        case retriesExhausted
        /// The answer is not what the endpoint answers (not JSON, not the expected shape, too large).
        case invalidResponse
        /// The configuration or the options cannot work (a database the authentication cannot
        /// reach, a missing credential).
        case usage
        /// Reading the input or writing the output failed.
        case data
    }

    /// What went wrong.
    public var code: Code
    /// What was expected and what was found.
    public var message: String
    /// CloudKit's error, for ``Code/server`` and ``Code/retriesExhausted``.
    public var server: CloudKitError?
    /// The HTTP status of the last answer, when there was one.
    public var status: Int?

    public init(_ code: Code, _ message: String, server: CloudKitError? = nil, status: Int? = nil) {
        self.code = code
        self.message = message
        self.server = server
        self.status = status
    }

    public var description: String { message }
}
#endif
