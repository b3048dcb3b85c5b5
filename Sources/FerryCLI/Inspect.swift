import ArgumentParser
import FerryArchive
import FerryCompression
import FerryIO
import FerryInternals
import FerryNDJSON
import FerryPipeline
import FerryRecords
import FerryStore

/// `ferry inspect INPUT...`: what a dataset holds.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what records a dataset holds: zones, types, fields, time span, size.",
        discussion: """
        Counts records per zone and type, lists every field with the types it was seen with and how \
        often it occurs, the time span of created and modified, and the bytes read. Inputs may be \
        NDJSON, XML or gzip-compressed; for an archive, its manifest is shown (zones, counts, \
        change tokens, schema, members) without reading its records — `ferry verify` checks them. \
        For a store: its zones, change tokens, counts per type, journal and indexes.

        Examples:
          ferry inspect Samples/chat.ndjson
          ferry inspect export.xml.gz
          ferry inspect backup.tar.gz            # an archive: what its manifest says
          ferry inspect export.ndjson --json \\
              | jq '.fields[] | select(.types | length > 1)'
        """
    )

    @Argument(help: ArgumentHelp("Files or folders to inspect (- is stdin).", valueName: "INPUT"))
    var inputs: [String] = []

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    @Option(name: .customLong("on-error"), help: "fail: stop at the first bad input (default). skip: count it and go on.")
    var onError: ErrorMode = .fail

    @Flag(help: "No progress, and with --on-error skip no skipped inputs, on stderr.")
    var quiet = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard !inputs.isEmpty else { throw ValidationError("expected at least one INPUT") }
        try checkInputsExist(inputs)
    }

    func run() throws {
        var summary = DatasetSummary()
        var manifests: [(String, ArchiveManifest)] = []
        var stores: [StoreSummary] = []
        let clock = Stopwatch()
        let progress = Progress(enabled: !quiet && StandardError.isTerminal)
        let reportSkipped = skippedInputReporter(quiet: quiet)
        do {
            let paths = FileReadahead(try expandInputs(inputs, quiet: quiet))
            let policy: RecordErrorPolicy = onError == .skip ? .skip(rejects: nil) : .fail
            let onReject: (any Error) -> Void = { error in
                progress.clear()
                reportSkipped(error)
            }
            // Each input is opened and recognized once (``openInput(_:declared:)``, as `convert`
            // does); one met while NDJSON and response inputs were read waits here for the loop.
            var pending: OpenedInput?
            while let input = try pending.take() ?? paths.next().map({ try openInput($0, declared: nil) }) {
                let path = input.path
                switch input.format {
                case .store:
                    // A store describes itself too: its tables are summed up, its records not read.
                    stores.append(try StoreSummary(path: path))
                    continue
                case .archive:
                    let opened = try ArchiveReader(source: input.source!, policy: policy)
                    if opened.manifestPlacement == .first {
                        // An archive describes itself: its manifest is read, not its records.
                        manifests.append((path, opened.manifest))
                        continue
                    }
                    // No manifest up front: what it holds is what its record files hold.
                    try read(ArchiveRecordReader(opened), into: &summary, progress: progress, clock: clock, onReject: onReject)
                    if opened.manifestPlacement != .notRead {
                        manifests.append((path, opened.manifest)) // a manifest after other members
                    }
                    continue
                case .xml:
                    try read(try openRecordReader(input.source!, name: path, options: RecordInputOptions(policy: policy)),
                             into: &summary, progress: progress, clock: clock, onReject: onReject)
                    continue
                case .ndjson:
                    break
                }
                // NDJSON and saved responses, this input and the next ones of those formats, are
                // decoded on every core, as `convert` decodes them; the input after them waits.
                var given = input.source
                let converter = NDJSONParallelConverter(
                    sources: {
                        if let source = given {
                            given = nil
                            return source
                        }
                        guard let next = try paths.next().map({ try openInput($0, declared: nil) }) else { return nil }
                        guard next.format == .ndjson else {
                            pending = next
                            return nil
                        }
                        return next.source
                    },
                    destination: .records { record in
                        summary.add(record)
                        return true
                    },
                    policy: policy)
                converter.onReject = onReject
                converter.onZoneListing = { listing in summary.zoneListings.append(listing) }
                let bytesBefore = summary.bytes
                if progress.isEnabled {
                    converter.onProgress = { now in progress.update(records: summary.records, bytes: bytesBefore + now.bytesRead, clock: clock) }
                }
                let statistics = try converter.run()
                summary.bytes += statistics.bytesRead
                summary.rejected += statistics.rejected
            }
        } catch {
            progress.clear()
            throw dataFailure(error)
        }
        progress.clear()
        let showRecords = summary.records > 0 || summary.rejected > 0 || (manifests.isEmpty && stores.isEmpty)
        if json {
            if !stores.isEmpty {
                var object = JSONObject()
                object.append(key: "stores", value: .array(stores.map(\.json)))
                if !manifests.isEmpty {
                    object.append(key: "archives", value: .array(manifests.map { .object(["path": .string($0.0), "manifest": $0.1.jsonValue]) }))
                }
                if showRecords, let records = try? JSONValue(parsing: summary.json) { object.append(key: "records", value: records) }
                var out = JSONOutput()
                out.appendValue(.object(object))
                print(String(decoding: out.bytes, as: UTF8.self))
            } else if manifests.isEmpty {
                print(summary.json, terminator: "")
            } else {
                // One JSON document: the archives' manifests and, when other inputs were given, their summary.
                var object = JSONObject()
                object.append(key: "archives", value: .array(manifests.map { path, manifest in
                    .object(["path": .string(path), "manifest": manifest.jsonValue])
                }))
                if showRecords, let records = try? JSONValue(parsing: summary.json) {
                    object.append(key: "records", value: records)
                }
                var out = JSONOutput()
                out.appendValue(.object(object))
                print(String(decoding: out.bytes, as: UTF8.self))
            }
        } else {
            var parts = stores.map(\.text) + manifests.map { ManifestSummary(path: $0.0, manifest: $0.1).text }
            if showRecords { parts.append(summary.text) }
            print(parts.joined(separator: "\n"), terminator: "")
        }
    }

    /// Adds the records of `reader` (XML, an archive without a manifest up front) to `summary`,
    /// on this thread.
    private func read(_ reader: any RecordReader, into summary: inout DatasetSummary, progress: Progress, clock: Stopwatch,
                      onReject: @escaping (any Error) -> Void) throws {
        reader.onReject = onReject
        while let record = try reader.next() {
            summary.add(record)
            if progress.isEnabled {
                progress.update(records: summary.records, bytes: summary.bytes + reader.bytesRead, clock: clock)
            }
        }
        summary.bytes += reader.bytesRead
        summary.rejected += reader.rejectedCount
        summary.zoneListings += reader.zoneListings
    }
}

/// The text `inspect` prints for an archive: what its manifest says.
struct ManifestSummary {
    var path: String
    var manifest: ArchiveManifest

    var text: String {
        var lines: [String] = []
        let bytes = manifest.members.reduce(0) { $0 + $1.size }
        let assets = manifest.members.filter { $0.kind == .asset }
        let logs = manifest.members.filter { $0.kind == .changes }
        lines.append("\(path): Ferry archive, format \(manifest.formatVersion), written \(isoDate(manifest.createdAt)) by Ferry \(manifest.ferryVersion)")
        lines.append("\(Plural.count(manifest.recordCount, "record")) in \(Plural.count(manifest.zones.count, "zone")), \(Plural.count(assets.count, "asset")), "
                     + "\(Plural.count(logs.count, "change log")), \(Plural.count(manifest.members.count, "member")), \(Plural.count(bytes, "byte")) uncompressed")
        lines.append("")
        var rows = [["DATABASE", "ZONE", "OWNER", "RECORDS", "TYPES", "CHANGE TOKEN"]]
        for zone in manifest.zones {
            let types = zone.recordTypeCounts.sorted { $0.key < $1.key }.map { "\($0.key.string) \($0.value)" }.joined(separator: ", ")
            rows.append([zone.database, zone.zoneID.zoneName, zone.zoneID.ownerRecordName ?? "-", String(zone.recordCount),
                         types.isEmpty ? "-" : types, zone.changeToken ?? "-"])
        }
        lines.append(contentsOf: table(rows))
        if !manifest.schema.isEmpty {
            lines.append("")
            var schemaRows = [["TYPE", "FIELD", "TYPES"]]
            for (type, entry) in manifest.schema.sorted(by: { $0.key < $1.key }) {
                for (field, types) in entry.fields.sorted(by: { $0.key < $1.key }) {
                    schemaRows.append([type.string, field.string, types.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
                }
            }
            lines.append(contentsOf: table(schemaRows))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// What `inspect` gathers, in one pass, with memory proportional to the distinct zones, types and
/// fields (not to the records).
struct DatasetSummary {
    struct FieldStats {
        var count = 0
        var types: [String: Int] = [:]

        mutating func add(_ type: String) {
            count += 1
            types[type, default: 0] += 1
        }
    }

    var records = 0
    var rejected = 0
    var bytes = 0
    var tombstones = 0
    /// Record types per zone; zones by name and owner, names by their bytes (as replay and the
    /// store tell them apart).
    var zoneTypes: [ZoneKey: [ExactName: Int]] = [:]
    /// Records without a `recordType`, per zone (every such zone is in ``zoneTypes`` too).
    var zoneUntyped: [ZoneKey: Int] = [:]
    var fields: [ExactName: FieldStats] = [:]
    var created: ClosedRange<Int64>?
    var modified: ClosedRange<Int64>?
    /// Responses that list zones and hold no records.
    var zoneListings: [ZoneListing] = []

    mutating func add(_ record: Record) {
        records += 1
        if record.isDeleted { tombstones += 1 }
        let zone = ZoneKey(record.zoneID ?? .default)
        if let type = record.recordType {
            zoneTypes[zone, default: [:]][ExactName(type), default: 0] += 1
        } else {
            // Kept apart from the types: a type may be named anything, "(none)" included.
            zoneUntyped[zone, default: 0] += 1
            if zoneTypes[zone] == nil { zoneTypes[zone] = [:] }
        }
        for entry in record.fields?.entries ?? [] {
            // One lookup per field, its statistics changed in place.
            fields[ExactName(entry.name), default: FieldStats()].add(entry.field.effectiveType.rawValue)
        }
        if let t = record.created?.timestamp { created = Self.widen(created, t) }
        if let t = record.modified?.timestamp { modified = Self.widen(modified, t) }
    }

    static func widen(_ range: ClosedRange<Int64>?, _ t: Int64) -> ClosedRange<Int64> {
        guard let range else { return t...t }
        return min(range.lowerBound, t)...max(range.upperBound, t)
    }

    var text: String {
        var lines: [String] = []
        lines.append("\(Plural.count(records, "record")) (\(Plural.count(tombstones, "tombstone"))), \(rejected) rejected, \(Plural.count(bytes, "byte"))")
        if let created { lines.append("created:  \(isoDate(created.lowerBound)) … \(isoDate(created.upperBound))") }
        if let modified { lines.append("modified: \(isoDate(modified.lowerBound)) … \(isoDate(modified.upperBound))") }
        lines.append("")
        var rows = [["ZONE", "OWNER", "TYPE", "RECORDS"]]
        for zone in zoneTypes.keys.sorted() {
            for (type, count) in zoneTypes[zone]!.sorted(by: { $0.key < $1.key }) {
                rows.append([zone.zoneName.string, zone.ownerRecordName?.string ?? "-", type.string, String(count)])
            }
            if let untyped = zoneUntyped[zone] {
                rows.append([zone.zoneName.string, zone.ownerRecordName?.string ?? "-", "(no type)", String(untyped)])
            }
        }
        lines.append(contentsOf: table(rows))
        lines.append("")
        var fieldRows = [["FIELD", "TYPES", "IN RECORDS"]]
        for name in fields.keys.sorted() {
            let stats = fields[name]!
            let types = stats.types.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let share = records > 0 ? format(Double(stats.count) * 100 / Double(records), 1) : "0"
            fieldRows.append([name.string, types, "\(stats.count) (\(share)%)"])
        }
        lines.append(contentsOf: table(fieldRows))
        if !zoneListings.isEmpty {
            let shapes = Set(zoneListings.map(\.shape)).sorted().joined(separator: ", ")
            lines.append("")
            let one = zoneListings.count == 1
            lines.append("\(Plural.count(zoneListings.count, "response")) \(one ? "lists" : "list") zones and \(one ? "holds" : "hold") "
                         + "no records (\(shapes)):")
            var zoneRows = [["SOURCE", "SHAPE", "ZONE", "OWNER", "CHANGE TOKEN", "STATE"]]
            for listing in zoneListings {
                for zone in listing.response.entries {
                    let state = zone.serverError.map { "error \($0.serverErrorCode)" }
                        ?? (zone.isPurged ? "purged" : zone.isDeleted ? "deleted" : "-")
                    zoneRows.append(["\(listing.source):\(listing.line)", listing.shape, zone.zoneID?.zoneName ?? "-",
                                     zone.zoneID?.ownerRecordName ?? "-", zone.syncToken ?? "-", state])
                }
                if let token = listing.response.syncToken ?? listing.response.metaSyncToken {
                    zoneRows.append(["\(listing.source):\(listing.line)", listing.shape, "(database)", "-", token, "-"])
                }
            }
            lines.append(contentsOf: table(zoneRows))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    var json: String {
        var object = JSONObject()
        object.append(key: "records", value: .number(JSONNumber(Int64(records))))
        object.append(key: "tombstones", value: .number(JSONNumber(Int64(tombstones))))
        object.append(key: "rejected", value: .number(JSONNumber(Int64(rejected))))
        object.append(key: "bytes", value: .number(JSONNumber(Int64(bytes))))
        object.append(key: "zones", value: .array(zoneTypes.keys.sorted().map { zone in
            var types = JSONObject()
            for (type, count) in zoneTypes[zone]!.sorted(by: { $0.key < $1.key }) {
                types.append(key: type.string, value: .number(JSONNumber(Int64(count))))
            }
            var object: JSONObject = ["zoneName": .string(zone.zoneName.string),
                                      "ownerRecordName": zone.ownerRecordName.map { .string($0.string) } ?? .null, "types": .object(types)]
            if let untyped = zoneUntyped[zone] { object.append(key: "untyped", value: .number(JSONNumber(Int64(untyped)))) }
            return .object(object)
        }))
        object.append(key: "fields", value: .array(fields.keys.sorted().map { name in
            let stats = fields[name]!
            var types = JSONObject()
            for (type, count) in stats.types.sorted(by: { $0.key < $1.key }) {
                types.append(key: type, value: .number(JSONNumber(Int64(count))))
            }
            return .object(["name": .string(name.string), "count": .number(JSONNumber(Int64(stats.count))), "types": .object(types)])
        }))
        for (key, range) in [("created", created), ("modified", modified)] {
            if let range {
                object.append(key: key, value: .object([
                    "min": .number(JSONNumber(range.lowerBound)), "max": .number(JSONNumber(range.upperBound)),
                    "minISO": .string(isoDate(range.lowerBound)), "maxISO": .string(isoDate(range.upperBound)),
                ]))
            } else {
                object.append(key: key, value: .null)
            }
        }
        object.append(key: "zoneListings", value: .array(zoneListings.map { listing in
            var entry: JSONObject = ["source": .string(listing.source), "line": .number(JSONNumber(Int64(listing.line))),
                                     "shape": .string(listing.shape)]
            entry.append(key: "zones", value: .array(listing.response.entries.map { zone in
                var item = JSONObject()
                item.append(key: "zoneName", value: zone.zoneID.map { .string($0.zoneName) } ?? .null)
                item.append(key: "ownerRecordName", value: zone.zoneID?.ownerRecordName.map(JSONValue.string) ?? .null)
                item.append(key: "syncToken", value: zone.syncToken.map(JSONValue.string) ?? .null)
                item.append(key: "deleted", value: .bool(zone.isDeleted))
                item.append(key: "purged", value: .bool(zone.isPurged))
                item.append(key: "serverErrorCode", value: zone.serverError.map { .string($0.serverErrorCode) } ?? .null)
                return .object(item)
            }))
            entry.append(key: "syncToken", value: (listing.response.syncToken ?? listing.response.metaSyncToken).map(JSONValue.string) ?? .null)
            return .object(entry)
        }))
        var out = JSONOutput()
        out.appendValue(.object(object))
        return String(decoding: out.bytes, as: UTF8.self) + "\n"
    }
}

/// Left-aligned columns separated by two spaces.
func table(_ rows: [[String]]) -> [String] {
    let rows = rows.map { $0.map(visible) }
    guard let first = rows.first else { return [] }
    var widths = Array(repeating: 0, count: first.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    return rows.map { row in
        row.enumerated().map { i, cell in
            i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
        }.joined(separator: "  ")
    }
}

/// `text` with its control characters (C0, DEL, C1; U+2028, U+2029) written as JSON writes them
/// (`\n`, `\u001b`), and backslashes doubled when there are any: a name printed in a table or a
/// line of text cannot break the line or drive the terminal.
func visible(_ text: String) -> String {
    func isControl(_ v: UInt32) -> Bool { v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 }
    guard text.unicodeScalars.contains(where: { isControl($0.value) }) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        case _ where isControl(scalar.value): out += "\\u" + Hex.digits(of: scalar.value, width: 4)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// `2023-07-22T04:26:40.000Z` for milliseconds since 1970 (proleptic Gregorian, UTC); unlike
/// ``ISO8601/format(milliseconds:)`` it takes every year: years 0–999 are padded to four digits,
/// others written as they are (`-1`, `12345`).
func isoDate(_ milliseconds: Int64) -> String {
    let (days, msOfDay) = ISO8601.split(milliseconds: milliseconds)
    let (year, month, day) = ISO8601.civil(fromDays: days)
    let rest = msOfDay / 1000, millis = msOfDay % 1000
    func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    var ms = String(millis)
    while ms.count < 3 { ms = "0" + ms }
    var yearText = String(year)
    if (0..<1000).contains(year) { yearText = String(repeating: "0", count: 4 - yearText.count) + yearText }
    return "\(yearText)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)).\(ms)Z"
}
