#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The merged results of a run: per kind and in total, counts, rates and exact latency
/// percentiles (every latency is kept), errors by label, the creates' names.
struct LoadReport {
    struct Row {
        var kind: String
        var requests: Int
        var answered: Int
        var succeeded: Int
        var perSecond: Double
        var succeededPerSecond: Double
        var p50: Double
        var p99: Double
        var max: Double
        var errors: Int { requests - succeeded }
    }

    var configuration: LoadConfiguration
    var seconds: Double
    var rows: [Row] = []
    var errors: [(label: String, count: Int)]
    var acknowledged: [String]
    var unsettled: [String]
    var connections: Int
    var cpuSeconds: Double

    init(configuration: LoadConfiguration, clients: [LoadClient], connections: Int, startAt: Double) {
        self.configuration = configuration
        seconds = max(1e-9, (clients.map(\.finishedAt).max() ?? startAt) - startAt)
        var merged = Array(repeating: KindTally(), count: RequestKind.allCases.count)
        var errorCounts: [String: Int] = [:]
        for client in clients {
            for kind in RequestKind.allCases { merged[kind.rawValue].merge(client.tallies[kind.rawValue]) }
            errorCounts.merge(client.errors, uniquingKeysWith: +)
        }
        errors = errorCounts.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }.map { ($0.key, $0.value) }
        acknowledged = clients.flatMap(\.acknowledged)
        unsettled = clients.flatMap(\.unsettled)
        self.connections = connections
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        cpuSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        var total = KindTally()
        for kind in RequestKind.allCases where configuration.mix.contains(where: { $0.kind == kind }) {
            rows.append(row(kind.name, merged[kind.rawValue]))
            total.merge(merged[kind.rawValue])
        }
        if rows.count > 1 { rows.append(row("all", total)) }
    }

    private func row(_ kind: String, _ tally: KindTally) -> Row {
        let sorted = tally.latencies.sorted()
        /// Nearest rank: the smallest latency with at least p of the answers at or below it.
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((p * Double(sorted.count)).rounded(.up))
            return Double(sorted[min(sorted.count, max(1, rank)) - 1]) / 1000
        }
        return Row(kind: kind, requests: tally.answered + tally.unanswered, answered: tally.answered, succeeded: tally.succeeded,
                   perSecond: Double(tally.answered) / seconds, succeededPerSecond: Double(tally.succeeded) / seconds,
                   p50: percentile(0.5), p99: percentile(0.99), max: Double(sorted.last ?? 0) / 1000)
    }

    var errorCount: Int { errors.reduce(0) { $0 + $1.count } }

    var mixText: String { configuration.mix.map { "\($0.kind.name)=\($0.weight)" }.joined(separator: ",") }

    /// The table printed by default.
    var table: String {
        var lines = [
            "ferry-load: \(configuration.clients) clients, \(fixed(seconds, 1)) s, mix \(mixText), "
                + "127.0.0.1:\(configuration.port) \(configuration.container)/\(configuration.environment)/\(configuration.database)",
            "",
        ]
        let header = ["kind", "requests", "req/s", "ok/s", "p50 ms", "p99 ms", "max ms", "errors"]
        var cells = [header]
        for row in rows {
            cells.append([row.kind, String(row.requests), fixed(row.perSecond, 0), fixed(row.succeededPerSecond, 0),
                          fixed(row.p50, 2), fixed(row.p99, 2), fixed(row.max, 2), String(row.errors)])
        }
        let widths = header.indices.map { column in cells.map { $0[column].count }.max()! }
        for line in cells {
            lines.append(line.enumerated().map { column, cell in
                column == 0 ? cell.padding(widths[column]) : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  "))
        }
        lines.append("")
        if errors.isEmpty {
            lines.append("errors: none")
        } else {
            lines.append("errors:")
            for (label, count) in errors { lines.append("  \(count)  \(label)") }
        }
        if configuration.mix.contains(where: { $0.kind == .modify }) {
            lines.append("creates: \(acknowledged.count) acknowledged, \(unsettled.count) not acknowledged (error or no answer)")
        }
        lines.append("connections opened: \(connections); ferry-load's own CPU time: \(fixed(cpuSeconds, 2)) s")
        return lines.joined(separator: "\n")
    }

    /// The same as one JSON object.
    var json: String {
        func rowJSON(_ row: Row) -> String {
            #"{"requests":\#(row.requests),"answered":\#(row.answered),"succeeded":\#(row.succeeded),"errors":\#(row.errors),"#
                + #""perSecond":\#(fixed(row.perSecond, 1)),"succeededPerSecond":\#(fixed(row.succeededPerSecond, 1)),"#
                + #""p50Ms":\#(fixed(row.p50, 3)),"p99Ms":\#(fixed(row.p99, 3)),"maxMs":\#(fixed(row.max, 3))}"#
        }
        let kinds = rows.map { jsonString($0.kind) + ":" + rowJSON($0) }.joined(separator: ",")
        let errorList = errors.map { jsonString($0.label) + ":" + String($0.count) }.joined(separator: ",")
        return #"{"clients":\#(configuration.clients),"seconds":\#(fixed(seconds, 3)),"mix":\#(jsonString(mixText)),"#
            + #""port":\#(configuration.port),"container":\#(jsonString(configuration.container)),"#
            + #""environment":\#(jsonString(configuration.environment)),"database":\#(jsonString(configuration.database)),"#
            + #""lookupBatch":\#(configuration.lookupBatch),"kinds":{\#(kinds)},"errorCount":\#(errorCount),"errors":{\#(errorList)},"#
            + #""acknowledgedCreates":\#(acknowledged.count),"unsettledCreates":\#(unsettled.count),"#
            + #""connections":\#(connections),"generatorCPUSeconds":\#(fixed(cpuSeconds, 3))}"#
    }
}

/// `value` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if digits == 0 { return String(Int(rounded)) }
    var text = String(rounded)
    if text.contains("e") { return text }
    let decimals = text.split(separator: ".").last.map(\.count) ?? 0
    if !text.contains(".") { text += "." }
    return text + String(repeating: "0", count: max(0, digits - decimals))
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
