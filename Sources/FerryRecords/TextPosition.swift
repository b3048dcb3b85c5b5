/// A 1-based line and column (in characters: UTF-8 lead bytes) in a text, moved forward byte by
/// byte. Every reader's positions — NDJSON lines, XML records, change logs — count this way.
package struct TextPosition: Equatable, Sendable {
    package var line: Int
    package var column: Int

    package init(line: Int = 1, column: Int = 1) {
        self.line = line
        self.column = column
    }

    /// Moves past `byte`: a newline starts the next line; a UTF-8 continuation byte is part of
    /// the character before it.
    @inline(__always) package mutating func advance(over byte: UInt8) {
        if byte == 0x0A {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    /// Moves past the first `count` bytes of `text` (at most all of them).
    package mutating func advance(over text: UnsafeRawBufferPointer, count: Int) {
        for i in 0..<min(max(count, 0), text.count) { advance(over: text[i]) }
    }

    /// `file:line:column: record N: ` — the start of an error message, as compilers print it;
    /// the byte offset stands in for a line that is not known. Empty when nothing is known.
    package static func errorPrefix(source: String?, line: Int?, column: Int?, byteOffset: Int? = nil,
                                    recordIndex: Int? = nil) -> String {
        var text = ""
        if let source { text += source + ":" }
        if let line {
            text += "\(line):"
            if let column { text += "\(column):" }
        } else if let byteOffset {
            text += "byte \(byteOffset):"
        }
        if !text.isEmpty { text += " " }
        if let recordIndex { text += "record \(recordIndex): " }
        return text
    }
}
