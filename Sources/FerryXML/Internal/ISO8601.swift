/// Formats milliseconds since 1970 as ISO-8601 UTC text (`2021-12-04T08:18:12.474Z`) without
/// Foundation, for the informational `date` attribute beside every timestamp.
enum ISO8601 {
    /// Writes the date for `milliseconds` into `out` (at least 24 bytes) and returns the length,
    /// or 0 when the year falls outside 0001–9999 (then no `date` attribute is written).
    static func format(milliseconds: Int64, into out: UnsafeMutablePointer<UInt8>) -> Int {
        // ±(9999 years) in ms fits easily; reject anything outside 0001-01-01 ... 9999-12-31.
        let minMs: Int64 = -62_135_596_800_000 // 0001-01-01T00:00:00Z
        let maxMs: Int64 = 253_402_300_799_999 // 9999-12-31T23:59:59.999Z
        guard milliseconds >= minMs && milliseconds <= maxMs else { return 0 }
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
        func put(_ value: Int64, _ digits: Int, at offset: Int) {
            var v = value
            for i in stride(from: digits - 1, through: 0, by: -1) {
                out[offset + i] = UInt8(truncatingIfNeeded: v % 10) + 48
                v /= 10
            }
        }
        put(year, 4, at: 0)
        out[4] = UInt8(ascii: "-")
        put(month, 2, at: 5)
        out[7] = UInt8(ascii: "-")
        put(day, 2, at: 8)
        out[10] = UInt8(ascii: "T")
        put(msOfDay / 3_600_000, 2, at: 11)
        out[13] = UInt8(ascii: ":")
        put(msOfDay / 60_000 % 60, 2, at: 14)
        out[16] = UInt8(ascii: ":")
        put(msOfDay / 1000 % 60, 2, at: 17)
        out[19] = UInt8(ascii: ".")
        put(msOfDay % 1000, 3, at: 20)
        out[23] = UInt8(ascii: "Z")
        return 24
    }

    /// The date as a String (tests, docs).
    static func string(milliseconds: Int64) -> String? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            let n = format(milliseconds: milliseconds, into: buffer.baseAddress!)
            return n == 0 ? nil : String(decoding: UnsafeBufferPointer(start: buffer.baseAddress!, count: n), as: UTF8.self)
        }
    }
}
