// ferry-micro: in-process measurements that no command isolates.
//
//   ferry-micro filter FILE    compiled-filter evaluations per second on decoded records
//   ferry-micro codec FILE     NDJSON decode / encode / release split, MB/s
// Medians of 5 passes; run on a quiet machine, compare only within one run.
import FerryIO
import FerryJSON
import FerryPredicate
import FerryRecords
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func text(_ value: Double, _ digits: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    return String((value * scale).rounded() / scale)
}

func loadRecords(_ path: String) throws -> [Record] {
    let reader = NDJSONReader(source: try InputFile(path: path))
    var records: [Record] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    print("usage: ferry-micro (filter|codec) FILE")
    exit(2)
}
let path = arguments[1]

/// Evaluations per second of the benchmark's 3-clause predicate (a function, not top-level code,
/// so records are locals that calls borrow instead of copying).
func measureFilter(_ path: String) throws {
    var records = try loadRecords(path)
    let predicate = #"recordType == "Message" AND count > 50 AND text CONTAINS[c] "hello""#
    let filter = try RecordFilter(parsing: predicate)
    // Two figures: "warm" evaluates each block of 1,000 records 50 times, as a streaming filter
    // sees a record it has just decoded (in cache); "cold" walks all records once per pass, so
    // most evaluations wait on memory.
    func pass(repeats: Int, block: Int) throws -> (rate: Double, hits: Int) {
        var hits = 0
        let start = now()
        // Move each record out of the array and back (bitwise, no retains): passing an array
        // element directly would copy it, retaining all its strings, and measure that instead.
        try records.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var blockStart = 0
            while blockStart < buffer.count {
                let blockEnd = min(blockStart + block, buffer.count)
                for _ in 0..<repeats {
                    for index in blockStart..<blockEnd {
                        let record = (base + index).move()
                        defer { (base + index).initialize(to: record) }
                        if try filter.matches(record) { hits += 1 }
                    }
                }
                blockStart = blockEnd
            }
        }
        return (Double(records.count * repeats) / (now() - start), hits / repeats)
    }
    var warm: [Double] = [], cold: [Double] = []
    var hits = 0
    for _ in 0..<5 {
        warm.append(try pass(repeats: 50, block: 1000).rate)
        let result = try pass(repeats: 1, block: records.count)
        cold.append(result.rate)
        hits = result.hits
    }
    let rates = warm
    print("filter: \(predicate)")
    print("  \(records.count) decoded records, \(hits) matches")
    print("  warm (records in cache): median \(text(median(rates) / 1e6, 2)) M evaluations/s "
          + "(passes: \(rates.map { text($0 / 1e6, 2) }.joined(separator: ", ")))")
    print("  cold (one pass over all): median \(text(median(cold) / 1e6, 2)) M evaluations/s "
          + "(passes: \(cold.map { text($0 / 1e6, 2) }.joined(separator: ", ")))")
}

/// Decode, encode and release speeds of the record codec, separately.
func measureCodec(_ path: String) throws {
    let bytes = try InputFile(path: path).readAll()
    var lines: [Range<Int>] = []
    var start = 0
    for i in bytes.indices where bytes[i] == 0x0A {
        lines.append(start..<i)
        start = i + 1
    }
    var decode: [Double] = [], encode: [Double] = [], release: [Double] = []
    var records: [Record] = []
    records.reserveCapacity(lines.count)
    for _ in 0..<5 {
        var t = now()
        try bytes.withUnsafeBytes { raw in
            for line in lines { records.append(try RecordJSON.decodeRecord(UnsafeRawBufferPointer(rebasing: raw[line]))) }
        }
        decode.append(now() - t)
        t = now()
        var out = JSONOutput(capacity: 1 << 20)
        for index in records.indices {
            RecordJSON.encode(records[index], into: &out)
            if out.count > 1 << 20 { out.removeAll() }
        }
        encode.append(now() - t)
        t = now()
        records.removeAll(keepingCapacity: true)
        release.append(now() - t)
    }
    let megabytes = Double(bytes.count) / 1e6
    print("codec: \(lines.count) records, \(text(megabytes)) MB")
    print("  decode \(text(megabytes / median(decode))) MB/s, encode \(text(megabytes / median(encode))) MB/s, "
          + "release \(text(megabytes / median(release))) MB/s, all \(text(megabytes / (median(decode) + median(encode) + median(release)))) MB/s")
}

switch arguments[0] {
case "filter": try measureFilter(path)
case "codec": try measureCodec(path)
default:
    print("unknown measurement \(arguments[0])")
    exit(2)
}
