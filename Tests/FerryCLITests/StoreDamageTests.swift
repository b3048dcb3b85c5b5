@testable import FerryCLI
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// Stores damaged outside Ferry (`sqlite3 s.sqlite "UPDATE records SET body=…"`): the commands
/// that print stored bodies as they are check them first, as convert's reader does.
@Suite("Damaged store bodies")
struct StoreDamageTests {
    static let name = "A1000000-0000-4000-8000-000000000001"

    /// Bodies a damaged store may hold: truncated JSON, an empty text, invalid UTF-8, JSON that is
    /// not a record dictionary.
    static let damages = ["substr(body, 1, 20)", "''", "CAST(X'7B22FF227D' AS TEXT)", "'[]'"]

    /// `Samples/chat.ndjson` as a store whose first message has the body `damage` (an SQL expression).
    static func damagedStore(_ damage: String) throws -> String {
        let path = scratchDirectory() + "/s.sqlite"
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", path, "--quiet"]) == 0)
        let store = try RecordStore(path: path, access: .readWrite)
        try store.execute(sql: "UPDATE records SET body = \(damage) WHERE record_name = '\(name)'")
        return path
    }

    /// The error names the store, the record and its zone, and what was expected.
    static func expectNamesRecord(_ error: String, store: String) {
        #expect(error.contains(store + ": "))
        #expect(error.contains("\"\(name)\""))
        #expect(error.contains("zone \"Chats\""))
        #expect(error.contains("expected a record dictionary"))
    }

    @Test("query refuses a damaged body with exit 1, naming the store and record, and prints no body",
          arguments: damages, [[], ["--keys", "text"], ["--response"]])
    func query(damage: String, options: [String]) throws {
        let store = try Self.damagedStore(damage)
        let (code, output, error) = try runBinary(["query", store, "--type", "Message", "--quiet"] + options)
        #expect(code == 1)
        Self.expectNamesRecord(error, store: store)
        #expect(!output.contains("\"recordName\":\"A1000\n"))
        #expect(!output.contains(Self.name))
    }

    @Test("query --where refuses a damaged body the predicate is evaluated on, instead of counting it as not matching")
    func queryWhere() throws {
        let store = try Self.damagedStore("substr(body, 1, 20)")
        let (code, output, error) = try runBinary(["query", store, "--type", "Message", "--where", "text CONTAINS[c] \"a\""])
        #expect(code == 1)
        Self.expectNamesRecord(error, store: store)
        #expect(!error.contains("could not be evaluated"))
        #expect(!output.contains(Self.name))
    }

    @Test("A damaged body SQL reads for a pushed-down predicate or a sort is named as the others are, not a bare SQLite error",
          arguments: [["query", "S", "--type", "Message", "--where", "count > 0"], ["query", "S", "--type", "Message", "--sort", "count"],
                      ["convert", "S", "-", "--where", "count > 0"]])
    func pushedDown(arguments: [String]) throws {
        let store = try Self.damagedStore("substr(body, 1, 20)")
        let (code, output, error) = try runBinary(arguments.map { $0 == "S" ? store : $0 })
        #expect(code == 1)
        Self.expectNamesRecord(error, store: store)
        #expect(!error.contains("SQLite"), "\(error)")
        #expect(!output.contains(Self.name))
    }

    @Test("fetch refuses a damaged body with exit 1, naming the store and record, and prints no body",
          arguments: damages, [[], ["--keys", "text"], ["--response"]])
    func fetch(damage: String, options: [String]) throws {
        let store = try Self.damagedStore(damage)
        let (code, output, error) = try runBinary(["fetch", store, Self.name, "--zone", "Chats"] + options)
        #expect(code == 1)
        Self.expectNamesRecord(error, store: store)
        #expect(!output.contains(Self.name))
    }

    @Test("convert's error about a damaged body names the record as well", arguments: damages)
    func convert(damage: String) throws {
        let store = try Self.damagedStore(damage)
        let (code, _, error) = try runBinary(["convert", store, scratchDirectory() + "/o.ndjson"])
        #expect(code == 1)
        Self.expectNamesRecord(error, store: store)
    }

    @Test("query and fetch still print intact records of a damaged store's other rows")
    func intactRows() throws {
        let store = try Self.damagedStore("substr(body, 1, 20)")
        let (code, output, _) = try runBinary(["fetch", store, "A1000000-0000-4000-8000-000000000002", "--zone", "Chats"])
        #expect(code == 0)
        #expect(output.hasPrefix("{\"recordName\":\"A1000000-0000-4000-8000-000000000002\""))
        let (queryCode, queryOutput, _) = try runBinary(["query", store, "--type", "Chat", "--quiet"])
        #expect(queryCode == 0)
        #expect(queryOutput.split(separator: "\n").count == 1)
    }
}
