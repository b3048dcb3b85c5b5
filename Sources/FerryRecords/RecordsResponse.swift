/// A CKWS response document: `{"records": […], "continuationMarker": …}` and the like.
public struct RecordsResponse: Sendable {
    /// One entry of `records`, with where it is in the document.
    public struct Entry: Sendable {
        public enum Content: Sendable {
            case record(Record)
            case error(RecordServerError)
            /// An entry that is JSON but not a valid record; the error says why.
            case invalid(RecordFormatError)
        }
        public var content: Content
        /// Byte range of the entry in the document (to copy it verbatim to a rejects file).
        public var byteRange: Range<Int>
    }

    /// The entries of `records`, in order.
    public var entries: [Entry]
    /// `continuationMarker` of a query page.
    public var continuationMarker: String?
    /// `syncToken` of a `records/changes` page.
    public var syncToken: String?
    /// `moreComing` of a change page.
    public var moreComing: Bool?
    /// `zoneID` of a `records/changes` page of one zone (its records that name no zone are in it).
    public var zoneID: ZoneID? = nil
    /// The other members of the response.
    public var unknownKeys: JSONObject
}
