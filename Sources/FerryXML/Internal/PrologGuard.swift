import FerryRecords

/// Watches the bytes before the root element, as they are read, and refuses what Ferry's XML never
/// contains: a DOCTYPE (the only place entities, external subsets and default attributes can be
/// declared — so billion laughs and XXE never reach the parser), UTF-16 input and an encoding
/// declaration other than UTF-8.
///
/// It runs in the input callback, before libxml2 sees the bytes, so a refused document is never
/// parsed past its prolog and nothing it names is ever opened. Once the root element starts the
/// guard is done and costs nothing.
struct PrologGuard {
    private enum State {
        case start, prolog, lessThan, processingInstruction, questionMark, bang, comment, dash1, dash2, done
    }

    private var state = State.start
    private var bang: [UInt8] = []
    private var declaration: [UInt8] = []
    private var isFirstInstruction = true
    private var offset = 0
    /// Position of the next byte, and of the `<` that began the current construct.
    private var position = TextPosition()
    private var constructLine = 1
    private var constructColumn = 1

    /// Whether the root element has started (no more checks).
    var isDone: Bool { if case .done = state { true } else { false } }

    /// Checks the next bytes; returns an error for a refused prolog.
    mutating func inspect(_ bytes: UnsafeRawBufferPointer) -> XMLFormatError? {
        if case .done = state { return nil }
        for b in bytes {
            defer {
                offset += 1
                position.advance(over: b)
            }
            switch state {
            case .start:
                if b == 0xFE || b == 0xFF || b == 0x00 {
                    return XMLFormatError(.invalidUTF8, "expected a UTF-8 document, found a UTF-16 or UTF-32 byte order mark or NUL bytes",
                                          line: 1, column: 1)
                }
                state = .prolog
                if b == 0xEF { position.column = 0; continue } // UTF-8 byte order mark (EF BB BF)
                if let error = prolog(b) { return error }
            case .prolog:
                if offset < 3 && (b == 0xBB || b == 0xBF) { continue }
                if let error = prolog(b) { return error }
            case .lessThan:
                switch b {
                case UInt8(ascii: "?"): state = .processingInstruction; declaration = []
                case UInt8(ascii: "!"): state = .bang; bang = []
                default: state = .done; return nil
                }
            case .processingInstruction, .questionMark:
                if isFirstInstruction && declaration.count < 512 { declaration.append(b) }
                if b == UInt8(ascii: ">") && state == .questionMark {
                    if isFirstInstruction, let error = checkDeclaration() { return error }
                    isFirstInstruction = false
                    state = .prolog
                } else {
                    state = b == UInt8(ascii: "?") ? .questionMark : .processingInstruction
                }
            case .bang:
                bang.append(b)
                if bang == [UInt8(ascii: "-"), UInt8(ascii: "-")] {
                    state = .comment
                } else if bang.count == 7 {
                    if bang == Array("DOCTYPE".utf8) {
                        return XMLFormatError(.forbiddenDTD, "expected no DOCTYPE (Ferry's XML needs no DTD, and DTDs declare the entities behind XXE and billion-laughs attacks), found <!DOCTYPE",
                                              line: constructLine, column: constructColumn)
                    }
                    state = .done
                    return nil
                } else if bang.count >= 2 && bang.first == UInt8(ascii: "-") && bang != [UInt8(ascii: "-"), UInt8(ascii: "-")] {
                    state = .done
                    return nil
                }
            case .comment:
                if b == UInt8(ascii: "-") { state = .dash1 }
            case .dash1:
                state = b == UInt8(ascii: "-") ? .dash2 : .comment
            case .dash2:
                state = b == UInt8(ascii: ">") ? .prolog : (b == UInt8(ascii: "-") ? .dash2 : .comment)
            case .done:
                return nil
            }
        }
        return nil
    }

    private mutating func prolog(_ b: UInt8) -> XMLFormatError? {
        switch b {
        case 0x20, 0x09, 0x0A, 0x0D: break
        case UInt8(ascii: "<"):
            state = .lessThan
            constructLine = position.line
            constructColumn = position.column
        default: state = .done // not XML; libxml2 reports it
        }
        if b != UInt8(ascii: "<") && b != 0x20 && b != 0x09 && b != 0x0A && b != 0x0D { isFirstInstruction = false }
        return nil
    }

    /// Refuses `<?xml … encoding="X"?>` unless X is UTF-8.
    private func checkDeclaration() -> XMLFormatError? {
        let key = Array("encoding".utf8)
        guard declaration.starts(with: Array("xml".utf8)), declaration.count > key.count else { return nil }
        var found: Int?
        for i in 0...(declaration.count - key.count) where declaration[i..<(i + key.count)].elementsEqual(key) {
            found = i + key.count
            break
        }
        guard let found else { return nil }
        var rest = declaration[found...].drop { $0 == 0x20 || $0 == UInt8(ascii: "=") || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return nil }
        rest = rest.dropFirst()
        let name = String(decoding: rest.prefix { $0 != quote }, as: UTF8.self)
        let lower = name.lowercased()
        if lower == "utf-8" || lower == "utf8" { return nil }
        return XMLFormatError(.invalidUTF8, "expected a UTF-8 document, found encoding=\"\(name)\" in the XML declaration",
                              line: constructLine, column: constructColumn)
    }
}
