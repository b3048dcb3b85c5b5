#if CloudKit
import AsyncHTTPClient
import FerryChangeLog
import FerryCloudKit
import FerryCloudKitAuth
import FerryKit
import FerryPredicate
import FerryRecords
import FerryServer
import FerryStore
import FerryTestSupport
import Foundation
import NIOHTTP1
import Testing

/// The real ``CloudKitService`` over a real store file behind a real ``CloudKitServer`` on
/// loopback: what `ferry serve` runs, end to end over HTTP.
@Suite struct ServeOverHTTPTests {
    static let privateDB = Harness.database + "/private/"
    static let publicDB = Harness.database + "/public/"
    static let chats = #""zoneID":{"zoneName":"Chats"}"#

    /// A store of messages m01…m20 in the custom zone `Chats` of the private database and
    /// n01…n03 in its default zone, in a fresh temporary folder (``ChatStoreFixture``).
    static func makeStore() throws -> String { try ChatStoreFixture.makeStore(messages: 20, inDefaultZone: 3, name: "serve.sqlite") }

    static func create(_ name: String, count: Int = 1) -> String {
        #"{"operationType":"create","record":{"recordName":"\#(name)","recordType":"Message","fields":{"count":{"value":\#(count),"type":"INT64"}}}}"#
    }

    static func parsed(_ answer: Answer) throws -> JSONValue {
        try JSONValue(parsing: answer.text)
    }

    /// Every read endpoint over HTTP answers exactly the bytes the service answers directly
    /// (status, JSON content type, pretty-printing), with CKWS's keys.
    @Test func everyReadEndpointCarriesTheServiceAnswerByteForByte() async throws {
        let path = try Self.makeStore()
        try await Harness.serving(path) { server, service in
            let reads: [(String, String, String?)] = [
                ("GET", "zones/list", nil),
                ("POST", "zones/list", ""),
                ("POST", "zones/lookup", #"{"zones":[{"zoneName":"Chats"},{"zoneName":"Nope"}]}"#),
                ("POST", "records/query", #"{\#(Self.chats),"query":{"recordType":"Message","sortBy":[{"fieldName":"count"}]},"resultsLimit":5}"#),
                ("POST", "records/lookup", #"{\#(Self.chats),"records":[{"recordName":"m02"},{"recordName":"zz"}]}"#),
                ("POST", "records/changes", #"{\#(Self.chats),"resultsLimit":4}"#),
                ("POST", "changes/zone", #"{"zones":[{\#(Self.chats),"resultsLimit":3}]}"#),
                ("POST", "changes/database", "{}"),
                ("POST", "zones/changes", "{}"),
            ]
            for (method, operation, body) in reads {
                let answer = try await server.send(method == "GET" ? .GET : .POST, Self.privateDB + operation, body: body.map { Array($0.utf8) })
                let direct = service.answer(CloudKitRequest(method: method, path: Self.privateDB + operation, body: Array((body ?? "").utf8)))
                #expect(answer.status == 200, "\(operation): \(answer.text)")
                #expect(answer.status == direct.status, "\(operation)")
                #expect(answer.body == direct.body, "\(operation): \(answer.text)")
                #expect(answer.header("Content-Type") == "application/json; charset=UTF-8", "\(operation)")
                #expect(answer.text.contains("\n  \"") && answer.text.contains("\" : "), "\(operation) is pretty-printed: \(answer.text)")
            }

            let list = try Self.parsed(try await server.send(.GET, Self.privateDB + "zones/list"))
            let zoneTypes = (list["zones"]?.arrayValue ?? []).compactMap { $0["zoneID"]?["zoneType"]?.stringValue }
            #expect(Set(zoneTypes) == ["DEFAULT_ZONE", "REGULAR_CUSTOM_ZONE"])

            let query = try Self.parsed(try await server.send(.POST, Self.privateDB + "records/query",
                                                              body: Array(#"{\#(Self.chats),"query":{"recordType":"Message"},"resultsLimit":2}"#.utf8)))
            #expect(query["records"]?.arrayValue?.first?["pluginFields"] == .object([:]))
            #expect(query["continuationMarker"]?.stringValue?.isEmpty == false)

            let changes = try Self.parsed(try await server.send(.POST, Self.privateDB + "records/changes",
                                                                body: Array(#"{\#(Self.chats),"resultsLimit":4}"#.utf8)))
            #expect(changes["moreComing"] == .bool(true))
            #expect(changes["syncToken"]?.stringValue?.isEmpty == false)

            let legacy = try Self.parsed(try await server.send(.POST, Self.privateDB + "zones/changes", body: Array("{}".utf8)))
            #expect(legacy["metaSyncToken"]?.stringValue?.isEmpty == false)
            #expect(legacy["moreComing"] == .bool(false))

            let lookup = try Self.parsed(try await server.send(.POST, Self.privateDB + "zones/lookup",
                                                               body: Array(#"{"zones":[{"zoneName":"Nope"}]}"#.utf8)))
            #expect(lookup["zones"]?.arrayValue?.first?["serverErrorCode"] == .string("ZONE_NOT_FOUND"))

            // A request-level error keeps its status and CKWS body over HTTP.
            let wrong = try await server.send(.POST, Self.privateDB + "records/query", body: Array("{not json".utf8))
            wrong.expectError("BAD_REQUEST", 400)
            let unknown = try await server.send(.POST, Self.privateDB + "records/nothing", body: Array("{}".utf8))
            unknown.expectError("NOT_FOUND", 404)
        }
    }

    /// The write endpoints over HTTP: a zone created and deleted, a record created and deleted
    /// (`deleted: true`).
    @Test func theWriteEndpointsAnswerOverHTTP() async throws {
        let path = try Self.makeStore()
        try await Harness.serving(path) { server, _ in
            let zone = try await server.send(.POST, Self.privateDB + "zones/modify",
                                             body: Array(#"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Extra"}}}]}"#.utf8))
            #expect(zone.status == 200, "\(zone.text)")
            #expect(try Self.parsed(zone)["zones"]?.arrayValue?.first?["zoneID"]?["zoneName"] == .string("Extra"))

            let created = try await server.send(.POST, Self.privateDB + "records/modify",
                                                body: Array(#"{"zoneID":{"zoneName":"Extra"},"operations":[\#(Self.create("e1"))]}"#.utf8))
            #expect(created.status == 200, "\(created.text)")
            #expect(created.header("Content-Type") == "application/json; charset=UTF-8")
            let saved = try #require(try Self.parsed(created)["records"]?.arrayValue?.first)
            #expect(saved["pluginFields"] == .object([:]))
            let tag = try #require(saved["recordChangeTag"]?.stringValue)

            let deleted = try await server.send(.POST, Self.privateDB + "records/modify", body: Array(
                #"{"zoneID":{"zoneName":"Extra"},"operations":[{"operationType":"delete","record":{"recordName":"e1","recordChangeTag":"\#(tag)"}}]}"#.utf8))
            #expect(try Self.parsed(deleted)["records"]?.arrayValue == [.object(["recordName": .string("e1"), "deleted": .bool(true)])])

            let gone = try await server.send(.POST, Self.privateDB + "zones/modify",
                                             body: Array(#"{"operations":[{"operationType":"delete","zone":{"zoneID":{"zoneName":"Extra"}}}]}"#.utf8))
            #expect(try Self.parsed(gone)["zones"]?.arrayValue?.first?["deleted"] == .bool(true), "\(gone.text)")
        }
    }

    @Test func aQueryOverHTTPAnswersWhatFerryQueryFindsInTheSameStore() async throws {
        let path = try Self.makeStore()
        try await Harness.serving(path) { server, _ in
            let filter = #"[{"comparator":"GREATER_THAN","fieldName":"count","fieldValue":{"value":12,"type":"INT64"}}]"#
            let answer = try await server.send(.POST, Self.privateDB + "records/query", body: Array(
                #"{\#(Self.chats),"query":{"recordType":"Message","filterBy":\#(filter),"sortBy":[{"fieldName":"count","ascending":false}]}}"#.utf8))
            #expect(answer.status == 200, "\(answer.text)")
            let (records, _) = try StoreQueries(path: path).page(StoreQuery(
                recordTypes: ["Message"], zoneNames: ["Chats"], database: "private", predicate: try RecordPredicate(parsing: "count > 12"),
                sortKeys: [StoreSortKey(key: "count", ascending: false)]))
            let expected = try records.map { try JSONValue(parsing: RecordJSON.encodedString($0)) }
            #expect(expected.count == 8)
            #expect(try Self.parsed(answer)["records"]?.arrayValue == expected)
        }
    }

    @Test func aModifyOverHTTPComesBackExactlyFromChangesZone() async throws {
        let path = try Self.makeStore()
        try await Harness.serving(path) { server, _ in
            let before = try Self.parsed(try await server.send(.POST, Self.privateDB + "changes/zone",
                                                               body: Array(#"{"zones":[{\#(Self.chats)}]}"#.utf8)))
            let token = try #require(before["zones"]?.arrayValue?.first?["syncToken"]?.stringValue)

            let created = try await server.send(.POST, Self.privateDB + "records/modify",
                                                body: Array(#"{\#(Self.chats),"operations":[\#(Self.create("fresh", count: 99))]}"#.utf8))
            #expect(created.status == 200, "\(created.text)")
            let saved = try #require(try Self.parsed(created)["records"]?.arrayValue?.first)
            #expect(saved["recordName"] == .string("fresh"))

            let after = try Self.parsed(try await server.send(.POST, Self.privateDB + "changes/zone",
                                                              body: Array(#"{"zones":[{\#(Self.chats),"syncToken":"\#(token)"}]}"#.utf8)))
            let entry = try #require(after["zones"]?.arrayValue?.first)
            #expect(entry["records"]?.arrayValue == [saved])
            #expect(entry["moreComing"] == .bool(false))
            #expect(entry["zoneID"]?["zoneType"] == .string("REGULAR_CUSTOM_ZONE"))
            #expect(entry["syncToken"]?.stringValue != token)
        }
    }

    @Test func conflictsAtomicFailuresAndLimitsKeepTheirStatusesOverHTTP() async throws {
        let path = try Self.makeStore()
        try await Harness.serving(path) { server, _ in
            // Per-record errors: the request succeeds (200), each failed record says why.
            let mixed = try await server.send(.POST, Self.privateDB + "records/modify", body: Array((
                #"{"atomic":false,\#(Self.chats),"operations":["#
                + #"{"operationType":"update","record":{"recordName":"m01","recordChangeTag":"stale","fields":{}}},"#
                + #"\#(Self.create("m02")),\#(Self.create("ok"))]}"#).utf8))
            #expect(mixed.status == 200, "\(mixed.text)")
            let codes = (try Self.parsed(mixed)["records"]?.arrayValue ?? []).map { $0["serverErrorCode"]?.stringValue }
            #expect(codes == ["CONFLICT", "EXISTS", nil])

            // Atomic: one failure fails the batch and the store is unchanged.
            let journal = try RecordStore(path: path).journalCount()
            let atomic = try await server.send(.POST, Self.privateDB + "records/modify", body: Array(
                #"{\#(Self.chats),"operations":[\#(Self.create("new1")),\#(Self.create("m03"))]}"#.utf8))
            #expect(atomic.status == 200, "\(atomic.text)")
            let atomicCodes = (try Self.parsed(atomic)["records"]?.arrayValue ?? []).map { $0["serverErrorCode"]?.stringValue }
            #expect(atomicCodes == ["ATOMIC_ERROR", "EXISTS"])
            #expect(try RecordStore(path: path).journalCount() == journal)

            // More than 200 operations: the whole request is refused.
            let operations = (0..<201).map { Self.create("x" + String($0)) }.joined(separator: ",")
            let tooMany = try await server.send(.POST, Self.privateDB + "records/modify",
                                                body: Array(#"{\#(Self.chats),"operations":[\#(operations)]}"#.utf8))
            tooMany.expectError("BAD_REQUEST", 400)
            #expect(try RecordStore(path: path).journalCount() == journal)
        }
    }

    @Test func aSignedRequestReachesTheStoreAndATamperedOneIsRefused() async throws {
        let vector = try Vector.load()
        let signer = try vector.signer()
        let path = try Self.makeStore()
        try await Harness.serving(path, .init(authentication: try vector.authentication())) { server, _ in
            let modify = Self.publicDB + "records/modify"
            let body = Array(#"{"operations":[\#(Self.create("signed"))]}"#.utf8)
            let saved = try await server.send(.POST, modify, headers: try signer.headers(path: modify, body: body), body: body)
            #expect(saved.status == 200, "\(saved.text)")
            #expect(try Self.parsed(saved)["records"]?.arrayValue?.first?["recordName"] == .string("signed"))

            let lookup = Self.publicDB + "records/lookup"
            let lookupBody = Array(#"{"records":[{"recordName":"signed"},{"recordName":"tampered"}]}"#.utf8)
            let found = try await server.send(.POST, lookup, headers: try signer.headers(path: lookup, body: lookupBody), body: lookupBody)
            let codes = (try Self.parsed(found)["records"]?.arrayValue ?? []).map { $0["serverErrorCode"]?.stringValue }
            #expect(codes == [nil, "NOT_FOUND"])

            let tampered = Array(#"{"operations":[\#(Self.create("tampered"))]}"#.utf8)
            let refused = try await server.send(.POST, modify, headers: try signer.headers(path: modify, body: body), body: tampered)
            refused.expectError("AUTHENTICATION_FAILED", 401)
            let unsigned = try await server.send(.POST, lookup, body: lookupBody)
            #expect(unsigned.status == 401 || unsigned.status == 421, "\(unsigned.text)")
            let journal = try RecordStore(path: path).journalCount()
            let again = try await server.send(.POST, lookup, headers: try signer.headers(path: lookup, body: lookupBody), body: lookupBody)
            #expect((try Self.parsed(again)["records"]?.arrayValue ?? []).map { $0["serverErrorCode"]?.stringValue } == [nil, "NOT_FOUND"])
            #expect(try RecordStore(path: path).journalCount() == journal)
        }
    }

    @Test func anAssetUploadedOverHTTPDownloadsByteForByte() async throws {
        let path = try Self.makeStore()
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try await Harness.serving(path) { server, _ in
            let tokens = try await server.send(.POST, Self.privateDB + "assets/upload",
                                               body: Array(#"{"tokens":[{"recordName":"pic","recordType":"Photo","fieldName":"image"}]}"#.utf8))
            #expect(tokens.status == 200, "\(tokens.text)")
            let url = try #require(try Self.parsed(tokens)["tokens"]?.arrayValue?.first?["url"]?.stringValue)
            #expect(url.hasPrefix(server.address.url + "/upload/"))

            let uploaded = try await server.send(.POST, String(url.dropFirst(server.address.url.count)), body: bytes)
            #expect(uploaded.status == 200, "\(uploaded.text)")
            let single = try #require(try Self.parsed(uploaded)["singleFile"])
            #expect(single["size"] == .number(JSONNumber(Int64(bytes.count))))
            let receipt = try #require(single["receipt"]?.stringValue)
            let checksum = try #require(single["fileChecksum"]?.stringValue)

            let record = #"{"recordName":"pic","recordType":"Photo","fields":{"image":{"value":{"fileChecksum":"\#(checksum)","receipt":"\#(receipt)","size":\#(bytes.count)},"type":"ASSETID"}}}"#
            let saved = try await server.send(.POST, Self.privateDB + "records/modify",
                                              body: Array(#"{"operations":[{"operationType":"create","record":\#(record)}]}"#.utf8))
            #expect(saved.status == 200, "\(saved.text)")
            let template = try #require(try Self.parsed(saved)["records"]?.arrayValue?.first?["fields"]?["image"]?["value"]?["downloadURL"]?.stringValue)
            #expect(template.hasPrefix(server.address.url + "/assets/"))

            let download = template.replacing("${f}", with: "image.bin")
            var request = HTTPClientRequest(url: download)
            request.method = .GET
            let response = try await server.client.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type") == "application/octet-stream")
            let fetched = try await response.body.collect(upTo: 16 << 20)
            #expect(Array(fetched.readableBytesView) == bytes)
        }
    }

    /// 16 clients creating records at once: every create acknowledged is in the journal once, and
    /// the changes feed returns each once.
    @Test func concurrentCreatesAreEachJournaledExactlyOnce() async throws {
        let path = try Self.makeStore()
        let clients = 16
        let perClient = 6
        try await Harness.serving(path) { server, _ in
            let before = try Self.parsed(try await server.send(.POST, Self.privateDB + "records/changes",
                                                               body: Array(#"{\#(Self.chats)}"#.utf8)))
            let token = try #require(before["syncToken"]?.stringValue)

            let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
                for client in 0..<clients {
                    group.addTask {
                        var names: [String] = []
                        for i in 0..<perClient {
                            let name = "c\(client)-\(i)"
                            let answer = try await server.send(.POST, Self.privateDB + "records/modify",
                                                               body: Array(#"{\#(Self.chats),"operations":[\#(Self.create(name))]}"#.utf8))
                            let record = try Self.parsed(answer)["records"]?.arrayValue?.first
                            if answer.status == 200, record?["serverErrorCode"] == nil, record?["recordName"] == .string(name) {
                                names.append(name)
                            }
                        }
                        return names
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(acknowledged.count == clients * perClient)

            var journaled: [String: Int] = [:]
            try RecordStore(path: path).changes(since: nil) { change in
                if case .recordSaved(let record) = change.event, record.recordName.hasPrefix("c") {
                    journaled[record.recordName, default: 0] += 1
                }
            }
            #expect(Set(journaled.keys) == Set(acknowledged))
            #expect(journaled.values.allSatisfy { $0 == 1 })

            var fed: [String] = []
            var next = token
            var pages = 0
            while pages < 20 {
                let page = try Self.parsed(try await server.send(.POST, Self.privateDB + "records/changes",
                                                                 body: Array(#"{\#(Self.chats),"syncToken":"\#(next)","resultsLimit":50}"#.utf8)))
                fed += (page["records"]?.arrayValue ?? []).compactMap { $0["recordName"]?.stringValue }
                next = try #require(page["syncToken"]?.stringValue)
                pages += 1
                if page["moreComing"] != .bool(true) { break }
            }
            #expect(fed.sorted() == acknowledged.sorted())
        }
    }
}
#endif
