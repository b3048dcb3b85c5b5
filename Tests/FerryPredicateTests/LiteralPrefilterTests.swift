@testable import FerryPredicate
import FerryRecords
import Testing

@Suite("Literal prefilter")
struct LiteralPrefilterTests {
    /// The JSON line of a record with `text` and `title` fields.
    private static func line(_ record: Record) -> [UInt8] {
        var out = JSONOutput()
        RecordJSON.encode(record, into: &out)
        return Array(out.bytes)
    }

    private static func record(type: String, text: String, title: String) -> Record {
        Record(recordName: "r", recordType: type, fields: ["text": RecordField(.string(text)), "title": RecordField(.string(title))])
    }

    @Test("A line it refuses never holds a matching record; it refuses the lines without its literals",
          arguments: [
            #"text CONTAINS[c] "strasse""#, #"text CONTAINS[c] "file" AND recordType == "Note""#,
            #"title BEGINSWITH "Re" AND text ENDSWITH[c] "kelvin""#, #"text == "hello" AND title CONTAINS[c] "SS""#,
            #"recordType == "Note" AND text CONTAINS "a" AND title CONTAINS[c] "fi""#,
          ])
    func necessaryCondition(predicate: String) throws {
        let filter = try RecordFilter(parsing: predicate)
        let literals = try #require(filter.literals)
        let texts = ["hello", "Hello", "STRASSE", "stra\u{DF}e", "Straße am Meer", "\u{FB01}le", "FILE", "profile",
                     "\u{212A}elvin", "KELVIN", "kelvin", "a", "nothing here", "Re: x", "re: x", "miss", "MI\u{DF}"]
        var refused = 0
        for type in ["Note", "Other"] {
            for text in texts {
                for title in texts {
                    let record = Self.record(type: type, text: text, title: title)
                    let line = Self.line(record)
                    let passes = line.withUnsafeBytes { literals.mightMatch($0) }
                    if try filter.matches(record) {
                        #expect(passes, "refused a matching record: \(type) \(text) \(title)")
                    }
                    if !passes { refused += 1 }
                }
            }
        }
        #expect(refused > 0, "the prefilter refused nothing")
    }

    @Test("Case-insensitive literals let through lines with characters that fold into them")
    func folding() throws {
        let filter = try RecordFilter(parsing: #"text CONTAINS[c] "strasse""#)
        let literals = try #require(filter.literals)
        for (text, passes) in [("STRA\u{DF}E", true), ("Strasse", true), ("strase", false)] {
            let line = Self.line(Self.record(type: "Note", text: text, title: ""))
            #expect(line.withUnsafeBytes { literals.mightMatch($0) } == passes, "\(text)")
        }
    }

    @Test("Copies share the literals and still compare by them")
    func copies() throws {
        let a = try #require(try RecordFilter(parsing: #"text CONTAINS[c] "x" AND title == "y""#).literals)
        let b = try #require(try RecordFilter(parsing: #"text CONTAINS[c] "x" AND title == "y""#).literals)
        let c = try #require(try RecordFilter(parsing: #"text CONTAINS[c] "z""#).literals)
        #expect(a == b)
        #expect(a != c)
    }
}
