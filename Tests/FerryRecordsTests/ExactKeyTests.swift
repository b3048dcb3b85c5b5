import Testing
@testable import FerryRecords

/// Keys are told apart by their bytes, as JSON compares them: names that Unicode takes for the
/// same text ("é" U+00E9 and "e" + U+0301, ";" and U+037E, "K" and the Kelvin sign U+212A) are
/// different keys, never duplicates.
@Suite("Keys that look alike are different keys")
struct ExactKeyTests {
    static let pairs: [(String, String)] = [("\u{E9}", "e\u{301}"), (";", "\u{37E}"), ("K", "\u{212A}")]

    /// JSON text of a string (escapes for the non-ASCII, so the test's own source stays ASCII).
    static func quoted(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { $0.isASCII ? String($0) : String(format: "\\u%04x", $0.value) }.joined() + "\""
    }

    static func texts(_ a: String, _ b: String) -> [String] {
        let (qa, qb) = (quoted(a), quoted(b))
        return [
            // Field names.
            "{\"recordName\":\"r\",\"fields\":{\(qa):{\"value\":\"1\",\"type\":\"STRING\"},\(qb):{\"value\":\"2\",\"type\":\"STRING\"}}}",
            // Keys of pluginFields, of an unknown member and of the record itself.
            "{\"recordName\":\"r\",\"pluginFields\":{\(qa):1,\(qb):2}}",
            "{\"recordName\":\"r\",\"extra\":{\(qa):1,\(qb):2}}",
            "{\"recordName\":\"r\",\(qa):1,\(qb):2}",
            // Keys inside a field's value of an unknown type.
            "{\"recordName\":\"r\",\"fields\":{\"f\":{\"value\":{\(qa):1,\(qb):2},\"type\":\"FUTURE\"}}}",
        ]
    }

    @Test("Records with such keys decode, and encode back to the same JSON", arguments: 0..<3)
    func decodeAndEncode(pair: Int) throws {
        let (a, b) = Self.pairs[pair]
        for text in Self.texts(a, b) {
            let record = try RecordJSON.decodeRecord(text)
            let again = try RecordJSON.decodeRecord(RecordJSON.encodedString(record))
            #expect(again == record, "\(text)")
            #expect(RecordJSON.encodedString(again) == RecordJSON.encodedString(record))
        }
        // Each field is found by its own name.
        let record = try RecordJSON.decodeRecord(Self.texts(a, b)[0])
        #expect(record.fields?.count == 2)
        #expect(record[field: a] == .string("1"))
        #expect(record[field: b] == .string("2"))
    }

    @Test("Any JSON value keeps both keys", arguments: 0..<3)
    func anyValue(pair: Int) throws {
        let (a, b) = Self.pairs[pair]
        let value = try JSONValue(parsing: "{\(Self.quoted(a)):1,\(Self.quoted(b)):2}")
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object.members.count == 2)
    }

    @Test("A key repeated byte for byte is still a duplicate")
    func realDuplicate() {
        #expect(throws: RecordFormatError.self) { try RecordJSON.decodeRecord("{\"recordName\":\"r\",\"pluginFields\":{\"\\u00e9\":1,\"\u{E9}\":2}}") }
        #expect(throws: RecordFormatError.self) {
            try RecordJSON.decodeRecord("{\"recordName\":\"r\",\"fields\":{\"\u{E9}\":{\"value\":\"1\",\"type\":\"STRING\"},\"\\u00e9\":{\"value\":\"2\",\"type\":\"STRING\"}}}")
        }
    }
}
