/// A CloudKit record, faithful to the CloudKit Web Services record dictionary.
///
/// Every system field has a property; anything else in the dictionary (share-record members such as
/// `publicPermission`, keys added by newer servers) is kept in ``unknownKeys`` and written back, so a
/// round trip never drops data. Optional properties are `nil` exactly when the key was absent.
public struct Record: Hashable, Sendable {
    /// The record's name, unique in its zone.
    public var recordName: String
    /// The record type; tombstones in change feeds may lack it.
    public var recordType: String?
    /// The zone; absent in some requests and responses (then the default zone is meant).
    public var zoneID: ZoneID?
    /// The fields; `nil` when the dictionary had no `fields` key (tombstones).
    public var fields: RecordFields?
    /// `pluginFields`, kept as sent.
    public var pluginFields: JSONValue?
    /// The server's change tag for optimistic locking.
    public var recordChangeTag: String?
    /// Creation time, user and device.
    public var created: RecordStamp?
    /// Last modification time, user and device.
    public var modified: RecordStamp?
    /// `true` for tombstones in change feeds.
    public var deleted: Bool?
    /// The parent record (sharing hierarchy).
    public var parent: Reference?
    /// The share record, for shared roots.
    public var share: Reference?
    /// The short GUID of a shared record.
    public var shortGUID: String?
    /// Keys Ferry does not model, in document order.
    public var unknownKeys: JSONObject

    public init(recordName: String, recordType: String? = nil, zoneID: ZoneID? = nil,
                fields: RecordFields? = nil, pluginFields: JSONValue? = nil, recordChangeTag: String? = nil,
                created: RecordStamp? = nil, modified: RecordStamp? = nil, deleted: Bool? = nil,
                parent: Reference? = nil, share: Reference? = nil, shortGUID: String? = nil,
                unknownKeys: JSONObject = JSONObject()) {
        self.recordName = recordName
        self.recordType = recordType
        self.zoneID = zoneID
        self.fields = fields
        self.pluginFields = pluginFields
        self.recordChangeTag = recordChangeTag
        self.created = created
        self.modified = modified
        self.deleted = deleted
        self.parent = parent
        self.share = share
        self.shortGUID = shortGUID
        self.unknownKeys = unknownKeys
    }

    /// The record's identity (zone defaults to `_defaultZone`).
    public var id: RecordID { RecordID(recordName: recordName, zoneID: zoneID ?? .default) }

    /// The zone name, `_defaultZone` when the record gives none.
    public var zoneName: String { zoneID?.zoneName ?? ZoneID.defaultZoneName }

    /// Places a record that names no zone in `zone` (the zone of the `changes/zone` entry or the
    /// `records/changes` page it came in). A `"zoneID": null` it held is replaced, not kept
    /// beside the zone (a key written twice).
    public mutating func placeInZone(_ zone: ZoneID) {
        guard zoneID == nil else { return }
        zoneID = zone
        if unknownKeys["zoneID"] == .null { unknownKeys["zoneID"] = nil }
    }

    /// Whether this is a tombstone (`"deleted": true`).
    public var isDeleted: Bool { deleted == true }

    /// The value of the field `name`, if present.
    public subscript(field name: String) -> FieldValue? { fields?[name]?.value }

    /// The system field names a record dictionary can carry, in the order Ferry writes them.
    public static let systemKeys: [String] = [
        "recordName", "recordType", "zoneID", "recordChangeTag", "created", "modified", "deleted",
        "parent", "share", "shortGUID", "fields", "pluginFields",
    ]
}
