import FerryChangeLog
import FerryRecords
import FerryStore

extension CloudKitService {
    /// A store token read from a request's `syncToken`.
    static func token(_ text: String?, name: String = "syncToken") throws(CloudKitError) -> StoreToken? {
        guard let text else { return nil }
        do {
            return try StoreToken(parsing: text)
        } catch {
            throw .badRequest("expected \(name) to be a token this server gave, found \(JSONOutputLiteral(text))")
        }
    }

    /// Whether a journal change is in `zone` (name and owner as the store keeps them).
    static func isChange(_ change: RecordStore.JournalChange, in zone: ZoneID) -> Bool {
        change.zoneID.zoneName == zone.zoneName && change.zoneID.ownerRecordName == zone.ownerRecordName
    }

    /// The record changes of one zone after a token: the records array's JSON entries, the token
    /// to continue from, and whether more follow.
    func recordChanges(of request: CloudKitRecordChangesRequest, zone: ZoneID, store: RecordStore)
        throws -> (entries: [[UInt8]], syncToken: StoreToken, moreComing: Bool) {
        let limit = try Self.resultsLimit(request.resultsLimit)
        let since = try Self.token(request.syncToken)
        let types = request.desiredRecordTypes.map(Set.init)
        var entries: [[UInt8]] = []
        var last: Int64 = since?.sequence ?? 0
        var moreComing = false
        let (end, _) = try store.changes(since: since, inZones: { $0.zoneName == zone.zoneName && $0.ownerRecordName == zone.ownerRecordName }) { change in
            guard !moreComing else { return false }
            guard Self.isChange(change, in: zone) else { return true }
            var out = JSONOutput(capacity: 1024)
            switch change.event {
            case .recordSaved(var record):
                if let types, !types.contains(record.recordType ?? "") { return true }
                if let keys = request.desiredKeys, var fields = record.fields {
                    let wanted = Set(keys)
                    fields.entries.removeAll { !wanted.contains($0.name) }
                    record.fields = fields
                }
                guard entries.count < limit else { moreComing = true; return false }
                RecordJSON.encode(record, into: &out)
            case .recordDeleted(let id, let recordType):
                if let types, !types.contains(recordType ?? "") { return true }
                guard entries.count < limit else { moreComing = true; return false }
                out.append("{\"recordName\":")
                out.appendString(id.recordName)
                if let recordType {
                    out.append(",\"recordType\":")
                    out.appendString(recordType)
                }
                out.append(",\"zoneID\":")
                appendZoneID(zone, into: &out)
                out.append(",\"deleted\":true}")
            default:
                return true
            }
            entries.append(out.array)
            last = change.sequence
            return true
        }
        return (entries, moreComing ? StoreToken(storeID: store.storeID, sequence: last) : end, moreComing)
    }

    // MARK: records/changes

    func recordChanges(_ request: CloudKitRecordChangesRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        let result = try connections.read { store in
            guard let zone = zone(named: request.zoneID, in: try liveZones(store, database: database)) else {
                throw CloudKitError(.zoneNotFound, "Zone \(JSONOutputLiteral(request.zoneID.zoneName)) does not exist")
            }
            return try recordChanges(of: request, zone: zone.zoneID, store: store)
        }
        var out = JSONOutput(capacity: 4096)
        out.append("{\"records\":[")
        for (index, entry) in result.entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            entry.withUnsafeBytes { out.append($0) }
        }
        out.append("],\"syncToken\":")
        out.appendString(result.syncToken.description)
        out.append(result.moreComing ? ",\"moreComing\":true}" : ",\"moreComing\":false}")
        return Self.ok(out)
    }

    // MARK: changes/zone

    func zoneChanges(_ request: CloudKitZoneChangesRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        var out = JSONOutput(capacity: 4096)
        out.append("{\"zones\":[")
        try connections.read { store in
            let zones = try liveZones(store, database: database)
            for (index, zoneRequest) in request.zones.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append("{\"zoneID\":")
                guard let zone = zone(named: zoneRequest.zoneID, in: zones) else {
                    appendZoneID(zoneRequest.zoneID, into: &out)
                    out.append(",\"reason\":")
                    out.appendString("Zone \(JSONOutputLiteral(zoneRequest.zoneID.zoneName)) does not exist")
                    out.append(",\"serverErrorCode\":\"ZONE_NOT_FOUND\"}")
                    continue
                }
                appendZoneID(zone.zoneID, into: &out)
                let result = try recordChanges(of: zoneRequest, zone: zone.zoneID, store: store)
                out.append(",\"syncToken\":")
                out.appendString(result.syncToken.description)
                out.append(",\"records\":[")
                for (index, entry) in result.entries.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    entry.withUnsafeBytes { out.append($0) }
                }
                out.append(result.moreComing ? "],\"moreComing\":true}" : "],\"moreComing\":false}")
            }
        }
        out.append("]}")
        return Self.ok(out)
    }

    // MARK: changes/database, zones/changes

    func databaseChanges(_ request: CloudKitDatabaseChangesRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        _ = try Self.resultsLimit(request.resultsLimit)
        let since = try Self.token(request.syncToken, name: request.isLegacy ? "metaSyncToken" : "syncToken")
        var order: [String] = []
        var changed: [String: (zoneID: ZoneID, deleted: Bool, purged: Bool)] = [:]
        let end = try connections.read { store in
            try store.changes(since: since, database: database.rawValue) { change in
                let key = change.zoneID.zoneName + "\u{0}" + (change.zoneID.ownerRecordName ?? "")
                if changed[key] == nil { order.append(key) }
                var entry = changed[key] ?? (change.zoneID, false, false)
                switch change.event {
                case .zoneDeleted: entry.deleted = true
                case .zonePurged: (entry.deleted, entry.purged) = (true, true)
                case .zoneSaved: (entry.deleted, entry.purged) = (false, false)
                default: break
                }
                changed[key] = entry
            }
        }
        var out = JSONOutput(capacity: 1024)
        out.append("{\"zones\":[")
        for (index, key) in order.enumerated() {
            guard let entry = changed[key] else { continue }
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"zoneID\":")
            appendZoneID(entry.zoneID, into: &out)
            if entry.deleted { out.append(",\"deleted\":true") }
            if entry.purged { out.append(",\"purged\":true") }
            out.append("}")
        }
        out.append(request.isLegacy ? "],\"metaSyncToken\":" : "],\"syncToken\":")
        out.appendString(end.description)
        out.append(",\"moreComing\":false}")
        return Self.ok(out)
    }
}
