import FerryRecords

/// One event of a change log: what happened to a zone or a record, or where a fetch stopped.
///
/// A history is an ordered stream of these. CloudKit change responses are read as the same events
/// (see `Docs/ChangeLogFormat.md`): each record of a `records/changes` page becomes a save or, for
/// a tombstone, a delete, and the page's `syncToken` becomes a ``Checkpoint``.
public enum ChangeEvent: Hashable, Sendable {
    /// The zone exists (created or changed).
    case zoneSaved(ZoneID)
    /// The zone was deleted, with all its records.
    case zoneDeleted(ZoneID)
    /// The zone was purged (deleted and its change history dropped), with all its records.
    case zonePurged(ZoneID)
    /// The record was created or replaced; it carries the full record dictionary.
    case recordSaved(Record)
    /// The record was deleted; its type is given when the history knows it.
    case recordDeleted(RecordID, recordType: String?)
    /// A fetch of a zone (or of the database's zone list) ended here.
    case checkpoint(Checkpoint)

    /// Where a fetch stopped: the change token of a zone, or of the database when `zoneID` is `nil`.
    public struct Checkpoint: Hashable, Sendable {
        /// The zone whose changes the token covers; `nil` for a database-wide token
        /// (`changes/database` `syncToken`, legacy `zones/changes` `metaSyncToken`).
        public var zoneID: ZoneID?
        /// The opaque change token. Tokens are ordered only by their position in the history.
        public var syncToken: String
        /// Whether the server had more changes after this batch.
        public var moreComing: Bool

        /// Creates a checkpoint.
        public init(zoneID: ZoneID?, syncToken: String, moreComing: Bool = false) {
            self.zoneID = zoneID
            self.syncToken = syncToken
            self.moreComing = moreComing
        }
    }
}
