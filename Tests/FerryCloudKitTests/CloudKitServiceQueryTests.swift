import FerryCloudKit
import FerryKit
import FerryPredicate
import FerryRecords
import FerryStore
import Testing

@Suite struct CloudKitServiceQueryTests {
    /// The records FerryKit's store query (what `ferry query` runs) gives, as JSON values.
    static func kitRecords(_ path: String, _ query: StoreQuery) throws -> [JSONValue] {
        let (records, _) = try StoreQueries(path: path).page(query)
        return try records.map { try JSONValue(parsing: RecordJSON.encodedString($0)) }
    }

    static let zone = #""zoneID":{"zoneName":"Chats"}"#

    @Test(arguments: [
        (#"[{"comparator":"GREATER_THAN","fieldName":"count","fieldValue":{"value":10,"type":"INT64"}}]"#, "count > 10"),
        (#"[{"comparator":"EQUALS","fieldName":"text","fieldValue":{"value":"hello 7"}}]"#, "text == 'hello 7'"),
        (#"[{"comparator":"NOT_EQUALS","fieldName":"count","fieldValue":{"value":3,"type":"INT64"}}]"#, "count != 3"),
        (#"[{"comparator":"LESS_THAN","fieldName":"count","fieldValue":{"value":5,"type":"INT64"}}]"#, "count < 5"),
        (#"[{"comparator":"LESS_THAN_OR_EQUALS","fieldName":"sentAt","fieldValue":{"value":1700000005000,"type":"TIMESTAMP"}}]"#,
         "sentAt <= CAST(721692805.0, 'NSDate')"),
        (#"[{"comparator":"GREATER_THAN_OR_EQUALS","fieldName":"count","fieldValue":{"value":28,"type":"INT64"}}]"#, "count >= 28"),
        (#"[{"comparator":"IN","fieldName":"count","fieldValue":{"value":[1,2,30],"type":"INT64_LIST"}}]"#, "count IN {1, 2, 30}"),
        (#"[{"comparator":"NOT_IN","fieldName":"count","fieldValue":{"value":[1,2],"type":"INT64_LIST"}}]"#, "NOT count IN {1, 2}"),
        (#"[{"comparator":"BEGINS_WITH","fieldName":"text","fieldValue":{"value":"hello 1","type":"STRING"}}]"#, "text BEGINSWITH 'hello 1'"),
        (#"[{"comparator":"NOT_BEGINS_WITH","fieldName":"text","fieldValue":{"value":"hello 1","type":"STRING"}}]"#, "NOT text BEGINSWITH 'hello 1'"),
        (#"[{"comparator":"LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"red","type":"STRING"}}]"#, "tags CONTAINS 'red'"),
        (#"[{"comparator":"NOT_LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"red","type":"STRING"}}]"#, "NOT tags CONTAINS 'red'"),
        (#"[{"comparator":"LIST_CONTAINS_ANY","fieldName":"tags","fieldValue":{"value":["red","green"],"type":"STRING_LIST"}}]"#,
         "ANY tags IN {'red', 'green'}"),
        (#"[{"comparator":"NOT_LIST_CONTAINS_ANY","fieldName":"tags","fieldValue":{"value":["red"],"type":"STRING_LIST"}}]"#,
         "NOT ANY tags IN {'red'}"),
        (#"[{"comparator":"LIST_MEMBER_BEGINS_WITH","fieldName":"tags","fieldValue":{"value":"bl","type":"STRING"}}]"#, "ANY tags BEGINSWITH 'bl'"),
        (#"[{"comparator":"NOT_LIST_MEMBER_BEGINS_WITH","fieldName":"tags","fieldValue":{"value":"bl","type":"STRING"}}]"#,
         "NOT ANY tags BEGINSWITH 'bl'"),
        (#"[{"comparator":"LIST_CONTAINS_ALL","fieldName":"tags","fieldValue":{"value":["red","blue"],"type":"STRING_LIST"}}]"#,
         "tags CONTAINS 'red' AND tags CONTAINS 'blue'"),
        (#"[{"comparator":"NOT_LIST_CONTAINS_ALL","fieldName":"tags","fieldValue":{"value":["red","blue"],"type":"STRING_LIST"}}]"#,
         "NOT (tags CONTAINS 'red' AND tags CONTAINS 'blue')"),
        (#"[{"comparator":"EQUALS","systemFieldName":"recordName","fieldValue":{"value":{"recordName":"m05"},"type":"REFERENCE"}}]"#,
         "recordID == 'm05'"),
        (#"[{"comparator":"GREATER_THAN","fieldName":"count","fieldValue":{"value":3}},{"comparator":"LESS_THAN","fieldName":"count","fieldValue":{"value":9}}]"#,
         "count > 3 AND count < 9"),
    ])
    func aQueryAnswersWhatFerryQueryFindsInTheSameStore(filterBy: String, predicate: String) throws {
        let fixture = try ServiceFixture()
        let answer = try fixture.call("records/query", body: #"{\#(Self.zone),"query":{"recordType":"Message","filterBy":\#(filterBy),"#
                                      + #""sortBy":[{"fieldName":"count","ascending":false}]}}"#)
        #expect(answer.status == 200, "\(answer.json)")
        let expected = try Self.kitRecords(fixture.path, StoreQuery(recordTypes: ["Message"], zoneNames: ["Chats"], database: "private",
                                                                    predicate: try RecordPredicate(parsing: predicate),
                                                                    sortKeys: [StoreSortKey(key: "count", ascending: false)]))
        #expect(!expected.isEmpty)
        #expect(answer.json["records"]?.arrayValue == expected)
        #expect(answer.json["continuationMarker"] == nil)
    }

    @Test func pagesFollowTheirContinuationMarkersToTheWholeResult() throws {
        let fixture = try ServiceFixture()
        var names: [String] = []
        var marker: String?
        var pages = 0
        repeat {
            let markerJSON = marker.map { #","continuationMarker":"\#($0)""# } ?? ""
            let answer = try fixture.call("records/query", body: #"{\#(Self.zone),"resultsLimit":7,"query":{"recordType":"Message","#
                                          + #""sortBy":[{"systemFieldName":"recordName"}]}\#(markerJSON)}"#)
            #expect(answer.status == 200)
            let page = ServiceFixture.names(answer.json)
            #expect(page.count <= 7)
            names += page
            marker = answer.json["continuationMarker"]?.stringValue
            pages += 1
        } while marker != nil && pages < 10
        #expect(pages == 5)
        let expected: [String] = (1...30).map { (i: Int) -> String in i < 10 ? "m0" + String(i) : "m" + String(i) }
        #expect(names == expected)
    }

    @Test func theDefaultZoneIsQueriedWhenNoZoneIsNamedAndZoneWideQueriesEveryZone() throws {
        let fixture = try ServiceFixture()
        let own = try fixture.call("records/query", body: #"{"query":{"recordType":"Message"}}"#)
        #expect(ServiceFixture.names(own.json).sorted() == ["n01", "n02", "n03", "n04", "n05"])
        let wide = try fixture.call("records/query", body: #"{"zoneWide":true,"query":{"recordType":"Message"}}"#)
        #expect(ServiceFixture.names(wide.json).count == 35)
    }

    @Test func desiredKeysAndNumbersAsStringsShapeTheRecords() throws {
        let fixture = try ServiceFixture()
        let answer = try fixture.call("records/query", body: #"{\#(Self.zone),"desiredKeys":["big"],"numbersAsStrings":true,"#
                                      + #""query":{"recordType":"Message","filterBy":[{"comparator":"EQUALS","fieldName":"count","#
                                      + #""fieldValue":{"value":"4","type":"INT64"}}]}}"#)
        let records = answer.json["records"]?.arrayValue ?? []
        #expect(records.count == 1)
        let fields = records.first?["fields"]?.objectValue
        #expect(fields?.members.map(\.key) == ["big"])
        #expect(fields?["big"]?["value"] == .string("9007199254740993"))
        #expect(records.first?["futureKey"]?["kept"] == .bool(true))
        #expect(records.first?["recordChangeTag"]?.stringValue == "t4")
    }

    @Test(arguments: [
        (#"{"query":{"recordType":"Message"},"resultsLimit":201}"#, "resultsLimit"),
        (#"{"query":{"recordType":"Message","filterBy":[{"comparator":"IN","fieldName":"count","fieldValue":{"value":[\#((1...251).map(String.init).joined(separator: ",")) ],"type":"INT64_LIST"}}]}}"#, "250"),
        (#"{"query":{"recordType":"Message","filterBy":[{"comparator":"SOUNDS_LIKE","fieldName":"text","fieldValue":{"value":"x"}}]}}"#, "comparator"),
        (#"{"query":{"recordType":"Message","filterBy":[{"comparator":"EQUALS","fieldName":"count","fieldValue":{"value":"seven","type":"INT64"}}]}}"#, "INT64"),
        (#"{"query":{"recordType":"Message","filterBy":[{"comparator":"IN","fieldName":"count","fieldValue":{"value":3,"type":"INT64"}}]}}"#, "list"),
        (#"{"query":{"recordType":"Message","filterBy":{"comparator":"EQUALS"}}}"#, "array"),
        (#"{"query":{"filterBy":[]}}"#, "recordType"),
        (#"{"query":{"recordType":"Message"},"resultsLimit":"ten"}"#, "resultsLimit"),
        (#"{"query":{"recordType":"Message"},"continuationMarker":"nonsense"}"#, "cursor"),
    ])
    func aQueryCloudKitRefusesIsABadRequest(body: String, reasonMentions: String) throws {
        let fixture = try ServiceFixture()
        let answer = try fixture.call("records/query", body: body)
        expectError(answer, 400, "BAD_REQUEST")
        #expect(answer.json["reason"]?.stringValue?.contains(reasonMentions) == true, "\(answer.json)")
    }

    @Test func withASchemaAFilterOnAFieldThatIsNotQueryableIsRefused() throws {
        let schema = """
            DEFINE SCHEMA
                RECORD TYPE Message (
                    text STRING QUERYABLE,
                    count INT64,
                    sentAt TIMESTAMP QUERYABLE SORTABLE,
                    big INT64,
                    tags LIST<STRING> QUERYABLE
                );
            """
        let fixture = try ServiceFixture(schema: schema)
        let allowed = try fixture.call("records/query", body: #"{"query":{"recordType":"Message","filterBy":[{"comparator":"EQUALS","#
                                       + #""fieldName":"text","fieldValue":{"value":"hello 1"}}],"sortBy":[{"fieldName":"sentAt"}]}}"#)
        #expect(allowed.status == 200, "\(allowed.json)")
        let filtered = try fixture.call("records/query", body: #"{"query":{"recordType":"Message","filterBy":[{"comparator":"EQUALS","#
                                        + #""fieldName":"count","fieldValue":{"value":1}}]}}"#)
        expectError(filtered, 400, "BAD_REQUEST")
        let sorted = try fixture.call("records/query", body: #"{"query":{"recordType":"Message","sortBy":[{"fieldName":"text"}]}}"#)
        expectError(sorted, 400, "BAD_REQUEST")
    }
}

@Suite struct CloudKitServiceTokenSearchTests {
    @Test(arguments: ["CONTAINS_ALL_TOKENS", "CONTAINS_ANY_TOKENS"])
    func tokenSearchesFindTheRecordsHoldingTheWords(comparator: String) throws {
        let fixture = try ServiceFixture()
        let answer = try fixture.call("records/query", body: #"{"zoneID":{"zoneName":"Chats"},"query":{"recordType":"Message","#
                                      + #""filterBy":[{"comparator":"\#(comparator)","fieldName":"allTokens","fieldValue":{"value":"hello 7"}}]}}"#)
        #expect(answer.status == 200, "\(answer.json)")
        let names = ServiceFixture.names(answer.json)
        #expect(names.contains("m07"))
        if comparator == "CONTAINS_ALL_TOKENS" { #expect(names == ["m07"]) } else { #expect(names.count == 30) }
    }
}
