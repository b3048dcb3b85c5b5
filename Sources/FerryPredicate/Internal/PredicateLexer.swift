import FerryInternals

/// Turns predicate text into tokens, tracking line and column as it goes (linear time).
struct PredicateLexer {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1
    private var column = 1

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// Every token, ending with `.end`.
    static func tokenize(_ text: String) throws(PredicateError) -> [Token] {
        var lexer = PredicateLexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    // MARK: - Scanning

    private func peek(_ ahead: Int = 0) -> UInt8? {
        let index = position + ahead
        return index < bytes.count ? bytes[index] : nil
    }

    private mutating func advance() {
        let byte = bytes[position]
        position += 1
        if byte == 0x0A {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func advance(_ count: Int) {
        for _ in 0..<count { advance() }
    }

    private func span(from start: (offset: Int, line: Int, column: Int)) -> SourceSpan {
        SourceSpan(offset: start.offset, length: position - start.offset, line: start.line, column: start.column)
    }

    private var mark: (offset: Int, line: Int, column: Int) { (position, line, column) }

    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || isDigit(byte)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func error(_ expected: String, found: String, at start: (offset: Int, line: Int, column: Int), length: Int = 1) -> PredicateError {
        PredicateError.expected(expected, found: found,
                                at: SourceSpan(offset: start.offset, length: length, line: start.line, column: start.column))
    }

    private func describeByte(at index: Int) -> String {
        guard index < bytes.count else { return "end of input" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte < 0x80 { return "byte \(Hex.prefixed(byte))" }
        var end = index + 1
        while end < bytes.count, end - index < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        if let text = String(validating: bytes[index..<end], as: UTF8.self) { return "'\(text)'" }
        return "byte \(Hex.prefixed(byte))"
    }

    /// The next token.
    mutating func next() throws(PredicateError) -> Token {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D || byte == 0x0C || byte == 0x0B {
            advance()
        }
        let start = mark
        guard let byte = peek() else { return Token(kind: .end, span: span(from: start)) }

        if Self.isIdentifierStart(byte) { return try identifier(start) }
        if Self.isDigit(byte) || (byte == UInt8(ascii: ".") && peek(1).map(Self.isDigit) == true) {
            return try number(start)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return try string(start, quote: byte)
        case UInt8(ascii: "$"):
            advance()
            let name = scanName()
            if name.isEmpty { throw error("a variable name after '$'", found: describeByte(at: position), at: start) }
            return Token(kind: .variable(name), span: span(from: start))
        case UInt8(ascii: "#"):
            advance()
            let name = scanName()
            if name.isEmpty { throw error("a key name after '#'", found: describeByte(at: position), at: start) }
            return Token(kind: .identifier(name, escaped: true), span: span(from: start))
        case UInt8(ascii: "@"):
            advance()
            let name = scanName()
            if name.isEmpty { throw error("a collection operator name after '@'", found: describeByte(at: position), at: start) }
            return Token(kind: .atName("@" + name), span: span(from: start))
        case UInt8(ascii: "%"): return try specifier(start)
        default: return try punctuation(start, byte)
        }
    }

    private mutating func scanName() -> String {
        let begin = position
        while let byte = peek(), Self.isIdentifierByte(byte) { advance() }
        return String(decoding: bytes[begin..<position], as: UTF8.self)
    }

    private mutating func identifier(_ start: (offset: Int, line: Int, column: Int)) throws(PredicateError) -> Token {
        var name = scanName()
        // UTI-CONFORMS-TO and UTI-EQUALS contain dashes.
        if name.uppercased() == "UTI", peek() == UInt8(ascii: "-") {
            for suffix in ["-CONFORMS-TO", "-EQUALS"] {
                let end = position + suffix.utf8.count
                if end <= bytes.count,
                   String(decoding: bytes[position..<end], as: UTF8.self).uppercased() == suffix,
                   end == bytes.count || !Self.isIdentifierByte(bytes[end]) {
                    advance(suffix.utf8.count)
                    name += suffix
                    break
                }
            }
        }
        // A selector: `name:` or `name:part:` with no spaces (but not `name :=`).
        if peek() == UInt8(ascii: ":"), peek(1) != UInt8(ascii: "=") {
            var selector = name + ":"
            advance()
            while let byte = peek(), Self.isIdentifierStart(byte) {
                let save = (position, line, column)
                let part = scanName()
                if peek() == UInt8(ascii: ":"), peek(1) != UInt8(ascii: "=") {
                    advance()
                    selector += part + ":"
                } else {
                    (position, line, column) = save
                    break
                }
            }
            return Token(kind: .selector(selector), span: span(from: start))
        }
        if name.utf8.count <= 15, let keyword = Keyword.table[name.uppercased()] {
            return Token(kind: .keyword(keyword), span: span(from: start))
        }
        return Token(kind: .identifier(name, escaped: false), span: span(from: start))
    }

    private mutating func number(_ start: (offset: Int, line: Int, column: Int)) throws(PredicateError) -> Token {
        if peek() == UInt8(ascii: "0"), let marker = peek(1).map({ $0 | 0x20 }),
           marker == UInt8(ascii: "x") || marker == UInt8(ascii: "o") || marker == UInt8(ascii: "b") {
            let radix = marker == UInt8(ascii: "x") ? 16 : marker == UInt8(ascii: "o") ? 8 : 2
            advance(2)
            let begin = position
            while let byte = peek(), Self.isIdentifierByte(byte) { advance() }
            let digits = String(decoding: bytes[begin..<position], as: UTF8.self)
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                throw error("a base-\(radix) number", found: "'\(String(decoding: bytes[start.offset..<position], as: UTF8.self).prefix(40))'",
                            at: start, length: position - start.offset)
            }
            let kind: Token.Kind = value <= UInt64(Int64.max) ? .integer(Int64(value)) : .double(Double(value))
            return Token(kind: kind, span: span(from: start))
        }
        var isInteger = true
        while let byte = peek(), Self.isDigit(byte) { advance() }
        if peek() == UInt8(ascii: "."), peek(1).map(Self.isDigit) == true {
            isInteger = false
            advance()
            while let byte = peek(), Self.isDigit(byte) { advance() }
        }
        if let e = peek(), e | 0x20 == UInt8(ascii: "e") {
            var ahead = 1
            if peek(1) == UInt8(ascii: "+") || peek(1) == UInt8(ascii: "-") { ahead = 2 }
            if peek(ahead).map(Self.isDigit) == true {
                isInteger = false
                advance(ahead)
                while let byte = peek(), Self.isDigit(byte) { advance() }
            }
        }
        if let byte = peek(), Self.isIdentifierStart(byte) {
            throw error("an operator after the number", found: describeByte(at: position), at: mark)
        }
        let text = String(decoding: bytes[start.offset..<position], as: UTF8.self)
        if isInteger, let value = Int64(text) {
            return Token(kind: .integer(value), span: span(from: start))
        }
        guard let value = Double(text), value.isFinite else {
            throw error("a finite number", found: "'\(text.prefix(40))'", at: start, length: position - start.offset)
        }
        return Token(kind: .double(value), span: span(from: start))
    }

    private mutating func string(_ start: (offset: Int, line: Int, column: Int), quote: UInt8) throws(PredicateError) -> Token {
        advance()
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else {
                throw error("a closing \(quote == UInt8(ascii: "\"") ? "double" : "single") quote", found: "end of input", at: start)
            }
            if byte == quote {
                advance()
                break
            }
            if byte != UInt8(ascii: "\\") {
                // Copy a run of plain bytes at once.
                let begin = position
                while let b = peek(), b != quote, b != UInt8(ascii: "\\") { advance() }
                out.append(contentsOf: bytes[begin..<position])
                continue
            }
            let escapeStart = mark
            advance()
            guard let c = peek() else { continue }
            advance()
            switch c {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "a"): out.append(0x07)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "v"): out.append(0x0B)
            case UInt8(ascii: "x"), UInt8(ascii: "u"):
                let count = c == UInt8(ascii: "x") ? 2 : 4
                var value: UInt32 = 0
                for _ in 0..<count {
                    guard let h = peek(), let digit = Hex.value(of: h) else {
                        throw error("\(count) hexadecimal digits after '\\\(Character(Unicode.Scalar(c)))'",
                                    found: describeByte(at: position), at: escapeStart, length: position - escapeStart.offset + 1)
                    }
                    value = value * 16 + UInt32(digit)
                    advance()
                }
                guard let scalar = Unicode.Scalar(value) else {
                    throw error("a Unicode scalar value", found: "U+\(Hex.digits(of: value, uppercase: true))",
                                at: escapeStart, length: position - escapeStart.offset)
                }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = UInt32(c - UInt8(ascii: "0"))
                for _ in 0..<2 {
                    guard let d = peek(), d >= UInt8(ascii: "0"), d <= UInt8(ascii: "7") else { break }
                    value = value * 8 + UInt32(d - UInt8(ascii: "0"))
                    advance()
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: value)))).utf8))
            default:
                // Any other `\c` is `c` (including multi-byte characters: copy the continuation bytes).
                out.append(c)
                while let b = peek(), b & 0xC0 == 0x80 {
                    out.append(b)
                    advance()
                }
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw error("valid UTF-8 text in the string", found: "invalid UTF-8", at: start, length: position - start.offset)
        }
        return Token(kind: .string(text), span: span(from: start))
    }

    private mutating func specifier(_ start: (offset: Int, line: Int, column: Int)) throws(PredicateError) -> Token {
        advance()
        guard let first = peek() else { throw error("a format specifier after '%'", found: "end of input", at: start) }
        if first == UInt8(ascii: "@") || first == UInt8(ascii: "K") {
            advance()
            return Token(kind: .specifier(first == UInt8(ascii: "@") ? "%@" : "%K"), span: span(from: start))
        }
        if first == UInt8(ascii: "%") {
            throw error("a format specifier", found: "'%%' (a literal percent sign, which is not an operator)", at: start, length: 2)
        }
        if first == UInt8(ascii: "k") {
            throw error("a format specifier ('%K' for a key path is upper case)", found: "'%k'", at: start, length: 2)
        }
        // printf: [digits.] [hh h l ll q L z t j] conversion
        while let byte = peek(), Self.isDigit(byte) || byte == UInt8(ascii: ".") { advance() }
        while let byte = peek(), "hlqLztj".utf8.contains(byte) { advance() }
        guard let conversion = peek(), "dDiuUoOxXeEfFgGcCsSaAp".utf8.contains(conversion) else {
            throw error("a format specifier such as %@, %K, %d or %f", found: describeByte(at: position), at: start,
                        length: max(1, position - start.offset + 1))
        }
        advance()
        return Token(kind: .specifier(String(decoding: bytes[start.offset..<position], as: UTF8.self)), span: span(from: start))
    }

    private mutating func punctuation(_ start: (offset: Int, line: Int, column: Int), _ byte: UInt8) throws(PredicateError) -> Token {
        let next = peek(1)
        func two(_ b: Character) -> Bool { next == b.asciiValue }
        let punct: Punct
        var length = 1
        switch Character(Unicode.Scalar(byte)) {
        case "(": punct = .leftParen
        case ")": punct = .rightParen
        case "{": punct = .leftBrace
        case "}": punct = .rightBrace
        case "[": punct = .leftBracket
        case "]": punct = .rightBracket
        case ",": punct = .comma
        case ".": punct = .dot
        case ":": if two("=") { punct = .assign; length = 2 } else { punct = .colon }
        case "=":
            if two("=") { punct = .equalEqual; length = 2 }
            else if two("<") { punct = .equalLess; length = 2 }
            else if two(">") { punct = .equalGreater; length = 2 }
            else { punct = .equal }
        case "!": if two("=") { punct = .notEqual; length = 2 } else { punct = .bang }
        case "<":
            if two(">") { punct = .lessGreater; length = 2 }
            else if two("=") { punct = .lessEqual; length = 2 }
            else if two("<") { punct = .shiftLeft; length = 2 }
            else { punct = .less }
        case ">":
            if two("=") { punct = .greaterEqual; length = 2 }
            else if two(">") { punct = .shiftRight; length = 2 }
            else { punct = .greater }
        case "&": if two("&") { punct = .ampAmp; length = 2 } else { punct = .amp }
        case "|": if two("|") { punct = .pipePipe; length = 2 } else { punct = .pipe }
        case "+": punct = .plus
        case "-": punct = .minus
        case "*": if two("*") { punct = .starStar; length = 2 } else { punct = .star }
        case "/": punct = .slash
        case "^": punct = .caret
        case "?":
            throw error("an expression ('?' is only a wildcard inside LIKE strings)", found: "'?'", at: start)
        default:
            throw error("an expression or operator", found: describeByte(at: position), at: start)
        }
        advance(length)
        return Token(kind: .punct(punct), span: span(from: start))
    }
}
