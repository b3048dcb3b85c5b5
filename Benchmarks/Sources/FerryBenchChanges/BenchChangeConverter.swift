import FerryChangeLog
import FerryIO
import FerryRecords

/// Converts the shared benchmark's plain change events into Ferry's change-log format, with the
/// public API of `FerryRecords` and `FerryChangeLog` only.
///
/// Input lines (`../shared/bench/gen_records.py --changes`): `{"token":N,"op":"upsert"|"modify"|
/// "delete","recordName","recordType","zoneID","timestamp","record":{…}?}`. Upserts and
/// modifications become `recordSaved` (the record decoded and written by `ChangeLogWriter`, compact,
/// keys in Ferry's canonical order: on the generator's records, byte for byte the input record),
/// deletions `recordDeleted`. Every `checkpointEvery` events, and at the end, each zone touched
/// since the last checkpoint gets a checkpoint whose token is `<zoneName>@<N>` (N the input's
/// latest token), so `--until` and `--since` have positions to name. Lines holding only spaces and
/// tabs are skipped.
enum BenchChangeConverter {
    /// A malformed input line.
    struct Failure: Error, CustomStringConvertible {
        var source: String
        var line: Int
        var message: String
        var description: String { "\(source):\(line): \(message)" }
    }

    /// Converts `source` onto `writer` (then finishes it); returns the number of input events.
    @discardableResult
    static func convert(from source: any ByteSource, to writer: ChangeLogWriter, checkpointEvery: Int = 1000) throws -> Int {
        var touched: [ZoneID] = []
        var touchedSet: Set<ZoneID> = []
        var count = 0
        var lastToken: Int64 = 0
        func checkpoint() throws {
            for zone in touched {
                try writer.write(.checkpoint(.init(zoneID: zone, syncToken: "\(zone.zoneName)@\(lastToken)", moreComing: false)))
            }
            touched.removeAll()
            touchedSet.removeAll()
        }
        try LineSplitter(source: source).forEachLine { line, number in
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            func failure(_ message: String) -> Failure { Failure(source: source.name, line: number, message: message) }
            var op: String?
            var name: String?
            var type: String?
            var zone: ZoneID?
            var record: Record?
            do {
                for (key, range) in try members(of: line) {
                    let value = UnsafeRawBufferPointer(rebasing: line[range])
                    switch key {
                    case "op": op = try RecordJSON.parseValue(value).stringValue
                    case "recordName": name = try RecordJSON.parseValue(value).stringValue
                    case "recordType": type = try RecordJSON.parseValue(value).stringValue
                    case "zoneID": zone = try zoneID(try RecordJSON.parseValue(value))
                    case "token": lastToken = try RecordJSON.parseValue(value).numberValue?.int64Value ?? lastToken
                    case "record": record = try RecordJSON.decodeRecord(value)
                    default: continue
                    }
                }
            } catch let error as Failure {
                throw failure(error.message)
            } catch {
                throw failure("\(error)")
            }
            guard let op, let name else { throw failure("expected \"op\" and \"recordName\" in a benchmark change event") }
            let zoneID = zone ?? .default
            if op == "delete" {
                try writer.write(.recordDeleted(RecordID(recordName: name, zoneID: zoneID), recordType: type))
            } else if let record {
                try writer.write(.recordSaved(record))
            } else {
                throw failure("expected \"record\" in a \(op) event, found none")
            }
            if touchedSet.insert(zoneID).inserted { touched.append(zoneID) }
            count += 1
            if count % checkpointEvery == 0 { try checkpoint() }
        }
        try checkpoint()
        try writer.finish()
        return count
    }

    /// The members of the JSON object that is all of `line` (surrounding whitespace allowed): each
    /// key and the byte range of its value, in order. Values are validated, not decoded.
    static func members(of line: UnsafeRawBufferPointer) throws -> [(key: String, value: Range<Int>)] {
        var position = 0
        func skipWhitespace() {
            while position < line.count, [0x20, 0x09, 0x0A, 0x0D].contains(line[position]) { position += 1 }
        }
        func expect(_ byte: UInt8, _ what: String) throws {
            skipWhitespace()
            guard position < line.count, line[position] == byte else {
                throw Failure(source: "", line: 0, message: "expected \(what) at byte \(position)")
            }
            position += 1
        }
        func value() throws -> Range<Int> {
            skipWhitespace()
            let start = position
            position = try RecordJSON.extentOfValue(in: line, from: start)
            return start..<position
        }
        var result: [(key: String, value: Range<Int>)] = []
        try expect(UInt8(ascii: "{"), "an object")
        skipWhitespace()
        if position < line.count, line[position] == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                let keyRange = try value()
                guard let key = try RecordJSON.parseValue(UnsafeRawBufferPointer(rebasing: line[keyRange])).stringValue else {
                    throw Failure(source: "", line: 0, message: "expected a key (a string) at byte \(keyRange.lowerBound)")
                }
                try expect(UInt8(ascii: ":"), "':' after a key")
                result.append((key, try value()))
                skipWhitespace()
                if position < line.count, line[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}' in the object")
                break
            }
        }
        skipWhitespace()
        guard position == line.count else { throw Failure(source: "", line: 0, message: "expected the end of the line at byte \(position)") }
        return result
    }

    /// A zone ID object as Ferry reads one: `zoneName` required; `ownerRecordName` and `zoneType`
    /// when strings; anything else kept as unknown keys, in order.
    static func zoneID(_ value: JSONValue) throws -> ZoneID {
        guard let object = value.objectValue, let name = object["zoneName"]?.stringValue else {
            throw Failure(source: "", line: 0, message: "expected a zone ID object with a \"zoneName\"")
        }
        var zone = ZoneID(zoneName: name)
        for member in object.members {
            switch (member.key, member.value) {
            case ("zoneName", .string): continue
            case ("ownerRecordName", .string(let owner)): zone.ownerRecordName = owner
            case ("zoneType", .string(let type)): zone.zoneType = type
            default: zone.unknownKeys.append(key: member.key, value: member.value)
            }
        }
        return zone
    }
}
