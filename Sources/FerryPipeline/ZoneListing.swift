import FerryRecords

/// A CKWS response that lists zones and holds no records — `zones/list`, `zones/lookup`,
/// `zones/modify`, `changes/database`, legacy `zones/changes` — read where records were
/// expected: nothing to convert, but worth telling (`ferry inspect` describes its zones).
public struct ZoneListing: Sendable {
    /// The input it was read from.
    public var source: String
    /// The 1-based line it starts on.
    public var line: Int
    /// The response, its zones with their tokens and flags.
    public var response: ZonesResponse

    public init(source: String, line: Int, response: ZonesResponse) {
        self.source = source
        self.line = line
        self.response = response
    }

    /// `zones/list`, `changes/database`, … as the response's shape tells.
    public var shape: String { response.shape }
}
