/// Formats milliseconds since 1970 as ISO-8601 UTC text (`2021-12-04T08:18:12.474Z`) without
/// Foundation, for the informational `date` attribute beside every timestamp.
enum ISO8601 {
    /// 24 bytes on the stack for one date.
    typealias Text = (UInt64, UInt64, UInt64)

    static let minimum: Int64 = -62_135_596_800_000 // 0001-01-01T00:00:00.000Z
    static let maximum: Int64 = 253_402_300_799_999 // 9999-12-31T23:59:59.999Z

    /// Writes the date for `milliseconds` into `text` and returns its length (24), or 0 when the
    /// year falls outside 0001–9999 (then no `date` attribute is written).
    @inline(__always)
    static func format(milliseconds: Int64, into text: inout Text) -> Int {
        withUnsafeMutableBytes(of: &text) { format(milliseconds: milliseconds, into: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Writes the date into `out` (at least 24 bytes) and returns the length, or 0 outside 0001–9999.
    static func format(milliseconds: Int64, into out: UnsafeMutablePointer<UInt8>) -> Int {
        guard milliseconds >= minimum && milliseconds <= maximum else { return 0 }
        var days = milliseconds / 86_400_000
        var msOfDay = milliseconds % 86_400_000
        if msOfDay < 0 {
            msOfDay += 86_400_000
            days -= 1
        }
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        var year = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        if month <= 2 { year += 1 }
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

    /// The date as a String (tests, docs).
    static func string(milliseconds: Int64) -> String? {
        var text = Text(0, 0, 0)
        let n = format(milliseconds: milliseconds, into: &text)
        return n == 0 ? nil : withUnsafeBytes(of: &text) { String(decoding: $0.prefix(n), as: UTF8.self) }
    }
}
