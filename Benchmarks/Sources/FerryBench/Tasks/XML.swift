#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// XML on the 1M-record file against python lxml, interleaved run by run
/// (``Bench/interleave(_:warmup:_:)``) so that a busy machine slows both alike:
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

    Bench.interleave("xml-write", [
        .init(tool: "ferry convert → .xml", command: [Bench.ferry, "convert", input, ferryXML, "--quiet"], bytes: size, units: 1_000_000),
        .init(tool: "python lxml xmlfile", command: ["python3", Bench.shared + "/peers/to_xml_lxml.py", input, lxmlXML],
              bytes: size, units: 1_000_000),
    ])
    let ferryXMLSize = fileSize(ferryXML)
    let lxmlXMLSize = fileSize(lxmlXML)
    print("  XML sizes: Ferry \(ferryXMLSize / 1_000_000) MB, lxml \(lxmlXMLSize / 1_000_000) MB")
    Bench.warm(ferryXML, lxmlXML)

    Bench.interleave("xml-read", [
        .init(tool: "ferry inspect .xml", command: ["'\(Bench.ferry)' inspect '\(ferryXML)' --json > /dev/null"], shell: true,
              bytes: ferryXMLSize, units: 1_000_000),
        .init(tool: "ferry convert .xml → .ndjson", command: [Bench.ferry, "convert", ferryXML, out, "--quiet"],
              bytes: ferryXMLSize, units: 1_000_000),
        .init(tool: "python lxml iterparse", command: ["python3", Bench.shared + "/peers/parse_xml_lxml.py", lxmlXML],
              bytes: lxmlXMLSize, units: 1_000_000),
    ])
    if Bench.runs > 0 {
        Bench.measure("xml-validate", "ferry validate", bytes: ferryXMLSize, units: 1_000_000, [Bench.ferry, "validate", ferryXML, "--quiet"])
    }
    unlink(out)
    Bench.ratio("xml-write", "ferry convert → .xml", over: "python lxml xmlfile")
    Bench.ratio("xml-read", "ferry inspect .xml", over: "python lxml iterparse")
    Bench.ratio("xml-read", "ferry convert .xml → .ndjson", over: "python lxml iterparse")
}
