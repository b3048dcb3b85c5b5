/// Parser for the `.ckdb` CloudKit schema language (grammar in cloudkit-json.md).
struct SchemaParser {
    private enum Kind: Equatable {
        case word(String)
        case quoted(String)
        case punct(Character)
        case end
    }

    private struct Item {
        var kind: Kind
        var span: SourceSpan
        var described: String {
            switch kind {
            case .word(let w): "'\(w)'"
            case .quoted(let q): "\"\(q)\""
            case .punct(let c): "'\(c)'"
            case .end: "end of input"
            }
        }
    }

    private var items: [Item] = []
    private var index = 0
    private var lexError: PredicateError?

    init(_ text: String) {
        let bytes = Array(text.utf8)
        var i = 0, line = 1, column = 1
        func span(_ start: Int, _ l: Int, _ c: Int) -> SourceSpan {
            SourceSpan(offset: start, length: max(1, i - start), line: l, column: c)
        }
        func step() {
            if bytes[i] == 0x0A { line += 1; column = 1 } else if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D { step(); continue }
            if (b == UInt8(ascii: "/") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/"))
                || (b == UInt8(ascii: "-") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "-")) {
                while i < bytes.count, bytes[i] != 0x0A { step() }
                continue
            }
            if b == UInt8(ascii: "/") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*") {
                let (s, l, c) = (i, line, column)
                step(); step()
                while i < bytes.count, !(bytes[i] == UInt8(ascii: "*") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/")) { step() }
                if i >= bytes.count {
                    lexError = PredicateError.expected("'*/' closing the comment", found: "end of input", at: span(s, l, c))
                    return
                }
                step(); step()
                continue
            }
            let (s, l, c) = (i, line, column)
            if b == UInt8(ascii: "\"") {
                step()
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { step() }
                if i >= bytes.count {
                    lexError = PredicateError.expected("a closing double quote", found: "end of input", at: span(s, l, c))
                    return
                }
                let name = String(decoding: bytes[(s + 1)..<i], as: UTF8.self)
                step()
                items.append(Item(kind: .quoted(name), span: span(s, l, c)))
                continue
            }
            let isWord: (UInt8) -> Bool = { ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
            if isWord(b) {
                while i < bytes.count, isWord(bytes[i]) { step() }
                items.append(Item(kind: .word(String(decoding: bytes[s..<i], as: UTF8.self)), span: span(s, l, c)))
                continue
            }
            if "(),;<>".utf8.contains(b) {
                step()
                items.append(Item(kind: .punct(Character(Unicode.Scalar(b))), span: span(s, l, c)))
                continue
            }
            lexError = PredicateError.expected("a schema word or punctuation", found: "'\(Character(Unicode.Scalar(b)))'", at: span(s, l, c))
            return
        }
        items.append(Item(kind: .end, span: SourceSpan(offset: i, length: 1, line: line, column: column)))
    }

    private var current: Item { items[index] }
    private mutating func advance() { if index < items.count - 1 { index += 1 } }

    private func isWord(_ word: String) -> Bool {
        if case .word(let w) = current.kind { return w.uppercased() == word }
        return false
    }

    private mutating func expectWord(_ word: String) throws(PredicateError) {
        guard isWord(word) else { throw PredicateError.expected("'\(word)'", found: current.described, at: current.span) }
        advance()
    }

    private mutating func expectPunct(_ c: Character, _ what: String) throws(PredicateError) {
        guard current.kind == .punct(c) else { throw PredicateError.expected(what, found: current.described, at: current.span) }
        advance()
    }

    private mutating func name(_ what: String) throws(PredicateError) -> String {
        switch current.kind {
        case .word(let w), .quoted(let w):
            advance()
            return w
        default:
            throw PredicateError.expected(what, found: current.described, at: current.span)
        }
    }

    mutating func parseSchema() throws(PredicateError) -> CloudKitSchema {
        if let lexError { throw lexError }
        try expectWord("DEFINE")
        try expectWord("SCHEMA")
        var schema = CloudKitSchema()
        while current.kind != .end {
            if isWord("CREATE") {
                advance()
                try expectWord("ROLE")
                schema.roles.append(try name("a role name"))
                try expectPunct(";", "';' after the role")
            } else if isWord("RECORD") {
                advance()
                try expectWord("TYPE")
                var type = CloudKitSchema.RecordType(name: try name("a record type name"))
                try expectPunct("(", "'(' starting the record type's fields")
                while true {
                    if isWord("GRANT") {
                        advance()
                        var permissions: [String] = []
                        repeat {
                            if current.kind == .punct(",") { advance() }
                            let permission = try name("READ, CREATE or WRITE").uppercased()
                            guard ["READ", "CREATE", "WRITE"].contains(permission) else {
                                throw PredicateError.expected("READ, CREATE or WRITE", found: "'\(permission)'", at: items[index - 1].span)
                            }
                            permissions.append(permission)
                        } while current.kind == .punct(",") && !isGrantEndAhead()
                        try expectWord("TO")
                        type.grants.append(CloudKitSchema.Grant(permissions: permissions, role: try name("a role")))
                    } else {
                        let fieldName = try name("a field name or GRANT")
                        var field = CloudKitSchema.Field(name: fieldName, type: try parseType())
                        while case .word(let w) = current.kind {
                            switch w.uppercased() {
                            case "QUERYABLE": field.isQueryable = true
                            case "SORTABLE": field.isSortable = true
                            case "SEARCHABLE": field.isSearchable = true
                            default: throw PredicateError.expected("QUERYABLE, SORTABLE, SEARCHABLE, ',' or ')'", found: current.described, at: current.span)
                            }
                            advance()
                        }
                        type.fields.append(field)
                    }
                    if current.kind == .punct(",") {
                        advance()
                        continue
                    }
                    try expectPunct(")", "',' or ')' in the record type")
                    break
                }
                try expectPunct(";", "';' after the record type")
                schema.recordTypes.append(type)
            } else {
                throw PredicateError.expected("CREATE ROLE or RECORD TYPE", found: current.described, at: current.span)
            }
        }
        return schema
    }

    /// After `GRANT READ,` a comma followed by a permission continues the list.
    private func isGrantEndAhead() -> Bool {
        guard index + 1 < items.count, case .word(let w) = items[index + 1].kind else { return true }
        return !["READ", "CREATE", "WRITE"].contains(w.uppercased())
    }

    private mutating func parseType() throws(PredicateError) -> CloudKitSchema.FieldType {
        if isWord("ENCRYPTED") {
            advance()
            var inner = try parseType()
            inner.isEncrypted = true
            return inner
        }
        if isWord("LIST") {
            advance()
            try expectPunct("<", "'<' after LIST")
            var inner = try parseType()
            try expectPunct(">", "'>' closing LIST<")
            inner.isList = true
            return inner
        }
        guard case .word(let w) = current.kind,
              ["ASSET", "BYTES", "DOUBLE", "INT64", "LOCATION", "REFERENCE", "STRING", "TIMESTAMP", "NUMBER"].contains(w.uppercased()) else {
            throw PredicateError.expected("a field type (ASSET BYTES DOUBLE INT64 LOCATION REFERENCE STRING TIMESTAMP NUMBER LIST<…> ENCRYPTED …)",
                                          found: current.described, at: current.span)
        }
        advance()
        var type = CloudKitSchema.FieldType(base: w.uppercased())
        if type.base == "NUMBER", isWord("PREFERRED") {
            advance()
            try expectWord("AS")
            let preferred = try name("INT64 or DOUBLE").uppercased()
            guard preferred == "INT64" || preferred == "DOUBLE" else {
                throw PredicateError.expected("INT64 or DOUBLE", found: "'\(preferred)'", at: items[index - 1].span)
            }
            type.preferred = preferred
        }
        return type
    }
}
