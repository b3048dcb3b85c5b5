import FerryRecords
import FerryTestSupport
import Testing

@Suite("JSON compaction")
struct JSONCompactionTests {
    /// The reference: every byte outside strings that is whitespace dropped, one at a time.
    static func reference(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var inString = false, escaped = false
        for b in text {
            if inString {
                out.append(b)
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
                out.append(b)
            } else if b != 0x20 && b != 0x0A && b != 0x0D && b != 0x09 {
                out.append(b)
            }
        }
        return out
    }

    /// The implementations this processor runs (the portable one everywhere).
    static let implementations = JSONCompaction.Implementation.allCases.filter(\.isAvailable)

    /// `text` compacted by the fastest implementation, after checking every other one here
    /// compacts it to the same bytes.
    static func compacted(_ text: [UInt8]) -> [UInt8] {
        let fastest = text.withUnsafeBytes { JSONCompaction.compacted($0) }
        for implementation in implementations {
            let other = text.withUnsafeBytes { JSONCompaction.compacted($0, by: implementation) }
            #expect(other == fastest, "\(implementation) compaction differs on \(String(decoding: text, as: UTF8.self))")
        }
        return fastest
    }

    @Test("The portable implementation runs everywhere; x86-64 has SSSE3")
    func implementationsAvailable() {
        #expect(Self.implementations.contains(.portable))
        #if arch(x86_64)
        #expect(Self.implementations.contains(.ssse3))
        #endif
    }

    @Test("Random token sequences of every length up to five blocks compact as the byte walk does", arguments: 0..<8)
    func randomTokens(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed) &+ 77)
        let pieces = [" ", "\n", "\t", "\r", "    ", "{", "}", "[", "]", ",", ":", "1", "-2.5e3", "true", "null",
                      #""""#, #""a b""#, #""\"""#, #""\\""#, #""x\\\" y""#, #""  ""#, #""\u0020 \n""#, "\"é \u{1F600}\""]
        for _ in 0..<300 {
            var text: [UInt8] = []
            let length = Int(random.next() % 320)
            while text.count < length { text += Array(pieces[Int(random.next() % UInt64(pieces.count))].utf8) }
            #expect(Self.compacted(text) == Self.reference(text))
        }
    }

    @Test("Pretty-printed records compact to exactly what a byte-by-byte walk keeps", arguments: [1, 2, 3, 4])
    func generatedRecords(seed: Int) throws {
        var generator = RecordGenerator(seed: UInt64(seed))
        for _ in 0..<200 {
            let record = generator.record()
            let pretty = Array(prettyPrinted(record).utf8)
            let compact = Self.compacted(pretty)
            #expect(compact == Self.reference(pretty))
            #expect(compact == Array(RecordJSON.encodedString(record).utf8), "compacting the pretty form gives Ferry's compact form")
        }
    }

    @Test("Strings keep their spaces, escapes and quotes; whitespace runs of every length around them go",
          arguments: 0..<40)
    func everyRunLength(run: Int) {
        let space = String(repeating: " ", count: run), mixed = String(repeating: "\n\t \r", count: run / 4 + 1)
        let text = "\(space){\(mixed)\"a b\\\" \\\\\"\(space):\(mixed)[ 1 ,\t\"x  y\" , {\"\\u0020\" : null}\(space)]\(mixed)}\(space)"
        let bytes = Array(text.utf8)
        #expect(Self.compacted(bytes) == Self.reference(bytes))
        #expect(String(decoding: Self.compacted(bytes), as: UTF8.self) == #"{"a b\" \\":[1,"x  y",{"\u0020":null}]}"#)
    }

    @Test("Escapes and quotes at every offset around the 64-byte blocks the compaction works in", arguments: 0..<140)
    func escapesAcrossBlocks(offset: Int) {
        for escapes in [#"\"#, #"""#, #"\""#, #"\\"#, #"\ " "#] {
            let text = "[" + String(repeating: " ", count: offset) + "\"" + String(repeating: "a", count: offset % 7)
                + escapes + " x \" , \"" + escapes + "\" ]"
            let bytes = Array(text.utf8)
            #expect(Self.compacted(bytes) == Self.reference(bytes), "\(offset) \(escapes)")
        }
    }

    @Test("Text already compact comes back unchanged")
    func alreadyCompact() {
        var generator = RecordGenerator(seed: 9)
        for _ in 0..<100 {
            let line = Array(RecordJSON.encodedString(generator.record()).utf8)
            #expect(Self.compacted(line) == line)
        }
    }

    /// `record` pretty-printed the way CloudKit answers: `"key" : value`, two-space indents.
    func prettyPrinted(_ record: Record) -> String {
        let value = try! JSONValue(parsing: String(decoding: Array(RecordJSON.encodedString(record).utf8), as: UTF8.self))
        var out = ""
        func write(_ value: JSONValue, indent: Int) {
            let pad = String(repeating: " ", count: indent)
            switch value {
            case .object(let object):
                guard !object.members.isEmpty else { out += "{ }"; return }
                out += "{\n"
                for (i, member) in object.members.enumerated() {
                    var key = JSONOutput()
                    key.appendString(member.key)
                    out += pad + "  " + String(decoding: key.bytes, as: UTF8.self) + " : "
                    write(member.value, indent: indent + 2)
                    out += i + 1 < object.members.count ? ",\n" : "\n"
                }
                out += pad + "}"
            case .array(let items):
                guard !items.isEmpty else { out += "[ ]"; return }
                out += "[\n"
                for (i, item) in items.enumerated() {
                    out += pad + "  "
                    write(item, indent: indent + 2)
                    out += i + 1 < items.count ? ",\n" : "\n"
                }
                out += pad + "]"
            default:
                var o = JSONOutput()
                o.appendValue(value)
                out += String(decoding: o.bytes, as: UTF8.self)
            }
        }
        write(value, indent: 0)
        return out + "\n"
    }
}
