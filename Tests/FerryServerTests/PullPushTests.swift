#if CloudKit
import FerryChangeLog
import FerryCloudKit
import FerryCloudKitAuth
import FerryCloudKitClient
import FerryKit
import FerryRecords
import FerryServer
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// Ferry's CKWS client (``CloudKitPull``, ``CloudKitPush``) against `ferry serve`'s service
/// behind the real HTTP server on loopback.
@Suite struct PullPushTests {
    static let container = "iCloud.com.example.ferry"

    static func client(_ harness: Harness, database: String = "private", credentials: CloudKitCredentials = .init(),
                       retry: CloudKitRetryPolicy = .init()) -> CloudKitClient.Configuration {
        .init(endpoint: harness.address.url, container: container, environment: "development", database: database,
              credentials: credentials, retry: retry)
    }

    static func diff(_ a: String, _ b: String) throws -> StateDiff {
        try Comparison(configuration: .init(a: a, b: b)).run()
    }

    /// Whether the pulled store `b` holds what the served store `a` holds. The one difference
    /// allowed is CloudKit's: a record of the default zone that names no owner comes back with
    /// the server's user as the zone's owner (CloudKit names the owner of every zone).
    static func pulledEqualsServed(_ a: String, _ b: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let diff = try diff(a, b)
        #expect(diff.changed.isEmpty, "\(Comparison.text(diff))", sourceLocation: sourceLocation)
        #expect(diff.onlyInA.allSatisfy { $0.zoneID.zoneName == ZoneID.defaultZoneName && $0.zoneID.ownerRecordName == nil },
                "\(Comparison.text(diff))", sourceLocation: sourceLocation)
        #expect(diff.onlyInB.allSatisfy { $0.zoneID.zoneName == ZoneID.defaultZoneName && $0.zoneID.ownerRecordName == "_ferry" },
                "\(Comparison.text(diff))", sourceLocation: sourceLocation)
        #expect(diff.onlyInA.map(\.recordName).sorted() == diff.onlyInB.map(\.recordName).sorted(), "\(Comparison.text(diff))",
                sourceLocation: sourceLocation)
    }

    static func records(_ path: String) throws -> [Record] {
        var records: [Record] = []
        let reader = try StoreRecordReader(store: try RecordStore(path: path))
        while let record = try reader.next() { records.append(record) }
        return records
    }

    @Test func aChangesPullEqualsTheServedStoreAndASecondPullFetchesOnlyTheChange() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 20, inDefaultZone: 3, name: "served.sqlite")
        let pulled = TestScratch.directory() + "/pulled.sqlite"
        try await Harness.serving(served) { harness, _ in
            let first = try await CloudKitPull(configuration: .init(client: Self.client(harness), output: pulled, pageSize: 7)).run()
            #expect(first.records == 23)
            #expect(first.pages >= 4, "20 records of Chats in pages of 7 and the default zone")
            try Self.pulledEqualsServed(served, pulled)

            let client = CloudKitClient(configuration: Self.client(harness))
            let created = try await client.modify(CloudKitModifyRequest(
                operations: [.init(.create, record: try RecordJSON.decodeRecord(#"{"recordName":"x1","recordType":"Message","fields":{"count":{"value":99,"type":"INT64"}}}"#))],
                zoneID: ZoneID(zoneName: "Chats", ownerRecordName: "_owner")))
            #expect(created.entries.count == 1)

            let second = try await CloudKitPull(configuration: .init(client: Self.client(harness), output: pulled)).run()
            #expect(second.records == 1, "only the created record: \(second.line)")
            #expect(second.zones == 1, "only the changed zone: \(second.line)")
            try Self.pulledEqualsServed(served, pulled)

            let third = try await CloudKitPull(configuration: .init(client: Self.client(harness), output: pulled)).run()
            #expect(third.records == 0 && third.zones == 0, "\(third.line)")
        }
    }

    @Test func aTokensOnlyPullLeavesTheTokensOfAFullPull() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 12, inDefaultZone: 2, name: "served.sqlite")
        let full = TestScratch.directory() + "/full.sqlite", tokens = TestScratch.directory() + "/tokens.sqlite"
        try await Harness.serving(served) { harness, _ in
            try await CloudKitPull(configuration: .init(client: Self.client(harness), output: full, pageSize: 5)).run()
            let bootstrap = try await CloudKitPull(configuration: .init(client: Self.client(harness), mode: .tokensOnly, output: tokens,
                                                                        pageSize: 5)).run()
            #expect(bootstrap.records == 0)
        }
        let fullStore = try RecordStore(path: full), tokenStore = try RecordStore(path: tokens)
        let fullTokens = try fullStore.zones().map { "\($0.zoneID.zoneName)=\($0.syncToken ?? "-")" }
        let onlyTokens = try tokenStore.zones().map { "\($0.zoneID.zoneName)=\($0.syncToken ?? "-")" }
        #expect(!fullTokens.isEmpty)
        #expect(fullTokens == onlyTokens)
        #expect(try fullStore.databaseSyncToken("private") != nil)
        #expect(try fullStore.databaseSyncToken("private") == tokenStore.databaseSyncToken("private"))
        #expect(try tokenStore.recordCount() == 0)
    }

    @Test func aQueryPullWithORAndA500ValueListReturnsExactlyTheMatches() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 20, inDefaultZone: 3, name: "served.sqlite")
        let either = TestScratch.directory() + "/either.ndjson", listed = TestScratch.directory() + "/listed.ndjson"
        let chats = ZoneID(zoneName: "Chats", ownerRecordName: "_owner")
        try await Harness.serving(served) { harness, _ in
            let or = try await CloudKitPull(configuration: .init(client: Self.client(harness), mode: .query(.init(
                recordType: "Message", predicate: "count < 3 OR count > 18 OR count == 2", zoneID: chats)), output: either, pageSize: 1)).run()
            #expect(or.queries == 3)
            let values = (1...500).map { #""hello \#($0 * 7)""# }.joined(separator: ",")
            let list = try await CloudKitPull(configuration: .init(client: Self.client(harness), mode: .query(.init(
                recordType: "Message", predicate: "text IN {\(values)}", zoneID: chats)), output: listed)).run()
            #expect(list.queries == 5, "500 values in batches of 100")
        }
        func names(_ path: String) throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try RecordJSON.decodeRecord(String($0)).recordName }.sorted()
        }
        #expect(try names(either) == ["m01", "m02", "m19", "m20"])
        #expect(try names(listed) == ["m07", "m14"])
    }

    @Test func aPushAndAPullBackAreLossless() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 1, inDefaultZone: 1, name: "served.sqlite")
        let input = TestScratch.directory() + "/input.ndjson", pulled = TestScratch.directory() + "/pulled.sqlite"
        var generator = RecordGenerator(seed: 43)
        var pushed: [Record] = []
        for index in 0..<600 {
            var record = generator.record()
            // Assets reach CloudKit by upload receipts, which generated records do not have.
            if var fields = record.fields {
                fields.entries.removeAll { if case .asset = $0.field.value { true } else if case .list(let l) = $0.field.value, l.contains(where: { if case .asset = $0 { true } else { false } }) { true } else { false } }
                record.fields = fields
            }
            record.recordName = "r\(index)"
            record.recordType = record.recordType ?? "Untyped"
            record.deleted = nil
            record.zoneID = index % 3 == 0 ? nil : ZoneID(zoneName: "Z\(index % 4)")
            pushed.append(record)
        }
        try pushed.map { RecordJSON.encodedString($0) + "\n" }.joined().write(toFile: input, atomically: true, encoding: .utf8)
        try await Harness.serving(served) { harness, _ in
            let push = try await CloudKitPush(configuration: .init(client: Self.client(harness), inputs: [input], batchBytes: 64 << 10)).run()
            #expect(push.saved == 600, "\(push.line)")
            #expect(push.batches > 3)
            #expect(push.zonesCreated == 4)
            try await CloudKitPull(configuration: .init(client: Self.client(harness), output: pulled)).run()
        }
        var back: [String: Record] = [:]
        for record in try Self.records(pulled) { back[record.recordName] = record }
        for record in pushed {
            guard let got = back[record.recordName] else { Issue.record("\(record.recordName) was not pulled back"); continue }
            #expect(got.recordType == record.recordType, "\(record.recordName)")
            #expect(got.fields ?? RecordFields() == record.fields ?? RecordFields(), "\(record.recordName)")
            #expect(got.parent == record.parent, "\(record.recordName)")
            #expect(got.zoneName == record.zoneName, "\(record.recordName)")
        }
    }

    @Test func pullAndPushCompleteThroughInjectedFaultsHonouringRetryAfter() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 30, inDefaultZone: 2, name: "served.sqlite")
        let pulled = TestScratch.directory() + "/pulled.sqlite", input = TestScratch.directory() + "/input.ndjson"
        try (1...300).map { ChatStoreFixture.message($0, zone: "Chats", prefix: "p") + "\n" }.joined()
            .write(toFile: input, atomically: true, encoding: .utf8)
        let faults = try CloudKitFaultInjection(throttle: 0.2, unavailable: 0.1, retryAfterSeconds: 0, seed: 7)
        try await Harness.serving(served, .init(faultInjection: faults)) { harness, _ in
            let retry = CloudKitRetryPolicy(maximumAttempts: 30, baseDelay: 0.001, maximumDelay: 0.05)
            let push = try await CloudKitPush(configuration: .init(client: Self.client(harness, retry: retry), inputs: [input],
                                                                   batchSize: 20)).run()
            #expect(push.saved == 300)
            #expect(push.client.retries > 0, "\(push.line)")
            #expect(push.client.throttled + push.client.unavailable == push.client.retries, "\(push.line)")
            let pull = try await CloudKitPull(configuration: .init(client: Self.client(harness, retry: retry), output: pulled, pageSize: 10)).run()
            #expect(pull.client.retries > 0, "\(pull.line)")
        }
        try Self.pulledEqualsServed(served, pulled)
    }

    @Test func retryAfterIsWaitedForAndCounted() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 3, inDefaultZone: 1, name: "served.sqlite")
        let faults = try CloudKitFaultInjection(throttle: 0.5, retryAfterSeconds: 1, seed: 3)
        try await Harness.serving(served, .init(faultInjection: faults)) { harness, _ in
            let client = CloudKitClient(configuration: Self.client(harness, retry: .init(maximumAttempts: 20, baseDelay: 0, maximumDelay: 5)))
            let start = Date()
            for _ in 0..<6 { _ = try await client.listZones() }
            let elapsed = Date().timeIntervalSince(start)
            let statistics = client.statistics
            #expect(statistics.throttled > 0)
            #expect(statistics.secondsAsked == Double(statistics.throttled), "each throttled answer asked for 1 s")
            #expect(elapsed >= statistics.secondsAsked, "the client waited what CloudKit asked")
        }
    }

    @Test func conflictsFollowThePolicyAndRefusedRecordsGoToTheRejectsFile() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 4, inDefaultZone: 1, name: "served.sqlite")
        let directory = TestScratch.directory()
        let input = directory + "/stale.ndjson", rejects = directory + "/rejects.ndjson"
        // The served records' change tags are t1…t4: "stale" is not theirs.
        try (1...4).map { ChatStoreFixture.message($0, zone: "Chats").replacingOccurrences(of: #""recordChangeTag":"t\#($0)""#, with: #""recordChangeTag":"stale""#) + "\n" }
            .joined().write(toFile: input, atomically: true, encoding: .utf8)
        try await Harness.serving(served) { harness, _ in
            let configuration = CloudKitPush.Configuration(client: Self.client(harness), inputs: [input], operation: .update, rejects: rejects)
            await #expect(throws: CloudKitClientError.self) { try await CloudKitPush(configuration: configuration).run() }
            let lines = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 4)
            #expect(lines.allSatisfy { $0.contains(#""serverErrorCode":"CONFLICT""#) && $0.contains(#""recordName":"m0"#) })

            var skip = configuration
            skip.onConflict = .skip
            let skipped = try await CloudKitPush(configuration: skip).run()
            #expect(skipped.conflicts == 4 && skipped.saved == 0)

            var overwrite = configuration
            overwrite.onConflict = .overwrite
            overwrite.rejects = nil
            let written = try await CloudKitPush(configuration: overwrite).run()
            #expect(written.overwritten == 4 && written.saved == 4, "\(written.line)")
        }
    }

    @Test func aSignedPushReachesThePublicDatabaseAndAWrongKeyIsRefused() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 1, inDefaultZone: 1, name: "served.sqlite")
        let input = TestScratch.directory() + "/public.ndjson"
        try (1...5).map { ChatStoreFixture.message($0, zone: nil, prefix: "pub") + "\n" }.joined().write(toFile: input, atomically: true, encoding: .utf8)
        let vector = try Vector.load()
        let key = try vector.signer()
        let other = try CloudKitSigner(keyID: vector.keyID, privateKeyPEM: SignedRequestTests.otherKeyPEM)
        let authentication = try vector.authentication()
        try await Harness.serving(served, .init(authentication: authentication)) { harness, _ in
            let pushed = try await CloudKitPush(configuration: .init(
                client: Self.client(harness, database: "public", credentials: .init(signer: key)), inputs: [input])).run()
            #expect(pushed.saved == 5)
            await #expect(throws: CloudKitClientError.self) {
                try await CloudKitPush(configuration: .init(
                    client: Self.client(harness, database: "public", credentials: .init(signer: other), retry: .init(maximumAttempts: 1)),
                    inputs: [input])).run()
            }
        }
    }
    @Test func assetsRoundTripByteForByteThroughPullAndPush() async throws {
        let first = try ChatStoreFixture.makeStore(messages: 2, inDefaultZone: 1, name: "first.sqlite")
        let second = try ChatStoreFixture.makeStore(messages: 1, inDefaultZone: 1, name: "second.sqlite")
        let directory = TestScratch.directory()
        let copy = directory + "/copy.sqlite", assets = directory + "/assets", back = directory + "/back.sqlite", assetsBack = directory + "/back-assets"
        var generator = SeededRandom(seed: 11)
        let bytes = (0..<300_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let chats = ZoneID(zoneName: "Chats", ownerRecordName: "_owner")
        try await Harness.serving(first) { harness, _ in
            let client = CloudKitClient(configuration: Self.client(harness))
            let asset = try await client.uploadAsset(bytes, recordName: "photo", recordType: "Photo", fieldName: "image", zoneID: chats)
            var record = Record(recordName: "photo", recordType: "Photo", zoneID: chats)
            record.fields = ["image": RecordField(.asset(asset), type: .asset), "images": RecordField(.list([.asset(asset)]), type: .assetList)]
            let saved = try await client.modify(CloudKitModifyRequest(operations: [.init(.create, record: record)], zoneID: chats))
            guard case .record = saved.entries.first?.content else { Issue.record("the record was not saved: \(saved.entries)"); return }
            let pulled = try await CloudKitPull(configuration: .init(client: Self.client(harness), output: copy, assets: assets)).run()
            #expect(pulled.assetsDownloaded == 1, "two fields, one asset: \(pulled.line)")
            let again = try await CloudKitPull(configuration: .init(client: Self.client(harness), output: copy, assets: assets)).run()
            #expect(again.assetsDownloaded == 0 && again.assetsPresent == 1, "\(again.line)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: assets)
        #expect(files.count == 1)
        #expect(files.first.flatMap { FileManager.default.contents(atPath: assets + "/" + $0) }.map { [UInt8]($0) } == bytes)
        try await Harness.serving(second) { harness, _ in
            let pushed = try await CloudKitPush(configuration: .init(client: Self.client(harness), inputs: [copy], assets: assets)).run()
            #expect(pushed.assetsUploaded == 1, "\(pushed.line)")
            try await CloudKitPull(configuration: .init(client: Self.client(harness), output: back, assets: assetsBack)).run()
        }
        let backFiles = try FileManager.default.contentsOfDirectory(atPath: assetsBack)
        #expect(backFiles == files)
        #expect(backFiles.first.flatMap { FileManager.default.contents(atPath: assetsBack + "/" + $0) }.map { [UInt8]($0) } == bytes)
    }
    @Test func aPullThatFetchesNothingLeavesNoStoreBehind() async throws {
        let served = try ChatStoreFixture.makeStore(messages: 1, inDefaultZone: 1, name: "served.sqlite")
        let output = TestScratch.directory() + "/never.sqlite"
        let faults = try CloudKitFaultInjection(unavailable: 1, retryAfterSeconds: 0, seed: 1)
        try await Harness.serving(served, .init(faultInjection: faults)) { harness, _ in
            let pull = CloudKitPull(configuration: .init(client: Self.client(harness, retry: .init(maximumAttempts: 1)), output: output))
            await #expect(throws: CloudKitClientError.self) { try await pull.run() }
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
#endif
