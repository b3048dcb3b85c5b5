import FerryCloudKit
import FerryRecords
import FerryStore
import Testing

@Suite struct CloudKitServiceAssetTests {
    @Test func anAssetIsUploadedAttachedAndDownloadedByteForByte() throws {
        let fixture = try ServiceFixture()
        let tokens = try fixture.call("assets/upload", body: #"{"tokens":[{"recordName":"pic","recordType":"Photo","fieldName":"image"}]}"#)
        #expect(tokens.status == 200)
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        #expect(url.hasPrefix("http://127.0.0.1:8080/upload/"))
        let path = String(url.dropFirst("http://127.0.0.1:8080".count))

        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let uploaded = fixture.service.answer(CloudKitRequest(method: "POST", path: path, body: bytes))
        #expect(uploaded.status == 200)
        let single = try #require(try JSONValue(parsing: String(decoding: uploaded.body, as: UTF8.self))["singleFile"])
        #expect(single["size"] == .number(JSONNumber(Int64(70_000))))
        let receipt = try #require(single["receipt"]?.stringValue)
        let checksum = try #require(single["fileChecksum"]?.stringValue)
        #expect(checksum.count == 44)

        let record = #"{"recordName":"pic","recordType":"Photo","fields":{"image":{"value":{"fileChecksum":"\#(checksum)","receipt":"\#(receipt)","size":70000},"type":"ASSETID"}}}"#
        let saved = try fixture.call("records/modify", body: #"{"operations":[{"operationType":"create","record":\#(record)}]}"#)
        #expect(saved.status == 200)
        let value = try #require(saved.json["records"]?.arrayValue?.first?["fields"]?["image"]?["value"])
        #expect(value["receipt"] == nil)
        #expect(value["fileChecksum"]?.stringValue == checksum)
        let template = try #require(value["downloadURL"]?.stringValue)
        #expect(template.contains("${f}"))

        let lookup = try fixture.call("records/lookup", body: #"{"records":[{"recordName":"pic"}]}"#)
        #expect(lookup.json["records"]?.arrayValue?.first?["fields"]?["image"]?["value"]?["downloadURL"]?.stringValue == template)
        let download = String(template.replacing("${f}", with: "image.bin").dropFirst("http://127.0.0.1:8080".count))
        let fetched = fixture.service.answer(CloudKitRequest(method: "GET", path: download))
        #expect(fetched.status == 200)
        #expect(fetched.body == bytes)
        #expect(try RecordStore(path: fixture.path).asset(receipt: receipt)?.isAttached == true)
    }

    @Test func aRecordNamingAnUnknownReceiptIsRefusedAndUnknownURLsAreNotFound() throws {
        let fixture = try ServiceFixture()
        let record = #"{"recordName":"pic","recordType":"Photo","fields":{"image":{"value":{"receipt":"nope","size":1},"type":"ASSETID"}}}"#
        let saved = try fixture.call("records/modify", body: #"{"operations":[{"operationType":"create","record":\#(record)}]}"#)
        #expect(saved.json["records"]?.arrayValue?.first?["serverErrorCode"] == .string("BAD_REQUEST"))
        #expect(fixture.service.answer(CloudKitRequest(method: "POST", path: "/upload/short", body: [1])).status == 404)
        #expect(fixture.service.answer(CloudKitRequest(method: "GET", path: "/assets/0123456789abcdef0123456789abcdef/x")).status == 404)
    }
}
