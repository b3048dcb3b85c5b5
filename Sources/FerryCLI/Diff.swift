import ArgumentParser
import FerryChangeLog
import FerryIO
import FerryInternals
import FerryRecords

/// `ferry diff A B`: which records two states or exports do not share, and which changed.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two states or exports: records only in A, only in B, and changed.",
        discussion: """
        A and B are anything Ferry reads: NDJSON (gzip recognized), saved CloudKit responses, \
        archives, stores, XML, and folders of them (their files in name order, as convert reads \
        them). Records are matched by zone (name and owner) and recordName and compared as JSON \
        values: key order does not matter, numbers compare by their exact value (an integer and a \
        fraction differ). For each changed record the \
        fields and system keys that differ are named. An input that holds a record (zone and \
        recordName, and database in a store or archive) more than once is not a state: diff names \
        such records and where they are, and exits 2 without comparing. A record of an input that \
        does not tell databases apart (NDJSON, XML, responses) matches the other input's record of \
        that zone and name in any database (exit 2 when the other holds it in several); the \
        differences name the database where one is known.

        Memory is proportional to the records of A (held as compact JSON); B is streamed.

        Exit codes (as diff(1)): 0 identical, 1 different, 2 usage error, unreadable input (a \
        record given twice included) or a failed write to standard output.

        Examples:
          ferry diff state.ndjson snapshot.ndjson
          ferry diff replayed.tar.gz export.ndjson.gz --json | jq '.changed[].fields'
          ferry replay history.ndjson --out s.ndjson --quiet \\
              && ferry diff s.ndjson expected.ndjson --quiet
        """
    )

    @Argument(help: ArgumentHelp("The first state or export (- is stdin).", valueName: "A"))
    var a: String

    @Argument(help: ArgumentHelp("The second state or export (- is stdin).", valueName: "B"))
    var b: String

    @Flag(help: "Print the differences as JSON on stdout.")
    var json = false

    @Flag(help: "Print nothing, not even with --json; only the exit code tells.")
    var quiet = false

    @Option(name: .customLong("max-line-bytes"), parsing: .unconditional, help: "Longest input line accepted (also the largest pretty-printed document read from stdin or gzip).")
    var maxLineBytes: Int = 64 << 20

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        if a == "-" && b == "-" { throw ValidationError("standard input (-) can be read only once") }
        for path in [a, b] where path != "-" && !FileSystem.exists(path) {
            throw ValidationError("no such input: \(path)")
        }
        try checkNumber(maxLineBytes, of: "--max-line-bytes", in: 1...Int.max)
    }

    func run() throws {
        let diff: StateDiff
        do {
            let options = RecordInputOptions(maximumLineBytes: maxLineBytes)
            diff = try StateDiff(comparing: try openRecordReader(a, options: options, quiet: quiet || json),
                                 with: try openRecordReader(b, options: options, quiet: quiet || json))
        } catch {
            var failure = dataFailure(error)
            if var command = failure as? CommandFailure {
                command.exitCode = 2
                failure = command
            }
            throw failure
        }
        if quiet {
            // Nothing, not even with --json: only the exit code tells.
        } else if json {
            print(Self.json(diff))
        } else {
            print(Self.text(diff), terminator: "")
        }
        if !diff.isIdentical { throw CommandFailure(message: "", exitCode: 1) }
    }

    /// `[database/]zone (owner)/name [type]`; the database when the input tells databases apart.
    private static func describe(_ database: String?, _ zone: ZoneID, _ name: String, _ type: String?) -> String {
        visible((database.map { $0 + "/" } ?? "") + zone.zoneName + (zone.ownerRecordName.map { " (\($0))" } ?? "") + "/" + name
            + (type.map { " [\($0)]" } ?? ""))
    }

    static func text(_ diff: StateDiff) -> String {
        var text = ""
        for entry in diff.onlyInA { text += "only in A: \(describe(entry.database, entry.zoneID, entry.recordName, entry.recordType))\n" }
        for entry in diff.onlyInB { text += "only in B: \(describe(entry.database, entry.zoneID, entry.recordName, entry.recordType))\n" }
        for change in diff.changed {
            var parts: [String] = []
            if !change.fields.isEmpty { parts.append("fields " + change.fields.map(visible).joined(separator: ", ")) }
            if !change.keys.isEmpty { parts.append("keys " + change.keys.map(visible).joined(separator: ", ")) }
            text += "changed: \(describe(change.database, change.zoneID, change.recordName, change.recordType)): \(parts.joined(separator: "; "))\n"
        }
        text += "\(diff.isIdentical ? "identical" : "different"): A has \(Plural.count(diff.countA, "record")), B \(diff.countB); "
            + "\(diff.identicalCount) identical, \(diff.onlyInA.count) only in A, \(diff.onlyInB.count) only in B, \(diff.changed.count) changed\n"
        return text
    }

    static func json(_ diff: StateDiff) -> String {
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
                "a": .number(JSONNumber(Int64(diff.countA))), "b": .number(JSONNumber(Int64(diff.countB))),
                "identical": .number(JSONNumber(Int64(diff.identicalCount))),
                "onlyInA": .number(JSONNumber(Int64(diff.onlyInA.count))), "onlyInB": .number(JSONNumber(Int64(diff.onlyInB.count))),
                "changed": .number(JSONNumber(Int64(diff.changed.count))),
            ]),
            "onlyInA": .array(diff.onlyInA.map { .object(entry($0.database, $0.zoneID, $0.recordName, $0.recordType)) }),
            "onlyInB": .array(diff.onlyInB.map { .object(entry($0.database, $0.zoneID, $0.recordName, $0.recordType)) }),
            "changed": .array(changed),
        ]
        var out = JSONOutput()
        out.appendValue(.object(root))
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
