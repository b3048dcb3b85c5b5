import FerryIO
import FerryPipeline
import FerryRecords

/// A sort order over records: a system key or a field name, ascending or descending.
///
/// Keys: `recordName`, `recordType`, `zoneName`, `recordChangeTag`, `created` (or `creationDate`),
/// `modified` (or `modificationDate`); anything else names a field. Missing values sort first
/// (last when descending); numbers before strings; strings by Unicode code point.
public struct RecordSortKey: Sendable, Equatable {
    public var key: String
    public var descending: Bool

    /// Parses `key[:asc|:desc]`.
    public init?(parsing text: String) {
        var name = Substring(text)
        descending = false
        if let colon = text.lastIndex(of: ":") {
            let suffix = text[text.index(after: colon)...].lowercased()
            guard suffix == "desc" || suffix == "asc" else { return nil }
            descending = suffix == "desc"
            name = text[..<colon]
        }
        guard !name.isEmpty else { return nil }
        key = String(name)
    }

    /// The value a record sorts by.
    public func value(of record: Record) -> SortValue {
        switch key {
        case "recordName": return .string(record.recordName)
        case "recordType": return record.recordType.map(SortValue.string) ?? .missing
        case "zoneName": return .string(record.zoneName)
        case "recordChangeTag": return record.recordChangeTag.map(SortValue.string) ?? .missing
        case "created", "creationDate": return record.created?.timestamp.map { .number(Double($0), $0) } ?? .missing
        case "modified", "modificationDate": return record.modified?.timestamp.map { .number(Double($0), $0) } ?? .missing
        default:
            switch record[field: key] {
            case .string(let s)?, .bytes(let s)?: return .string(s)
            case .int64(let v)?, .timestamp(let v)?: return .number(Double(v), v)
            case .double(let d)?: return .number(d, nil)
            case .reference(let r)?: return .string(r.recordName)
            default: return .missing
            }
        }
    }

    /// A comparable sort value.
    public enum SortValue: Comparable, Sendable {
        case missing
        /// A number; integers keep their exact value for ties beyond 2^53.
        case number(Double, Int64?)
        case string(String)

        public static func < (a: SortValue, b: SortValue) -> Bool {
            switch (a, b) {
            case (.missing, .missing): return false
            case (.missing, _): return true
            case (_, .missing): return false
            case (.number(let x, let xi), .number(let y, let yi)):
                if let xi, let yi { return xi < yi }
                return x < y
            case (.number, .string): return true
            case (.string, .number): return false
            case (.string(let x), .string(let y)): return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars)
            }
        }

        public static func == (a: SortValue, b: SortValue) -> Bool { !(a < b) && !(b < a) }
    }
}

/// Sorts records stably, in memory up to a budget, then in sorted runs on disk merged at the end.
///
/// Sorting needs every record before the first can be written: memory is bounded by
/// ``memoryBudget`` (encoded bytes held), and larger inputs spill runs to temporary files in
/// `temporaryDirectory` (`$TMPDIR` by default), named `.ferry-sort-PID-…` and removed afterwards,
/// or on SIGINT/SIGTERM. Runs a killed sort left are removed by the next sort that spills there.
public final class RecordSorter {
    private let sortKey: RecordSortKey
    private let memoryBudget: Int
    private let temporaryDirectory: String
    private var entries: [(key: RecordSortKey.SortValue, record: Record)] = []
    private var heldBytes = 0
    private var runs: [String] = []

    public init(key: RecordSortKey, memoryBudget: Int = 512 << 20, temporaryDirectory: String = FileSystem.temporaryDirectory) {
        sortKey = key
        self.memoryBudget = memoryBudget
        self.temporaryDirectory = temporaryDirectory
        // Runs a killed sort left behind (one readdir of the folder per process).
        FileSystem.removeStaleTemporariesOnce(in: temporaryDirectory)
    }

    deinit {
        for run in runs {
            try? FileSystem.remove(run)
            TemporaryFiles.shared.unregister(run)
        }
    }

    /// Adds a record.
    public func add(_ record: Record) throws {
        entries.append((sortKey.value(of: record), record))
        heldBytes += Self.estimatedSize(record)
        if heldBytes >= memoryBudget { try spill() }
    }

    private static func estimatedSize(_ record: Record) -> Int {
        var size = 160 + record.recordName.utf8.count
        for entry in record.fields?.entries ?? [] {
            size += 48 + entry.name.utf8.count
            if case .string(let s) = entry.field.value { size += s.utf8.count }
        }
        return size
    }

    private func sortEntries() {
        let descending = sortKey.descending
        // Stable: Swift's sort is not guaranteed stable, so tie-break on the original position.
        let indexed = entries.enumerated().map { ($0.offset, $0.element) }
        let sorted = indexed.sorted { a, b in
            if a.1.key == b.1.key { return a.0 < b.0 }
            return descending ? b.1.key < a.1.key : a.1.key < b.1.key
        }
        entries = sorted.map { $0.1 }
    }

    private func spill() throws {
        sortEntries()
        let path = temporaryDirectory + "/" + FileSystem.temporaryName(prefix: ".ferry-sort-") + "-\(runs.count).ndjson"
        let file = try OutputFile(path: path)
        let writer = NDJSONWriter(sink: file)
        for entry in entries { try writer.write(entry.record) }
        try writer.finish()
        runs.append(path)
        TemporaryFiles.shared.register(path)
        entries.removeAll(keepingCapacity: false)
        heldBytes = 0
    }

    /// Emits every record in order.
    public func finish(_ emit: (Record) throws -> Bool) throws {
        if runs.isEmpty {
            sortEntries()
            for entry in entries where try !emit(entry.record) { return }
            return
        }
        if !entries.isEmpty { try spill() }
        // k-way merge; ties go to the earlier run, which keeps the sort stable.
        let readers = try runs.map { NDJSONReader(source: try InputFile(path: $0)) }
        var heads: [(RecordSortKey.SortValue, Record)?] = try readers.map { reader in
            try reader.next().map { (sortKey.value(of: $0), $0) }
        }
        while true {
            var best: Int? = nil
            for i in heads.indices {
                guard let head = heads[i] else { continue }
                if let b = best, let current = heads[b] {
                    let better = sortKey.descending ? current.0 < head.0 : head.0 < current.0
                    if better { best = i }
                } else {
                    best = i
                }
            }
            guard let b = best, let head = heads[b] else { return }
            if try !emit(head.1) { return }
            heads[b] = try readers[b].next().map { (sortKey.value(of: $0), $0) }
        }
    }
}

extension RecordSorter: RecordBuffer {}
