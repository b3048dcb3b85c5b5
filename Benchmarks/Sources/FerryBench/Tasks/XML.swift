#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// XML on the 1M-record file against python lxml, interleaved run by run (Ferry, lxml, Ferry, …)
/// so that a busy machine slows both alike:
///
/// - write: `ferry convert records.ndjson records.xml` vs `to_xml_lxml.py` (`etree.xmlfile`);
/// - read: `ferry inspect records.xml` (every record decoded into the model and summarized, no
///   output file: the same shape of work as the peer) and `ferry convert records.xml out.ndjson`
///   (decoded and written as 724 MB of NDJSON: more work than the peer) vs `parse_xml_lxml.py`
///   (`iterparse`, every value touched) on lxml's own XML;
/// - validate: `ferry validate records.xml` (streaming XSD validation, for reference).
///
/// Goals: write ≥ 3× lxml, read ≥ 2× lxml. Peak RSS is printed for every tool.
@MainActor func xmlTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let ferryXML = Bench.data + "/records.xml"
    let lxmlXML = Bench.data + "/records-lxml.xml"
    let out = Bench.data + "/out.ndjson"
    print("\n== XML, \(size / 1_000_000) MB NDJSON, 1M records, runs interleaved")
    Bench.warm(input)

    let write: [(String, [String])] = [
        ("ferry convert → .xml", [Bench.ferry, "convert", input, ferryXML, "--quiet"]),
        ("python lxml xmlfile", ["python3", Bench.shared + "/peers/to_xml_lxml.py", input, lxmlXML]),
    ]
    interleaved("xml-write", write, bytes: size, units: 1_000_000)
    let ferryXMLSize = fileSize(ferryXML)
    let lxmlXMLSize = fileSize(lxmlXML)
    print("  XML sizes: Ferry \(ferryXMLSize / 1_000_000) MB, lxml \(lxmlXMLSize / 1_000_000) MB")
    Bench.warm(ferryXML, lxmlXML)

    let read: [(String, [String], Int)] = [
        ("ferry inspect .xml", ["/bin/sh", "-c", "'\(Bench.ferry)' inspect '\(ferryXML)' --json > /dev/null"], ferryXMLSize),
        ("ferry convert .xml → .ndjson", [Bench.ferry, "convert", ferryXML, out, "--quiet"], ferryXMLSize),
        ("python lxml iterparse", ["python3", Bench.shared + "/peers/parse_xml_lxml.py", lxmlXML], lxmlXMLSize),
    ]
    interleaved("xml-read", read.map { ($0.0, $0.1) }, bytes: ferryXMLSize, units: 1_000_000, sizes: read.map(\.2))
    if Bench.runs > 0 {
        Bench.measure("xml-validate", "ferry validate", bytes: ferryXMLSize, units: 1_000_000, [Bench.ferry, "validate", ferryXML, "--quiet"])
    }
    unlink(out)
    Bench.ratio("xml-write", "ferry convert → .xml", over: "python lxml xmlfile")
    Bench.ratio("xml-read", "ferry inspect .xml", over: "python lxml iterparse")
    Bench.ratio("xml-read", "ferry convert .xml → .ndjson", over: "python lxml iterparse")
}

/// Runs each command once per round, RUNS rounds, and records each tool's median like
/// `Bench.measure`. A failed run drops that tool from the results (and says so).
@MainActor private func interleaved(_ task: String, _ commands: [(tool: String, command: [String])], bytes: Int,
                                    units: Int, sizes: [Int]? = nil) {
    var samples = Array(repeating: [Runner.Result](), count: commands.count)
    var failed = Set<Int>()
    for _ in 0..<Bench.runs {
        for (index, entry) in commands.enumerated() where !failed.contains(index) {
            let result = Runner.run(entry.command)
            if result.status != 0 {
                print("  \(entry.tool): exit \(result.status) — not counted")
                failed.insert(index)
            } else {
                samples[index].append(result)
            }
        }
    }
    for (index, entry) in commands.enumerated() where !failed.contains(index) && !samples[index].isEmpty {
        let m = Measurement(task: task, tool: entry.tool, bytes: sizes?[index] ?? bytes, units: units, samples: samples[index])
        Bench.results.append(m)
        print(m.line)
    }
}
