import FerryCloudKit
import FerryRecords
import FerryStore
import Testing

@Suite struct CloudKitServiceModifyTests {
    static let chats = #""zoneID":{"zoneName":"Chats"}"#

    static func newMessage(_ name: String, tag: String? = nil, count: Int = 1) -> String {
        let tagJSON = tag.map { #","recordChangeTag":"\#($0)""# } ?? ""
        return #"{"recordName":"\#(name)","recordType":"Message"\#(tagJSON),"fields":{"count":{"value":\#(count),"type":"INT64"},"#
            + #""exact":{"value":-9223372036854775808,"type":"INT64"}}}"#
    }

    @Test func aModifyIsReturnedExactlyByRecordChangesAndChangesZone() throws {
        let fixture = try ServiceFixture()
        let before = try fixture.call("records/changes", body: #"{\#(Self.chats)}"#)
        #expect(before.status == 200)
        #expect(ServiceFixture.names(before.json).count == 30)
        #expect(before.json["moreComing"] == .bool(false))
        let token = try #require(before.json["syncToken"]?.stringValue)

        let created = try fixture.call("records/modify", body: #"{\#(Self.chats),"operations":[{"operationType":"create","record":\#(Self.newMessage("fresh"))}]}"#)
        #expect(created.status == 200, "\(created.json)")
        let saved = try #require(created.json["records"]?.arrayValue?.first)
        #expect(saved["recordName"] == .string("fresh"))
        #expect(saved["fields"]?["exact"]?["value"] == .number(JSONNumber(text: "-9223372036854775808")))
        #expect(saved["zoneID"]?["zoneName"] == .string("Chats"))
        #expect(saved["pluginFields"] == .object([:]))
        #expect(saved["modified"]?["timestamp"]?.numberValue != nil)
        let tag = try #require(saved["recordChangeTag"]?.stringValue)

        let changes = try fixture.call("records/changes", body: #"{\#(Self.chats),"syncToken":"\#(token)"}"#)
        #expect(changes.json["records"]?.arrayValue == [saved])
        #expect(changes.json["moreComing"] == .bool(false))
        let next = try #require(changes.json["syncToken"]?.stringValue)
        #expect(next != token)

        let zone = try fixture.call("changes/zone", body: #"{"zones":[{\#(Self.chats),"syncToken":"\#(token)"}]}"#)
        let entry = try #require(zone.json["zones"]?.arrayValue?.first)
        #expect(entry["records"]?.arrayValue == [saved])
        #expect(entry["syncToken"]?.stringValue == next)
        #expect(entry["moreComing"] == .bool(false))
        #expect(entry["zoneID"]?["zoneType"] == .string("REGULAR_CUSTOM_ZONE"))

        let deleted = try fixture.call("records/modify", body: #"{\#(Self.chats),"operations":[{"operationType":"delete","record":{"recordName":"fresh","recordChangeTag":"\#(tag)"}}]}"#)
        #expect(deleted.json["records"]?.arrayValue == [.object(["recordName": .string("fresh"), "deleted": .bool(true)])])
        let after = try fixture.call("records/changes", body: #"{\#(Self.chats),"syncToken":"\#(next)"}"#)
        let tombstone = try #require(after.json["records"]?.arrayValue?.first)
        #expect(after.json["records"]?.arrayValue?.count == 1)
        #expect(tombstone["recordName"] == .string("fresh"))
        #expect(tombstone["deleted"] == .bool(true))
        let nothing = try fixture.call("records/changes", body: #"{\#(Self.chats),"syncToken":"\#(after.json["syncToken"]?.stringValue ?? "")"}"#)
        #expect(nothing.json["records"]?.arrayValue == [])
    }

    @Test func recordChangesPageWithMoreComing() throws {
        let fixture = try ServiceFixture()
        var token: String?
        var names: [String] = []
        var rounds = 0
        while true {
            let tokenJSON = token.map { #","syncToken":"\#($0)""# } ?? ""
            let page = try fixture.call("records/changes", body: #"{\#(Self.chats),"resultsLimit":8\#(tokenJSON)}"#)
            names += ServiceFixture.names(page.json)
            token = page.json["syncToken"]?.stringValue
            rounds += 1
            if page.json["moreComing"] != .bool(true) || rounds > 10 { break }
        }
        #expect(rounds == 4)
        #expect(names.count == 30)
        #expect(Set(names).count == 30)
    }

    @Test func allSevenOperationTypesApplyInOrder() throws {
        let fixture = try ServiceFixture()
        let body = #"{\#(Self.chats),"operations":["#
            + #"{"operationType":"create","record":\#(Self.newMessage("a"))},"#
            + #"{"operationType":"forceUpdate","record":{"recordName":"a","fields":{"extra":{"value":"x","type":"STRING"}}}},"#
            + #"{"operationType":"update","record":{"recordName":"m01","recordChangeTag":"t1","fields":{"count":{"value":100,"type":"INT64"}}}},"#
            + #"{"operationType":"replace","record":{"recordName":"m02","recordType":"Message","recordChangeTag":"t2","fields":{"only":{"value":1,"type":"INT64"}}}},"#
            + #"{"operationType":"forceReplace","record":{"recordName":"m03","recordType":"Message","fields":{}}},"#
            + #"{"operationType":"delete","record":{"recordName":"m04","recordChangeTag":"t4"}},"#
            + #"{"operationType":"forceDelete","record":{"recordName":"m05"}}]}"#
        let answer = try fixture.call("records/modify", body: body)
        #expect(answer.status == 200, "\(answer.json)")
        let records = answer.json["records"]?.arrayValue ?? []
        #expect(records.count == 7)
        #expect(records.allSatisfy { $0["serverErrorCode"] == nil }, "\(records)")
        #expect(records[1]["fields"]?.objectValue?.members.map(\.key) == ["count", "exact", "extra"])
        #expect(records[2]["fields"]?["count"]?["value"] == .number(JSONNumber(Int64(100))))
        #expect(records[2]["fields"]?["text"]?["value"] == .string("hello 1"))
        #expect(records[3]["fields"]?.objectValue?.members.map(\.key) == ["only"])
        #expect(records[3]["created"]?["timestamp"] == .number(JSONNumber(Int64(1_700_000_000_000))))
        #expect(records[5]["deleted"] == .bool(true))
        #expect(records[6]["deleted"] == .bool(true))
        let lookup = try fixture.call("records/lookup", body: #"{\#(Self.chats),"records":[{"recordName":"a"},{"recordName":"m04"},{"recordName":"m01"}]}"#)
        let found = lookup.json["records"]?.arrayValue ?? []
        #expect(found.count == 3)
        #expect(found[0] == records[1])
        #expect(found[1]["serverErrorCode"] == .string("NOT_FOUND"))
        #expect(found[1]["recordName"] == .string("m04"))
        #expect(found[2] == records[2])
    }

    @Test func aStaleChangeTagIsAConflictAndACreateOfAnExistingRecordExists() throws {
        let fixture = try ServiceFixture()
        let answer = try fixture.call("records/modify", body: #"{"atomic":false,\#(Self.chats),"operations":["#
                                      + #"{"operationType":"update","record":{"recordName":"m01","recordChangeTag":"stale","fields":{}}},"#
                                      + #"{"operationType":"create","record":\#(Self.newMessage("m02"))},"#
                                      + #"{"operationType":"delete","record":{"recordName":"m03"}},"#
                                      + #"{"operationType":"create","record":\#(Self.newMessage("ok"))}]}"#)
        #expect(answer.status == 200)
        let records = answer.json["records"]?.arrayValue ?? []
        #expect(records.map { $0["serverErrorCode"]?.stringValue } == ["CONFLICT", "EXISTS", "CONFLICT", nil])
        #expect(records[0].objectValue?.members.map(\.key) == ["recordName", "reason", "serverErrorCode"])
        #expect(records[0]["recordName"] == .string("m01"))
        // Not atomic: the good one is applied.
        let lookup = try fixture.call("records/lookup", body: #"{\#(Self.chats),"records":[{"recordName":"ok"}]}"#)
        #expect(ServiceFixture.names(lookup.json) == ["ok"])
        #expect(lookup.json["records"]?.arrayValue?.first?["serverErrorCode"] == nil)
    }

    @Test func aFailedAtomicBatchAppliesNothingAndAnswersAtomicErrorForTheRest() throws {
        let fixture = try ServiceFixture()
        let before = try RecordStore(path: fixture.path)
        let journal = try before.journalCount()
        let answer = try fixture.call("records/modify", body: #"{\#(Self.chats),"operations":["#
                                      + #"{"operationType":"create","record":\#(Self.newMessage("new1"))},"#
                                      + #"{"operationType":"forceDelete","record":{"recordName":"m07"}},"#
                                      + #"{"operationType":"create","record":\#(Self.newMessage("m02"))}]}"#)
        #expect(answer.status == 200)
        let codes = (answer.json["records"]?.arrayValue ?? []).map { $0["serverErrorCode"]?.stringValue }
        #expect(codes == ["ATOMIC_ERROR", "ATOMIC_ERROR", "EXISTS"])
        let after = try RecordStore(path: fixture.path)
        #expect(try after.journalCount() == journal)
        let lookup = try fixture.call("records/lookup", body: #"{\#(Self.chats),"records":[{"recordName":"new1"},{"recordName":"m07"}]}"#)
        #expect((lookup.json["records"]?.arrayValue ?? []).map { $0["serverErrorCode"]?.stringValue } == ["NOT_FOUND", nil])
    }

    @Test func moreThanTwoHundredOperationsIsABadRequest() throws {
        let fixture = try ServiceFixture()
        let operations = (0..<201).map { #"{"operationType":"create","record":\#(Self.newMessage("x" + String($0)))}"# }.joined(separator: ",")
        let answer = try fixture.call("records/modify", body: #"{\#(Self.chats),"operations":[\#(operations)]}"#)
        expectError(answer, 400, "BAD_REQUEST")
        let zones = try fixture.call("records/lookup", body: #"{\#(Self.chats),"records":[{"recordName":"x0"}]}"#)
        #expect(zones.json["records"]?.arrayValue?.first?["serverErrorCode"] == .string("NOT_FOUND"))
    }

    @Test func aReadOnlyServiceRefusesWritesAndStillReads() throws {
        let fixture = try ServiceFixture(readOnly: true)
        expectError(try fixture.call("records/modify", body: #"{"operations":[{"operationType":"create","record":\#(Self.newMessage("z"))}]}"#),
                    403, "ACCESS_DENIED")
        expectError(try fixture.call("zones/modify", body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Z"}}}]}"#),
                    403, "ACCESS_DENIED")
        #expect(try fixture.call("records/lookup", body: #"{"records":[{"recordName":"n01"}]}"#).status == 200)
    }

    @Test func concurrentLookupsAndModifiesAllSucceedAndEveryWriteIsJournaledOnce() async throws {
        let fixture = try ServiceFixture()
        let service = fixture.service
        let journal = try RecordStore(path: fixture.path).journalCount()
        let path = "/database/1/\(ServiceFixture.container)/development/private/records/"
        let statuses = await withTaskGroup(of: Int.self) { group in
            for i in 0..<40 {
                group.addTask {
                    let request = i % 2 == 0
                        ? CloudKitRequest(method: "POST", path: path + "modify",
                                          body: Array(#"{\#(Self.chats),"operations":[{"operationType":"create","record":\#(Self.newMessage("c" + String(i)))}]}"#.utf8))
                        : CloudKitRequest(method: "POST", path: path + "lookup", body: Array(#"{\#(Self.chats),"records":[{"recordName":"m01"}]}"#.utf8))
                    return await service.respond(to: request).status
                }
            }
            var all: [Int] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses == Array(repeating: 200, count: 40))
        #expect(try RecordStore(path: fixture.path).journalCount() == journal + 20)
    }
}
