import FerryKit
import FerryTestSupport
import Foundation
import Testing

@Suite("Converting through FerryKit")
struct ConversionTests {
    @Test("Generated records go NDJSON → store → NDJSON byte for byte", arguments: [(1, 0), (2, 1), (3, 700)] as [(UInt64, Int)])
    func storeRoundTrip(seed: UInt64, count: Int) throws {
        let folder = TestFiles.folder()
        var generator = RecordGenerator(seed: seed)
        let ndjson = generator.ndjson(count: count)
        try TestFiles.write(ndjson, to: folder + "/in.ndjson")
        let into = try Conversion(configuration: .init(inputs: [folder + "/in.ndjson"], output: folder + "/s.sqlite")).run()
        #expect(into.recordsIn == count && into.recordsOut == count)
        let back = try Conversion(configuration: .init(inputs: [folder + "/s.sqlite"], output: folder + "/out.ndjson")).run()
        #expect(back.recordsOut == count)
        #expect(try TestFiles.bytes(folder + "/out.ndjson") == ndjson)
    }

    @Test("The transform, sort and limit apply as configured")
    func transform() throws {
        let folder = TestFiles.folder()
        let configuration = Conversion.Configuration(
            inputs: [TestFiles.sample("chat.ndjson")], output: folder + "/out.ndjson",
            transform: RecordTransform(types: ["Message"], keys: ["text"]), sort: RecordSortKey(parsing: "recordName:desc"), limit: 2)
        let statistics = try Conversion(configuration: configuration).run()
        #expect(statistics.recordsIn == 5 && statistics.recordsOut == 2)
        let records = try TestFiles.records(folder + "/out.ndjson").map { try RecordJSON.decodeRecord($0) }
        #expect(records.map(\.recordName) == records.map(\.recordName).sorted(by: >))
        #expect(records.allSatisfy { $0.recordType == "Message" && ($0.fields?.entries.map(\.name) ?? []).allSatisfy { $0 == "text" } })
    }

    @Test("Bad input is a data error naming it; skipped, it is reported and copied to the rejects file")
    func badInput() throws {
        let folder = TestFiles.folder()
        try TestFiles.write(#"{"recordName": 5}"# + "\n" + #"{"recordName": "b"}"# + "\n", to: folder + "/bad.ndjson")
        #expect {
            try Conversion(configuration: .init(inputs: [folder + "/bad.ndjson"], output: folder + "/o.ndjson")).run()
        } throws: { error in
            guard let error = error as? FerryError else { return false }
            return error.kind == .data && error.underlying != nil
                && error.message == "\(folder)/bad.ndjson:1:16: record 1: expected a string for \"recordName\", found a number"
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/o.ndjson"), "a failed run leaves no output")
        let conversion = Conversion(configuration: .init(inputs: [folder + "/bad.ndjson"], output: folder + "/o.ndjson",
                                                         skipsBadInput: true, rejects: folder + "/r.ndjson"))
        var rejected: [String] = []
        conversion.onReject = { rejected.append(String(describing: $0)) }
        let statistics = try conversion.run()
        #expect(statistics.rejected == 1 && statistics.recordsOut == 1 && rejected.count == 1)
        #expect(try String(contentsOfFile: folder + "/r.ndjson", encoding: .utf8) == #"{"recordName": 5}"# + "\n")
    }

    @Test("A run that would overwrite its own input, or whose output cannot be told, is a usage error")
    func usageErrors() throws {
        let folder = TestFiles.folder()
        let input = TestFiles.sample("chat.ndjson")
        let store = folder + "/s.sqlite"
        try Conversion(configuration: .init(inputs: [input], output: store)).run()
        let clashes: [Conversion.Configuration] = [
            .init(inputs: [store], output: store),
            .init(inputs: [input], output: folder + "/o.ndjson", skipsBadInput: true, rejects: input),
            .init(inputs: [input], output: folder + "/o.unknown"),
            .init(inputs: [input], output: "-", writing: .init(format: .store)),
        ]
        for configuration in clashes {
            #expect {
                try Conversion(configuration: configuration).run()
            } throws: { error in
                (error as? FerryError)?.kind == .usage && (error as? FerryError)?.exitCode == 2
            }
        }
        #expect(try TestFiles.records(store).count == 5, "the store refused as its own output is unchanged")
    }

    @Test("A store's journal is exported after a token as a change log")
    func journal() throws {
        let folder = TestFiles.folder()
        let store = folder + "/s.sqlite"
        try Conversion(configuration: .init(inputs: [TestFiles.sample("chat.ndjson")], output: store)).run()
        let all = try Conversion(configuration: .init(inputs: [store], output: folder + "/all.ndjson", changesSince: "0")).exportChanges()
        #expect(all.eventCount > 5)
        let none = try Conversion(configuration: .init(inputs: [store], output: folder + "/none.ndjson",
                                                       changesSince: all.token.description)).exportChanges()
        #expect(none.eventCount == 0 && none.token == all.token)
        #expect(none.line == "0 events after \(all.token); the store's token is now \(all.token)")
    }
}
