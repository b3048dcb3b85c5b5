/// A record zone's identity: its name, its owner and, in responses, its type.
///
/// JSON: `{"zoneName": "Chats", "ownerRecordName": "_4ab8…", "zoneType": "REGULAR_CUSTOM_ZONE"}`.
public struct ZoneID: Hashable, Sendable {
    /// The name of the default zone, the only zone of the public database.
    public static let defaultZoneName = "_defaultZone"

    /// The zone name; `_defaultZone` for the default zone.
    public var zoneName: String
    /// The owner's user record name, when given.
    public var ownerRecordName: String?
    /// `DEFAULT_ZONE`, `REGULAR_CUSTOM_ZONE`, … as the server sent it (observed in responses).
    public var zoneType: String?
    /// Members Ferry does not know, kept in order and written back.
    public var unknownKeys: JSONObject

    /// Creates a zone ID.
    public init(zoneName: String = ZoneID.defaultZoneName, ownerRecordName: String? = nil,
                zoneType: String? = nil, unknownKeys: JSONObject = JSONObject()) {
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
        self.zoneType = zoneType
        self.unknownKeys = unknownKeys
    }

    /// The default zone of the current user.
    public static let `default` = ZoneID()

    /// Whether this is the default zone.
    public var isDefaultZone: Bool { zoneName == ZoneID.defaultZoneName }
}

/// A record's identity: the zone it lives in and its name, unique in that zone.
public struct RecordID: Hashable, Sendable {
    public var recordName: String
    public var zoneID: ZoneID
    public init(recordName: String, zoneID: ZoneID = .default) {
        self.recordName = recordName
        self.zoneID = zoneID
    }
}
