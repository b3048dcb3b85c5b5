import FerryIO
import FerryRecords

/// Converts the shared benchmark's plain change events into Ferry's change-log format (used,
/// untimed, by the replay benchmark through the hidden `ferry bench-changes` command).
///
/// Input lines (`../shared/bench/gen_records.py --changes`): `{"token":N,"op":"upsert"|"modify"|
/// "delete","recordName","recordType","zoneID","timestamp","record":{…}?}`. Upserts and
/// modifications become `recordSaved` (the record copied byte for byte, compacted if needed),
/// deletions `recordDeleted`. Every `checkpointEvery` events, and at the end, each zone touched
/// since the last checkpoint gets a checkpoint whose token is `<zoneName>@<N>` (N the input's
/// latest token), so `until` and `since` have positions to name.
package enum BenchChangeConverter {
    /// Converts `source` onto `writer` (then finishes it); returns the number of input events.
    @discardableResult
    package static func convert(from source: ByteSource, to writer: ChangeLogWriter, checkpointEvery: Int = 1000) throws -> Int {
        let lines = LineReader(source: source, chunkSize: 1 << 20, maximumLineBytes: 64 << 20)
        var scanner = RecordScanner()
        var touched: [ZoneID] = []
        var touchedKeys: Set<ZoneKey> = []
        var count = 0
        var lastToken: Int64 = 0
        func checkpoint() throws {
            for zone in touched {
                try writer.write(.checkpoint(.init(zoneID: zone, syncToken: "\(zone.zoneName)@\(lastToken)", moreComing: false)))
            }
            touched.removeAll()
            touchedKeys.removeAll()
        }
        while let line = try lines.nextLine() {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            var s = JSONScanner(line)
            var op: String?
            var name: String?
            var type: String?
            var zone: ZoneID?
            var record: Range<Int>?
            var compact = true
            do throws(RecordFormatError) {
                try s.beginObject("a benchmark change event (an object)")
                var first = true
                while try s.nextMember(&first) {
                    let key = try s.readKey()
                    s.skipWhitespace()
                    if key.equals("op") {
                        op = try s.readString()
                    } else if key.equals("recordName") {
                        name = try s.readString()
                    } else if key.equals("recordType") {
                        type = try s.readString()
                    } else if key.equals("zoneID") {
                        zone = try scanner.readZone(&s, in: line)
                    } else if key.equals("token") {
                        lastToken = try s.readNumber().exactInteger ?? lastToken
                    } else if key.equals("record") {
                        let start = s.position
                        s.sawWhitespace = false
                        try s.skipValue(scratch: &scanner.scratch)
                        compact = !s.sawWhitespace
                        record = start..<s.position
                    } else {
                        try s.skipValue(scratch: &scanner.scratch)
                    }
                }
                try s.expectEnd()
            } catch {
                throw ChangeLogError.located(error, in: line, source: source.name, line: lines.lineNumber)
            }
            guard let op, let name else {
                throw ChangeLogError(.unknownDocument, "expected \"op\" and \"recordName\" in a benchmark change event, found neither",
                                     source: source.name, line: lines.lineNumber)
            }
            let zoneID = zone ?? .default
            if op == "delete" {
                try writer.write(.recordDeleted(RecordID(recordName: name, zoneID: zoneID), recordType: type))
            } else if let record {
                if compact {
                    try writer.writeSaved(recordJSON: UnsafeRawBufferPointer(rebasing: line[record]))
                } else {
                    try JSONCompaction.compacted(UnsafeRawBufferPointer(rebasing: line[record])).withUnsafeBytes { try writer.writeSaved(recordJSON: $0) }
                }
            } else {
                throw ChangeLogError(.unknownDocument, "expected \"record\" in a \(op) event, found none",
                                     source: source.name, line: lines.lineNumber)
            }
            if touchedKeys.insert(ZoneKey(zoneID)).inserted { touched.append(zoneID) }
            count += 1
            if count % checkpointEvery == 0 { try checkpoint() }
        }
        try checkpoint()
        try writer.finish()
        return count
    }
}
