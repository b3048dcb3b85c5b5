import FerryChangeLog
import FerryRecords
import FerryStore

extension CloudKitService {
    /// `{zoneID, syncToken, atomic}` of a zone.
    func appendZone(_ zone: StoreZone, into out: inout JSONOutput) {
        out.append("{\"zoneID\":")
        appendZoneID(zone.zoneID, into: &out)
        out.append(",\"syncToken\":")
        out.appendString(zone.changeToken.description)
        out.append(",\"atomic\":true}")
    }

    func appendZoneError(_ zoneID: ZoneID, _ error: CloudKitError, into out: inout JSONOutput) {
        out.append("{\"zoneID\":")
        appendZoneID(zoneID, into: &out)
        out.append(",\"reason\":")
        out.appendString(error.reason)
        out.append(",\"serverErrorCode\":")
        out.appendString(error.code.rawValue)
        out.append("}")
    }

    // MARK: zones/list

    func listZones(database: CloudKitDatabase) throws -> CloudKitResponse {
        let zones = try connections.read { store in try liveZones(store, database: database) }
        var out = JSONOutput(capacity: 1024)
        out.append("{\"zones\":[")
        for (index, zone) in zones.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendZone(zone, into: &out)
        }
        out.append("]}")
        return Self.ok(out)
    }

    // MARK: zones/lookup

    func lookupZones(_ request: CloudKitZonesLookupRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        let zones = try connections.read { store in try liveZones(store, database: database) }
        var out = JSONOutput(capacity: 1024)
        out.append("{\"zones\":[")
        for (index, requested) in request.zones.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            if let zone = zone(named: requested, in: zones) {
                appendZone(zone, into: &out)
            } else {
                appendZoneError(requested, CloudKitError(.zoneNotFound, "Zone \(JSONOutputLiteral(requested.zoneName)) does not exist"), into: &out)
            }
        }
        out.append("]}")
        return Self.ok(out)
    }

    // MARK: zones/modify

    func modifyZones(_ request: CloudKitZonesModifyRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        guard database != .public else {
            throw CloudKitError.badRequest("the public database has only its default zone: zones cannot be created or deleted there")
        }
        enum Outcome {
            case saved(ZoneID), deleted(ZoneID), failed(ZoneID, CloudKitError)
        }
        let outcomes: [Outcome] = try connections.write { store in
            var zones = try liveZones(store, database: database)
            var events: [ChangeEvent] = []
            var outcomes: [Outcome] = []
            for operation in request.operations {
                let requested = operation.zoneID
                if requested.isDefaultZone {
                    outcomes.append(.failed(requested, .badRequest("the default zone cannot be created or deleted")))
                    continue
                }
                let existing = zone(named: requested, in: zones)
                switch operation.operationType {
                case .create:
                    if let existing {
                        outcomes.append(.saved(existing.zoneID))
                        continue
                    }
                    var zoneID = ZoneID(zoneName: requested.zoneName)
                    zoneID.zoneType = "REGULAR_CUSTOM_ZONE"
                    events.append(.zoneSaved(zoneID))
                    zones.append(StoreZone(describing: zoneID, database: database.rawValue, changeToken: StoreToken(storeID: store.storeID, sequence: 0)))
                    outcomes.append(.saved(zoneID))
                case .delete:
                    guard let existing else {
                        outcomes.append(.failed(requested, CloudKitError(.zoneNotFound, "Zone \(JSONOutputLiteral(requested.zoneName)) does not exist")))
                        continue
                    }
                    events.append(.zoneDeleted(existing.zoneID))
                    zones.removeAll { $0.zoneID.zoneName == existing.zoneID.zoneName }
                    outcomes.append(.deleted(existing.zoneID))
                }
            }
            if !events.isEmpty { try store.apply(events, database: database.rawValue) }
            return outcomes
        }
        var out = JSONOutput(capacity: 1024)
        out.append("{\"zones\":[")
        for (index, outcome) in outcomes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            switch outcome {
            case .saved(let zoneID):
                out.append("{\"zoneID\":")
                appendZoneID(zoneID, into: &out)
                out.append("}")
            case .deleted(let zoneID):
                out.append("{\"zoneID\":")
                appendZoneID(zoneID, into: &out)
                out.append(",\"deleted\":true}")
            case .failed(let zoneID, let error):
                appendZoneError(zoneID, error, into: &out)
            }
        }
        out.append("]}")
        return Self.ok(out)
    }
}
