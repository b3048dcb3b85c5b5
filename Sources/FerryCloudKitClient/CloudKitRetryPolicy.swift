#if CloudKit
import FerryCloudKit

/// When and how long a client waits before sending a failed request again.
///
/// CloudKit asks clients to retry THROTTLED (429), TRY_AGAIN_LATER (503) and ZONE_BUSY after the
/// `retryAfter` seconds it answers; without one, the wait grows exponentially from
/// ``baseDelay`` up to ``maximumDelay``, each wait drawn between half and all of it (jitter, so
/// clients throttled together do not come back together). Connections refused or reset are
/// retried the same way. After ``maximumAttempts`` the request fails with
/// ``CloudKitClientError/Code/retriesExhausted``.
public struct CloudKitRetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first one included (1: never retry).
    public var maximumAttempts: Int
    /// The first wait without a `retryAfter`, in seconds.
    public var baseDelay: Double
    /// The longest wait, in seconds, `retryAfter` included.
    public var maximumDelay: Double

    public init(maximumAttempts: Int = 8, baseDelay: Double = 0.2, maximumDelay: Double = 60) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maximumDelay = max(0, maximumDelay)
    }

    /// Whether a request answered `status` with `error` is worth sending again.
    public static func isRetryable(status: Int, error: CloudKitError?) -> Bool {
        if status == 429 || status == 503 { return true }
        switch error?.code.rawValue {
        case "THROTTLED", "TRY_AGAIN_LATER", "ZONE_BUSY": return true
        default: return false
        }
    }

    /// The wait before attempt `attempt + 1` after attempt `attempt` (1-based) failed, in
    /// seconds: `retryAfter` when CloudKit gave one (capped), else the exponential backoff with
    /// jitter, `unit` (0–1) placing it between half and all of the step.
    public func delay(afterAttempt attempt: Int, retryAfter: Double?, unit: Double) -> Double {
        if let retryAfter { return min(max(0, retryAfter), maximumDelay) }
        let step = min(maximumDelay, baseDelay * Double(1 << min(max(attempt - 1, 0), 30)))
        return step / 2 + step / 2 * min(max(unit, 0), 1)
    }
}
#endif
