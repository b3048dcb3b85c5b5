@testable import FerryCLI
import FerryIO
import FerryNDJSON
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

/// Saved CloudKit Web Services responses of every shape, pretty-printed as CloudKit answers.
enum SavedResponses {
    static let zone = #"{ "zoneName" : "Chats", "ownerRecordName" : "_9f4c2a7e1b3d5f60" }"#

    static func record(_ name: String, zone: Bool = true) -> String {
        """
        {
              "recordName" : "\(name)",
              "recordType" : "Message",\(zone ? "\n      \"zoneID\" : \(Self.zone)," : "")
              "recordChangeTag" : "t-\(name)",
              "fields" : {
                "text" : { "value" : "hello \(name)", "type" : "STRING" },
                "count" : { "value" : 7, "type" : "INT64" }
              }
            }
        """
    }

    /// Name, the response, the record names it holds (nil for a zone-only shape), and the
    /// rejects it holds.
    static let shapes: [(name: String, text: String, records: [String]?, rejects: Int)] = [
        ("records/query", """
        {
          "records" : [
            \(record("q1")),
            \(record("q2"))
          ],
          "continuationMarker" : "AAAA"
        }
        """, ["q1", "q2"], 0),
        ("records/lookup", """
        {
          "records" : [
            \(record("l1")),
            { "recordName" : "l2", "reason" : "Record not found", "serverErrorCode" : "NOT_FOUND" }
          ]
        }
        """, ["l1"], 1),
        ("records/modify", """
        {
          "records" : [
            \(record("m1")),
            { "recordName" : "m2", "deleted" : true }
          ]
        }
        """, ["m1", "m2"], 0),
        ("records/changes", """
        {
          "records" : [
            \(record("c1", zone: false))
          ],
          "syncToken" : "T1",
          "moreComing" : false
        }
        """, ["c1"], 0),
        ("changes/zone", """
        {
          "zones" : [
            {
              "zoneID" : \(zone),
              "syncToken" : "Z1",
              "records" : [
                \(record("z1", zone: false)),
                { "recordName" : "z2", "deleted" : true }
              ],
              "moreComing" : false
            },
            {
              "zoneID" : { "zoneName" : "Gone" },
              "reason" : "Zone not found",
              "serverErrorCode" : "ZONE_NOT_FOUND"
            }
          ]
        }
        """, ["z1", "z2"], 1),
        ("zones/list", """
        {
          "zones" : [
            { "zoneID" : \(zone), "syncToken" : "S", "atomic" : true }
          ]
        }
        """, nil, 0),
        ("changes/database", """
        {
          "zones" : [
            { "zoneID" : \(zone) },
            { "zoneID" : { "zoneName" : "Old" }, "deleted" : true }
          ],
          "syncToken" : "DB",
          "moreComing" : false
        }
        """, nil, 0),
        ("zones/changes", """
        {
          "zones" : [
            { "zoneID" : \(zone), "deleted" : true }
          ],
          "metaSyncToken" : "META",
          "moreComing" : false
        }
        """, nil, 0),
    ]
}

@Suite("Saved responses of every shape")
struct ResponseShapeTests {
    @Test("ferry convert reads each shape that carries records; zone-only shapes say they hold no records",
          arguments: SavedResponses.shapes.map(\.name))
    func convert(shape: String) throws {
        let entry = SavedResponses.shapes.first { $0.name == shape }!
        let directory = scratchDirectory()
        let input = directory + "/response.json", out = directory + "/out.ndjson"
        try write(entry.text, to: input)
        let (status, _, stderr) = try runBinary(["convert", input, out, "--on-error", "skip"])
        #expect(status == 0, "\(stderr)")
        let names = try records(at: out).map(\.recordName)
        if let expected = entry.records {
            #expect(names == expected)
            #expect(stderr.contains("\(entry.rejects) rejected"), "\(stderr)")
            if shape == "changes/zone" {
                // Records inherit the zone of the zone entry they came in.
                #expect(try records(at: out).allSatisfy { $0.zoneID?.zoneName == "Chats" })
                #expect(stderr.contains("ZONE_NOT_FOUND") && stderr.contains("Gone"), "\(stderr)")
            }
        } else {
            #expect(names.isEmpty)
            #expect(stderr.contains("a \(shape) response"), "\(stderr)")
            #expect(stderr.contains("holds no records"), "\(stderr)")
        }
    }

    @Test("ferry inspect describes the zones of zone-only shapes, as text and JSON",
          arguments: SavedResponses.shapes.filter { $0.records == nil }.map(\.name))
    func inspect(shape: String) throws {
        let entry = SavedResponses.shapes.first { $0.name == shape }!
        let input = scratchDirectory() + "/response.json"
        try write(entry.text, to: input)
        let (status, stdout, stderr) = try runBinary(["inspect", input])
        #expect(status == 0, "\(stderr)")
        #expect(stdout.contains("list zones and hold no records (\(shape))"), "\(stdout)")
        #expect(stdout.contains("Chats"))
        let (jsonStatus, json, _) = try runBinary(["inspect", input, "--json"])
        #expect(jsonStatus == 0)
        let value = try JSONValue(parsing: json)
        guard case .object(let object) = value, case .array(let listings)? = object["zoneListings"],
              case .object(let listing)? = listings.first else {
            Issue.record("no zoneListings in \(json)")
            return
        }
        #expect(listing["shape"]?.stringValue == shape)
    }

    @Test("replay reads the change shapes: records, deletions, zone errors and tokens")
    func replay() throws {
        let directory = scratchDirectory()
        let input = directory + "/changes.json", out = directory + "/state.ndjson"
        try write(SavedResponses.shapes.first { $0.name == "changes/zone" }!.text, to: input)
        let (status, _, stderr) = try runBinary(["replay", input, "--out", out])
        #expect(status == 0, "\(stderr)")
        #expect(try records(at: out).map(\.recordName) == ["z1"])
    }
}
