import FerryRecords
import Foundation
import FerryTestSupport
import Testing

/// The decoder reads the compact shape CloudKit and Ferry write through fast paths that match
/// keys as literals, and every other shape through the general path. Both must give the same
/// records and reject the same inputs.
@Suite("Compact and general decoding paths")
struct DecoderPathTests {
    /// `value` written with spaces around separators (and, with `reversing`, every object's keys
    /// in reverse order): nothing of the compact shape is left, so only the general path reads it.
    static func reshaped(_ value: JSONValue, reversing: Bool = false) -> String {
        switch value {
        case .object(let object):
            let ordered = reversing ? Array(object.members.reversed()) : object.members
            let members = ordered.map { member -> String in
                var out = JSONOutput(capacity: 64)
                out.appendString(member.key)
                return String(decoding: out.bytes, as: UTF8.self) + " : " + reshaped(member.value, reversing: reversing)
            }
            return "{ " + members.joined(separator: " , ") + " }"
        case .array(let items):
            return "[ " + items.map { reshaped($0, reversing: reversing) }.joined(separator: " , ") + " ]"
        default:
            var out = JSONOutput(capacity: 64)
            out.appendValue(value)
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    @Test("Generated records decode the same from the compact form and from reordered, spaced JSON",
          arguments: [1, 2, 3, 4])
    func pathsAgree(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed))
        for _ in 0..<300 {
            let record = generator.record()
            let compact = RecordJSON.encodedString(record)
            let fromCompact = try RecordJSON.decodeRecord(compact)
            let spaced = Self.reshaped(try JSONValue(parsing: compact))
            #expect(fromCompact == record, "\(compact)")
            #expect(try RecordJSON.decodeRecord(spaced) == record, "\(spaced)")
            // Reversed key order: the same values (fields and unknown keys then come in reverse).
            let reversed = try RecordJSON.decodeRecord(Self.reshaped(try JSONValue(parsing: compact), reversing: true))
            #expect(reversed.recordName == record.recordName && reversed.created?.timestamp == record.created?.timestamp
                    && reversed.modified?.userRecordName == record.modified?.userRecordName
                    && reversed.zoneID?.zoneName == record.zoneID?.zoneName && reversed.parent?.recordName == record.parent?.recordName
                    && Set((reversed.fields ?? [:]).map(\.name)) == Set((record.fields ?? [:]).map(\.name)))
        }
    }

    /// Shapes next to the compact one, read by the general path.
    static let nearCompactTexts = [
        #"{"recordName":"r","fields":{"f":{"value":1,"type":"INT64","extra":true}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":null,"type":"STRING"}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":"x"}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":[1,2],"type":"INT64_LIST"},"g":{"type":"STRING","value":"y"}}}"#,
        #"{"recordName":"r","created":{"timestamp":1,"userRecordName":"u","deviceID":"d","x":1}}"#,
        #"{"recordName":"r","created":{"timestamp":null,"userRecordName":"u"}}"#,
        #"{"recordName":"r","created":{"timestamp":1.5,"userRecordName":"u"}}"#,
        #"{"recordName":"r","created":{"timestamp":1,"userRecordName":"u","timestamp":2}}"#,
        #"{"recordName":"r","zoneID":{"zoneName":"z","ownerRecordName":"o","zoneType":"REGULAR_CUSTOM_ZONE","q":[]}}"#,
        #"{"recordName":"r","zoneID":{"zoneName":"z","zoneName":"y"}}"#,
        #"{"recordName":"r","parent":{"recordName":"p","zoneID":{"zoneName":"z","extra":1},"action":"NONE"}}"#,
        #"{"recordName":"r","parent":{"recordName":"p","action":"NONE","recordName":"q"}}"#,
        #"{"recordName":"r","parent":{"recordName":"p","zoneID":{"zoneName":"z"},"action":"NONE","x":null}}"#,
        #"{"recordName":"r","fields":{"f":{"value":"unterminated,"type":"STRING"}}}"#,
        #"{"recordName":"r","fields":{"f":{"value":12345678901234567890,"type":"INT64"}}}"#,
        // Record members: in Ferry's order they are matched as literals, the rest by the general loop.
        #"{"recordName":"r","recordType":null,"zoneID":{"zoneName":"z"},"fields":{}}"#,
        #"{"recordName":null,"recordType":"T","fields":{}}"#,
        #"{"recordName":"r","recordType":"T","recordName":"s"}"#,
        #"{"recordName":"r","fields":{},"recordType":"T","created":{"timestamp":1,"userRecordName":"u"}}"#,
        #"{"recordType":"T","recordName":"r","x":1,"zoneID":{"zoneName":"z"},"y":[],"deleted":true}"#,
        #"{"recordName":"r","recordType":"T","deleted":"yes"}"#,
        #"{"recordName":"r","recordType":"T","parent":{"recordName":"p"},"share":{"recordName":"s"},"shortGUID":"g","fields":{},"pluginFields":{"a":1},"z":null}"#,
        #"{"recordName":"r","recordType":"T","fields":{},"fields":{}}"#,
        #"{"recordName":"r","recordType":"T","fields":{},"records":[]}"#,
        #"{}"#,
    ]

    @Test("Near-compact shapes fall back to the general path and decode or fail alike", arguments: nearCompactTexts)
    func nearCompact(text: String) throws {
        // The same document, reshaped so that only the general path can read it.
        let general: String
        if let value = try? JSONValue(parsing: text) { general = Self.reshaped(value) } else { general = text.replacingOccurrences(of: ",", with: " , ") }
        let compactResult = Result { try RecordJSON.decodeRecord(text) }
        let generalResult = Result { try RecordJSON.decodeRecord(general) }
        switch (compactResult, generalResult) {
        case (.success(let a), .success(let b)):
            #expect(a == b)
        case (.failure(let a), .failure(let b)):
            #expect((a as? RecordFormatError)?.code == (b as? RecordFormatError)?.code, "\(a) | \(b)")
        default:
            Issue.record("paths disagree: \(compactResult) | \(generalResult)")
        }
    }
}

/// CloudKit writes a field's `value` before its `type`, so the decoder reads lists and objects
/// before it knows their type, as their shape suggests (a list of strings, a reference, an asset,
/// a location), and keeps the result only when the type agrees; scalars are turned into values
/// as soon as the type is read. Whatever it guessed, the field must decode, or fail, exactly as
/// when the type comes first.
@Suite("Composite values read before their type")
struct SpeculativeDecodingTests {
    static let values = [
        #"[]"#, #"["a","b"]"#, #"["a",null,"c"]"#, #"[null]"#, #"["é\n\u0041",  "x"]"#, #"[1,2]"#, #"[1.5,-2]"#,
        #"["a",1]"#, #"[true]"#, #"[["a"]]"#, #"[{"recordName":"x"}]"#, #"["bad \x escape"]"#, #"["a",]"#,
        #"{"recordName":"x"}"#, #"{"recordName":"x","zoneID":{"zoneName":"z","ownerRecordName":"o"},"action":"DELETE_SELF"}"#,
        #"{"recordName":"x","action":"NONE","extra":1}"#, #"{"recordName":5}"#, #"{"fileChecksum":"c","size":3,"downloadURL":"u"}"#,
        #"{"fileChecksum":"c","size":"big"}"#, #"{"latitude":1.5,"longitude":-2,"altitude":3}"#, #"{"latitude":1.5}"#,
        #"{"foo":1}"#, #"{}"#,
        // Scalars, which the compact path turns into values as soon as the type is read.
        #""text""#, #""é\t""#, #""""#, "0", "-0", "42", "-9223372036854775808", "9223372036854775808",
        "12345678901234567890", "1.5", "-0.0", "1e3", "5e-324", "null", "true",
    ]
    static let types: [String?] = FieldType.allStandard.map(\.rawValue) + ["NUMBER_INT64", "CUSTOM_TAG", nil]

    /// The outcome of decoding `text`: the record, or the error's code and message (byte offsets
    /// differ between the layouts compared).
    static func outcome(_ text: String) -> String {
        do {
            return "ok \(try RecordJSON.decodeRecord(text))"
        } catch {
            return "error \(error.code) \(error.message)"
        }
    }

    @Test("Every value shape under every type decodes as it does with the type first", arguments: types)
    func agreesWithTypeFirst(type: String?) {
        for value in Self.values {
            let tag = type.map { #""type":"\#($0)""# }
            let typeFirst = "{" + ([tag, #""value":\#(value)"#].compactMap { $0 }).joined(separator: ",") + "}"
            let valueFirst = "{" + ([#""value":\#(value)"#, tag].compactMap { $0 }).joined(separator: ",") + "}"
            let spaced = "{ " + ([#""value" : \#(value)"#, tag].compactMap { $0 }).joined(separator: " , ") + " }"
            let expected = Self.outcome(#"{"recordName":"r","fields":{"f":\#(typeFirst)}}"#)
            #expect(Self.outcome(#"{"recordName":"r","fields":{"f":\#(valueFirst)}}"#) == expected, "\(valueFirst)")
            #expect(Self.outcome(#"{"recordName":"r","fields":{"f":\#(spaced)}}"#) == expected, "\(spaced)")
        }
    }

    @Test("Lists of strings take the type's element kind")
    func stringListKinds() throws {
        let text = #"{"recordName":"r","fields":{"s":{"value":["QQ==",null],"type":"STRING_LIST"},"b":{"value":["QQ==",null],"type":"BYTES_LIST"},"e":{"value":["QQ=="],"type":"ENCRYPTED_BYTES_LIST"},"i":{"value":[],"type":"INT64_LIST"}}}"#
        let record = try RecordJSON.decodeRecord(text)
        #expect(record[field: "s"] == .list([.string("QQ=="), .json(.null)]))
        #expect(record[field: "b"] == .list([.bytes("QQ=="), .json(.null)]))
        #expect(record[field: "e"] == .list([.bytes("QQ==")]))
        #expect(record[field: "i"] == .list([]))
        #expect(RecordJSON.encodedString(record) == text)
    }
}

/// Strings are scanned 16 bytes at a time (SSE2) and 8 at a time after that, and checked for
/// escaping the same way on output: every special byte must be found wherever it falls in a block.
@Suite("String scanning at every offset")
struct StringScanningTests {
    /// JSON escaping written out plainly, as the reference.
    static func escapedCharacters(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{00}"..."\u{1F}": out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static let specials: [String] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "é", "😀", "\u{7F}", " "]

    @Test("A special character at every offset of strings up to 48 bytes is decoded and written exactly")
    func everyOffset() throws {
        for length in 0...48 {
            for special in Self.specials {
                for offset in 0...length {
                    let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: length - offset)
                    var out = JSONOutput(capacity: 16)
                    out.appendString(text)
                    let written = String(decoding: out.bytes, as: UTF8.self)
                    #expect(written == Self.escapedCharacters(text), "\(length) \(offset) \(special.debugDescription)")
                    let record = try RecordJSON.decodeRecord(#"{"recordName":\#(written),"fields":{"f":{"value":\#(written),"type":"STRING"},"k":{"value":[\#(written),\#(written)],"type":"STRING_LIST"}}}"#)
                    #expect(record.recordName == text)
                    #expect(record[field: "f"] == .string(text))
                    #expect(record[field: "k"] == .list([.string(text), .string(text)]))
                }
            }
        }
    }

    static func decode(_ bytes: [UInt8]) -> Result<Record, RecordFormatError> {
        bytes.withUnsafeBytes { buffer in
            Result { () throws(RecordFormatError) -> Record in try RecordJSON.decodeRecord(buffer) }
        }
    }

    /// A record whose name is `length` x's with `byte` at `offset`, and where the name starts.
    static func record(naming length: Int, with byte: UInt8, at offset: Int) -> (bytes: [UInt8], start: Int) {
        var bytes = Array(#"{"recordName":""#.utf8)
        let start = bytes.count
        bytes += Array(repeating: UInt8(ascii: "x"), count: length)
        bytes[start + offset] = byte
        bytes += Array(#""}"#.utf8)
        return (bytes, start)
    }

    @Test("A raw control character is rejected at its offset, wherever it falls")
    func controlCharacterOffsets() {
        for length in 1...40 {
            for offset in 0..<length {
                let (bytes, start) = Self.record(naming: length, with: 0x07, at: offset)
                switch Self.decode(bytes) {
                case .success: Issue.record("accepted a control character at \(offset) of \(length)")
                case .failure(let error): #expect(error.byteOffset == start + offset, "\(offset) of \(length)")
                }
            }
        }
    }

    @Test("Invalid UTF-8 is found wherever it falls in a block")
    func invalidUTF8Offsets() {
        for length in 1...40 {
            for offset in 0..<length {
                let (bytes, start) = Self.record(naming: length, with: 0xFF, at: offset)
                switch Self.decode(bytes) {
                case .success: Issue.record("accepted invalid UTF-8 at \(offset) of \(length)")
                case .failure(let error): #expect(error.code == .invalidUTF8 && error.byteOffset == start + offset, "\(offset) of \(length): \(error)")
                }
            }
        }
    }
}

/// A record's members in Ferry's order are matched as literals; anything else falls to the
/// general loop, which must still see every member exactly once.
@Suite("Record members in and out of order")
struct RecordMemberOrderTests {
    static func failure(_ text: String) -> RecordFormatError.Code? {
        do {
            _ = try RecordJSON.decodeRecord(text)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("A null or repeated known member is handled as by the general loop")
    func nullsAndDuplicates() throws {
        #expect(Self.failure(#"{"recordName":null,"recordType":"T","fields":{}}"#) == .missingKey)
        #expect(Self.failure(#"{"recordName":"r","recordType":"T","recordName":"s"}"#) == .duplicateKey)
        #expect(Self.failure(#"{"recordName":"r","fields":{},"created":{"timestamp":1},"fields":{}}"#) == .duplicateKey)
        #expect(Self.failure(#"{"recordName":"r","recordType":"T","deleted":"yes"}"#) == .wrongType)
        let record = try RecordJSON.decodeRecord(#"{"recordName":"r","recordType":null,"zoneID":{"zoneName":"z"},"fields":{}}"#)
        #expect(record.recordType == nil && record.zoneID?.zoneName == "z")
        #expect(record.unknownKeys.members.map(\.key) == ["recordType"])
        #expect(RecordJSON.encodedString(record) == #"{"recordName":"r","zoneID":{"zoneName":"z"},"fields":{},"recordType":null}"#)
    }

    @Test("Spaces around a member's value, and nulls after a space, read as without them")
    func spacedValues() throws {
        for text in [#"{"recordName":"r","recordType": null,"fields":{}}"#, #"{"recordType": null,"recordName":"r","fields":{}}"#,
                     #"{"recordName":"r","recordType":  null ,"fields":{}}"#] {
            let record = try RecordJSON.decodeRecord(text)
            #expect(record.recordType == nil && record.unknownKeys["recordType"] == .null, "\(text)")
        }
        #expect(Self.failure(#"{"recordName": null,"recordType":"T","fields":{}}"#) == .missingKey)
        let spaced = try RecordJSON.decodeRecord(#"{"recordName": "r","recordType": "T","zoneID": {"zoneName":"z"},"fields": {}}"#)
        #expect(spaced.recordName == "r" && spaced.recordType == "T" && spaced.zoneID?.zoneName == "z" && spaced.fields?.isEmpty == true)
    }

    @Test("Field names equal as strings but not as bytes are two names; the same bytes twice are duplicates, however many fields came before")
    func canonicallyEqualNames() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}" // equal as Swift strings, not as bytes
        let pair = #""\#(composed)":{"value":1,"type":"INT64"},"\#(decomposed)":{"value":2,"type":"INT64"}"#
        let repeated = #""\#(composed)":{"value":1,"type":"INT64"},"\#(composed)":{"value":2,"type":"INT64"}"#
        let many = (0..<40).map { #""f\#($0)":{"value":\#($0),"type":"INT64"}"# }.joined(separator: ",")
        for before in ["", many + ","] {
            let record = try RecordJSON.decodeRecord(#"{"recordName":"r","fields":{\#(before)\#(pair)}}"#)
            #expect(record.fields?.entries.suffix(2).map { Array($0.name.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
            #expect(Self.failure(#"{"recordName":"r","fields":{\#(before)\#(repeated)}}"#) == .duplicateKey)
        }
    }

    @Test("Plain ASCII field names of every length repeat exactly when their bytes do, before and past sixteen fields")
    func plainNames() throws {
        func field(_ name: String, _ value: Int) -> String { #""\#(name)":{"value":\#(value),"type":"INT64"}"# }
        func record(_ names: [String]) -> String {
            #"{"recordName":"r","fields":{"# + names.enumerated().map { field($0.element, $0.offset) }.joined(separator: ",") + "}}"
        }
        for length in 1...20 {
            let name = String(decoding: (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }, as: UTF8.self)
            // The same length, one byte different: first, middle, last.
            let variants = Set([0, length / 2, length - 1]).sorted().map { position in
                var bytes = Array(name.utf8)
                bytes[position] = UInt8(ascii: "Z")
                return String(decoding: bytes, as: UTF8.self)
            }
            for before in [0, 3, 15, 16, 20] {
                let fillers = (0..<before).map { "F\($0)" }
                let distinct = fillers + [name] + variants
                let decoded = try RecordJSON.decodeRecord(record(distinct))
                #expect(decoded.fields?.entries.map(\.name) == distinct, "length \(length), \(before) before")
                #expect(Self.failure(record(distinct + [name])) == .duplicateKey, "length \(length), \(before) before")
                #expect(Self.failure(record(fillers + [name, name])) == .duplicateKey, "length \(length), \(before) before")
                if let last = variants.last {
                    #expect(Self.failure(record(distinct + [last])) == .duplicateKey, "length \(length), \(before) before")
                }
            }
        }
        // A filler repeated past the sixteenth name, once names are compared as strings.
        let many = (0..<20).map { "F\($0)" }
        #expect(Self.failure(record(many + ["F3"])) == .duplicateKey)
        #expect(Self.failure(record(many + ["F19"])) == .duplicateKey)
    }

    @Test("A plain name and its escaped spelling are duplicates in either order; a canonically equal one is another name")
    func plainAndCanonicalNames() {
        let kelvin = "\u{212A}" // KELVIN SIGN, canonically equivalent to "K": other bytes, so another name
        func text(_ first: String, _ second: String, after before: Int) -> String {
            let fillers = (0..<before).map { #""f\#($0)":{"value":1}"# }
            return #"{"recordName":"r","fields":{"# + (fillers + [#""\#(first)":{"value":1}"#, #""\#(second)":{"value":2}"#])
                .joined(separator: ",") + "}}"
        }
        for before in [0, 2, 17] {
            for (first, second) in [("K", #"\u004B"#), (#"\u004B"#, "K"), (kelvin, #"\u212A"#), ("xK", #"x\u004B"#)] {
                #expect(Self.failure(text(first, second, after: before)) == .duplicateKey, "\(first) then \(second), \(before) before")
            }
            for (first, second) in [("K", kelvin), (kelvin, "K"), (#"\u004B"#, kelvin), ("xK", "x" + kelvin)] {
                #expect(Self.failure(text(first, second, after: before)) == nil, "\(first) then \(second), \(before) before")
            }
        }
    }

    @Test("Members out of order and unknown members between them are all kept")
    func outOfOrder() throws {
        let record = try RecordJSON.decodeRecord(
            #"{"recordType":"T","recordName":"r","x":1,"zoneID":{"zoneName":"z"},"fields":{"f":{"value":1,"type":"INT64"}},"y":[],"deleted":true,"created":{"timestamp":5,"userRecordName":"u"}}"#)
        #expect(record.recordName == "r" && record.recordType == "T" && record.zoneID?.zoneName == "z")
        #expect(record.deleted == true && record.created?.timestamp == 5 && record[field: "f"] == .int64(1))
        #expect(record.unknownKeys.members.map(\.key) == ["x", "y"])
    }

    @Test("Every member in Ferry's order reads back as written")
    func canonical() throws {
        let text = #"{"recordName":"r","recordType":"T","zoneID":{"zoneName":"z","ownerRecordName":"o"},"recordChangeTag":"c","created":{"timestamp":1,"userRecordName":"u"},"modified":{"timestamp":2,"userRecordName":"v","deviceID":"d"},"deleted":false,"parent":{"recordName":"p"},"share":{"recordName":"s","zoneID":{"zoneName":"z"}},"shortGUID":"g","fields":{"f":{"value":"x","type":"STRING"}},"pluginFields":{"a":[1]},"extra":true}"#
        let record = try RecordJSON.decodeRecord(text)
        #expect(RecordJSON.encodedString(record) == text)
        #expect(record.share?.zoneID?.zoneName == "z" && record.shortGUID == "g" && record.pluginFields == .object(["a": .array([.number(JSONNumber(text: "1"))])]))
    }
}

/// Readers of record after record decode each plain record line into one reused value. Whatever
/// the record before held, the value must end up equal to the record decoded afresh.
@Suite("Decoding into a reused record")
struct ReusedRecordTests {
    static func decodeInto(_ text: String, _ record: inout Record) -> Bool {
        Array(text.utf8).withUnsafeBytes { RecordJSON.decodeRecord($0, into: &record, configuration: .init()) }
    }

    @Test("Generated records decoded into one value equal the records decoded afresh", arguments: [11, 12])
    func sequence(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed))
        var texts = (0..<400).map { _ in RecordJSON.encodedString(generator.record()) }
        // Full records, then bare ones: every member must be cleared when the next lacks it.
        texts.insert(#"{"recordName":"full","recordType":"T","zoneID":{"zoneName":"z"},"recordChangeTag":"c","created":{"timestamp":1},"modified":{"timestamp":2},"deleted":true,"parent":{"recordName":"p"},"share":{"recordName":"s"},"shortGUID":"g","fields":{"f":{"value":1,"type":"INT64"}},"pluginFields":{},"x":1}"#, at: 10)
        texts.insert(#"{"recordName":"bare"}"#, at: 11)
        texts.insert(#"{"recordName":"nulls","recordType":null,"fields":null}"#, at: 12)
        var reused = Record(recordName: "")
        for text in texts {
            #expect(Self.decodeInto(text, &reused), "\(text)")
            #expect(reused == (try RecordJSON.decodeRecord(text)), "\(text)")
        }
    }

    @Test("Anything but a plain record is left to the document decoder", arguments: [
        #"{"records":[{"recordName":"a","fields":{}}],"continuationMarker":"m"}"#,
        #"{"recordName":"a","serverErrorCode":"NOT_FOUND","reason":"gone"}"#,
        #"{"recordName":"a","recordType":"T","records":[1]}"#,
        #"{"recordType":"T","fields":{}}"#,
        #"[{"recordName":"a"}]"#,
        #"{"recordName":"a","fields":{"f":{"value":"x","type":"INT64"}}}"#,
        #"{"recordName":"a"} trailing"#,
        #"{"recordName":"a","recordName":"b"}"#,
        "",
    ])
    func notPlain(text: String) {
        var reused = Record(recordName: "before")
        #expect(!Self.decodeInto(text, &reused))
    }
}
