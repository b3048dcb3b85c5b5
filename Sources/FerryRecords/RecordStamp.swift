/// Who changed a record and when: the `created` and `modified` system fields.
///
/// JSON: `{"timestamp": 1505270195464, "userRecordName": "_6936…", "deviceID": "4A85…"}`.
public struct RecordStamp: Hashable, Sendable {
    /// Milliseconds since 1970-01-01 UTC.
    public var timestamp: Int64?
    public var userRecordName: String?
    public var deviceID: String?
    /// Members Ferry does not know, kept in order and written back.
    public var unknownKeys: JSONObject

    public init(timestamp: Int64? = nil, userRecordName: String? = nil, deviceID: String? = nil,
                unknownKeys: JSONObject = JSONObject()) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
        self.deviceID = deviceID
        self.unknownKeys = unknownKeys
    }
}
