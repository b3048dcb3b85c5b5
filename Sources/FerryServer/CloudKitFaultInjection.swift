#if CloudKit
/// Errors injected into a fraction of `/database/…` requests, for testing clients' retries:
/// THROTTLED (429) and TRY_AGAIN_LATER (503), each with `retryAfter`, as CloudKit sends them.
///
/// Each authenticated `/database/…` request draws one number in [0, 1): below ``throttle`` it is
/// throttled; below ``throttle`` + ``unavailable`` it is answered TRY_AGAIN_LATER; otherwise it
/// reaches the responder. With a ``seed`` the draws are repeatable (requests sent one at a time
/// get the same answers in every run).
public struct CloudKitFaultInjection: Sendable, Equatable {
    /// The fraction of requests answered THROTTLED (429).
    public var throttle: Double
    /// The fraction of requests answered TRY_AGAIN_LATER (503).
    public var unavailable: Double
    /// The `retryAfter` (seconds) the injected errors carry, also sent as `Retry-After`.
    public var retryAfterSeconds: Int
    /// The seed of the draws; `nil` draws from the system's generator.
    public var seed: UInt64?

    public init(throttle: Double = 0, unavailable: Double = 0, retryAfterSeconds: Int = 1, seed: UInt64? = nil) throws(CloudKitServerError) {
        guard (0...1).contains(throttle), (0...1).contains(unavailable), throttle + unavailable <= 1 else {
            throw CloudKitServerError(
                .invalidFaultInjection,
                "expected fractions from 0 to 1 adding up to at most 1, found throttle=\(throttle), unavailable=\(unavailable)")
        }
        guard retryAfterSeconds >= 0 else {
            throw CloudKitServerError(.invalidFaultInjection, "expected retryAfter of 0 seconds or more, found \(retryAfterSeconds)")
        }
        self.throttle = throttle
        self.unavailable = unavailable
        self.retryAfterSeconds = retryAfterSeconds
        self.seed = seed
    }

    /// Reads `throttle=0.05,unavailable=0.01` (the `--inject` option): comma-separated
    /// `name=value` pairs, names `throttle`, `unavailable`, `retryAfter` (seconds) and `seed`.
    public init(parsing text: String) throws(CloudKitServerError) {
        var throttle = 0.0, unavailable = 0.0, retryAfter = 1
        var seed: UInt64?
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1)
            let name = parts.first.map { $0.trimmingSpaces } ?? ""
            let value = parts.count == 2 ? parts[1].trimmingSpaces : ""
            func bad() -> CloudKitServerError {
                CloudKitServerError(
                    .invalidFaultInjection,
                    "expected throttle=FRACTION, unavailable=FRACTION, retryAfter=SECONDS or seed=N, found \(item)")
            }
            switch name {
            case "throttle": guard let v = Double(value), v.isFinite else { throw bad() }; throttle = v
            case "unavailable": guard let v = Double(value), v.isFinite else { throw bad() }; unavailable = v
            case "retryAfter": guard let v = Int(value) else { throw bad() }; retryAfter = v
            case "seed": guard let v = UInt64(value) else { throw bad() }; seed = v
            default: throw bad()
            }
        }
        try self.init(throttle: throttle, unavailable: unavailable, retryAfterSeconds: retryAfter, seed: seed)
    }

    /// Whether any request is answered with an injected error.
    public var isActive: Bool { throttle > 0 || unavailable > 0 }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
#endif
