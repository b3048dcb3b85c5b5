// The store's predicate-to-SQL translation (pushdown): any predicate that parses is queried on a
// small store of fixed records, and the store must return exactly the records that evaluating
// the compiled filter on every record returns (records it cannot evaluate do not match), in
// stored order; `explain` must not fail where `query` succeeds.
import FerryPredicate
import FerryRecords
import FerryStore
import FuzzDriver

#if canImport(Glibc)
import Glibc
#endif

/// Strings whose bytes and whose Swift equality disagree, or that case-fold into ASCII.
let tricky = ["e\u{301}", "\u{E9}", "\u{212A}elvin", "Kelvin", "stra\u{DF}e", "STRASSE", "\u{130}stanbul", "\u{FB01}nance",
              "a;b", "a\u{37E}b", "hello", "HELLO world", "he\"llo", "50%", "a_b", "a\\b", "", "Message", "日本語", "😀"]
let numbers = ["9007199254740992", "9007199254740993", "-9007199254740993", "50", "51", "-1", "0", "9223372036854775807"]
let doubles = ["9007199254740992.0", "0.30000000000000004", "-0.0", "50.5", "1e300", "0.5"]

func string(_ text: String) -> String {
    var out = JSONOutput(capacity: 64)
    out.appendString(text)
    return String(decoding: out.bytes, as: UTF8.self)
}

/// The store, its records and their keys, as statics (top-level globals of main.swift count as
/// leaks at exit).
enum Fixture {
    static let records: [Record] = (0..<24).map { index in
        let type = ["Message", "MESSAGE", "Note"][index % 3]
        let zone = ["Chats", "_defaultZone", "Zone ✓"][index % 3]
        var fields = [
            #""f0":{"value":\#(string(tricky[index % tricky.count])),"type":"STRING"}"#,
            index % 2 == 0 ? #""f1":{"value":\#(numbers[index % numbers.count]),"type":"INT64"}"#
                : #""f1":{"value":\#(doubles[index % doubles.count]),"type":"DOUBLE"}"#,
            #""f2":{"value":[\#(string(tricky[(index * 7) % tricky.count])),\#(string(tricky[(index * 3 + 1) % tricky.count]))],"type":"STRING_LIST"}"#,
        ]
        if index % 4 == 1 { fields.append(#""f3":{"value":{"recordName":\#(string(tricky[index % tricky.count])),"action":"NONE"},"type":"REFERENCE"}"#) }
        if index % 5 == 2 { fields.append(#""f4":{"value":\#(1_600_000_000_000 + index),"type":"TIMESTAMP"}"#) }
        if index % 6 == 3 { fields.append(#""f5":{"value":[\#(numbers[index % numbers.count]),3],"type":"INT64_LIST"}"#) }
        let created = index % 2 == 0 ? #","created":{"timestamp":\#(1_600_000_000_000 + index % 3),"userRecordName":"_u\#(index % 2)"}"# : ""
        let json = #"{"recordName":\#(string("r\(index)-" + tricky[(index * 5) % tricky.count])),"recordType":"\#(type)","#
            + #""fields":{\#(fields.joined(separator: ","))},"zoneID":{"zoneName":"\#(zone)"}\#(created)}"#
        return try! RecordJSON.decodeRecord(json)
    }

    // Used only on libFuzzer's one thread.
    nonisolated(unsafe) static let store: RecordStore = {
        let path = fuzzScratchDirectory() + "/store.sqlite"
        let writer = try! StoreWriter(path: path)
        for record in Self.records { try! writer.write(record) }
        try! writer.finish()
        return try! RecordStore(path: path)
    }()
}

func key(_ record: Record) -> String {
    let zone = record.zoneID ?? .default
    return zone.zoneName + "\u{0}" + (zone.ownerRecordName ?? "") + "\u{0}" + record.recordName
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let bytes = fuzzInput(data, size) else { return 0 }
    guard let predicate = try? RecordPredicate(parsing: String(decoding: bytes, as: UTF8.self)),
          let filter = try? RecordFilter(predicate) else { return 0 }
    let expected = Fixture.records.filter { (try? filter.matches($0)) == true }.map(key)
    for types in [[], ["Message"]] {
        let query = StoreQuery(recordTypes: types, predicate: predicate)
        guard let page = try? Fixture.store.query(query) else { continue }
        let got: [String]
        do { got = try page.records().map(key) } catch {
            fuzzCheck(false, "a queried record does not decode: \(error)")
            return 0
        }
        let want = types.isEmpty ? expected : Fixture.records.filter { (try? filter.matches($0)) == true && $0.recordType == "Message" }.map(key)
        let explanation = try? Fixture.store.explain(query)
        fuzzCheck(got == want, "pushdown disagrees with the filter for \(predicate.predicateFormat) (types \(types)):\n"
                  + "store:  \(got)\nfilter: \(want)\nexplain: \(explanation.map { "\($0)" } ?? "failed")")
    }
    return 0
}

// Made before fuzzing, so that no input is charged with their allocations.
_ = Fixture.store
runFuzzer(testOneInput)
