import FerryRecords
import FerryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Reading DOUBLE values")
struct NumberParsingTests {
    /// The DOUBLE a record field with this literal decodes to.
    func decoded(_ literal: String) throws -> Double {
        let record = try RecordJSON.decodeRecord(#"{"recordName":"r","fields":{"d":{"value":\#(literal),"type":"DOUBLE"}}}"#)
        return try #require(record[field: "d"]?.doubleValue)
    }

    /// What the C library reads (correctly rounded).
    func reference(_ literal: String) -> Double { strtod(literal, nil) }

    @Test("Literals on both sides of the fast path read exactly as strtod reads them", arguments: [
        "0", "-0", "0.0", "-0.0", "1", "-1", "0.1", "0.2", "0.3", "1e22", "1e23", "1e-22", "1e-23", "9007199254740992",
        "9007199254740993", "9007199254740993.0", "0.6917871552952018", "0.69178715529520183", "123456789012345678",
        "1234567890123456789", "12345678901234567890", "4.9e-324", "5e-324", "2.2250738585072014e-308",
        "1.7976931348623157e308", "1E+2", "1e-0", "123.456e-7", "0.000000000000000000000000001", "100000000000000000000000",
        "3.141592653589793", "-2.718281828459045", "1e-400",
    ])
    func edges(literal: String) throws {
        #expect(try decoded(literal).bitPattern == reference(literal).bitPattern, "\(literal)")
    }

    /// strtod reads these as infinities, which JSON cannot write back (they became `null`).
    @Test("Literals beyond a double's range are rejected", arguments: ["1e400", "-1e400", "1.8e308"])
    func beyondRange(literal: String) {
        #expect(reference(literal).isInfinite)
        #expect(throws: RecordFormatError.self) { try decoded(literal) }
    }

    @Test("Generated literals read exactly as strtod reads them")
    func generated() throws {
        var random = SeededRandom(seed: 20261124)
        for _ in 0..<20_000 {
            // Shortest texts of random doubles, and random digit strings with a point and an exponent.
            let literal: String
            if Bool.random(using: &random) {
                var value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
                if !value.isFinite { value = 1.5 }
                literal = "\(value)"
            } else {
                let digits = (0..<Int.random(in: 1...20, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }
                var text = digits.joined()
                while text.count > 1 && text.hasPrefix("0") { text.removeFirst() }
                if Bool.random(using: &random) {
                    let point = Int.random(in: 0..<text.count, using: &random)
                    text.insert(".", at: text.index(text.startIndex, offsetBy: point))
                    if text.hasPrefix(".") { text = "0" + text }
                    if text.hasSuffix(".") { text += "0" }
                }
                if Bool.random(using: &random) { text += "e\(Int.random(in: -30...30, using: &random))" }
                literal = (Bool.random(using: &random) ? "-" : "") + text
            }
            let value = try decoded(literal)
            let expected = reference(literal)
            #expect(value.bitPattern == expected.bitPattern, "\(literal): \(value) vs strtod \(expected)")
            if value.bitPattern != expected.bitPattern { return }
        }
    }

    @Test("DOUBLEs are written as Swift's shortest round-trip text")
    func written() {
        var random = SeededRandom(seed: 7)
        var values: [Double] = [0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 1e-5, 1e16, 1e22, 1e23, .greatestFiniteMagnitude,
                                -.greatestFiniteMagnitude, .leastNormalMagnitude, 0.1, 1.0 / 3.0]
        for _ in 0..<20_000 {
            let value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
            if value.isFinite { values.append(value) }
        }
        for value in values {
            var out = JSONOutput()
            out.appendDouble(value)
            let text = String(decoding: out.bytes, as: UTF8.self)
            #expect(text == value.description)
            if text != value.description { return }
        }
    }
}

/// Integers are read eight digits at a time while eight digits follow, then one at a time.
@Suite("Reading INT64 values")
struct IntegerParsingTests {
    func decoded(_ literal: String) throws -> Int64? {
        let record = try RecordJSON.decodeRecord(#"{"recordName":"r","fields":{"i":{"value":\#(literal),"type":"INT64"},"t":{"value":\#(literal),"type":"TIMESTAMP"}}}"#)
        #expect(record[field: "i"]?.int64Value == record[field: "t"]?.timestampValue)
        return record[field: "i"]?.int64Value
    }

    @Test("Every length from 1 to 19 digits, with and without a sign, reads exactly")
    func everyLength() throws {
        var random = SeededRandom(seed: 8)
        for length in 1...19 {
            for _ in 0..<200 {
                var digits = String(Int.random(in: 1...9, using: &random))
                for _ in 1..<length { digits += String(Int.random(in: 0...9, using: &random)) }
                guard let expected = Int64(digits) else { continue } // 19 digits past Int64.max
                #expect(try decoded(digits) == expected, "\(digits)")
                #expect(try decoded("-" + digits) == -expected, "-\(digits)")
            }
        }
    }

    @Test("Extremes read exactly; one past them is rejected as out of range", arguments: [
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min), ("0", 0), ("-0", 0),
        ("1690000029207", 1_690_000_029_207), ("12345678", 12_345_678), ("123456789", 123_456_789),
        ("99999999", 99_999_999), ("1000000000000000000", 1_000_000_000_000_000_000),
    ])
    func extremes(literal: String, expected: Int64) throws {
        #expect(try decoded(literal) == expected)
    }

    @Test("Integers are written as their decimal text, at every length and on both sides of each power of ten")
    func written() {
        var values: [Int64] = [0, 1, -1, 9, 10, 11, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0...18 {
            values += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
            if power <= Int64.max / 10 { power *= 10 }
        }
        var random = SeededRandom(seed: 9)
        for _ in 0..<20_000 {
            let value = Int64.random(in: .min ... .max, using: &random)
            values.append(value >> Int64.random(in: 0...63, using: &random))
        }
        for value in values {
            var out = JSONOutput(capacity: 8)
            out.appendInteger(value)
            let text = String(decoding: out.bytes, as: UTF8.self)
            #expect(text == String(value))
            if text != String(value) { return }
        }
    }

    @Test("Numbers that end the input, at every length, keep their text")
    func atTheEnd() throws {
        for length in 1...24 {
            // 1234567890123…: no leading zero.
            let digits = String("123456789012345678901234567890".prefix(length))
            #expect(try JSONValue(parsing: digits) == .number(JSONNumber(text: digits)), "\(digits)")
            #expect(try JSONValue(parsing: "-" + digits) == .number(JSONNumber(text: "-" + digits)))
        }
    }

    @Test("Past 64 bits, fractions and exponents are not integers", arguments: [
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "123456789012345678901234",
        "12345678.5", "123456789e2", "1234567812345678.0",
    ])
    func notIntegers(literal: String) {
        #expect(throws: RecordFormatError.self) { try decoded(literal) }
    }
}
