import FerryCloudKit
import FerryRecords
import FerryStore
import Testing

@Suite struct CloudKitServiceErrorTests {
    static let base = "/database/1/\(ServiceFixture.container)/development/private/"

    @Test(arguments: [
        ("POST", base + "records/query", "{\"query\":", 400, "BAD_REQUEST"),
        ("POST", base + "records/query", "[1,2]", 400, "BAD_REQUEST"),
        ("POST", base + "records/query", "{\"query\":{\"recordType\":7}}", 400, "BAD_REQUEST"),
        ("POST", base + "records/lookup", "{\"records\":\"m01\"}", 400, "BAD_REQUEST"),
        ("POST", base + "records/lookup", "{\"records\":[{\"name\":\"m01\"}]}", 400, "BAD_REQUEST"),
        ("POST", base + "records/modify", "{\"operations\":[{\"operationType\":\"upsert\",\"record\":{\"recordName\":\"a\"}}]}", 400, "BAD_REQUEST"),
        ("POST", base + "records/modify", "{\"operations\":[{\"operationType\":\"create\",\"record\":{\"recordName\":\"a\",\"fields\":{\"n\":{\"value\":\"x\",\"type\":\"INT64\"}}}}]}", 400, "BAD_REQUEST"),
        ("POST", base + "records/changes", "{\"zoneID\":{\"zoneName\":\"Chats\"},\"syncToken\":\"garbage\"}", 400, "BAD_REQUEST"),
        ("POST", base + "records/frobnicate", "{}", 404, "NOT_FOUND"),
        ("POST", "/database/1/\(ServiceFixture.container)/development/everyone/records/query", "{}", 400, "BAD_REQUEST"),
        ("POST", "/database/1/iCloud.other/development/private/records/query", "{\"query\":{\"recordType\":\"Message\"}}", 400, "BAD_REQUEST"),
        ("POST", "/database/1/\(ServiceFixture.container)/production/private/records/query", "{\"query\":{\"recordType\":\"Message\"}}", 400, "BAD_REQUEST"),
        ("POST", "/database/2/x/development/private/records/query", "{}", 404, "NOT_FOUND"),
        ("POST", "/nothing/here", "", 404, "NOT_FOUND"),
        ("GET", base + "records/query", "", 400, "BAD_REQUEST"),
        ("POST", base + "records/query", String(repeating: "[", count: 5000), 400, "BAD_REQUEST"),
        ("POST", base + "records/query", "{\"query\":{\"recordType\":\"M\u{0}\"}", 400, "BAD_REQUEST"),
    ])
    func aBadRequestIsAnsweredWithACloudKitErrorBodyAndItsStatus(method: String, path: String, body: String, status: Int, code: String) throws {
        let fixture = try ServiceFixture()
        let response = fixture.service.answer(CloudKitRequest(method: method, path: path, body: Array(body.utf8)))
        let json = try JSONValue(parsing: String(decoding: response.body, as: UTF8.self))
        expectError((response.status, json), status, code)
        #expect(json.objectValue?.members.map(\.key) == ["uuid", "serverErrorCode", "reason"])
        #expect(response.headers.contains { $0.name == "Content-Type" && $0.value.hasPrefix("application/json") })
    }

    @Test func aBodyOverTheLimitIsRefusedWithQuotaExceeded() throws {
        let path = try ServiceFixture.makeStore()
        let service = try CloudKitService(storePath: path, configuration: .init(maximumBodyBytes: 1000))
        let response = service.answer(CloudKitRequest(method: "POST", path: Self.base + "records/query", body: Array(repeating: 0x20, count: 1001)))
        #expect(response.status == 413)
    }

    @Test func answersArePrettyPrintedAsCloudKitPrintsThem() throws {
        let fixture = try ServiceFixture()
        let response = fixture.service.answer(CloudKitRequest(method: "POST", path: Self.base + "records/lookup",
                                                              body: Array(#"{"records":[{"recordName":"n01"}],"desiredKeys":["count"]}"#.utf8)))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"records\" : [ {\n    \"recordName\" : \"n01\",\n    \"recordType\" : \"Message\",\n"), "\(text)")
        #expect(text.contains("\"pluginFields\" : { },"))
        #expect(text.contains("\"fields\" : {\n      \"count\" : {\n        \"value\" : 1,\n        \"type\" : \"INT64\"\n      }\n    },"))
        #expect(text.hasSuffix("  } ]\n}"))
    }

    @Test func thePrettyWriterKeepsStringsAndWritesEmptyContainersAsCloudKitDoes() {
        var out = JSONOutput()
        let compact = #"{"a":[1,2,{"b":"x, {\"y\": [z]}"}],"e":{},"l":[],"n":null}"#
        Array(compact.utf8).withUnsafeBytes { out.appendPretty($0) }
        #expect(String(decoding: out.array, as: UTF8.self) == """
            {
              "a" : [ 1, 2, {
                "b" : "x, {\\"y\\": [z]}"
              } ],
              "e" : { },
              "l" : [ ],
              "n" : null
            }
            """)
    }

    @Test func aVersionOneStoreIsServedReadOnlyAsItIsAndMigratedWhenServedForWriting() throws {
        let path = try ServiceFixture.makeStore()
        do {
            // Back to format version 1: no assets table.
            let store = try RecordStore(path: path, access: .readWrite)
            try store.execute(sql: "DROP TABLE assets; PRAGMA user_version = 1")
        }
        let readOnly = try ServiceFixture(path: path, readOnly: true)
        #expect(try RecordStore(path: path).formatVersion == 1)
        #expect(try readOnly.call("records/lookup", body: #"{"records":[{"recordName":"n02"}]}"#).status == 200)
        let missing = readOnly.service.answer(CloudKitRequest(method: "GET", path: "/assets/0123456789abcdef0123456789abcdef/f"))
        #expect(missing.status == 404)
        #expect(try RecordStore(path: path).formatVersion == 1)

        let writable = try ServiceFixture(path: path)
        #expect(try RecordStore(path: path).formatVersion == 2)
        #expect(try writable.call("records/lookup", body: #"{"records":[{"recordName":"n02"}]}"#).status == 200)
    }
}
