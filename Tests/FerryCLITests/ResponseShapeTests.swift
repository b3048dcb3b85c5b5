@testable import FerryCLI
import FerryIO
import FerryJSON
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
            { "recordName" : "l2", "reason" : "Record not found", "serverErrorCode" : "NOT_FOUND" },
            { "recordName" : "l3", "recordType" : "Message", "reason" : "Changed on the server", "serverErrorCode" : "CONFLICT" }
          ]
        }
        """, ["l1"], 2),
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
        ("records/changes of one zone", """
        {
          "zoneID" : \(zone),
          "records" : [
            \(record("c2", zone: false))
          ],
          "syncToken" : "T2",
          "moreComing" : false
        }
        """, ["c2"], 0),
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
            if shape == "changes/zone" || shape == "records/changes of one zone" {
                // Records inherit the zone of the zone entry, or of the response, they came in.
                #expect(try records(at: out).allSatisfy { $0.zoneID?.zoneName == "Chats" && $0.zoneID?.ownerRecordName == "_9f4c2a7e1b3d5f60" })
            }
            if shape == "changes/zone" {
                #expect(stderr.contains("ZONE_NOT_FOUND") && stderr.contains("Gone"), "\(stderr)")
            }
        } else {
            #expect(names.isEmpty)
            // zones/lookup and zones/modify answers look like zones/list ones: the message names all three.
            #expect(stderr.contains("a \(shape == "zones/list" ? "zones/list, zones/lookup or zones/modify" : shape) response"), "\(stderr)")
            #expect(stderr.contains("holds no records"), "\(stderr)")
        }
    }

    @Test("ferry replay takes no changes from zones/list, zones/lookup or zones/modify answers; changes/database and an empty changes/zone entry still count")
    func replayOfZoneShapes() throws {
        let directory = scratchDirectory()
        let listings = [
            #"{"zones":[{"zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"syncToken":"zl-99","atomic":true},{"zoneID":{"zoneName":"_defaultZone"},"atomic":true}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"Chats"}},{"zoneID":{"zoneName":"Old"},"deleted":true}]}"#,
        ]
        for (index, text) in listings.enumerated() {
            let input = directory + "/listing\(index).json", log = directory + "/listing\(index).log"
            try write(text, to: input)
            let (status, _, stderr) = try runBinary(["replay", input, "--out", directory + "/s\(index).ndjson", "--log", log, "--quiet"])
            #expect(status == 0, "\(stderr)")
            #expect(try String(contentsOfFile: log, encoding: .utf8).isEmpty)
            let (_, tokens, _) = try runBinary(["replay", input, "--tokens-only"])
            #expect(!tokens.contains("zl-99"), "\(tokens)")
        }
        let database = #"{"zones":[{"zoneID":{"zoneName":"Chats"},"syncToken":"own"},{"zoneID":{"zoneName":"Old"},"deleted":true}],"syncToken":"DB","moreComing":false}"#
        let emptyPage = #"{"zones":[{"zoneID":{"zoneName":"Chats"},"syncToken":"cz-2","moreComing":false}]}"#
        for (name, text, expected) in [("database", database, [#""event":"zoneSaved""#, #""event":"zoneDeleted""#, #""syncToken":"DB""#]),
                                       ("empty", emptyPage, [#""event":"checkpoint","zoneID":{"zoneName":"Chats"},"syncToken":"cz-2""#])] {
            let input = directory + "/\(name).json", log = directory + "/\(name).log"
            try write(text, to: input)
            let (status, _, stderr) = try runBinary(["replay", input, "--out", directory + "/\(name).ndjson", "--log", log, "--quiet"])
            #expect(status == 0, "\(stderr)")
            let written = try String(contentsOfFile: log, encoding: .utf8)
            for part in expected { #expect(written.contains(part), "\(written)") }
        }
    }

    @Test("A response that does not parse is copied to the rejects file byte for byte, from its start to the end of the input")
    func brokenDocumentRejectedExactly() throws {
        let directory = scratchDirectory()
        let text = try String(contentsOfFile: samplesDirectory() + "/query-response.json", encoding: .utf8)
        let broken = text.replacingOccurrences(of: "\"recordType\"", with: "\"recordType\",,")
        #expect(broken != text)
        for ending in ["\n", "", "\n\n"] {
            let input = directory + "/broken.json"
            let bytes = broken.trimmingCharacters(in: .newlines) + ending
            try write(bytes, to: input)
            let rejects = directory + "/rejects.json"
            let (code, _, error) = try runBinary(["convert", input, directory + "/out.ndjson", "--on-error", "skip", "--rejects", rejects])
            #expect(code == 0, "\(error)")
            let kept = try String(contentsOfFile: rejects, encoding: .utf8)
            #expect(kept == (ending.isEmpty ? bytes + "\n" : bytes), "ending \(ending.debugDescription)")
        }
    }

    @Test("Zone listings inside an archive without a manifest are said and described, as in a folder")
    func zoneListingsInArchive() throws {
        let directory = scratchDirectory()
        let pages = directory + "/pages"
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        for shape in ["zones/list", "changes/database"] {
            let entry = SavedResponses.shapes.first { $0.name == shape }!
            try write(entry.text, to: pages + "/" + shape.replacingOccurrences(of: "/", with: "-") + ".json")
        }
        let archive = directory + "/pages.tar.gz"
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tar.arguments = ["tar", "-czf", archive, "-C", directory, "pages"]
        try tar.run()
        tar.waitUntilExit()
        #expect(tar.terminationStatus == 0)
        for input in [pages, archive] {
            let (code, _, error) = try runBinary(["convert", input, directory + "/out.ndjson"])
            #expect(code == 0, "\(error)")
            #expect(error.contains("a changes/database response") && error.contains("a zones/list, zones/lookup or zones/modify response"),
                    "\(input): \(error)")
            #expect(error.contains("the inputs hold only zones"), "\(input): \(error)")
            let (_, json, _) = try runBinary(["inspect", input, "--json"])
            #expect(try JSONValue(parsing: json)["zoneListings"]?.arrayValue?.count == 2, "\(input): \(json)")
        }
    }

    @Test("A bad record inside a saved response is rejected alone, named by its index, with or without --where")
    func badRecordInResponse() throws {
        let directory = scratchDirectory()
        let input = directory + "/page.json"
        try write("""
        {
          "records" : [
            {"recordName" : "a", "recordType" : "T"},
            {"recordName" : "b", "recordType" : "T"},
            {"recordName" : "c", "recordType" : "T"},
            {"recordName" : "d", "recordType" : "T\\q"},
            {"recordName" : "e", "recordType" : "T"}
          ]
        }
        {"records" : [{"recordName" : "f", "recordType" : "T"}]}

        """, to: input)
        // The same on one line each (NDJSON): the same records, rejects and record index.
        try write(#"{"records":[{"recordName":"a","recordType":"T"},{"recordName":"b","recordType":"T"},"#
                  + #"{"recordName":"c","recordType":"T"},{"recordName" : "d", "recordType" : "T\q"},{"recordName":"e","recordType":"T"}]}"#
                  + "\n" + #"{"records" : [{"recordName" : "f", "recordType" : "T"}]}"# + "\n", to: directory + "/page.ndjson")
        for (input, place) in [(input, "page.json:6:43: record 4:"), (directory + "/page.ndjson", "page.ndjson:1:159: record 4:")] {
        for extra in [[], ["--where", "recordName != 'zz'"], ["--type", "T"]] {
            let (failed, _, message) = try runBinary(["convert", input, directory + "/x.ndjson"] + extra)
            #expect(failed == 1)
            #expect(message.contains(place + " expected an escape"), "\(extra): \(message)")
            let out = directory + "/out.ndjson", rejects = directory + "/rejects.ndjson"
            let (code, _, error) = try runBinary(["convert", input, out, "--on-error", "skip", "--rejects", rejects] + extra)
            #expect(code == 0, "\(error)")
            #expect(try records(at: out).map(\.recordName) == ["a", "b", "c", "e", "f"], "\(extra)")
            #expect(try String(contentsOfFile: rejects, encoding: .utf8) == #"{"recordName" : "d", "recordType" : "T\q"}"# + "\n", "\(extra)")
            #expect(error.contains("record 4:") && error.contains("1 rejected"), "\(extra): \(error)")
        }
        }
    }

    @Test("--on-error skip skips a gzipped response that cannot be inflated, naming it, as it skips a truncated plain one")
    func damagedGzipInFolder() throws {
        let directory = scratchDirectory()
        let folder = directory + "/gz"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 1...3 {
            let text = "{\n  \"records\" : [\n    {\"recordName\" : \"r\(index)\", \"recordType\" : \"T\"}\n  ]\n}\n"
            var bytes = BoundedMemoryTests.gzip(Array(text.utf8))
            if index == 2 { bytes = Array(bytes.prefix(bytes.count / 2)) }
            try Data(bytes).write(to: URL(fileURLWithPath: folder + "/\(index).json.gz"))
        }
        // A compact response (one line, as CloudKit sends it) large enough to be streamed, cut
        // after its first 4 KiB inflated: its first records are read, the rest skipped.
        var compact = #"{"records":["#
        for index in 0..<2_000 { compact += (index > 0 ? "," : "") + #"{"recordName":"c\#(index)","recordType":"T"}"# }
        compact += "]}\n"
        let whole = BoundedMemoryTests.gzip(Array(compact.utf8))
        try Data(whole.prefix(whole.count * 3 / 4)).write(to: URL(fileURLWithPath: folder + "/2b.json.gz"))
        let out = directory + "/out.ndjson"
        let (code, _, error) = try runBinary(["convert", folder, out, "--on-error", "skip", "--rejects", directory + "/rejects.ndjson"])
        #expect(code == 0, "\(error)")
        #expect(try records(at: out).map(\.recordName) == ["r1", "r3"])
        #expect(error.contains("skipped: ") && error.contains("2.json.gz") && error.contains("2b.json.gz") && error.contains("2 rejected"),
                "\(error)")
        let (failed, _, message) = try runBinary(["convert", folder, directory + "/failed.ndjson"])
        #expect(failed == 1)
        #expect(message.contains("2.json.gz"), "\(message)")
        #expect(!FileSystem.exists(directory + "/failed.ndjson"))
    }

    @Test("A folder of gzipped responses converts exactly as the plain folder: the workers inflate each file whole")
    func gzippedFolder() throws {
        let directory = scratchDirectory()
        let plain = directory + "/plain", gzipped = directory + "/gz"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: gzipped, withIntermediateDirectories: true)
        // Every shape (errors, zone listings, records without zones), and one NDJSON file: lines
        // are streamed, not read whole.
        var files = SavedResponses.shapes.enumerated().map { (String(format: "%02d", $0.offset) + ".json", $0.element.text) }
        files.append(("99.ndjson", "{\"recordName\":\"line1\"}\n{\"recordName\":\"line2\"}\n"))
        for (name, text) in files {
            try write(text, to: plain + "/" + name)
            try Data(BoundedMemoryTests.gzip(Array(text.utf8))).write(to: URL(fileURLWithPath: gzipped + "/" + name + ".gz"))
        }
        let fromPlain = directory + "/plain.ndjson", fromGzip = directory + "/gz.ndjson"
        let rejectsPlain = directory + "/plain.rejects", rejectsGzip = directory + "/gz.rejects"
        let (plainStatus, _, plainErr) = try runBinary(["convert", plain, fromPlain, "--on-error", "skip", "--rejects", rejectsPlain])
        let (gzStatus, _, gzErr) = try runBinary(["convert", gzipped, fromGzip, "--on-error", "skip", "--rejects", rejectsGzip])
        #expect(plainStatus == 0 && gzStatus == 0, "\(plainErr)\n\(gzErr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fromGzip)) == Data(contentsOf: URL(fileURLWithPath: fromPlain)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: rejectsGzip)) == Data(contentsOf: URL(fileURLWithPath: rejectsPlain)))
        #expect(try records(at: fromGzip).count > 3)

        // A corrupt file fails the run, named; nothing is written. (Under --on-error skip it is
        // skipped: damagedGzipInFolder.)
        let corrupt = directory + "/corrupt"
        try FileManager.default.createDirectory(atPath: corrupt, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: gzipped + "/00.json.gz", toPath: corrupt + "/00.json.gz")
        let truncated = BoundedMemoryTests.gzip(Array(SavedResponses.shapes[0].text.utf8)).dropLast(12)
        try Data(truncated).write(to: URL(fileURLWithPath: corrupt + "/50.json.gz"))
        let failed = directory + "/failed.ndjson"
        let (status, _, stderr) = try runBinary(["convert", corrupt, failed])
        #expect(status == 1)
        #expect(stderr.contains("50.json.gz"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: failed))

        // A document read whole from a gzip stream is held to the line limit, as a stream's is.
        let (limited, _, limitErr) = try runBinary(["convert", gzipped, directory + "/limited.ndjson", "--max-line-bytes", "100"])
        #expect(limited == 1)
        #expect(limitErr.contains("at most 100 bytes"), "\(limitErr)")
    }

    @Test("ferry inspect describes the zones of zone-only shapes, as text and JSON",
          arguments: SavedResponses.shapes.filter { $0.records == nil }.map(\.name))
    func inspect(shape: String) throws {
        let entry = SavedResponses.shapes.first { $0.name == shape }!
        let input = scratchDirectory() + "/response.json"
        try write(entry.text, to: input)
        let (status, stdout, stderr) = try runBinary(["inspect", input])
        #expect(status == 0, "\(stderr)")
        #expect(stdout.contains("1 response lists zones and holds no records (\(shape))"), "\(stdout)")
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

    /// Page `page` of a `changes/zone` history of one zone: records saved again on later pages,
    /// some deleted.
    static func changesPage(_ page: Int, records: Int = 40) -> String {
        var entries: [String] = []
        for i in 0..<records {
            let name = "r\((i + page * 7) % 60)"
            if (i + page) % 11 == 0 {
                entries.append(#"{ "recordName" : "\#(name)", "deleted" : true }"#)
            } else {
                entries.append("""
                    {
                      "recordName" : "\(name)",
                      "recordType" : "Note",
                      "zoneID" : { "zoneName" : "Notes", "ownerRecordName" : "_defaultOwner" },
                      "recordChangeTag" : "t\(page)-\(i)",
                      "modified" : { "timestamp" : \(1_690_000_000_000 + page * 1000 + i), "userRecordName" : "_u" },
                      "fields" : {
                        "page" : { "value" : \(page), "type" : "INT64" },
                        "text" : { "value" : "page \(page) entry \(i) \\"quoted\\" ✓", "type" : "STRING" }
                      }
                    }
                    """)
            }
        }
        return """
        {
          "zones" : [
            {
              "zoneID" : { "zoneName" : "Notes", "ownerRecordName" : "_defaultOwner" },
              "syncToken" : "N\(page)",
              "records" : [
        \(entries.joined(separator: ",\n"))
              ],
              "moreComing" : \(page < 29)
            }
          ]
        }
        """
    }

    @Test("replay of a folder of gzipped responses gives the plain folder's state and tokens: the workers inflate each file whole")
    func replayGzippedFolder() throws {
        let directory = scratchDirectory()
        let plain = directory + "/plain", gzipped = directory + "/gz"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: gzipped, withIntermediateDirectories: true)
        for page in 0..<30 {
            let name = String(format: "%03d.json", page), text = Self.changesPage(page)
            try write(text, to: plain + "/" + name)
            try Data(BoundedMemoryTests.gzip(Array(text.utf8))).write(to: URL(fileURLWithPath: gzipped + "/" + name + ".gz"))
        }
        func contents(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
        let fromPlain = directory + "/plain.ndjson", fromGzip = directory + "/gz.ndjson"
        let (plainStatus, _, plainErr) = try runBinary(["replay", plain, "--out", fromPlain, "--quiet"])
        let (gzStatus, _, gzErr) = try runBinary(["replay", gzipped, "--out", fromGzip, "--quiet"])
        #expect(plainStatus == 0 && gzStatus == 0, "\(plainErr)\n\(gzErr)")
        #expect(try records(at: fromPlain).count > 30)
        #expect(try contents(fromGzip) == contents(fromPlain))
        #expect(try contents(fromGzip + ".tokens.json") == contents(fromPlain + ".tokens.json"))

        // Into a new store, and exported again: the same records.
        let store = directory + "/gz.sqlite", exported = directory + "/exported.ndjson"
        let (intoStatus, _, intoErr) = try runBinary(["replay", gzipped, "--into", store, "--quiet"])
        #expect(intoStatus == 0, "\(intoErr)")
        #expect(try runBinary(["convert", store, exported, "--quiet"]).0 == 0)
        #expect(try records(at: exported).map(\.recordName).sorted() == records(at: fromPlain).map(\.recordName).sorted())

        // Into an existing store (its first pages from the plain folder), the rest from the gzipped
        // folder, read by the workers: the same records again.
        let half = directory + "/half", existing = directory + "/existing.sqlite", exportedExisting = directory + "/existing.ndjson"
        try FileManager.default.createDirectory(atPath: half, withIntermediateDirectories: true)
        for page in 0..<15 { try write(Self.changesPage(page), to: half + String(format: "/%03d.json", page)) }
        #expect(try runBinary(["replay", half, "--into", existing, "--quiet"]).0 == 0)
        let (existingStatus, _, existingErr) = try runBinary(["replay", gzipped, "--into", existing, "--quiet"])
        #expect(existingStatus == 0, "\(existingErr)")
        #expect(try runBinary(["convert", existing, exportedExisting, "--quiet"]).0 == 0)
        #expect(try records(at: exportedExisting).map(\.recordName).sorted() == records(at: fromPlain).map(\.recordName).sorted())

        // A corrupt file fails the run, named; nothing is written.
        let truncated = BoundedMemoryTests.gzip(Array(Self.changesPage(30).utf8)).dropLast(12)
        try Data(truncated).write(to: URL(fileURLWithPath: gzipped + "/100.json.gz"))
        let failed = directory + "/failed.ndjson"
        let (status, _, stderr) = try runBinary(["replay", gzipped, "--out", failed])
        #expect(status == 1)
        #expect(stderr.contains("100.json.gz"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: failed))

        // A document read whole from a gzip stream is held to the line limit, as a stream's is.
        let (limited, _, limitErr) = try runBinary(["replay", gzipped, "--out", directory + "/limited.ndjson", "--max-line-bytes", "100"])
        #expect(limited == 1)
        #expect(limitErr.contains("at most 100 bytes"), "\(limitErr)")
        #expect(limitErr.contains("000.json.gz"), "\(limitErr)")
        // So is a replay into a store, whose workers read each file whole.
        let (storeLimited, _, storeLimitErr) = try runBinary(["replay", gzipped, "--into", directory + "/limited.sqlite",
                                                              "--max-line-bytes", "100"])
        #expect(storeLimited == 1)
        #expect(storeLimitErr.contains("at most 100 bytes"), "\(storeLimitErr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/limited.sqlite"))
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

/// Errors inside documents are reported where they are, whatever the document's shape.
@Suite("Error positions in documents")
struct DocumentErrorPositionTests {
    /// A pretty-printed array of three records; the second's INT64 holds a string on line 12.
    static let array = """
    [
      {
        "recordName": "a",
        "fields": {
          "n": { "value": 1, "type": "INT64" }
        }
      },
      {
        "recordName": "b",
        "fields": {
          "n": {
            "value": "nope",
            "type": "INT64"
          }
        }
      },
      { "recordName": "c" }
    ]

    """

    @Test("An error in a pretty-printed top-level array of records has its own line and column, as in a response",
          arguments: [false, true])
    func arrayPosition(throughStandardInput: Bool) throws {
        let dir = scratchDirectory()
        let path = dir + "/array_doc.json"
        try write(Self.array, to: path)
        let (code, _, err) = throughStandardInput
            ? try runBinary(["convert", "-", dir + "/out.ndjson"], stdin: Self.array)
            : try runBinary(["convert", path, dir + "/out.ndjson"])
        #expect(code == 1)
        let name = throughStandardInput ? "-" : path
        #expect(err.hasPrefix("ferry: \(name):12:18: record 2: expected a number for INT64 field \"n\", found a string"), "\(err)")
        // Skipped, the other two are read and the bad one is rejected.
        let (skipped, _, _) = try runBinary(["convert", path, dir + "/out.ndjson", "--on-error", "skip", "--quiet"])
        #expect(skipped == 0)
        #expect(try records(at: dir + "/out.ndjson").map(\.recordName) == ["a", "c"])
    }

    @Test("An array of records on one line reports the column of the bad value")
    func arrayOnOneLine() throws {
        let dir = scratchDirectory()
        let line = #"[{"recordName":"a"}, {"recordName":"b","fields":{"n":{"value":"x","type":"INT64"}}}]"#
        try write(line + "\n", to: dir + "/line.ndjson")
        let (code, _, err) = try runBinary(["convert", dir + "/line.ndjson", "-"])
        #expect(code == 1)
        #expect(err.hasPrefix("ferry: \(dir)/line.ndjson:1:63: record 2: expected a number"), "\(err)")
    }

    @Test("\"records\" that is not an array says so", arguments: [
        (#"{"records": null}"#, "null", 13), (#"{"records": {"a":1}}"#, "an object", 13), (#"{"records": 5}"#, "a number", 13),
        (#"{"zones": "x"}"#, "a string", 11),
    ])
    func recordsNotAnArray(text: String, found: String, column: Int) throws {
        let dir = scratchDirectory()
        try write(text + "\n", to: dir + "/r.json")
        let (code, _, err) = try runBinary(["convert", dir + "/r.json", "-"])
        #expect(code == 1)
        let key = text.contains("zones") ? "zones" : "records"
        #expect(err.hasPrefix("ferry: \(dir)/r.json:1:\(column): record 1: expected an array of \(key) under \"\(key)\", found \(found)"), "\(err)")
    }
}
