import FerryRecords

/// Conversions between the store's columns and the record model.
enum StoreCodec {
    /// The id of each database in the `databases` table.
    static func databaseID(_ name: String) throws -> Int64 {
        switch name {
        case "public": 1
        case "private": 2
        case "shared": 3
        default: throw StoreError(.invalidArgument, "expected the database public, private or shared, found \"\(name)\"")
        }
    }

    /// The name of a database id.
    static func databaseName(_ id: Int64) -> String {
        switch id {
        case 1: "public"
        case 3: "shared"
        default: "private"
        }
    }

    /// A zone ID's compact JSON, as `zones.zone_json` keeps it.
    static func json(of zone: ZoneID) -> String {
        var out = JSONOutput(capacity: 256)
        RecordJSON.encode(zone, into: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A zone ID from `zones.zone_json`.
    static func zoneID(fromJSON bytes: UnsafeRawBufferPointer) throws -> ZoneID {
        let value: JSONValue
        do {
            value = try RecordJSON.parseValue(bytes)
        } catch {
            throw StoreError(.corrupt, "expected a zone ID object in zones.zone_json, found invalid JSON: \(error.message)")
        }
        guard case .object(let object) = value, case .string(let name)? = object["zoneName"] else {
            throw StoreError(.corrupt, "expected a zone ID object with a zoneName in zones.zone_json, found \(value)")
        }
        var zone = ZoneID(zoneName: name)
        for member in object.members {
            switch (member.key, member.value) {
            case ("zoneName", _): break
            case ("ownerRecordName", .string(let owner)): zone.ownerRecordName = owner
            case ("zoneType", .string(let type)): zone.zoneType = type
            default: zone.unknownKeys.append(key: member.key, value: member.value)
            }
        }
        return zone
    }

    /// Decodes a stored record body: the check every reader of bodies makes (export, projection,
    /// the journal). A body that does not decode was damaged outside Ferry. Readers that know the
    /// body's row say which record it is with ``RecordStore/locating(_:rowID:)``.
    static func record(fromBody bytes: UnsafeRawBufferPointer, path: String?) throws -> Record {
        do {
            return try RecordJSON.decodeRecord(bytes)
        } catch {
            throw damagedBody(error, path: path)
        }
    }

    /// Checks a body that is handed on as stored (query and fetch print it unchanged) without
    /// decoding it: ``JSONValidator``'s single pass (well-formed JSON, UTF-8, an object that is
    /// not a response). A body that fails it is decoded as ``record(fromBody:path:)`` does, for
    /// the same error with its position and message.
    static func checkBody(_ bytes: UnsafeRawBufferPointer, path: String?) throws {
        let check = JSONValidator.check(bytes)
        guard !(check.isWellFormed && check.isRecordObject) else { return }
        _ = try record(fromBody: bytes, path: path)
    }

    /// The error for a body that does not decode.
    static func damagedBody(_ error: RecordFormatError, path: String?) -> StoreError {
        StoreError(.corrupt, "expected a record dictionary in records.body, found JSON that does not decode: \(error)",
                   path: path, underlying: error)
    }

    /// The owner column of a zone ID: `''` when the zone names no owner.
    static func ownerColumn(_ zone: ZoneID) -> String { zone.ownerRecordName ?? "" }
}
