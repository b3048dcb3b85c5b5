#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one client saw of one kind of request.
struct KindTally: Sendable {
    /// Answers received (any status).
    var answered = 0
    /// Answers that were 200 without a per-record error (and, for creates, naming the record).
    var succeeded = 0
    /// Requests that got no answer (connection closed, timeout).
    var unanswered = 0
    /// Latency of every answer, send to last byte, in microseconds.
    var latencies: [UInt32] = []

    mutating func merge(_ other: KindTally) {
        answered += other.answered
        succeeded += other.succeeded
        unanswered += other.unanswered
        latencies += other.latencies
    }
}

/// One client: its own connection, its own random stream, its own tallies; sends until the
/// deadline, then finishes the request in flight. Run on a thread of its own by ``run()``.
final class LoadClient: @unchecked Sendable {
    let index: Int
    private let builder: RequestBuilder
    private let startAt: Double
    private let deadline: Double
    private var random: SplitMix64
    private let connection: HTTPConnection
    private(set) var tallies = Array(repeating: KindTally(), count: RequestKind.allCases.count)
    /// Errors by label: `HTTP 503 TRY_AGAIN_LATER`, `HTTP 200 EXISTS (per record)`, `connect ECONNREFUSED`, …
    private(set) var errors: [String: Int] = [:]
    /// Names of creates answered 200 with the record and no error dictionary.
    private(set) var acknowledged: [String] = []
    /// Names of creates sent and not acknowledged (an error, or no answer: they may or may not exist).
    private(set) var unsettled: [String] = []
    private(set) var finishedAt = 0.0
    /// Connections opened (the first and every reconnect).
    var connections: Int { connection.connects }
    private var creates = 0
    /// The cumulative weights of the mix.
    private let mix: [(kind: RequestKind, upTo: UInt64)]
    private let totalWeight: UInt64

    init(index: Int, builder: RequestBuilder, startAt: Double, deadline: Double) {
        self.index = index
        self.builder = builder
        self.startAt = startAt
        self.deadline = deadline
        let configuration = builder.configuration
        random = SplitMix64(seed: configuration.seed &* 0x1_0000_0001 &+ UInt64(index))
        connection = HTTPConnection(port: configuration.port, timeout: configuration.timeout)
        var sum: UInt64 = 0
        mix = configuration.mix.map { sum += UInt64($0.weight); return ($0.kind, sum) }
        totalWeight = sum
    }

    /// Connects, waits for the common start, then loops until the deadline.
    func run() {
        try? connection.open()  // failures show in the first exchange
        sleep(until: startAt)
        while now() < deadline {
            let draw = random.next() % totalWeight
            let kind = mix.first { draw < $0.upTo }!.kind
            exchange(kind)
        }
        connection.close()
        finishedAt = now()
    }

    private func exchange(_ kind: RequestKind) {
        var name = ""
        let request: [UInt8]
        switch kind {
        case .lookup: request = builder.lookup(&random)
        case .query: request = builder.query(&random)
        case .modify:
            creates += 1
            name = builder.configuration.createdName(client: index, n: creates)
            request = builder.create(name, client: index, n: creates)
        }
        let began = now()
        let answer: HTTPAnswer
        do {
            answer = try connection.exchange(request, giveUpAt: deadline + builder.configuration.timeout)
        } catch {
            tallies[kind.rawValue].unanswered += 1
            count(error.label)
            if kind == .modify { unsettled.append(name) }
            // A refused connection would spin: let the server breathe before trying again.
            if case .connect = error { sleep(until: min(deadline, now() + 0.01)) }
            return
        }
        let micros = (now() - began) * 1e6
        tallies[kind.rawValue].answered += 1
        tallies[kind.rawValue].latencies.append(UInt32(min(micros, Double(UInt32.max))))
        let failure = Self.classify(answer, kind: kind, created: name)
        if let failure {
            count(failure)
            if kind == .modify { unsettled.append(name) }
        } else {
            tallies[kind.rawValue].succeeded += 1
            if kind == .modify { acknowledged.append(name) }
        }
    }

    private func count(_ label: String) { errors[label, default: 0] += 1 }

    /// `nil` for a success, else the error's label: a status other than 200 (with the body's
    /// `serverErrorCode`), a 200 holding a per-record error dictionary, or a create answered
    /// without its record.
    static func classify(_ answer: HTTPAnswer, kind: RequestKind, created name: String) -> String? {
        let code = serverErrorCode(in: answer.body)
        if answer.status != 200 {
            return "\(kind.name): HTTP \(answer.status)" + (code.map { " \($0)" } ?? "")
        }
        if let code { return "\(kind.name): HTTP 200 with \(code) (per record)" }
        if kind == .modify && !contains(answer.body, Array(jsonString(name).utf8)) {
            return "\(kind.name): HTTP 200 without the created record"
        }
        if kind == .lookup && !contains(answer.body, Array("recordName".utf8)) {
            return "\(kind.name): HTTP 200 without a record"
        }
        return nil
    }
}

/// The value of the first `"serverErrorCode"` key in `body`, if any.
func serverErrorCode(in body: [UInt8]) -> String? {
    let key = Array("\"serverErrorCode\"".utf8)
    guard let at = find(body, key) else { return nil }
    var i = at + key.count
    while i < body.count && body[i] != UInt8(ascii: "\"") {
        guard [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r")].contains(body[i]) else { return "?" }
        i += 1
    }
    let valueStart = i + 1
    guard valueStart < body.count, let end = body[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else { return "?" }
    return String(decoding: body[valueStart..<end], as: UTF8.self)
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { find(haystack, needle) != nil }

/// The offset of the first `needle` in `haystack` (`memchr` for its first byte, then `memcmp`).
func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
    guard let first = needle.first, haystack.count >= needle.count else { return nil }
    return haystack.withUnsafeBytes { h in
        needle.withUnsafeBytes { n -> Int? in
            let base = h.baseAddress!
            var at = 0
            let last = h.count - n.count
            while at <= last {
                guard let hit = memchr(base + at, Int32(first), last - at + 1) else { return nil }
                let offset = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + offset, n.baseAddress!, n.count) == 0 { return offset }
                at = offset + 1
            }
            return nil
        }
    }
}

/// Monotonic seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Sleeps until the monotonic time `t`.
func sleep(until t: Double) {
    while true {
        let left = t - now()
        if left <= 0 { return }
        var request = timespec(tv_sec: Int(left), tv_nsec: Int((left - left.rounded(.down)) * 1e9))
        nanosleep(&request, nil)
    }
}
