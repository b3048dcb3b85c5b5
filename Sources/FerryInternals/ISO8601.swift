/// ISO 8601 dates in UTC without Foundation: the proleptic Gregorian calendar by Howard Hinnant's
/// days-from-civil algorithms, and the three ways Ferry writes and reads dates.
///
/// - ``format(milliseconds:into:)-(_,inout Text)``: `2021-12-04T08:18:12.474Z` into 24 bytes on the
///   stack, for years 0001–9999 only (the XML writer's `date` attributes, a hot path).
/// - ``format(milliseconds:)`` and ``parse(_:)``: the same text for any year (years 0–999
///   zero-padded to four digits), and back for years 0000–9999 (archive manifests, `ferry inspect`).
/// - ``seconds(parsing:)``: a lenient reading of dates and times with zones (predicate arguments).
package enum ISO8601 {
    /// 24 bytes on the stack for one date.
    package typealias Text = (UInt64, UInt64, UInt64)

    /// 0001-01-01T00:00:00.000Z, the first date ``format(milliseconds:into:)-(_,UnsafeMutablePointer<UInt8>)`` writes.
    package static let minimum: Int64 = -62_135_596_800_000
    /// 9999-12-31T23:59:59.999Z, the last date ``format(milliseconds:into:)-(_,UnsafeMutablePointer<UInt8>)`` writes.
    package static let maximum: Int64 = 253_402_300_799_999

    // MARK: Calendar math

    /// Days since 1970-01-01 and the millisecond of that day (floor division: the millisecond is
    /// never negative).
    @inlinable @inline(__always)
    package static func split(milliseconds: Int64) -> (days: Int64, millisecondOfDay: Int64) {
        let (days, dayMs) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        return dayMs < 0 ? (days - 1, dayMs + 86_400_000) : (days, dayMs)
    }

    /// The proleptic Gregorian date `z0` days after 1970-01-01 (Hinnant's `civil_from_days`).
    @inlinable @inline(__always)
    package static func civil(fromDays z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// The days of `month` (1–12) in `year` of the proleptic Gregorian calendar.
    package static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`).
    @inlinable
    package static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    // MARK: Fixed width, years 0001–9999

    /// Writes the date for `milliseconds` into `text` and returns its length (24), or 0 when the
    /// year falls outside 0001–9999.
    @inlinable @inline(__always)
    package static func format(milliseconds: Int64, into text: inout Text) -> Int {
        withUnsafeMutableBytes(of: &text) { format(milliseconds: milliseconds, into: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Writes the date into `out` (at least 24 bytes) and returns the length, or 0 outside 0001–9999.
    @inlinable
    package static func format(milliseconds: Int64, into out: UnsafeMutablePointer<UInt8>) -> Int {
        guard milliseconds >= minimum && milliseconds <= maximum else { return 0 }
        let (days, msOfDay) = split(milliseconds: milliseconds)
        let (year, month, day) = civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let millisecond = msOfDay % 1000
        let zero = UInt8(ascii: "0")
        out[0] = zero + UInt8(truncatingIfNeeded: year / 1000)
        out[1] = zero + UInt8(truncatingIfNeeded: year / 100 % 10)
        out[2] = zero + UInt8(truncatingIfNeeded: year / 10 % 10)
        out[3] = zero + UInt8(truncatingIfNeeded: year % 10)
        out[4] = UInt8(ascii: "-")
        out[5] = zero + UInt8(truncatingIfNeeded: month / 10)
        out[6] = zero + UInt8(truncatingIfNeeded: month % 10)
        out[7] = UInt8(ascii: "-")
        out[8] = zero + UInt8(truncatingIfNeeded: day / 10)
        out[9] = zero + UInt8(truncatingIfNeeded: day % 10)
        out[10] = UInt8(ascii: "T")
        out[11] = zero + UInt8(truncatingIfNeeded: hour / 10)
        out[12] = zero + UInt8(truncatingIfNeeded: hour % 10)
        out[13] = UInt8(ascii: ":")
        out[14] = zero + UInt8(truncatingIfNeeded: minute / 10)
        out[15] = zero + UInt8(truncatingIfNeeded: minute % 10)
        out[16] = UInt8(ascii: ":")
        out[17] = zero + UInt8(truncatingIfNeeded: second / 10)
        out[18] = zero + UInt8(truncatingIfNeeded: second % 10)
        out[19] = UInt8(ascii: ".")
        out[20] = zero + UInt8(truncatingIfNeeded: millisecond / 100)
        out[21] = zero + UInt8(truncatingIfNeeded: millisecond / 10 % 10)
        out[22] = zero + UInt8(truncatingIfNeeded: millisecond % 10)
        out[23] = UInt8(ascii: "Z")
        return 24
    }

    /// The fixed-width date as a String, or `nil` outside 0001–9999 (messages, tests).
    package static func string(milliseconds: Int64) -> String? {
        var text = Text(0, 0, 0)
        let n = format(milliseconds: milliseconds, into: &text)
        return n == 0 ? nil : withUnsafeBytes(of: &text) { String(decoding: $0.prefix(n), as: UTF8.self) }
    }

    // MARK: Any year

    /// `YYYY-MM-DDTHH:MM:SS.sssZ` for milliseconds since 1970 (proleptic Gregorian, UTC), any
    /// year: years 0–999 are zero-padded to four digits, others written as they are (`-1`,
    /// `12345`). Archive manifests and `ferry inspect` write dates with it.
    package static func format(milliseconds: Int64) -> String {
        let (day, ms) = split(milliseconds: milliseconds)
        let (year, month, dayOfMonth) = civil(fromDays: day)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let yearText = (0..<1000).contains(year) ? pad(year, 4) : String(year)
        return "\(yearText)-\(pad(month, 2))-\(pad(dayOfMonth, 2))T\(pad(ms / 3_600_000, 2)):"
            + "\(pad(ms / 60_000 % 60, 2)):\(pad(ms / 1000 % 60, 2)).\(pad(ms % 1000, 3))Z"
    }

    /// Parses what ``format(milliseconds:)`` writes (the fraction is optional).
    package static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes.last == UInt8(ascii: "Z"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var ms: Int64 = 0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count == 24, let fraction = number(20..<23) else { return nil }
            ms = fraction
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = self.days(fromCivil: year, month, day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + ms
    }

    // MARK: Milliseconds

    /// Milliseconds since 1970 for `seconds` since 1970 held in a `Double` (as Apple's `Date`
    /// holds it), snapped to the whole millisecond when within a microsecond of one.
    ///
    /// A `Double` of seconds cannot hold most whole milliseconds exactly (`.001` is a binary
    /// fraction), so `seconds * 1000` lands a hair off the millisecond the date was written as;
    /// snapping gives that millisecond back. A date further than a microsecond from a whole
    /// millisecond keeps its fraction. Infinite and NaN stay as they are.
    @inlinable
    package static func milliseconds(seconds: Double) -> Double {
        let ms = seconds * 1000
        let whole = ms.rounded()
        return (ms - whole).magnitude < 0.001 ? whole : ms
    }

    // MARK: Lenient

    /// Seconds since 1970 for `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` with `Z` or `±HH[:]MM`
    /// (no zone means UTC).
    package static func seconds(parsing text: String) -> Double? {
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
              (1...12).contains(month), (1...daysIn(month: Int64(month), year: Int64(year))).contains(Int64(day)) else { return nil }
        var seconds = Double(days(fromCivil: Int64(year), Int64(month), Int64(day))) * 86_400
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
        guard let oh = digits(2), oh < 24 else { return nil }
        _ = take(":")
        let om = digits(2) ?? 0
        guard i == b.count, om < 60 else { return nil }
        return seconds - sign * Double(oh * 3600 + om * 60)
    }
}
