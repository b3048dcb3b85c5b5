import FerryCloudKit
import FerryRecords
import Testing

@Suite struct CloudKitWireModelTests {
    static let zone = ZoneID(zoneName: "Chats", ownerRecordName: "_owner")

    static func object(_ value: JSONValue) throws -> JSONObject {
        // Through the JSON text, as a client sends it and the service reads it.
        var out = JSONOutput()
        out.appendValue(value)
        let text = String(decoding: out.array, as: UTF8.self)
        return try #require(try JSONValue(parsing: text).objectValue)
    }

    @Test func everyRequestReadsBackFromTheJSONItWrites() throws {
        let query = CloudKitQueryRequest(
            query: CloudKitQuery(recordType: "Message", filterBy: try JSONValue(parsing: #"[{"comparator":"EQUALS","fieldName":"n","fieldValue":{"value":9223372036854775807,"type":"INT64"}}]"#),
                                 sortBy: [.init(fieldName: "sentAt", ascending: false), .init(fieldName: "createdTimestamp", isSystemField: true)]),
            zoneID: Self.zone, resultsLimit: 50, continuationMarker: "abc", desiredKeys: ["a"], zoneWide: true, numbersAsStrings: true)
        #expect(try CloudKitQueryRequest(json: Self.object(query.json)) == query)

        let lookup = CloudKitLookupRequest(recordNames: ["a", "b"], zoneID: Self.zone, desiredKeys: [], numbersAsStrings: true)
        #expect(try CloudKitLookupRequest(json: Self.object(lookup.json)) == lookup)

        let record = try RecordJSON.decodeRecord(#"{"recordName":"r","recordType":"T","fields":{"n":{"value":-9223372036854775808,"type":"INT64"},"l":{"value":{"latitude":1.5,"longitude":2},"type":"LOCATION"}},"recordChangeTag":"x","unknown":[1]}"#)
        let modify = CloudKitModifyRequest(operations: [.init(.update, record: record, desiredKeys: ["n"]), .init(.forceDelete, record: Record(recordName: "gone"))],
                                           zoneID: Self.zone, atomic: false, desiredKeys: nil, numbersAsStrings: false)
        #expect(try CloudKitModifyRequest(json: Self.object(modify.json)) == modify)

        let changes = CloudKitRecordChangesRequest(zoneID: Self.zone, syncToken: "t", resultsLimit: 10, desiredKeys: ["a"], desiredRecordTypes: ["T"])
        #expect(try CloudKitRecordChangesRequest(json: Self.object(changes.json)) == changes)
        let zoneChanges = CloudKitZoneChangesRequest(zones: [changes, CloudKitRecordChangesRequest(zoneID: .default)])
        #expect(try CloudKitZoneChangesRequest(json: Self.object(zoneChanges.json)) == zoneChanges)
        for legacy in [false, true] {
            let database = CloudKitDatabaseChangesRequest(syncToken: "s", resultsLimit: 5, isLegacy: legacy)
            #expect(try CloudKitDatabaseChangesRequest(json: Self.object(database.json), isLegacy: legacy) == database)
        }
        let zones = CloudKitZonesLookupRequest(zones: [Self.zone, .default])
        #expect(try CloudKitZonesLookupRequest(json: Self.object(zones.json)) == zones)
        let zonesModify = CloudKitZonesModifyRequest(operations: [.init(.create, zoneID: Self.zone), .init(.delete, zoneID: Self.zone)])
        #expect(try CloudKitZonesModifyRequest(json: Self.object(zonesModify.json)) == zonesModify)
    }

    @Test func errorsCarryCloudKitsStatusesAndKeepUnknownCodes() {
        #expect(CloudKitError(.badRequest, "x").status == 400)
        #expect(CloudKitError(.conflict, "x").status == 409)
        #expect(CloudKitError(.exists, "x").status == 409)
        #expect(CloudKitError(.atomicError, "x").status == 400)
        #expect(CloudKitError(.zoneNotFound, "x").status == 404)
        #expect(CloudKitError(.quotaExceeded, "x").status == 413)
        #expect(CloudKitError(.throttled, "x").status == 429)
        #expect(CloudKitError(.authenticationRequired, "x").status == 421)
        #expect(CloudKitError(.init(rawValue: "NOT_SUPPORTED_BY_ZONE"), "x").code.rawValue == "NOT_SUPPORTED_BY_ZONE")
    }
}
