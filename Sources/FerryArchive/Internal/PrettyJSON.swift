import FerryRecords

/// Writes a ``JSONValue`` indented by two spaces, one member per line, for files people read
/// (`manifest.json`). Strings and numbers are written exactly as `JSONOutput` writes them.
enum PrettyJSON {
    static func bytes(_ value: JSONValue) -> [UInt8] {
        var out = JSONOutput(capacity: 1 << 14)
        write(value, indent: 0, into: &out)
        out.append(0x0A)
        return out.array
    }

    private static func newline(_ indent: Int, into out: inout JSONOutput) {
        out.append(0x0A)
        for _ in 0..<indent { out.append(UInt8(ascii: " ")) }
    }

    private static func write(_ value: JSONValue, indent: Int, into out: inout JSONOutput) {
        switch value {
        case .array(let items) where !items.isEmpty:
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 2, into: &out)
                write(item, indent: indent + 2, into: &out)
            }
            newline(indent, into: &out)
            out.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 2, into: &out)
                out.appendString(member.key)
                out.append(": ")
                write(member.value, indent: indent + 2, into: &out)
            }
            newline(indent, into: &out)
            out.append(UInt8(ascii: "}"))
        default:
            out.appendValue(value)
        }
    }
}
