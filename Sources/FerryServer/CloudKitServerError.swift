#if CloudKit
/// Why a ``CloudKitServer`` could not be configured or started.
public struct CloudKitServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Equatable {
        /// No authentication is configured and the host is not a loopback address.
        case unauthenticatedNonLoopback
        /// A `--inject` specification could not be read, or its fractions are out of range.
        case invalidFaultInjection
        /// A configuration value is out of range (port, body limit).
        case invalidConfiguration
    }

    /// What went wrong.
    public var code: Code
    /// What was expected and what was found.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
#endif
