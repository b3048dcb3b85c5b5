import ArgumentParser

/// The record formats Ferry reads and writes.
enum RecordFormat: String, CaseIterable, ExpressibleByArgument {
    case ndjson

    /// The format named by a path's extension, if any (`.ndjson`, `.jsonl`, `.json`).
    static func from(path: String) -> RecordFormat? {
        let lower = path.lowercased()
        for suffix in [".ndjson", ".jsonl", ".json", ".ndjson.gz", ".jsonl.gz", ".json.gz"] where lower.hasSuffix(suffix) {
            return .ndjson
        }
        return nil
    }
}

/// What to do with bad input.
enum ErrorMode: String, CaseIterable, ExpressibleByArgument {
    case fail, skip
}
