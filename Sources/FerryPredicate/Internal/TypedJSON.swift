import FerryInternals
import FerryRecords

/// The typed JSON conventions for values JSON lacks: `{"$date": …}`, `{"$reference": …}`,
/// `{"$location": [lat, lon]}`.
enum TypedJSON {
    enum Decoded {
        /// Seconds since 1970.
        case date(Double)
        case reference(String)
        case location(Double, Double)
        case invalid(String)
    }

    /// The typed value of a one-member object whose key starts with `$`, else `nil`.
    static func decode(_ object: JSONObject) -> Decoded? {
        guard object.count == 1, let member = object.first, member.key.hasPrefix("$") else { return nil }
        switch member.key {
        case "$date":
            switch member.value {
            case .number(let n):
                guard n.doubleValue.isFinite else { return .invalid("expected a finite number of seconds since 1970 in $date, found \(n.text)") }
                return .date(n.doubleValue)
            case .string(let text):
                if let seconds = ISO8601.seconds(parsing: text) { return .date(seconds) }
                return .invalid("expected an ISO 8601 date such as 2024-05-01T12:00:00Z in $date, found \"\(text)\"")
            default: return .invalid("expected a string or a number of seconds since 1970 in $date")
            }
        case "$reference":
            if case .string(let name) = member.value { return .reference(name) }
            if case .object(let o) = member.value, case .string(let name)? = o["recordName"] { return .reference(name) }
            return .invalid("expected a record name string in $reference")
        case "$location":
            if case .array(let items) = member.value, items.count == 2,
               case .number(let lat) = items[0], case .number(let lon) = items[1],
               lat.doubleValue.isFinite, lon.doubleValue.isFinite {
                return .location(lat.doubleValue, lon.doubleValue)
            }
            return .invalid("expected [latitude, longitude] (finite numbers) in $location")
        default:
            return nil
        }
    }
}
