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
            case .number(let n): return .date(n.doubleValue)
            case .string(let text):
                if let seconds = parseISO8601(text) { return .date(seconds) }
                return .invalid("expected an ISO 8601 date such as 2024-05-01T12:00:00Z in $date, found \"\(text)\"")
            default: return .invalid("expected a string or a number of seconds since 1970 in $date")
            }
        case "$reference":
            if case .string(let name) = member.value { return .reference(name) }
            if case .object(let o) = member.value, case .string(let name)? = o["recordName"] { return .reference(name) }
            return .invalid("expected a record name string in $reference")
        case "$location":
            if case .array(let items) = member.value, items.count == 2,
               case .number(let lat) = items[0], case .number(let lon) = items[1] {
                return .location(lat.doubleValue, lon.doubleValue)
            }
            return .invalid("expected [latitude, longitude] in $location")
        default:
            return nil
        }
    }

    /// Seconds since 1970 for `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` with `Z` or `±HH[:]MM`
    /// (no zone means UTC).
    static func parseISO8601(_ text: String) -> Double? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            i += count
            return value
        }
        func take(_ c: Character) -> Bool {
            if i < b.count, b[i] == c.asciiValue { i += 1; return true }
            return false
        }
        guard let year = digits(4), take("-"), let month = digits(2), take("-"), let day = digits(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var seconds = Double(daysFromCivil(year: year, month: month, day: day)) * 86_400
        if i == b.count { return seconds }
        guard take("T") || take("t") || take(" "), let hour = digits(2), take(":"), let minute = digits(2),
              hour < 24, minute < 60 else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        if take(":") {
            guard let second = digits(2), second <= 60 else { return nil }
            seconds += Double(second)
            if take(".") || take(",") {
                var scale = 0.1
                var any = false
                while i < b.count, b[i] >= 48, b[i] <= 57 {
                    seconds += Double(b[i] - 48) * scale
                    scale /= 10
                    i += 1
                    any = true
                }
                if !any { return nil }
            }
        }
        if i == b.count || take("Z") || take("z") { return i == b.count ? seconds : nil }
        let sign: Double
        if take("+") { sign = 1 } else if take("-") { sign = -1 } else { return nil }
        guard let oh = digits(2) else { return nil }
        _ = take(":")
        let om = digits(2) ?? 0
        guard i == b.count else { return nil }
        return seconds - sign * Double(oh * 3600 + om * 60)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
