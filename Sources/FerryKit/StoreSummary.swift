import FerryIO
import FerryInternals
import FerryRecords
import FerryStore

/// What `inspect` shows of a store: its zones and tokens, counts per type, journal and indexes.
public struct StoreSummary {
    /// The store's path.
    public var path: String
    /// The store's identity, which its tokens carry.
    public var storeID: String
    /// The store's format version.
    public var formatVersion: Int
    /// The file's size.
    public var bytes: Int
    /// Its zones, deleted ones included.
    public var zones: [StoreZone]
    /// Records per database, zone and type.
    public var counts: [(database: String, zoneName: String, ownerRecordName: String?, recordType: String?, count: Int)]
    /// Entries of its change journal.
    public var journalCount: Int
    /// Its current token.
    public var token: StoreToken
    /// The field indexes made (`ferry index`).
    public var indexes: [RecordStore.FieldIndex]

    /// Sums up the store at `path`.
    public init(path: String) throws(FerryError) {
        self = try FerryError.catching { try StoreSummary(reading: try RecordStore(path: path)) }
    }

    /// Sums up an open store.
    public init(_ store: RecordStore) throws(FerryError) {
        self = try FerryError.catching { try StoreSummary(reading: store) }
    }

    private init(reading store: RecordStore) throws {
        path = store.path
        storeID = store.storeID
        formatVersion = store.formatVersion
        bytes = FileSystem.size(of: path) ?? 0
        zones = try store.zones()
        counts = try store.typeCounts()
        journalCount = try store.journalCount()
        token = try store.currentToken()
        indexes = try store.fieldIndexes()
    }

    /// Records in every zone.
    public var recordCount: Int { counts.reduce(0) { $0 + $1.count } }

    /// The text `ferry inspect` prints.
    public var text: String {
        let liveZones = zones.filter { !$0.isDeleted }.count
        var lines = ["\(path): Ferry store, format \(formatVersion), store \(storeID), \(bytes) bytes (SQLite \(RecordStore.sqliteVersion))",
                     "\(Plural.count(recordCount, "record")) in \(Plural.count(liveZones, "zone")), \(Plural.count(journalCount, "journal entry", plural: "journal entries")), token \(token)", ""]
        var rows = [["DATABASE", "ZONE", "OWNER", "RECORDS", "TYPES", "CHANGE TOKEN"]]
        for zone in zones {
            let types = counts.filter { $0.database == zone.database && $0.zoneName == zone.zoneID.zoneName && $0.ownerRecordName == zone.zoneID.ownerRecordName }
                .map { "\($0.recordType ?? "(none)") \($0.count)" }.joined(separator: ", ")
            rows.append([zone.database, zone.zoneID.zoneName + (zone.isDeleted ? " (deleted)" : ""), zone.zoneID.ownerRecordName ?? "-",
                         String(zone.recordCount), types.isEmpty ? "-" : types, zone.syncToken ?? "-"])
        }
        lines += TextTable.lines(rows)
        if !indexes.isEmpty {
            lines.append("")
            lines += TextTable.lines([["INDEX", "TYPE", "FIELD", "KIND"]] + indexes.map { [$0.name, $0.recordType, $0.fieldName, $0.kind] })
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The object `ferry inspect --json` prints in `stores`.
    public var json: JSONValue {
        .object([
            "path": .string(path), "storeID": .string(storeID), "formatVersion": .number(JSONNumber(Int64(formatVersion))),
            "bytes": .number(JSONNumber(Int64(bytes))), "records": .number(JSONNumber(Int64(recordCount))),
            "journalEntries": .number(JSONNumber(Int64(journalCount))), "token": .string(token.description),
            "zones": .array(zones.map { zone in
                var object: JSONObject = ["database": .string(zone.database), "zoneID": .string(zone.zoneID.zoneName),
                                          "records": .number(JSONNumber(Int64(zone.recordCount))), "deleted": .bool(zone.isDeleted)]
                if let owner = zone.zoneID.ownerRecordName { object.append(key: "ownerRecordName", value: .string(owner)) }
                if let token = zone.syncToken { object.append(key: "syncToken", value: .string(token)) }
                object.append(key: "recordTypes", value: .object(JSONObject(counts.filter {
                    $0.database == zone.database && $0.zoneName == zone.zoneID.zoneName && $0.ownerRecordName == zone.zoneID.ownerRecordName
                }.map { .init(key: $0.recordType ?? "", value: .number(JSONNumber(Int64($0.count)))) })))
                return .object(object)
            }),
            "indexes": .array(indexes.map { .object(["name": .string($0.name), "recordType": .string($0.recordType),
                                                     "field": .string($0.fieldName), "kind": .string($0.kind)]) }),
        ])
    }
}
