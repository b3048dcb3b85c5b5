// The only file in Ferry that calls libxml2. Every handle has exactly one owner, a final class
// that frees it once in `deinit`; every return code is checked where the call is made.
//
// Input flows from a ByteSource through `xmlReaderForIO` (a read callback); output flows through
// `xmlOutputBufferCreateIO` (a write callback) into a ByteSink. The callback contexts are
// heap-allocated boxes owned by the handle that uses them, so they outlive every callback.
import CLibXML2
import FerryIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `xmlInitParser`, once per process, before any other libxml2 call.
private let libxml2Initialized: Bool = {
    xmlInitParser()
    return true
}()

/// One libxml2 error, copied out of its `xmlError` (which libxml2 reuses).
struct LibXML2Diagnostic: Sendable {
    var code: Int32
    var level: Int32
    var message: String
    var line: Int
    var column: Int
}

/// Collects the structured errors libxml2 reports for one reader.
final class LibXML2Diagnostics {
    var items: [LibXML2Diagnostic] = []
    /// Errors at or above this level are kept (1 warning, 2 error, 3 fatal).
    var minimumLevel: Int32 = 2
    /// At most this many are kept (a validator reports every violation; readers need the first).
    var limit = 10_000

    static let handler: xmlStructuredErrorFunc = { context, error in
        guard let context, let error else { return }
        let me = Unmanaged<LibXML2Diagnostics>.fromOpaque(context).takeUnretainedValue()
        let e = error.pointee
        guard Int32(e.level.rawValue) >= me.minimumLevel, me.items.count < me.limit else { return }
        var message = e.message.map { String(cString: $0) } ?? "unknown libxml2 error"
        while message.last == "\n" || message.last == " " { message.removeLast() }
        me.items.append(LibXML2Diagnostic(code: e.code, level: Int32(e.level.rawValue), message: message,
                                          line: Int(e.line), column: Int(e.int2)))
    }
}

// MARK: - Output

/// The context of the write callback: the sink and the first error it threw.
private final class SinkBox {
    let sink: ByteSink
    var error: Error?
    var isClosed = false
    init(sink: ByteSink) { self.sink = sink }
}

private let writeCallback: xmlOutputWriteCallback = { context, buffer, length in
    guard let context else { return -1 }
    let box = Unmanaged<SinkBox>.fromOpaque(context).takeUnretainedValue()
    if box.isClosed || box.error != nil { return box.isClosed ? length : -1 }
    guard length > 0, let buffer else { return 0 }
    do {
        try box.sink.write(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
        return length
    } catch {
        box.error = error
        return -1
    }
}

private let closeOutputCallback: xmlOutputCloseCallback = { _ in 0 }

/// Owns an `xmlTextWriterPtr` (which owns its `xmlOutputBuffer`), writing into a ByteSink.
final class LibXMLTextWriter {
    private let writer: xmlTextWriterPtr
    private let box: SinkBox

    /// Creates a writer (`xmlOutputBufferCreateIO` + `xmlNewTextWriter`).
    init(sink: ByteSink) throws(XMLFormatError) {
        _ = libxml2Initialized
        box = SinkBox(sink: sink)
        let context = Unmanaged.passUnretained(box).toOpaque()
        guard let output = xmlOutputBufferCreateIO(writeCallback, closeOutputCallback, context, nil) else {
            throw XMLFormatError(.library, "xmlOutputBufferCreateIO failed (out of memory)", source: sink.name)
        }
        guard let writer = xmlNewTextWriter(output) else {
            _ = xmlOutputBufferClose(output)
            throw XMLFormatError(.library, "xmlNewTextWriter failed (out of memory)", source: sink.name)
        }
        self.writer = writer
    }

    deinit {
        // Anything still buffered is discarded: an unfinished document is never committed.
        box.isClosed = true
        xmlFreeTextWriter(writer)
    }

    private func failure(_ call: String) -> XMLFormatError {
        if let error = box.error {
            return XMLFormatError(.io, "cannot write XML: \(error)", source: box.sink.name)
        }
        return XMLFormatError(.library, "\(call) failed", source: box.sink.name)
    }

    /// `xmlTextWriterStartElement`.
    @inline(__always)
    func startElement(_ name: StaticString) throws(XMLFormatError) {
        if xmlTextWriterStartElement(writer, name.utf8Start) < 0 { throw failure("xmlTextWriterStartElement") }
    }

    /// `xmlTextWriterEndElement` (writes `/>` when the element is empty).
    @inline(__always)
    func endElement() throws(XMLFormatError) {
        if xmlTextWriterEndElement(writer) < 0 { throw failure("xmlTextWriterEndElement") }
    }

    /// `xmlTextWriterStartAttribute`, the already escaped value with `xmlTextWriterWriteRawLen`,
    /// then `xmlTextWriterEndAttribute`.
    @inline(__always)
    func attribute(_ name: StaticString, escapedValue: UnsafeBufferPointer<UInt8>) throws(XMLFormatError) {
        if xmlTextWriterStartAttribute(writer, name.utf8Start) < 0 { throw failure("xmlTextWriterStartAttribute") }
        if escapedValue.count > 0 {
            if xmlTextWriterWriteRawLen(writer, escapedValue.baseAddress, Int32(escapedValue.count)) < 0 {
                throw failure("xmlTextWriterWriteRawLen")
            }
        }
        if xmlTextWriterEndAttribute(writer) < 0 { throw failure("xmlTextWriterEndAttribute") }
    }

    /// An attribute with a constant value that needs no escaping.
    @inline(__always)
    func attribute(_ name: StaticString, constant: StaticString) throws(XMLFormatError) {
        try attribute(name, escapedValue: UnsafeBufferPointer(start: constant.utf8Start, count: constant.utf8CodeUnitCount))
    }

    /// Already escaped text or markup-free whitespace, with `xmlTextWriterWriteRawLen`.
    @inline(__always)
    func raw(_ bytes: UnsafeBufferPointer<UInt8>) throws(XMLFormatError) {
        guard bytes.count > 0 else { return }
        if xmlTextWriterWriteRawLen(writer, bytes.baseAddress, Int32(bytes.count)) < 0 {
            throw failure("xmlTextWriterWriteRawLen")
        }
    }

    /// Constant markup-free text (the XML declaration, indentation).
    @inline(__always)
    func raw(_ text: StaticString) throws(XMLFormatError) {
        try raw(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `xmlTextWriterEndDocument` (closes open elements) and `xmlTextWriterFlush`.
    func endDocument() throws(XMLFormatError) {
        if xmlTextWriterEndDocument(writer) < 0 { throw failure("xmlTextWriterEndDocument") }
        try flush()
    }

    /// `xmlTextWriterFlush`: hands buffered bytes to the sink.
    func flush() throws(XMLFormatError) {
        if xmlTextWriterFlush(writer) < 0 { throw failure("xmlTextWriterFlush") }
        if box.error != nil { throw failure("xmlTextWriterFlush") }
    }
}

// MARK: - Input

/// The context of the read callback: the source, the prolog guard, the byte budget of the record
/// being expanded, and the first error.
final class SourceBox {
    let source: ByteSource
    var prolog = PrologGuard()
    /// An error from the source, the guard or the budget; the read callback returns -1 after it.
    var error: XMLFormatError?
    var bytesRead = 0
    var isEOF = false
    /// While a record is expanded: the byte count when it started and how many more bytes it may use.
    var budgetStart: Int?
    var budget = Int.max
    var budgetMessage = ""

    init(source: ByteSource) { self.source = source }
}

private let readCallback: xmlInputReadCallback = { context, buffer, length in
    guard let context, let buffer else { return -1 }
    let box = Unmanaged<SourceBox>.fromOpaque(context).takeUnretainedValue()
    if box.error != nil { return -1 }
    if let start = box.budgetStart, box.bytesRead - start > box.budget {
        box.error = XMLFormatError(.tooLarge, box.budgetMessage)
        return -1
    }
    let n: Int
    do {
        n = try box.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(length)))
    } catch {
        box.error = XMLFormatError(.io, "cannot read: \(error)")
        return -1
    }
    if n == 0 {
        box.isEOF = true
        return 0
    }
    if !box.prolog.isDone, let refused = box.prolog.inspect(UnsafeRawBufferPointer(start: buffer, count: n)) {
        box.error = refused
        return -1
    }
    box.bytesRead += n
    return Int32(n)
}

private let closeInputCallback: xmlInputCloseCallback = { _ in 0 }

/// Owns an `xmlTextReaderPtr` pulling from a ByteSource through `xmlReaderForIO`.
final class LibXMLTextReader {
    private let reader: xmlTextReaderPtr
    let box: SourceBox
    let diagnostics = LibXML2Diagnostics()
    /// Kept alive as long as the reader uses it.
    private var validation: LibXMLSchemaValidation?

    /// `XML_PARSE_NONET`: never touch the network. No `XML_PARSE_DTDLOAD`, `XML_PARSE_NOENT`,
    /// `XML_PARSE_DTDATTR`, `XML_PARSE_DTDVALID` or `XML_PARSE_HUGE`.
    static let secureOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue
        | XML_PARSE_COMPACT.rawValue | XML_PARSE_BIG_LINES.rawValue)

    /// Opens a reader (`xmlReaderForIO`) with `options`, and routes its errors to ``diagnostics``.
    init(source: ByteSource, options: Int32) throws(XMLFormatError) {
        _ = libxml2Initialized
        box = SourceBox(source: source)
        let context = Unmanaged.passUnretained(box).toOpaque()
        guard let reader = xmlReaderForIO(readCallback, closeInputCallback, context, source.name, nil, options) else {
            throw box.error.map { var e = $0; e.source = source.name; return e }
                ?? XMLFormatError(.library, "xmlReaderForIO failed", source: source.name)
        }
        self.reader = reader
        xmlTextReaderSetStructuredErrorHandler(reader, LibXML2Diagnostics.handler,
                                               Unmanaged.passUnretained(diagnostics).toOpaque())
    }

    deinit { xmlFreeTextReader(reader) }

    /// `xmlTextReaderRead`: 1 on a node, 0 at the end, -1 on an error.
    @inline(__always) func read() -> Int32 { xmlTextReaderRead(reader) }

    /// `xmlTextReaderNext`: skips the current node's subtree.
    @inline(__always) func next() -> Int32 { xmlTextReaderNext(reader) }

    /// `xmlTextReaderExpand`: the current node with its whole subtree, valid until the reader moves.
    @inline(__always) func expand() -> XMLNodeRef? { xmlTextReaderExpand(reader).map(XMLNodeRef.init) }

    /// `xmlTextReaderNodeType` (`XML_READER_TYPE_*`).
    @inline(__always) var nodeType: Int32 { xmlTextReaderNodeType(reader) }

    /// `xmlTextReaderDepth`.
    @inline(__always) var depth: Int32 { xmlTextReaderDepth(reader) }

    /// `xmlTextReaderIsEmptyElement`.
    @inline(__always) var isEmptyElement: Bool { xmlTextReaderIsEmptyElement(reader) == 1 }

    /// The current node, valid until the reader moves.
    @inline(__always) var currentNode: XMLNodeRef? { xmlTextReaderCurrentNode(reader).map(XMLNodeRef.init) }

    /// The parser's current line (`xmlTextReaderGetParserLineNumber`), for errors without a node.
    var parserLine: Int { Int(xmlTextReaderGetParserLineNumber(reader)) }

    /// `xmlTextReaderConstString`: `text` interned in the reader's dictionary, where element and
    /// attribute names live, so names compare by pointer. Owned by the reader.
    func intern(_ text: String) -> UnsafePointer<UInt8>? {
        text.withCString { xmlTextReaderConstString(reader, UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self)) }
    }

    /// `xmlTextReaderReadOuterXml`: the current node serialized (with its namespace declaration),
    /// copied out and freed.
    func outerXML() -> [UInt8]? {
        guard let text = xmlTextReaderReadOuterXml(reader) else { return nil }
        defer { ferry_xmlFree(text) }
        return Array(UnsafeBufferPointer(start: text, count: strlen(text)))
    }

    /// `xmlTextReaderSchemaValidateCtxt`: validates the document while it is read.
    func validate(with validation: LibXMLSchemaValidation) throws(XMLFormatError) {
        self.validation = validation
        if xmlTextReaderSchemaValidateCtxt(reader, validation.context, 0) != 0 {
            throw XMLFormatError(.library, "xmlTextReaderSchemaValidateCtxt failed", source: box.source.name)
        }
    }

    /// `xmlTextReaderIsValid`: whether schema validation found no violation so far.
    var isValid: Bool { xmlTextReaderIsValid(reader) == 1 }

    /// The error behind a failed call: the guard, the source or the budget first (they stop the
    /// input, which libxml2 then reports less clearly), else libxml2's first error.
    func failure() -> XMLFormatError {
        var error: XMLFormatError
        if let boxed = box.error {
            error = boxed
            error.line = error.line ?? parserLine
        } else if let first = diagnostics.items.first(where: { $0.level >= 2 }) {
            error = Self.translate(first, atEOF: box.isEOF)
        } else {
            error = XMLFormatError(.library, "libxml2 stopped without reporting an error", line: parserLine)
        }
        error.source = box.source.name
        return error
    }

    /// Maps a libxml2 diagnostic to a Ferry error code and message.
    static func translate(_ d: LibXML2Diagnostic, atEOF: Bool) -> XMLFormatError {
        let code: XMLFormatError.Code
        var message = d.message
        switch d.code {
        case Int32(XML_ERR_INVALID_CHAR.rawValue), Int32(XML_ERR_INVALID_ENCODING.rawValue),
             Int32(XML_ERR_UNSUPPORTED_ENCODING.rawValue):
            code = message.contains("UTF-8") || d.code != Int32(XML_ERR_INVALID_CHAR.rawValue) ? .invalidUTF8 : .syntax
            if code == .invalidUTF8 { message = "expected UTF-8 text, found bytes that are not UTF-8 (libxml2: \(d.message))" }
        case Int32(XML_ERR_UNDECLARED_ENTITY.rawValue), Int32(XML_WAR_UNDECLARED_ENTITY.rawValue),
             Int32(XML_ERR_ENTITY_LOOP.rawValue):
            code = .forbiddenDTD
            message = "expected no entity references besides &lt; &gt; &amp; &apos; &quot; and character references, found one (libxml2: \(d.message))"
        case Int32(XML_ERR_NAME_TOO_LONG.rawValue):
            code = .tooLarge
        case Int32(XML_ERR_NO_MEMORY.rawValue) where message.contains("huge text node"):
            code = .tooLarge
            message = "expected text nodes of at most 10,000,000 bytes (libxml2's limit without XML_PARSE_HUGE), found a longer one"
        case Int32(XML_ERR_INTERNAL_ERROR.rawValue) where message.contains("Excessive depth"):
            code = .tooDeep
            message = "expected nesting of at most 256 levels (libxml2's limit without XML_PARSE_HUGE), found deeper nesting"
        default:
            if atEOF && (d.code == Int32(XML_ERR_TAG_NOT_FINISHED.rawValue) || d.code == Int32(XML_ERR_DOCUMENT_EMPTY.rawValue)
                || message.contains("Premature end") || message.contains("EndTag") || message.contains("end of data")) {
                code = .truncated
                message = "expected the rest of the document, found the end of the input (libxml2: \(d.message))"
            } else {
                code = .syntax
            }
        }
        return XMLFormatError(code, message, line: d.line > 0 ? d.line : nil, column: d.column > 0 ? d.column : nil,
                              libxml2Code: d.code)
    }
}

// MARK: - Nodes

/// A borrowed element, text or other node of an expanded subtree; valid until the reader moves.
struct XMLNodeRef {
    let pointer: xmlNodePtr

    /// `XML_ELEMENT_NODE`.
    @inline(__always) var isElement: Bool { pointer.pointee.type == XML_ELEMENT_NODE }
    /// Text or CDATA.
    @inline(__always) var isText: Bool {
        let t = pointer.pointee.type
        return t == XML_TEXT_NODE || t == XML_CDATA_SECTION_NODE
    }
    /// Comments and processing instructions, which carry no data.
    @inline(__always) var isIgnorable: Bool {
        let t = pointer.pointee.type
        return t == XML_COMMENT_NODE || t == XML_PI_NODE
    }
    /// An entity reference (never produced: DOCTYPEs are refused).
    @inline(__always) var isEntityReference: Bool { pointer.pointee.type == XML_ENTITY_REF_NODE }

    /// The local name, interned in the reader's dictionary.
    @inline(__always) var name: UnsafePointer<UInt8>? { pointer.pointee.name }
    /// The namespace URI, or `nil`.
    @inline(__always) var namespace: UnsafePointer<UInt8>? { pointer.pointee.ns?.pointee.href }
    /// The namespace record (shared by all elements under one declaration; compared by pointer).
    @inline(__always) var namespaceRecord: UnsafeMutableRawPointer? { pointer.pointee.ns.map { UnsafeMutableRawPointer($0) } }
    @inline(__always) var firstChild: XMLNodeRef? { pointer.pointee.children.map(XMLNodeRef.init) }
    @inline(__always) var nextSibling: XMLNodeRef? { pointer.pointee.next.map(XMLNodeRef.init) }
    @inline(__always) var firstAttribute: XMLAttributeRef? { pointer.pointee.properties.map(XMLAttributeRef.init) }
    /// The text of a text node.
    @inline(__always) var content: UnsafePointer<UInt8>? { pointer.pointee.content.map { UnsafePointer($0) } }
    /// The line the node starts on (`xmlGetLineNo`, exact beyond 65535 with `XML_PARSE_BIG_LINES`).
    var line: Int { Int(xmlGetLineNo(pointer)) }
}

/// A borrowed attribute of an expanded element.
struct XMLAttributeRef {
    let pointer: xmlAttrPtr

    @inline(__always) var name: UnsafePointer<UInt8>? { pointer.pointee.name }
    @inline(__always) var namespace: UnsafePointer<UInt8>? { pointer.pointee.ns?.pointee.href }
    @inline(__always) var next: XMLAttributeRef? { pointer.pointee.next.map(XMLAttributeRef.init) }

    /// Calls `body` with the value's UTF-8 bytes (one text child, the usual case, is not copied).
    @inline(__always)
    func withValue<R>(_ body: (UnsafeBufferPointer<UInt8>) throws(XMLFormatError) -> R) throws(XMLFormatError) -> R {
        guard let child = pointer.pointee.children else {
            return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
        if child.pointee.next == nil, let content = child.pointee.content {
            return try body(UnsafeBufferPointer(start: content, count: strlen(content)))
        }
        var bytes: [UInt8] = []
        var node: xmlNodePtr? = child
        while let n = node {
            if let content = n.pointee.content { bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content))) }
            node = n.pointee.next
        }
        return try bytes.withUnsafeBufferPointer { (b) throws(XMLFormatError) -> R in try body(b) }
    }
}

// MARK: - Schemas

/// Owns an `xmlSchemaPtr` parsed from XSD text in memory (`xmlSchemaNewMemParserCtxt`,
/// `xmlSchemaParse`); the parser context is freed before `init` returns.
final class LibXMLSchema {
    let schema: xmlSchemaPtr

    init(xsd: String) throws(XMLFormatError) {
        _ = libxml2Initialized
        let diagnostics = LibXML2Diagnostics()
        var text = xsd
        let parsed: xmlSchemaPtr? = text.withUTF8 { bytes in
            guard let parser = xmlSchemaNewMemParserCtxt(UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(bytes.count)) else {
                return nil
            }
            defer { xmlSchemaFreeParserCtxt(parser) }
            xmlSchemaSetParserStructuredErrors(parser, LibXML2Diagnostics.handler, Unmanaged.passUnretained(diagnostics).toOpaque())
            return xmlSchemaParse(parser)
        }
        guard let parsed else {
            let detail = diagnostics.items.first.map { "line \($0.line): \($0.message)" } ?? "xmlSchemaParse failed"
            throw XMLFormatError(.library, "cannot compile the XSD: \(detail)")
        }
        schema = parsed
    }

    deinit { xmlSchemaFree(schema) }
}

/// Owns an `xmlSchemaValidCtxtPtr` (`xmlSchemaNewValidCtxt`) and keeps its schema alive.
final class LibXMLSchemaValidation {
    let context: xmlSchemaValidCtxtPtr
    private let schema: LibXMLSchema

    init(schema: LibXMLSchema) throws(XMLFormatError) {
        guard let context = xmlSchemaNewValidCtxt(schema.schema) else {
            throw XMLFormatError(.library, "xmlSchemaNewValidCtxt failed (out of memory)")
        }
        self.context = context
        self.schema = schema
    }

    deinit { xmlSchemaFreeValidCtxt(context) }
}
