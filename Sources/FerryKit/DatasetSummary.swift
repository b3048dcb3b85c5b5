import FerryInternals
import FerryPipeline
import FerryRecords

/// What `inspect` gathers, in one pass, with memory proportional to the distinct zones, types and
/// fields (not to the records).
public struct DatasetSummary {
    /// How often a field occurs, and with which types.
    public struct FieldStats: Sendable, Equatable {
        /// Records holding the field.
        public var count = 0
        /// Records per type the field was seen with.
        public var types: [String: Int] = [:]

        /// Counts one more occurrence, of `type`.
        public mutating func add(_ type: String) {
            count += 1
            types[type, default: 0] += 1
        }
    }

    /// Records read.
    public var records = 0
    /// Inputs rejected (skipped under `--on-error skip`).
    public var rejected = 0
    /// Bytes read (decompressed).
    public var bytes = 0
    /// Records that are tombstones (deleted).
    public var tombstones = 0
    /// Record types per zone; zones by name and owner, names by their bytes (as replay and the
    /// store tell them apart).
    package var zoneTypes: [ZoneKey: [ExactName: Int]] = [:]
    /// Records without a `recordType`, per zone (every such zone is in ``zoneTypes`` too).
    package var zoneUntyped: [ZoneKey: Int] = [:]
    /// Fields by name (by their bytes).
    public var fields: [ExactName: FieldStats] = [:]
    /// The span of the records' creation times (milliseconds since 1970).
    public var created: ClosedRange<Int64>?
    /// The span of their modification times.
    public var modified: ClosedRange<Int64>?
    /// Responses that list zones and hold no records.
    public var zoneListings: [ZoneListing] = []

    /// An empty summary.
    public init() {}

    /// Counts `record`.
    public mutating func add(_ record: Record) {
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

    private static func widen(_ range: ClosedRange<Int64>?, _ t: Int64) -> ClosedRange<Int64> {
        guard let range else { return t...t }
        return min(range.lowerBound, t)...max(range.upperBound, t)
    }

    /// The text `ferry inspect` prints.
    public var text: String {
        var lines: [String] = []
        lines.append("\(Plural.count(records, "record")) (\(Plural.count(tombstones, "tombstone"))), \(rejected) rejected, \(Plural.count(bytes, "byte"))")
        if let created { lines.append("created:  \(ISO8601.format(milliseconds: created.lowerBound)) … \(ISO8601.format(milliseconds: created.upperBound))") }
        if let modified { lines.append("modified: \(ISO8601.format(milliseconds: modified.lowerBound)) … \(ISO8601.format(milliseconds: modified.upperBound))") }
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
        lines.append(contentsOf: TextTable.lines(rows))
        lines.append("")
        var fieldRows = [["FIELD", "TYPES", "IN RECORDS"]]
        for name in fields.keys.sorted() {
            let stats = fields[name]!
            let types = stats.types.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let share = records > 0 ? format(Double(stats.count) * 100 / Double(records), 1) : "0"
            fieldRows.append([name.string, types, "\(stats.count) (\(share)%)"])
        }
        lines.append(contentsOf: TextTable.lines(fieldRows))
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
            lines.append(contentsOf: TextTable.lines(zoneRows))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The JSON document `ferry inspect --json` prints (ending in a newline).
    public var json: String {
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
                    "minISO": .string(ISO8601.format(milliseconds: range.lowerBound)), "maxISO": .string(ISO8601.format(milliseconds: range.upperBound)),
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
