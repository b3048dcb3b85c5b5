import FerryRecords
import FerryTestSupport
import Testing

@Suite("JSON scanning")
struct JSONScannerTests {
    @Test("Escapes decode to the characters they stand for", arguments: [
        (#""a\"b""#, "a\"b"), (#""\\\/""#, "\\/"), (#""\b\f\n\r\t""#, "\u{08}\u{0C}\n\r\t"),
        (#""\u00e9""#, "é"), (#""\u0000""#, "\u{00}"), (#""\ud83d\ude00""#, "😀"), (#""\uD834\uDD1E x""#, "𝄞 x"),
        (#""plain ascii that is longer than eight bytes""#, "plain ascii that is longer than eight bytes"),
        ("\"日本語 and emoji 👍🏽 mixed\"", "日本語 and emoji 👍🏽 mixed"),
    ])
    func escapes(text: String, expected: String) throws {
        #expect(try JSONValue(parsing: text) == .string(expected))
    }

    /// Long strings are made without a second validation, and ASCII ones marked so: a wrong mark
    /// or an unchecked byte would show in the counts, the scalars or the hash.
    @Test("Decoded strings are the strings they spell, at every length around the small-string limit",
          arguments: [("x", "x"), ("0123456789abcde", "0123456789abcde"), ("0123456789abcdef", "0123456789abcdef"),
                      ("_00d4af5974273ca3", "_00d4af5974273ca3"),
                      ("a48b3dbe-157d-44a1-b6f0-28ffa9ba5a27", "a48b3dbe-157d-44a1-b6f0-28ffa9ba5a27"),
                      ("é123456789abcde", "é123456789abcde"), ("0123456789abcdé", "0123456789abcdé"),
                      ("日本語 and emoji 👍🏽 mixed", "日本語 and emoji 👍🏽 mixed"),
                      (#"quote \" and tab \t, then more"#, "quote \" and tab \t, then more"),
                      (String(repeating: "ab", count: 40), String(repeating: "ab", count: 40)),
                      (String(repeating: "ü", count: 40), String(repeating: "ü", count: 40)),
                      (#"\u00e9 escaped then long ascii"#, "é escaped then long ascii")])
    func decodedStrings(json: String, expected: String) throws {
        let text = #"{"recordName":""# + json + #"","fields":{""# + json + #"":{"value":""# + json
            + #"","type":"STRING"},"list":{"value":[""# + json + #""],"type":"STRING_LIST"}}}"#
        let record = try RecordJSON.decodeRecord(text)
        let fields = try #require(record.fields)
        let named = try #require(fields.entries.first { $0.name != "list" })
        let values = [named.field.value, try #require(fields["list"]).value]
        let decoded = [record.recordName, named.name] + values.map { value -> String in
                switch value {
                case .string(let s): s
                case .list(let items): if case .string(let s) = items.first { s } else { "" }
                default: ""
                }
            }
        for string in decoded {
            #expect(string == expected)
            #expect(string.utf8.elementsEqual(expected.utf8))
            #expect(string.utf16.count == expected.utf16.count)
            #expect(string.count == expected.count)
            #expect(Array(string.unicodeScalars) == Array(expected.unicodeScalars))
            #expect(string.hashValue == expected.hashValue)
            #expect(string.utf8.allSatisfy { $0 < 0x80 } == expected.unicodeScalars.allSatisfy(\.isASCII))
        }
    }

    @Test("Lone surrogates are rejected with their position", arguments: [
        (#""ab\ud800""#, 3), (#""\udc00""#, 1), (#""x\ud83d\u0041""#, 8),
    ])
    func loneSurrogates(text: String, offset: Int) {
        let error = #expect(throws: RecordFormatError.self) { try JSONValue(parsing: text) }
        #expect(error?.code == .loneSurrogate)
        #expect(error?.byteOffset == offset)
    }

    @Test("Invalid UTF-8 is rejected with the offset of the bad byte", arguments: [
        ([0x22, 0x61, 0xFF, 0x22], 2), ([0x22, 0xC3, 0x22], 1), ([0x22, 0xE2, 0x82, 0x41, 0x22], 3),
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 1), ([0x22, 0xC0, 0xAF, 0x22], 1), ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),
        ([0x22] + Array("0123456789abcdef".utf8) + [0xFE, 0x22], 17),
    ] as [([UInt8], Int)])
    func invalidUTF8(bytes: [UInt8], offset: Int) {
        let error = #expect(throws: RecordFormatError.self) {
            try bytes.withUnsafeBytes { try RecordJSON.parseValue($0) }
        }
        #expect(error?.code == .invalidUTF8)
        #expect(error?.byteOffset == offset)
    }

    /// Long strings are made without a second validation by the standard library, so the
    /// scanner's own check is all there is: invalid bytes in long values and keys are rejected.
    @Test("Invalid UTF-8 in long values and keys is rejected with its offset", arguments: [
        [0xFF], [0xC3], [0xE2, 0x82, 0x41], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80],
        [0xE0, 0x80, 0x80], [0xF0, 0x80, 0x80, 0x80], [0x80], [0xF5, 0x80, 0x80, 0x80],
    ] as [[UInt8]])
    func invalidUTF8InLongStrings(bad: [UInt8]) {
        let long = Array("a48b3dbe-157d-44a1-b6f0".utf8)
        let shapes: [(prefix: String, suffix: String)] = [
            (#"{"recordName":"r","fields":{"f":{"value":""#, #"","type":"STRING"}}}"#), // a value
            (#"{"recordName":"r","fields":{""#, #"":{"value":"x","type":"STRING"}}}"#), // a field name
            (#"{"recordName":""#, #""}"#), // a system field
        ]
        for (before, after) in [(long, long), (long, []), ([], long), (Array("é".utf8) + long, long)] {
            for shape in shapes {
                let text = Array(shape.prefix.utf8) + before + bad + after + Array(shape.suffix.utf8)
                let error = #expect(throws: RecordFormatError.self) {
                    try text.withUnsafeBytes { try RecordJSON.decodeRecord($0) }
                }
                #expect(error?.code == .invalidUTF8)
                // At the bad bytes, or at the byte after them that fails to continue a sequence.
                let badStart = shape.prefix.utf8.count + before.count
                #expect((badStart...badStart + bad.count).contains(error?.byteOffset ?? -1), "\(error?.description ?? "")")
            }
        }
    }

    @Test("Numbers keep their exact text", arguments: [
        "9223372036854775807", "-9223372036854775808", "18446744073709551616", "-0.0", "5e-324",
        "0.30000000000000004", "1.7976931348623157e308", "1E+2", "0",
    ])
    func numbers(text: String) throws {
        #expect(try JSONValue(parsing: text) == .number(JSONNumber(text: text)))
    }

    @Test("Malformed JSON is rejected with what was expected", arguments: [
        ("{", "expected a key string"), ("[1,]", "expected a value after ','"), ("{\"a\" 1}", "expected ':'"),
        ("01", "leading 0"), ("1.", "a digit after '.'"), ("-", "expected a digit"), ("tru", "expected a value"),
        ("\"abc", "to close the string"), ("\"a\u{01}\"", "control character"), ("{\"a\":1,\"a\":2}", "twice"),
        ("[1] 2", "the end of the value"), ("\"\\x\"", "escape"), ("", "expected a value"),
    ])
    func malformed(text: String, message: String) {
        let error = #expect(throws: RecordFormatError.self) { try JSONValue(parsing: text) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    /// Skips `text` as one value with a key scratch (the replay and index path).
    private func skipsWithScratch(_ text: String) throws {
        let bytes = Array(text.utf8)
        var scratch = JSONKeyScratch()
        try bytes.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            try scanner.skipValue(scratch: &scratch)
            #expect(scanner.isAtEnd)
        }
    }

    @Test("Duplicate keys are found in objects of any width, whatever the filter says, escapes included")
    func duplicateKeysWithScratch() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzAB_-0123456789")
        for round in 0..<300 {
            let width = [2, 5, 9, 40, 70, 200][round % 6]
            var keys = Set<String>()
            while keys.count < width {
                keys.insert(String((0..<Int.random(in: 1...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
            }
            var ordered = Array(keys)
            // Distinct keys (and the same keys in a nested object) pass.
            let members = ordered.map { "\"\($0)\":1" }.joined(separator: ",")
            try skipsWithScratch("{" + members + ",\"nested\":{" + members + "}}")
            // One key again, anywhere after its first place, fails; written with an escape too.
            let again = ordered.randomElement(using: &generator)!
            let first = ordered.firstIndex(of: again)!
            let escaped = round % 3 == 0
            let spelled = escaped ? "\\u00" + String(again.utf8.first!, radix: 16) + again.dropFirst() : again
            ordered.insert(spelled, at: Int.random(in: (first + 1)...ordered.count, using: &generator))
            let text = "{" + ordered.map { "\"\($0)\":[]" }.joined(separator: ",") + "}"
            let error = #expect(throws: RecordFormatError.self, "\(text)") { try skipsWithScratch(text) }
            #expect(error?.code == .duplicateKey)
        }
        // Escaped first, plain second; nested objects keep their own keys.
        #expect(throws: RecordFormatError.self) { try skipsWithScratch(#"{"\u0061":1,"a":2}"#) }
        #expect(throws: RecordFormatError.self) { try skipsWithScratch(#"{"a":{"a":1},"b":0,"a":2}"#) }
        try skipsWithScratch(#"{"\u0062":1,"a":2,"c":{"a":1,"b":2}}"#)
        try skipsWithScratch(#"{"recordName":1,"recordType":2,"":3}"#)
        #expect(throws: RecordFormatError.self) { try skipsWithScratch(#"{"":1,"x":2,"":3}"#) }
    }

    @Test("Deep nesting fails cleanly instead of exhausting the stack")
    func deepNesting() {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = #expect(throws: RecordFormatError.self) { try JSONValue(parsing: text) }
        #expect(error?.code == .tooDeep)
    }
}
