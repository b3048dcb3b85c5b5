// The `.ckdb` schema parser: no crash on any text; a parsed schema is usable for CloudKit
// checks of a fixed predicate.
import FerryPredicate
import FuzzDriver

/// A static, not a top-level global (those count as leaks at exit).
enum Fixture {
    static let predicate = try! RecordPredicate(parsing: #"text BEGINSWITH "a" AND count > 3 AND ANY tags == "x""#)
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let bytes = fuzzInput(data, size) else { return 0 }
    guard let schema = try? CloudKitSchema(parsing: String(decoding: bytes, as: UTF8.self)) else { return 0 }
    for type in schema.recordTypes.prefix(4) {
        _ = Fixture.predicate.validateForCloudKit(recordType: type.name, schema: schema, sortKeys: type.fields.prefix(2).map(\.name))
    }
    return 0
}

// Made before fuzzing, so that no input is charged with their allocations.
_ = Fixture.predicate
runFuzzer(testOneInput)
