import FerryInternals
import FerryRecords

/// Counts and timing of one run of a pipeline, counted in one place (``RecordPipeline``) and
/// printed as the summary line or as JSON.
public struct RunStatistics: Sendable, Equatable {
    /// Records read from every input (those a prefilter dropped included).
    public var recordsIn = 0
    /// Records written.
    public var recordsOut = 0
    /// Inputs rejected (skipped under `--on-error skip`).
    public var rejected = 0
    /// Bytes read from the inputs (decompressed).
    public var bytesIn = 0
    /// Bytes written (before compression).
    public var bytesOut = 0
    /// Records the predicate could not be evaluated on, which did not match (among those
    /// evaluated: a record ruled out before evaluation is not counted).
    public var transformFailures = 0
    /// Responses read that list zones and hold no records.
    public var zoneListings = 0
    /// Wall-clock seconds.
    public var seconds = 0.0

    public init() {}

    /// Input megabytes per second.
    public var megabytesPerSecond: Double { seconds > 0 ? Double(bytesIn) / 1e6 / seconds : 0 }

    /// `N records in, M out, R rejected, S s, X MB/s`.
    public var line: String {
        "\(Plural.count(recordsIn, "record")) in, \(recordsOut) out, \(rejected) rejected, \(format(seconds, 2)) s, \(format(megabytesPerSecond, 1)) MB/s"
    }

    /// The same as one JSON object.
    public var json: String {
        let object: JSONObject = [
            "recordsIn": .number(JSONNumber(Int64(recordsIn))),
            "recordsOut": .number(JSONNumber(Int64(recordsOut))),
            "rejected": .number(JSONNumber(Int64(rejected))),
            "unevaluated": .number(JSONNumber(Int64(transformFailures))),
            "bytesIn": .number(JSONNumber(Int64(bytesIn))),
            "bytesOut": .number(JSONNumber(Int64(bytesOut))),
            "seconds": .number(JSONNumber(text: format(seconds, 3))),
            "megabytesPerSecond": .number(JSONNumber(text: format(megabytesPerSecond, 1))),
        ]
        var out = JSONOutput()
        out.appendValue(.object(object))
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

/// Formats a non-negative number with `digits` decimals (no Foundation).
package func format(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (value * scale).rounded()
    let whole = Int64(scaled / scale)
    let fraction = Int64(scaled) - whole * Int64(scale)
    if digits == 0 { return String(whole) }
    var fractionText = String(fraction)
    while fractionText.count < digits { fractionText = "0" + fractionText }
    return "\(whole).\(fractionText)"
}
