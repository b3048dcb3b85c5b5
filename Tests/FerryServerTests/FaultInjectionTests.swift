#if CloudKit
import FerryServer
import Testing

@Suite struct FaultInjectionTests {
    /// 400 requests one at a time with a fixed seed: the injected fractions land near the asked
    /// ones (binomial: throttle 0.10 → 40 ± 6.0 expected, unavailable 0.05 → 20 ± 4.4; the
    /// bounds are ± 4 standard deviations, and the seed makes the run repeatable), every injected
    /// error carries retryAfter, and a second server with the same seed answers the same way.
    @Test func aSeededServerInjectsTheAskedFractionsRepeatably() async throws {
        let injection = try CloudKitFaultInjection(parsing: "throttle=0.10,unavailable=0.05,retryAfter=3,seed=42")
        var runs: [[Int]] = []
        for _ in 0..<2 {
            let statuses = try await Harness.with(.init(faultInjection: injection)) { server in
                var statuses: [Int] = []
                for _ in 0..<400 {
                    let answer = try await server.send(.POST, publicQuery, body: queryBody)
                    statuses.append(answer.status)
                    switch answer.status {
                    case 429:
                        answer.expectError("THROTTLED", 429)
                        #expect(answer.json["retryAfter"] as? Int == 3)
                        #expect(answer.header("Retry-After") == "3")
                    case 503:
                        answer.expectError("TRY_AGAIN_LATER", 503)
                        #expect(answer.json["retryAfter"] as? Int == 3)
                    default:
                        #expect(answer.status == 200)
                    }
                }
                return statuses
            }
            runs.append(statuses)
        }
        let throttled = runs[0].count { $0 == 429 }, unavailable = runs[0].count { $0 == 503 }
        #expect((16...64).contains(throttled), "\(throttled) throttled")
        #expect((3...38).contains(unavailable), "\(unavailable) unavailable")
        #expect(runs[0].count { $0 == 200 } == 400 - throttled - unavailable)
        #expect(runs[0] == runs[1])
    }

    @Test func assetPathsAreNeverFaulted() async throws {
        let injection = try CloudKitFaultInjection(throttle: 1, seed: 1)
        try await Harness.with(.init(faultInjection: injection)) { server in
            for _ in 0..<20 {
                #expect(try await server.send(.POST, "/assets/upload/x", body: [1]).status == 200)
            }
            try await server.send(.POST, publicQuery, body: queryBody).expectError("THROTTLED", 429)
        }
    }

    @Test func theInjectOptionIsReadStrictly() throws {
        let parsed = try CloudKitFaultInjection(parsing: "throttle=0.05,unavailable=0.01")
        #expect(parsed == (try CloudKitFaultInjection(throttle: 0.05, unavailable: 0.01)))
        #expect(parsed.retryAfterSeconds == 1 && parsed.seed == nil)
        for bad in ["throttle=x", "throttle=1.5", "throttle=0.6,unavailable=0.6", "slow=0.1", "unavailable=-0.1", "throttle=nan"] {
            let error = #expect(throws: CloudKitServerError.self, "\(bad)") { _ = try CloudKitFaultInjection(parsing: bad) }
            #expect(error?.code == .invalidFaultInjection)
        }
    }
}
#endif
