import FerryCloudKit
import FerryRecords
import FerryStore
import Testing

@Suite struct CloudKitServiceZoneTests {
    @Test(arguments: ["GET", "POST"])
    func zonesListAnswersEveryZoneWithItsTypeAndToken(method: String) throws {
        let fixture = try ServiceFixture()
        let answer = try fixture.call("zones/list", method: method)
        #expect(answer.status == 200)
        let zones = answer.json["zones"]?.arrayValue ?? []
        #expect(zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue } == ["Chats", "_defaultZone"])
        for zone in zones {
            #expect(zone.objectValue?.members.map(\.key) == ["zoneID", "syncToken", "atomic"])
            #expect(zone["zoneID"]?["zoneType"] != nil)
            #expect(zone["zoneID"]?["ownerRecordName"] != nil)
        }
        #expect(zones.last?["zoneID"]?["zoneType"] == .string("DEFAULT_ZONE"))
        let empty = try fixture.call("zones/list", "public", method: method)
        #expect(empty.json["zones"]?.arrayValue?.count == 1)
    }

    @Test func zonesAreCreatedLookedUpDeletedAndReportedByTheChangeFeeds() throws {
        let fixture = try ServiceFixture()
        let start = try fixture.call("changes/database", body: "{}")
        let token = try #require(start.json["syncToken"]?.stringValue)
        #expect(start.json["moreComing"] == .bool(false))
        let legacyStart = try fixture.call("zones/changes", body: "{}")
        let metaToken = try #require(legacyStart.json["metaSyncToken"]?.stringValue)

        let created = try fixture.call("zones/modify", body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Work"}}}]}"#)
        #expect(created.json["zones"]?.arrayValue?.first?["zoneID"]?["zoneName"] == .string("Work"))
        let lookup = try fixture.call("zones/lookup", body: #"{"zones":[{"zoneName":"Work"},{"zoneName":"Nope"}]}"#)
        let found = lookup.json["zones"]?.arrayValue ?? []
        #expect(found.first?["syncToken"] != nil)
        #expect(found.last?["serverErrorCode"] == .string("ZONE_NOT_FOUND"))

        let changed = try fixture.call("changes/database", body: #"{"syncToken":"\#(token)"}"#)
        #expect(changed.json["zones"]?.arrayValue?.compactMap { $0["zoneID"]?["zoneName"]?.stringValue } == ["Work"])

        let deleted = try fixture.call("zones/modify", body: #"{"operations":[{"operationType":"delete","zone":{"zoneID":{"zoneName":"Work"}}}]}"#)
        #expect(deleted.json["zones"]?.arrayValue?.first?["deleted"] == .bool(true))
        let legacy = try fixture.call("zones/changes", body: #"{"metaSyncToken":"\#(metaToken)"}"#)
        let entry = try #require(legacy.json["zones"]?.arrayValue?.first)
        #expect(entry["zoneID"]?["zoneName"] == .string("Work"))
        #expect(entry["deleted"] == .bool(true))
        #expect(legacy.json["metaSyncToken"] != nil)
        #expect(legacy.json["moreComing"] == .bool(false))
        let list = try fixture.call("zones/list")
        #expect(list.json["zones"]?.arrayValue?.count == 2)
    }

    @Test func changesOfAZoneTheStoreLacksAnswerZoneNotFound() throws {
        let fixture = try ServiceFixture()
        let zone = try fixture.call("changes/zone", body: #"{"zones":[{"zoneID":{"zoneName":"Nope"}}]}"#)
        let entry = try #require(zone.json["zones"]?.arrayValue?.first)
        #expect(entry["serverErrorCode"] == .string("ZONE_NOT_FOUND"))
        #expect(entry.objectValue?.members.map(\.key) == ["zoneID", "reason", "serverErrorCode"])
        expectError(try fixture.call("records/changes", body: #"{"zoneID":{"zoneName":"Nope"}}"#), 404, "ZONE_NOT_FOUND")
    }

    @Test func changeFeedsOfThePublicDatabaseAreRefusedAsCloudKitRefusesThem() throws {
        let fixture = try ServiceFixture()
        expectError(try fixture.call("changes/database", "public", body: "{}"), 400, "BAD_REQUEST")
        expectError(try fixture.call("changes/zone", "public", body: #"{"zones":[]}"#), 400, "BAD_REQUEST")
    }
}
