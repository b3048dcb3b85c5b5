import FerryChangeLog

extension AnomalyReport {
    /// What a replay says of its anomalies, as a sentence (`3 anomalies: unknownDelete 2, …`),
    /// pointing to `--report` unless `isReported`; `nil` when there were none.
    public func note(isReported: Bool) -> String? {
        guard total > 0 else { return nil }
        let counts = ReplayAnomaly.Kind.allCases.filter { count(of: $0) > 0 }
            .map { "\($0.rawValue) \(count(of: $0))" }.joined(separator: ", ")
        return "\(total) anomal\(total == 1 ? "y" : "ies"): \(counts)" + (isReported ? "" : " (list them with --report FILE)")
    }
}
