/// A CKWS response document with a `zones` array.
///
/// The shapes it covers (see `Docs/RecordJSON.md`):
/// - `changes/zone`: `{"zones": [{"zoneID", "syncToken", "records": […], "moreComing"} |
///   {"zoneID", "reason", "serverErrorCode"}]}` — the only one that carries records;
/// - `changes/database`: `{"zones": [{"zoneID", "deleted"?, "purged"?}], "syncToken", "moreComing"}`;
/// - legacy `zones/changes`: `{"zones": […], "metaSyncToken", "moreComing"}`;
/// - `zones/list`, `zones/lookup`, `zones/modify`: `{"zones": [{"zoneID", "syncToken"?, "atomic"?} | error]}`.
public struct ZonesResponse: Sendable {
    /// One entry of `zones`, with where it is in the document.
    public struct Entry: Sendable {
        /// The zone; `nil` only for an entry that names none (an error entry may not).
        public var zoneID: ZoneID?
        /// The zone's change token at the end of this page (`changes/zone`, `zones/list`).
        public var syncToken: String?
        /// Whether the server has more changes for the zone (`changes/zone`).
        public var moreComing: Bool?
        /// The changed records of the zone, tombstones included (`changes/zone` only).
        public var records: [RecordsResponse.Entry]?
        /// `deleted: true`: the zone was deleted (`changes/database`, `zones/changes`, `zones/modify`).
        public var isDeleted: Bool
        /// `purged: true`: the zone was purged (`changes/database`).
        public var isPurged: Bool
        /// A per-zone error (`{"zoneID", "reason", "serverErrorCode"}`).
        public var serverError: RecordServerError?
        /// The other members of the entry (`atomic`, capabilities, …), kept as sent.
        public var unknownKeys: JSONObject
        /// Byte range of the entry in the document.
        public var byteRange: Range<Int>
    }

    /// The entries of `zones`, in order.
    public var entries: [Entry]
    /// The database's change token (`changes/database`).
    public var syncToken: String?
    /// The database's change token of the legacy `zones/changes`.
    public var metaSyncToken: String?
    /// `moreComing` of a database change page.
    public var moreComing: Bool?
    /// The other members of the response.
    public var unknownKeys: JSONObject

    /// Whether any entry carries a `records` array (a `changes/zone` response).
    public var carriesRecords: Bool { entries.contains { $0.records != nil } }

    /// The number of record entries (records, tombstones, errors) in all zones.
    public var recordEntryCount: Int { entries.reduce(0) { $0 + ($1.records?.count ?? 0) } }

    /// What kind of response this is, as far as its shape tells: `changes/zone`,
    /// `changes/database`, `zones/changes` or `zones/list` (which `zones/lookup` and
    /// `zones/modify` answers look like too).
    public var shape: String {
        ResponseWalker.zonesShape(carriesRecords: carriesRecords, hasMetaSyncToken: metaSyncToken != nil,
                                  hasSyncToken: syncToken != nil).rawValue
    }
}
