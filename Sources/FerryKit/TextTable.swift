import FerryInternals

/// Text for a terminal: columns lined up, names made harmless.
package enum TextTable {
    /// `rows` as left-aligned columns separated by two spaces, each cell made ``visible(_:)``.
    package static func lines(_ rows: [[String]]) -> [String] {
        let rows = rows.map { $0.map(visible) }
        guard let first = rows.first else { return [] }
        var widths = Array(repeating: 0, count: first.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }
    }

    /// `text` with its control characters (C0, DEL, C1; U+2028, U+2029) written as JSON writes
    /// them (`\n`, `\u001b`), and backslashes doubled when there are any: a name printed in a
    /// table or a line of text cannot break the line or drive the terminal.
    package static func visible(_ text: String) -> String {
        func isControl(_ v: UInt32) -> Bool { v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 }
        guard text.unicodeScalars.contains(where: { isControl($0.value) }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where isControl(scalar.value): out += "\\u" + Hex.digits(of: scalar.value, width: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
