import FerryChangeLog
import FerryInternals
import FerryPipeline
import FerryRecords

/// Two states or exports compared, as `ferry diff` compares them: records only in A, only in
/// B, and changed (with the fields and system keys that differ). A and B are anything Ferry
/// reads, folders of files included; records match by zone (name and owner) and recordName.
///
/// ```swift
/// let diff = try Comparison(configuration: .init(a: "state.ndjson", b: "snapshot.ndjson")).run()
/// print(Comparison.text(diff), terminator: "")
/// ```
public final class Comparison {
    /// What to compare.
    public struct Configuration: Sendable {
        /// The first state or export (`-` is standard input): held in memory as compact JSON.
        public var a: String
        /// The second (`-` is standard input): streamed.
        public var b: String
        /// The longest line (and pretty-printed document read from a stream) accepted.
        public var maximumLineBytes: Int

        /// A comparison of `a` with `b`.
        public init(a: String, b: String, maximumLineBytes: Int = 64 << 20) {
            self.a = a
            self.b = b
            self.maximumLineBytes = maximumLineBytes
        }
    }

    /// What to compare.
    public let configuration: Configuration
    /// Told of entries a folder's listing skipped, as sentences.
    public var onNote: ((String) -> Void)?

    /// A comparison as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Compares A with B.
    ///
    /// - Throws: ``FerryError`` for an input that cannot be read, or that holds a record twice
    ///   (it is then no state).
    public func run() throws(FerryError) -> StateDiff {
        let recognizer = InputRecognizer(configuration: .init(maximumLineBytes: configuration.maximumLineBytes))
        let a = try recognizer.openReader(configuration.a, onNote: onNote)
        let b = try recognizer.openReader(configuration.b, onNote: onNote)
        return try FerryError.catching { try StateDiff(comparing: a, with: b) }
    }

    /// `[database/]zone (owner)/name [type]`; the database when the input tells databases apart.
    private static func describe(_ database: String?, _ zone: ZoneID, _ name: String, _ type: String?) -> String {
        TextTable.visible((database.map { $0 + "/" } ?? "") + zone.zoneName + (zone.ownerRecordName.map { " (\($0))" } ?? "") + "/" + name
            + (type.map { " [\($0)]" } ?? ""))
    }

    /// The differences as `ferry diff` prints them: a line per record only in A, only in B,
    /// changed, then a line of counts.
    public static func text(_ diff: StateDiff) -> String {
        var text = ""
        for entry in diff.onlyInA { text += "only in A: \(describe(entry.database, entry.zoneID, entry.recordName, entry.recordType))\n" }
        for entry in diff.onlyInB { text += "only in B: \(describe(entry.database, entry.zoneID, entry.recordName, entry.recordType))\n" }
        for change in diff.changed {
            var parts: [String] = []
            if !change.fields.isEmpty { parts.append("fields " + change.fields.map(TextTable.visible).joined(separator: ", ")) }
            if !change.keys.isEmpty { parts.append("keys " + change.keys.map(TextTable.visible).joined(separator: ", ")) }
            text += "changed: \(describe(change.database, change.zoneID, change.recordName, change.recordType)): \(parts.joined(separator: "; "))\n"
        }
        text += "\(diff.isIdentical ? "identical" : "different"): A has \(Plural.count(diff.countA, "record")), B \(diff.countB); "
            + "\(diff.identicalCount) identical, \(diff.onlyInA.count) only in A, \(diff.onlyInB.count) only in B, \(diff.changed.count) changed\n"
        return text
    }

    /// The differences as one JSON object (`ferry diff --json`): identical, counts, onlyInA,
    /// onlyInB, changed.
    public static func json(_ diff: StateDiff) -> String {
        func zoneJSON(_ zone: ZoneID) -> JSONValue {
            var out = JSONOutput(capacity: 128)
            RecordJSON.encode(zone, into: &out)
            return (try? RecordJSON.parseValue(out.bytes)) ?? .null
        }
        func entry(_ database: String?, _ zone: ZoneID, _ name: String, _ type: String?) -> JSONObject {
            var object: JSONObject = [:]
            if let database { object.append(key: "database", value: .string(database)) }
            object.append(key: "zoneID", value: zoneJSON(zone))
            object.append(key: "recordName", value: .string(name))
            if let type { object.append(key: "recordType", value: .string(type)) }
            return object
        }
        let changed: [JSONValue] = diff.changed.map { change in
            var object = entry(change.database, change.zoneID, change.recordName, change.recordType)
            object.append(key: "fields", value: .array(change.fields.map(JSONValue.string)))
            object.append(key: "keys", value: .array(change.keys.map(JSONValue.string)))
            return .object(object)
        }
        let root: JSONObject = [
            "identical": .bool(diff.isIdentical),
            "counts": .object([
                "a": diff.countA.json, "b": diff.countB.json, "identical": diff.identicalCount.json,
                "onlyInA": diff.onlyInA.count.json, "onlyInB": diff.onlyInB.count.json, "changed": diff.changed.count.json,
            ]),
            "onlyInA": .array(diff.onlyInA.map { .object(entry($0.database, $0.zoneID, $0.recordName, $0.recordType)) }),
            "onlyInB": .array(diff.onlyInB.map { .object(entry($0.database, $0.zoneID, $0.recordName, $0.recordType)) }),
            "changed": .array(changed),
        ]
        return JSONValue.object(root).compactText
    }
}
