/// A `LOCATION` field value: all eight members of CloudKit's location dictionary.
///
/// Latitude and longitude are required; the others are kept when present.
public struct Location: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var altitude: Double?
    public var speed: Double?
    public var course: Double?
    /// Milliseconds since 1970.
    public var timestamp: Int64?
    /// Members Ferry does not know, kept in order and written back.
    public var unknownKeys: JSONObject

    public init(latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil,
                verticalAccuracy: Double? = nil, altitude: Double? = nil, speed: Double? = nil,
                course: Double? = nil, timestamp: Int64? = nil, unknownKeys: JSONObject = JSONObject()) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
        self.unknownKeys = unknownKeys
    }
}
