// The predicate parser and printer: parse → print → parse gives the same tree and the same
// text; the parsed predicate is evaluated on fixed records and checked for CloudKit (with and
// without a schema), and its CKWS filterBy is built, without crashing.
import FerryPredicate
import FerryRecords
import FuzzDriver

/// Fixtures, as statics (top-level globals of main.swift count as leaks at exit).
enum Fixture {
    static let records: [Record] = [
        #"{"recordName":"m1","recordType":"Message","fields":{"text":{"value":"Hello wörld","type":"STRING"},"count":{"value":42,"type":"INT64"},"score":{"value":2.5,"type":"DOUBLE"},"tags":{"value":["a","B"],"type":"STRING_LIST"},"sentAt":{"value":1600000000123,"type":"TIMESTAMP"},"chat":{"value":{"recordName":"c1","action":"NONE"},"type":"REFERENCE"},"where":{"value":{"latitude":1.5,"longitude":2.5},"type":"LOCATION"}},"created":{"timestamp":1600000000000,"userRecordName":"_u1"},"zoneID":{"zoneName":"Chats"}}"#,
        #"{"recordName":"n2","recordType":"Note","fields":{"text":{"value":"","type":"STRING"},"count":{"value":-1,"type":"INT64"},"nums":{"value":[1,2,3],"type":"INT64_LIST"}}}"#,
    ].map { try! RecordJSON.decodeRecord($0) }

    static let schema = try! CloudKitSchema(parsing: """
        DEFINE SCHEMA
        RECORD TYPE Message (
            "___recordID" REFERENCE QUERYABLE,
            text STRING QUERYABLE SEARCHABLE SORTABLE,
            count INT64 QUERYABLE SORTABLE,
            score DOUBLE,
            tags LIST<STRING> QUERYABLE,
            sentAt TIMESTAMP QUERYABLE SORTABLE,
            chat REFERENCE QUERYABLE,
            where LOCATION QUERYABLE,
            GRANT READ TO "_world"
        );
        """)
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let bytes = fuzzInput(data, size) else { return 0 }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let predicate = try? RecordPredicate(parsing: text) else { return 0 }
    let printed = predicate.predicateFormat
    let reparsed: RecordPredicate
    do {
        reparsed = try RecordPredicate(parsing: printed)
    } catch {
        fuzzCheck(false, "the printed predicate does not parse: \(error)\ninput:   \(text)\nprinted: \(printed)")
        return 0
    }
    fuzzCheck(reparsed == predicate, "parse → print → parse changed the tree:\ninput:   \(text)\nprinted: \(printed)\n"
              + "first:   \(String(reflecting: predicate))\nsecond:  \(String(reflecting: reparsed))")
    fuzzCheck(reparsed.predicateFormat == printed, "printing is not stable:\n\(printed)\n\(reparsed.predicateFormat)")

    if let filter = try? RecordFilter(predicate) {
        for record in Fixture.records { _ = try? filter.matches(record) }
    }
    _ = predicate.validateForCloudKit()
    _ = predicate.validateForCloudKit(recordType: "Message", schema: Fixture.schema, sortKeys: ["count"])
    _ = try? predicate.cloudKitFilterBy()
    return 0
}

// Made before fuzzing, so that no input is charged with their allocations.
_ = (Fixture.records, Fixture.schema)
runFuzzer(testOneInput)
