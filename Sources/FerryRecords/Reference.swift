/// A reference to another record: a field of type `REFERENCE`, a record's `parent` or `share`.
///
/// JSON: `{"recordName": "…", "zoneID": {…}?, "action": "NONE" | "DELETE_SELF" | "VALIDATE"}`.
public struct Reference: Hashable, Sendable {
    /// What happens to the referring record when the target is deleted.
    public struct Action: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// No action.
        public static let none = Action(rawValue: "NONE")
        /// Delete the referring record when the target is deleted (cascade).
        public static let deleteSelf = Action(rawValue: "DELETE_SELF")
        /// The server checks the target exists.
        public static let validate = Action(rawValue: "VALIDATE")
        public var description: String { rawValue }
    }

    /// The target's record name.
    public var recordName: String
    /// The target's zone, when given.
    public var zoneID: ZoneID?
    /// The action, when given; unknown actions are kept as they were.
    public var action: Action?
    /// Members Ferry does not know, kept in order and written back.
    public var unknownKeys: JSONObject

    public init(recordName: String, zoneID: ZoneID? = nil, action: Action? = nil,
                unknownKeys: JSONObject = JSONObject()) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.action = action
        self.unknownKeys = unknownKeys
    }
}
