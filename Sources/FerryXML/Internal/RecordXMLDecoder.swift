import FerryInternals
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns an expanded `<record>` subtree into a ``Record``: checks every element and attribute
/// against the format (Docs/XMLFormat.md), applies the limits, and reverses the writer's escapes.
/// A class, so that the closures of its element walks share it instead of copying it.
final class RecordXMLDecoder {
    let names: XMLNameTable
    let limits: XMLRecordReader.Configuration
    private let namespace: [UInt8] = Array(XMLRecordFormat.namespace.utf8)
    /// The libxml2 namespace record last seen to hold Ferry's namespace (compared by pointer).
    private var knownNamespace: UnsafeMutableRawPointer?

    init(names: XMLNameTable, limits: XMLRecordReader.Configuration) {
        self.names = names
        self.limits = limits
    }

    func error(_ code: XMLFormatError.Code, _ message: String, _ node: XMLNodeRef, attribute: String? = nil) -> XMLDecodeError {
        XMLDecodeError(code: code, message: message, node: node, attribute: attribute)
    }

    // MARK: Names

    /// Whether `node` is in Ferry's namespace.
    func isInNamespace(_ node: XMLNodeRef) -> Bool {
        guard let record = node.namespaceRecord else { return false }
        if record == knownNamespace { return true }
        guard let href = node.namespace, strlen(href) == namespace.count,
              memcmp(href, namespace, namespace.count) == 0 else { return false }
        knownNamespace = record
        return true
    }

    /// A name or text for a message, cut at 80 bytes.
    static func describe(_ pointer: UnsafePointer<UInt8>?) -> String {
        guard let pointer else { return "?" }
        let length = strlen(pointer)
        let shown = String(decoding: UnsafeBufferPointer(start: pointer, count: min(length, 80)), as: UTF8.self)
        return length > 80 ? shown + "…" : shown
    }

    static func describe(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let shown = String(decoding: bytes.prefix(60), as: UTF8.self)
        return bytes.count > 60 ? shown + "…" : shown
    }

    /// The name of a child element, checked for namespace, length and depth.
    func elementName(_ node: XMLNodeRef, depth: Int, in parent: StaticString,
                              expected: @autoclosure () -> String) throws(XMLDecodeError) -> XMLName {
        if depth > limits.maximumDepth {
            throw error(.tooDeep, "expected nesting of at most \(limits.maximumDepth) levels, found <\(Self.describe(node.name))> at level \(depth)", node)
        }
        guard isInNamespace(node) else {
            let ns = node.namespace.map { "namespace \(Self.describe($0))" } ?? "no namespace"
            throw error(.wrongNamespace, "expected <\(Self.describe(node.name))> in namespace \(XMLRecordFormat.namespace), found it in \(ns)", node)
        }
        guard let name = names.lookup(node.name), name.isElement else {
            if let p = node.name, strlen(p) > limits.maximumNameBytes {
                throw error(.tooLarge, "expected names of at most \(limits.maximumNameBytes) bytes, found a \(strlen(p))-byte element name in <\(parent)>", node)
            }
            throw error(.unexpectedContent, "expected \(expected()) in <\(parent)>, found <\(Self.describe(node.name))>", node)
        }
        return name
    }

    /// Calls `body` for each attribute with its name, checking that it is one of Ferry's, in no
    /// namespace, and that the element has at most ``XMLRecordReader/Configuration/maximumAttributes``.
    @inline(__always)
    func forEachAttribute(of node: XMLNodeRef, _ element: StaticString,
                          _ body: (XMLName, XMLAttributeRef) throws(XMLDecodeError) -> Bool) throws(XMLDecodeError) {
        var attribute = node.firstAttribute
        var count = 0
        while let a = attribute {
            count += 1
            if count > limits.maximumAttributes {
                throw error(.tooLarge, "expected at most \(limits.maximumAttributes) attributes on <\(element)>, found more", node)
            }
            guard a.namespace == nil, let name = names.lookup(a.name), name.isAttribute, try body(name, a) else {
                if let p = a.name, strlen(p) > limits.maximumNameBytes {
                    throw error(.tooLarge, "expected names of at most \(limits.maximumNameBytes) bytes, found a \(strlen(p))-byte attribute name on <\(element)>", node)
                }
                let prefix = a.namespace == nil ? "" : "{\(Self.describe(a.namespace))}"
                throw error(.unexpectedContent, "expected only the attributes Ferry's format gives <\(element)>, found \(prefix)\(Self.describe(a.name))=\"…\"",
                            node, attribute: Self.describe(a.name))
            }
            attribute = a.next
        }
    }

    /// Whether the element has `escaped="true"` (then its other attributes and its text are escaped).
    @inline(__always)
    func isEscaped(_ node: XMLNodeRef) throws(XMLDecodeError) -> Bool {
        var attribute = node.firstAttribute
        while let a = attribute {
            if a.name == names.escaped, a.namespace == nil {
                return try boolean(a, "escaped", node)
            }
            attribute = a.next
        }
        return false
    }

    // MARK: Values

    /// An `xs:boolean` attribute: `true`, `false`, `1` or `0`.
    func boolean(_ attribute: XMLAttributeRef, _ name: String, _ node: XMLNodeRef) throws(XMLDecodeError) -> Bool {
        try attribute.withValue { (v) throws(XMLDecodeError) -> Bool in
            let t = Self.trimmed(v)
            if Self.equals(t, "true") || Self.equals(t, "1") { return true }
            if Self.equals(t, "false") || Self.equals(t, "0") { return false }
            throw error(.invalidValue, "expected \(name)=\"true\" or \"false\", found \(name)=\"\(Self.describe(v))\"", node, attribute: name)
        }
    }

    /// The attribute's value as a string, unescaped when the element is escaped.
    func string(_ attribute: XMLAttributeRef, _ name: String, _ escaped: Bool, _ node: XMLNodeRef) throws(XMLDecodeError) -> String {
        try attribute.withValue { (bytes) throws(XMLDecodeError) -> String in
            try string(bytes, escaped, node, attribute: name)
        }
    }

    func string(_ bytes: UnsafeBufferPointer<UInt8>, _ escaped: Bool, _ node: XMLNodeRef, attribute: String? = nil) throws(XMLDecodeError) -> String {
        if bytes.count > limits.maximumTextBytes {
            throw error(.tooLarge, "expected text of at most \(limits.maximumTextBytes) bytes, found \(bytes.count) bytes", node, attribute: attribute)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard escaped else { return text }
        guard let plain = XMLTextEscaping.unescape(text) else {
            throw error(.invalidValue, "expected only \\\\ and \\uXXXX escapes in an escaped=\"true\" element, found another backslash sequence", node, attribute: attribute)
        }
        return plain
    }

    /// An attribute holding an INT64.
    func int64(_ attribute: XMLAttributeRef, _ name: StaticString, _ node: XMLNodeRef) throws(XMLDecodeError) -> Int64 {
        try attribute.withValue { (v) throws(XMLDecodeError) -> Int64 in try int64(v, "\(name)=\"…\"", node, attribute: "\(name)") }
    }

    /// An attribute holding a DOUBLE.
    func double(_ attribute: XMLAttributeRef, _ name: StaticString, _ node: XMLNodeRef) throws(XMLDecodeError) -> Double {
        try attribute.withValue { (v) throws(XMLDecodeError) -> Double in try double(v, "\(name)=\"…\"", node, attribute: "\(name)") }
    }

    /// Whether `bytes` spell `literal`.
    @inline(__always)
    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && (bytes.count == 0 || memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0)
    }

    @inline(__always)
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var i = 0
        var end = bytes.count
        while i < end, isSpace(bytes[i]) { i += 1 }
        while end > i, isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[i..<end])
    }

    /// A 64-bit integer (`xs:long`: optional sign, digits, surrounding whitespace).
    func int64(_ bytes: UnsafeBufferPointer<UInt8>, _ what: @autoclosure () -> String, _ node: XMLNodeRef,
               attribute: @autoclosure () -> String? = nil) throws(XMLDecodeError) -> Int64 {
        let t = Self.trimmed(bytes)
        var i = 0
        let end = t.count
        var negative = false
        if i < end && (t[i] == UInt8(ascii: "-") || t[i] == UInt8(ascii: "+")) {
            negative = t[i] == UInt8(ascii: "-")
            i += 1
        }
        var magnitude: UInt64 = 0
        var ok = i < end
        while i < end {
            let d = t[i] &- 48
            if d > 9 { ok = false; break }
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { ok = false; break }
            magnitude = s
            i += 1
        }
        if ok {
            if negative && magnitude <= UInt64(Int64.max) + 1 { return Int64(truncatingIfNeeded: 0 &- magnitude) }
            if !negative && magnitude <= UInt64(Int64.max) { return Int64(magnitude) }
        }
        throw error(.invalidValue, "expected a 64-bit integer for \(what()), found \"\(Self.describe(bytes))\"", node, attribute: attribute())
    }

    /// Whether `text` spells infinity or NaN: `xs:double`'s `INF`, `+INF`, `-INF`, `NaN`, or
    /// another case or the long form (`inf`, `-Infinity`, `nan`), which no reader takes as a number.
    static func isNonFiniteSpelling(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        // Every spelling holds an n; no number does, so numbers take no allocation here.
        guard text.count <= 9, text.contains(where: { $0 | 0x20 == UInt8(ascii: "n") }) else { return false }
        var word = String(decoding: text, as: UTF8.self).lowercased()
        if word.hasPrefix("+") || word.hasPrefix("-") { word.removeFirst() }
        return word == "inf" || word == "infinity" || word == "nan"
    }

    /// A finite double in decimal or exponent notation, correctly rounded. `xs:double`'s `INF`,
    /// `+INF`, `-INF` and `NaN` are refused, as is a decimal beyond the largest double (`1e400`):
    /// JSON, and so NDJSON and CloudKit, cannot carry them, so reading them would change the value.
    func double(_ bytes: UnsafeBufferPointer<UInt8>, _ what: @autoclosure () -> String, _ node: XMLNodeRef,
                attribute: @autoclosure () -> String? = nil) throws(XMLDecodeError) -> Double {
        let t = Self.trimmed(bytes)
        if Self.isNonFiniteSpelling(t) {
            throw error(.invalidValue, "expected a finite number for \(what()), found \"\(Self.describe(bytes))\" "
                        + "(JSON, NDJSON and CloudKit have no infinity or NaN)", node, attribute: attribute())
        }
        var valid = !t.isEmpty && t.count < 400
        var digits = 0
        for b in t {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): break
            default: valid = false
            }
        }
        if valid && digits > 0, let value = Double(String(decoding: t, as: UTF8.self)) {
            // A decimal past the largest double is an error, as in JSON, not INF (which has its spelling).
            guard value.isFinite else {
                throw error(.invalidValue, "expected a finite number within the range of a double for \(what()), found \"\(Self.describe(bytes))\"",
                            node, attribute: attribute())
            }
            return value
        }
        throw error(.invalidValue, "expected a number for \(what()), found \"\(Self.describe(bytes))\"", node, attribute: attribute())
    }

    /// Checks an informational `date` against the timestamp it must show.
    func checkDate(_ attribute: XMLAttributeRef?, _ milliseconds: Int64, _ node: XMLNodeRef) throws(XMLDecodeError) {
        guard let attribute else { return }
        try attribute.withValue { (v) throws(XMLDecodeError) in
            var text = ISO8601.Text(0, 0, 0)
            let n = ISO8601.format(milliseconds: milliseconds, into: &text)
            let t = Self.trimmed(v)
            let matches = n > 0 && t.count == n && withUnsafeBytes(of: &text) { memcmp($0.baseAddress!, t.baseAddress!, n) == 0 }
            if !matches {
                let expected = ISO8601.string(milliseconds: milliseconds).map { "date=\"\($0)\"" } ?? "no date (the year is outside 0001–9999)"
                throw error(.invalidValue, "expected \(expected) to match the timestamp \(milliseconds), found date=\"\(Self.describe(v))\" (the timestamp is the value; date is only for people — change both)",
                            node, attribute: "date")
            }
        }
    }

    @inline(__always)
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D }

    static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { bytes.allSatisfy(isSpace) }

    /// JSON text (of `<json>`, `<unknown>`, `<pluginFields>`) as a value.
    func json(_ text: String, _ node: XMLNodeRef) throws(XMLDecodeError) -> JSONValue {
        var copy = text
        let depth = limits.maximumJSONDepth
        let result = copy.withUTF8 { bytes in
            Result { () throws(RecordFormatError) -> JSONValue in
                try RecordJSON.parseValue(UnsafeRawBufferPointer(bytes), configuration: .init(maximumDepth: depth))
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let failure):
            throw error(.invalidValue, "expected JSON text in <\(Self.describe(node.name))>, found invalid JSON: \(failure.message)", node)
        }
    }

    /// The text of `node`, which must hold no elements.
    func text(of node: XMLNodeRef, _ escaped: Bool) throws(XMLDecodeError) -> String {
        let (text, element) = try textAndFirstElement(node, escaped)
        if let element {
            throw error(.unexpectedContent, "expected only text in <\(Self.describe(node.name))>, found <\(Self.describe(element.name))>", element)
        }
        return text
    }

    /// Calls `body` with the text of `node` (which must hold no elements), uncopied when it is one
    /// text node.
    func withText<R>(of node: XMLNodeRef, _ body: (UnsafeBufferPointer<UInt8>) throws(XMLDecodeError) -> R) throws(XMLDecodeError) -> R {
        if let child = node.firstChild, child.isText, child.nextSibling == nil, let content = child.content {
            let n = strlen(content)
            if n > limits.maximumTextBytes {
                throw error(.tooLarge, "expected text of at most \(limits.maximumTextBytes) bytes, found \(n) bytes in <\(Self.describe(node.name))>", node)
            }
            return try body(UnsafeBufferPointer(start: content, count: n))
        }
        var bytes = Array(try text(of: node, false).utf8)
        return try bytes.withUnsafeMutableBufferPointer { (b) throws(XMLDecodeError) -> R in try body(UnsafeBufferPointer(b)) }
    }

    /// The text children of `node` before its first child element, and that element.
    func textAndFirstElement(_ node: XMLNodeRef, _ escaped: Bool) throws(XMLDecodeError) -> (String, XMLNodeRef?) {
        var child = node.firstChild
        var single: UnsafePointer<UInt8>?
        var pieces: [UInt8]?
        var total = 0
        while let c = child {
            if c.isElement { break }
            if c.isText, let content = c.content {
                let n = strlen(content)
                total += n
                if total > limits.maximumTextBytes {
                    throw error(.tooLarge, "expected text of at most \(limits.maximumTextBytes) bytes, found more in <\(Self.describe(node.name))>", node)
                }
                if single == nil && pieces == nil {
                    single = content
                } else {
                    if pieces == nil { pieces = Array(UnsafeBufferPointer(start: single!, count: strlen(single!))) }
                    pieces!.append(contentsOf: UnsafeBufferPointer(start: content, count: n))
                }
            } else if c.isEntityReference {
                throw error(.forbiddenDTD, "expected no entity references, found one in <\(Self.describe(node.name))>", node)
            }
            child = c.nextSibling
        }
        let text: String
        if let pieces {
            text = try pieces.withUnsafeBufferPointer { (b) throws(XMLDecodeError) -> String in try string(b, escaped, node) }
        } else if let single {
            text = try string(UnsafeBufferPointer(start: single, count: strlen(single)), escaped, node)
        } else {
            text = ""
        }
        return (text, child)
    }

    /// Checks that a node between elements is blank text, a comment or a processing instruction.
    func checkBlank(_ node: XMLNodeRef, in parent: XMLNodeRef) throws(XMLDecodeError) {
        if node.isText, let content = node.content, !Self.isBlank(UnsafeBufferPointer(start: content, count: strlen(content))) {
            throw error(.unexpectedContent, "expected only elements and whitespace in <\(Self.describe(parent.name))>, found text \"\(Self.describe(content))\"", parent)
        }
        if node.isEntityReference {
            throw error(.forbiddenDTD, "expected no entity references, found one in <\(Self.describe(parent.name))>", parent)
        }
    }

    /// Calls `body` for each child element of `node` with its name; other children must be blank.
    @inline(__always)
    func forEachChild(of node: XMLNodeRef, depth: Int, in parent: StaticString, expected: @autoclosure () -> String,
                               _ body: (RecordXMLDecoder, XMLNodeRef, XMLName) throws(XMLDecodeError) -> Void) throws(XMLDecodeError) {
        var child = node.firstChild
        while let c = child {
            child = c.nextSibling
            guard c.isElement else {
                try checkBlank(c, in: node)
                continue
            }
            let name = try elementName(c, depth: depth, in: parent, expected: expected())
            try body(self, c, name)
        }
    }

    /// Adds an `<unknown key="…">JSON</unknown>` member, refusing a repeated or modelled key.
    func addUnknown(_ node: XMLNodeRef, to object: inout JSONObject, reserved: [String]) throws(XMLDecodeError) {
        let escaped = try isEscaped(node)
        var key: String?
        try forEachAttribute(of: node, "unknown") { (name, a) throws(XMLDecodeError) -> Bool in
            switch name {
            case .key: key = try string(a, "key", escaped, node)
            case .escaped: break
            default: return false
            }
            return true
        }
        guard let key else { throw error(.unexpectedContent, "expected key=\"…\" on <unknown>, found none", node) }
        if reserved.contains(key) || object[key] != nil {
            throw error(.unexpectedContent, "expected each key once, found \"\(key)\" twice (an <unknown> repeats a key)", node, attribute: "key")
        }
        object.append(key: key, value: try json(try text(of: node, escaped), node))
    }
}
