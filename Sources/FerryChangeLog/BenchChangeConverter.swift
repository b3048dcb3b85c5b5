import FerryIO
import FerryRecords

/// Converts the shared benchmark's plain change events into Ferry's change-log format.
///
/// Input lines: `{"token":N,"op":"upsert"|"modify"|"delete","recordName","recordType","zoneID",
/// "timestamp","record":{…}?}`. Upserts and modifications become `recordSaved` (the record copied
/// byte for byte), deletions `recordDeleted`. Every `checkpointEvery` events, and at the end, each
/// zone touched since the last checkpoint gets a checkpoint whose token is `<zoneName>@<N>` (N the
/// input's last token), so `until`/`since` have positions to name.
public enum BenchChangeConverter {
    /// Converts `source` onto `writer` (then finishes it); returns the number of input events.
    @discardableResult
    public static func convert(from source: ByteSource, to writer: ChangeLogWriter, checkpointEvery: Int = 1000) throws -> Int {
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
            var c = JSONCursor(line)
            var op: String?
            var name: String?
            var type: String?
            var zone: ZoneID?
            var record: Range<Int>?
            do throws(RecordFormatError) {
                try c.beginObject("a benchmark change event")
                var first = true
                while try c.nextMember(&first) {
                    let key = try c.readKey()
                    c.skipWhitespace()
                    if c.equals(key, "op") {
                        op = try c.readString()
                    } else if c.equals(key, "recordName") {
                        name = try c.readString()
                    } else if c.equals(key, "recordType") {
                        type = try c.readString()
                    } else if c.equals(key, "zoneID") {
                        zone = try scanner.readZone(&c)
                    } else if c.equals(key, "token") {
                        lastToken = try c.scanNumber() ?? lastToken
                    } else if c.equals(key, "record") {
                        let start = c.position
                        try c.skipValue()
                        record = start..<c.position
                    } else {
                        try c.skipValue()
                    }
                }
                try c.expectEnd()
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
                let bytes = c.sawWhitespace ? c.compactCopy(record) : c.copy(record)
                try bytes.withUnsafeBytes { try writer.writeSaved(recordJSON: $0) }
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
