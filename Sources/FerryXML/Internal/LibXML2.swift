// The only file in Ferry that calls libxml2. Every handle has exactly one owner, a final class
// that frees it once in `deinit`; every return code is checked where the call is made.
//
// Input flows from a ByteSource through `xmlReaderForIO` (a read callback); output flows through
// `xmlOutputBufferCreateIO` (a write callback) into a ByteSink. The callback contexts are
// heap-allocated boxes owned by the handle that uses them, so they outlive every callback.
import CLibXML2
import FerryIO
import FerryInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `xmlInitParser` and the built-in schema types, once per process, before any other libxml2
/// call (libxml2 2.9 builds the types lazily and unlocked; see `ferry_xmlSchemaInitTypes`); and
/// an external entity loader that refuses everything, so that no document, DTD or schema can make
/// libxml2 open a file or a URL, whatever options a caller passes.
private let libxml2Initialized: Bool = {
    xmlInitParser()
    ferry_xmlSchemaInitTypes()
    xmlSetExternalEntityLoader(refusingEntityLoader)
    return true
}()

private let refusingEntityLoader: xmlExternalEntityLoader = { _, _, _ in nil }

/// One libxml2 error, copied out of its `xmlError` (which libxml2 reuses).
struct LibXML2Diagnostic: Sendable {
    var code: Int32
    var domain: Int32
    var level: Int32
    var message: String
    var line: Int
    var column: Int
    /// The node the error is about (schema validity errors), compared by address only.
    var node: UInt
    /// The parser's byte offset in the input when it reported the error (-1 when unknown); schema
    /// violations are reported while the element's tags are parsed.
    var parserOffset: Int
}

/// Collects the structured errors libxml2 reports for one reader, parser or validator.
final class LibXML2Diagnostics {
    var items: [LibXML2Diagnostic] = []
    /// Errors at or above this level are kept (1 warning, 2 error, 3 fatal).
    var minimumLevel: Int32 = 2
    /// At most this many are kept (a validator reports every violation; readers need the first).
    var limit = 10_000
    /// How many were dropped past ``limit``.
    var dropped = 0
    /// The reader whose parser position is recorded with each error (borrowed).
    var reader: xmlTextReaderPtr?

    static let handler: xmlStructuredErrorFunc = { context, error in
        guard let context, let error else { return }
        let me = Unmanaged<LibXML2Diagnostics>.fromOpaque(context).takeUnretainedValue()
        let e = error.pointee
        guard Int32(e.level.rawValue) >= me.minimumLevel else { return }
        guard me.items.count < me.limit else {
            me.dropped += 1
            return
        }
        var message = e.message.map { String(cString: $0) } ?? "unknown libxml2 error"
        while message.last == "\n" || message.last == " " { message.removeLast() }
        if message.contains("\n") { message = message.split(separator: "\n").joined(separator: " ") }
        // An error about an attribute is placed at its element (the node is alive during the call).
        var node = e.node?.assumingMemoryBound(to: xmlNode.self)
        if let attribute = node, attribute.pointee.type == XML_ATTRIBUTE_NODE { node = attribute.pointee.parent }
        let offset = me.reader.map { Int(xmlTextReaderByteConsumed($0)) } ?? -1
        me.items.append(LibXML2Diagnostic(code: e.code, domain: e.domain, level: Int32(e.level.rawValue), message: message,
                                          line: Int(e.line), column: Int(e.int2),
                                          node: UInt(bitPattern: node), parserOffset: offset))
    }

    /// Whether a diagnostic comes from schema validation (rather than from parsing).
    static func isValidity(_ d: LibXML2Diagnostic) -> Bool {
        d.domain == Int32(XML_FROM_SCHEMASV.rawValue)
    }
}

// MARK: - Output

/// The context of the write callback: the sink, the bytes written and the first error.
private final class SinkBox {
    let sink: ByteSink
    var error: Error?
    var isClosed = false
    var written = 0
    init(sink: ByteSink) { self.sink = sink }
}

private let writeCallback: xmlOutputWriteCallback = { context, buffer, length in
    guard let context else { return -1 }
    let box = Unmanaged<SinkBox>.fromOpaque(context).takeUnretainedValue()
    if box.isClosed || box.error != nil { return box.isClosed ? length : -1 }
    guard length > 0, let buffer else { return 0 }
    do {
        try box.sink.write(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
        box.written += Int(length)
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

    /// Bytes handed to the sink so far.
    var bytesWritten: Int { box.written }

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

/// The context of the read callback: the source, the prolog guard, the structure scanner, the raw
/// byte window, the byte budget, and the first error.
final class SourceBox {
    let source: ByteSource
    var prolog = PrologGuard()
    var scanner: XMLStructureScanner
    /// Raw bytes kept: from the pinned record (the reader), else the last ``tail`` bytes.
    let window: ByteWindow?
    /// While set, the window keeps every byte from this input offset on.
    var pinnedOffset: Int?
    /// An error from the source or the guard, or a spent budget; the callback returns -1 after it.
    var error: XMLFormatError?
    /// Set when the byte budget stopped the input.
    var budgetExceeded = false
    var bytesRead = 0
    var isEOF = false
    /// The input offset from which the budget counts, and how many bytes it allows.
    var budgetStart = 0
    var budget = Int.max

    init(source: ByteSource, scanner: XMLStructureScanner) {
        self.source = source
        self.scanner = scanner
        window = ByteWindow()
    }

    /// The input offset of `line`:`column` (columns in characters), if the window holds it. Lines
    /// are counted back from the end of the window, whose line the scanner knows.
    func offset(line: Int, column: Int, anchor: XMLMark? = nil) -> Int? {
        guard let window, line <= scanner.line, column >= 1,
              let bytes = window.bytes(from: window.startOffset) else { return nil }
        // Where to count characters from: a line start in the window, or a mark on that line.
        var start: (index: Int, column: Int)?
        if line == scanner.line && scanner.lineStart >= window.startOffset {
            start = (scanner.lineStart - window.startOffset, 1)
        } else {
            var newlines = scanner.line - line
            var i = bytes.count - 1
            while i >= 0 {
                if bytes[i] == 0x0A {
                    if newlines == 0 { start = (i + 1, 1); break }
                    newlines -= 1
                }
                i -= 1
            }
        }
        if start == nil, let anchor, anchor.line == line, anchor.column <= column, anchor.offset >= window.startOffset {
            start = (anchor.offset - window.startOffset, anchor.column)
        }
        guard var (p, characters) = start else { return nil }
        while characters < column && p < bytes.count {
            // One character: a lead byte and the continuation bytes it announces (a stray byte
            // counts as one character, as libxml2 counts it).
            let lead = bytes[p]
            let length = lead < 0xC2 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF5 ? 4 : 1
            p += 1
            var k = 1
            while k < length && p < bytes.count && bytes[p] & 0xC0 == 0x80 { p += 1; k += 1 }
            characters += 1
        }
        return window.startOffset + p
    }

    /// How far back the window reaches when nothing is pinned: enough to see the bytes at which
    /// libxml2 stopped (it reads 4,000 bytes ahead).
    static let tail = 1 << 14
}

private let readCallback: xmlInputReadCallback = { context, buffer, length in
    guard let context, let buffer else { return -1 }
    let box = Unmanaged<SourceBox>.fromOpaque(context).takeUnretainedValue()
    if box.error != nil { return -1 }
    if box.bytesRead - box.budgetStart > box.budget {
        box.budgetExceeded = true
        box.error = XMLFormatError(.tooLarge, "byte budget spent")
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
    let chunk = UnsafeRawBufferPointer(start: buffer, count: n)
    if !box.prolog.isDone, let refused = box.prolog.inspect(chunk) {
        box.error = refused
        return -1
    }
    box.scanner.scan(chunk)
    if let violation = box.scanner.violation {
        box.error = violation
        return -1
    }
    box.bytesRead += n
    if let window = box.window {
        window.append(chunk)
        window.discard(before: box.pinnedOffset ?? box.scanner.oldestMarkOffset ?? (box.bytesRead - SourceBox.tail))
    }
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
    /// `XML_PARSE_DTDATTR`, `XML_PARSE_DTDVALID` or `XML_PARSE_XINCLUDE`; CDATA is merged into text.
    static let secureOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue
        | XML_PARSE_COMPACT.rawValue | XML_PARSE_BIG_LINES.rawValue)
    /// `XML_PARSE_HUGE`: lifts libxml2's own limits (text 10,000,000 bytes, names 50,000 bytes,
    /// depth 256); used only when a configuration asks for more than they allow.
    static let hugeOption = Int32(XML_PARSE_HUGE.rawValue)
    /// libxml2's limits without `XML_PARSE_HUGE`.
    static let defaultTextLimit = XMLRecordReader.Configuration.defaultMaximumTextBytes // XML_MAX_TEXT_LENGTH (parserInternals.h)
    static let defaultNameLimit = 50_000 // XML_MAX_NAME_LENGTH
    static let defaultDepthLimit = 256

    /// Opens a reader (`xmlReaderForIO`) with `options`, and routes its errors to ``diagnostics``.
    /// The scanner sees every byte first; when it marks only records, the byte window is kept too
    /// (the record reader); otherwise every element is marked (the validator).
    init(source: ByteSource, options: Int32, scanner: XMLStructureScanner) throws(XMLFormatError) {
        _ = libxml2Initialized
        box = SourceBox(source: source, scanner: scanner)
        let context = Unmanaged.passUnretained(box).toOpaque()
        guard let reader = xmlReaderForIO(readCallback, closeInputCallback, context, source.name, nil, options) else {
            throw box.error.map { var e = $0; e.source = source.name; return e }
                ?? XMLFormatError(.library, "xmlReaderForIO failed", source: source.name)
        }
        self.reader = reader
        diagnostics.reader = reader
        xmlTextReaderSetStructuredErrorHandler(reader, LibXML2Diagnostics.handler,
                                               Unmanaged.passUnretained(diagnostics).toOpaque())
    }

    deinit {
        diagnostics.reader = nil
        xmlFreeTextReader(reader)
    }

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

    /// `xmlTextReaderConstValue`: the text of the current text node, owned by the reader.
    var value: UnsafePointer<UInt8>? { xmlTextReaderConstValue(reader) }

    /// The parser's current line and column (`xmlTextReaderGetParserLineNumber`, `…ColumnNumber`).
    var parserPosition: (line: Int, column: Int) {
        (Int(xmlTextReaderGetParserLineNumber(reader)), Int(xmlTextReaderGetParserColumnNumber(reader)))
    }

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

    /// `xmlTextReaderSchemaValidateCtxt`: validates the document while it is read; violations go
    /// to ``diagnostics`` (the reader relays them to its structured handler).
    func validate(with validation: LibXMLSchemaValidation) throws(XMLFormatError) {
        self.validation = validation
        if xmlTextReaderSchemaValidateCtxt(reader, validation.context, 0) != 0 {
            throw XMLFormatError(.library, "xmlTextReaderSchemaValidateCtxt failed", source: box.source.name)
        }
    }

    /// Runs `body` with libxml2's per-thread structured error handler (`xmlSetStructuredErrorFunc`)
    /// sending to ``diagnostics``, then removes it. Schema validation plugs its own SAX handler into
    /// the parser, and that handler has no structured error channel, so without this the parser's
    /// errors would be printed to stderr instead of collected. The body must not leave the thread.
    /// The handler this thread had before is restored afterwards.
    func collectingThreadErrors<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let previousHandler = __xmlStructuredError().pointee
        let previousContext = __xmlStructuredErrorContext().pointee
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(diagnostics).toOpaque(), LibXML2Diagnostics.handler)
        defer { xmlSetStructuredErrorFunc(previousContext, previousHandler) }
        return try body()
    }

    /// `xmlTextReaderIsValid`: whether schema validation found no violation so far.
    var isValid: Bool { xmlTextReaderIsValid(reader) == 1 }

    /// The error behind a failed call: the guard, the source or the budget first (they stop the
    /// input, which libxml2 then reports less clearly), else libxml2's most specific error.
    /// `anchor` (the record being read) helps find the bytes at the error's position.
    func failure(anchor: XMLMark? = nil) -> XMLFormatError {
        var error: XMLFormatError
        if box.bytesRead == 0 && box.isEOF && box.error == nil {
            error = XMLFormatError(.truncated, "expected an XML document (<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">), found an empty input",
                                   line: 1, column: 1)
        } else if let boxed = box.error {
            error = boxed
            if error.line == nil {
                error.line = box.scanner.line
            }
        } else if let first = Self.mostSpecific(diagnostics.items) {
            error = Self.translate(first, atEOF: box.isEOF)
            // At the end of the input, libxml2's reader may call an unfinished document "extra
            // content"; Ferry's own scanner knows better: elements still open, or none at all.
            if box.isEOF && box.scanner.state == .text && first.message.contains("Extra content") {
                if box.scanner.rootMark == nil {
                    error = XMLFormatError(.truncated, "expected an XML document (<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">), found no element",
                                           line: box.scanner.line, column: nil, libxml2Code: first.code)
                } else if box.scanner.depth > 0 {
                    error = XMLFormatError(.truncated, "expected the rest of the document (\(Plural.count(box.scanner.depth, "element")) still open), found the end of the input",
                                           line: box.scanner.line, column: nil, libxml2Code: first.code)
                }
            }
            // libxml2's push parser sometimes stops at bytes that are not UTF-8 without saying so.
            if error.code != .invalidUTF8, let line = error.line, let column = error.column,
               let offset = box.offset(line: line, column: column, anchor: anchor), let stop = box.window?.bytes(from: offset),
               UTF8Check.startsInvalidSequence(stop, atEOF: box.isEOF) {
                error = XMLFormatError(.invalidUTF8, "expected UTF-8 text, found bytes that are not UTF-8 (libxml2: \(first.message))",
                                       line: error.line, column: error.column, libxml2Code: first.code)
            }
        } else {
            let (line, column) = parserPosition
            error = XMLFormatError(.library, "libxml2 stopped without reporting an error", line: line, column: column)
        }
        error.source = box.source.name
        return error
    }

    /// The parser error that says most: an encoding error anywhere, else the first error that is
    /// not libxml2's generic "detected an error in element content" (which it reports first when
    /// an error interrupts element content).
    static func mostSpecific(_ items: [LibXML2Diagnostic]) -> LibXML2Diagnostic? {
        let errors = items.filter { $0.level >= 2 && !LibXML2Diagnostics.isValidity($0) }
        if let encoding = errors.first(where: { $0.message.contains("not proper UTF-8") || $0.code == Int32(XML_ERR_INVALID_ENCODING.rawValue) }) {
            return encoding
        }
        return errors.first { !$0.message.contains("detected an error in element content") } ?? errors.first
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
            else { message = "expected characters XML 1.0 allows, found one it does not (libxml2: \(d.message))" }
        case Int32(XML_ERR_UNDECLARED_ENTITY.rawValue), Int32(XML_WAR_UNDECLARED_ENTITY.rawValue),
             Int32(XML_ERR_ENTITY_LOOP.rawValue):
            code = .forbiddenDTD
            message = "expected no entity references besides &lt; &gt; &amp; &apos; &quot; and character references, found one (libxml2: \(d.message))"
        case Int32(XML_ERR_NAME_TOO_LONG.rawValue):
            code = .tooLarge
            message = "expected names of at most \(defaultNameLimit) bytes, found a longer one (libxml2: \(d.message))"
        case _ where message.contains("Huge input lookup") || message.contains("too big") || message.contains("too long"):
            code = .tooLarge
            message = "expected at most \(defaultTextLimit) bytes in one tag, attribute value, comment or text (libxml2's limit), found more (libxml2: \(d.message))"
        case Int32(XML_ERR_NO_MEMORY.rawValue) where message.contains("huge text node"):
            code = .tooLarge
            message = "expected text of at most \(defaultTextLimit) bytes in one node (libxml2's limit), found more"
        case Int32(XML_ERR_INTERNAL_ERROR.rawValue) where message.contains("Excessive depth"):
            code = .tooDeep
            message = "expected nesting within libxml2's depth limit, found deeper nesting (libxml2: \(d.message))"
        case Int32(XML_ERR_DOCUMENT_EMPTY.rawValue):
            code = atEOF ? .truncated : .syntax
            message = "expected an XML document (<records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">), found \(atEOF ? "an empty input" : "something else") (libxml2: \(d.message))"
        default:
            let endings = [XML_ERR_TAG_NOT_FINISHED, XML_ERR_LTSLASH_REQUIRED, XML_ERR_GT_REQUIRED]
            if atEOF && (endings.contains { Int32($0.rawValue) == d.code } || message.contains("Premature end"))
                && !message.contains("Extra content") {
                code = .truncated
                message = "expected the rest of the document, found the end of the input (libxml2: \(d.message))"
            } else {
                code = .syntax
                message = "expected well-formed XML, found an error (libxml2: \(d.message))"
            }
        }
        return XMLFormatError(code, message, line: d.line > 0 ? d.line : nil, column: d.column > 0 ? d.column : nil,
                              libxml2Code: d.code)
    }
}

// MARK: - Nodes

/// A borrowed element, text or other node of an expanded subtree; valid until the reader moves.
/// (Sendable only so that decoding errors can carry it; it never leaves the reader's thread.)
struct XMLNodeRef: @unchecked Sendable {
    let pointer: xmlNodePtr

    /// `XML_ELEMENT_NODE`.
    @inline(__always) var isElement: Bool { pointer.pointee.type == XML_ELEMENT_NODE }
    /// Text or CDATA.
    @inline(__always) var isText: Bool {
        let t = pointer.pointee.type
        return t == XML_TEXT_NODE || t == XML_CDATA_SECTION_NODE
    }
    /// An entity reference (never produced: DOCTYPEs are refused).
    @inline(__always) var isEntityReference: Bool { pointer.pointee.type == XML_ENTITY_REF_NODE }

    /// The local name, interned in the reader's dictionary.
    @inline(__always) var name: UnsafePointer<UInt8>? { pointer.pointee.name }
    /// The namespace URI, or `nil`.
    @inline(__always) var namespace: UnsafePointer<UInt8>? { pointer.pointee.ns?.pointee.href }
    /// The namespace record (shared by all elements under one declaration; compared by pointer).
    @inline(__always) var namespaceRecord: UnsafeMutableRawPointer? { pointer.pointee.ns.map { UnsafeMutableRawPointer($0) } }
    @inline(__always) var parent: XMLNodeRef? { pointer.pointee.parent.map(XMLNodeRef.init) }
    @inline(__always) var firstChild: XMLNodeRef? { pointer.pointee.children.map(XMLNodeRef.init) }
    @inline(__always) var nextSibling: XMLNodeRef? { pointer.pointee.next.map(XMLNodeRef.init) }
    @inline(__always) var firstAttribute: XMLAttributeRef? { pointer.pointee.properties.map(XMLAttributeRef.init) }
    /// The text of a text node.
    @inline(__always) var content: UnsafePointer<UInt8>? { pointer.pointee.content.map { UnsafePointer($0) } }
    /// The node's address, for matching diagnostics.
    var address: UInt { UInt(bitPattern: pointer) }
}

/// A borrowed attribute of an expanded element.
struct XMLAttributeRef {
    let pointer: xmlAttrPtr

    @inline(__always) var name: UnsafePointer<UInt8>? { pointer.pointee.name }
    @inline(__always) var namespace: UnsafePointer<UInt8>? { pointer.pointee.ns?.pointee.href }
    @inline(__always) var next: XMLAttributeRef? { pointer.pointee.next.map(XMLAttributeRef.init) }

    /// Calls `body` with the value's UTF-8 bytes (one text child, the usual case, is not copied).
    @inline(__always)
    func withValue<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
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
        return try bytes.withUnsafeBufferPointer { (b) throws(E) -> R in try body(b) }
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

/// libxml2's reader node types (`xmlReaderTypes`).
enum XMLReaderNodeType {
    static let element = Int32(XML_READER_TYPE_ELEMENT.rawValue)
    static let text = Int32(XML_READER_TYPE_TEXT.rawValue)
    static let cdata = Int32(XML_READER_TYPE_CDATA.rawValue)
    static let endElement = Int32(XML_READER_TYPE_END_ELEMENT.rawValue)
    static let entityReference = Int32(XML_READER_TYPE_ENTITY_REFERENCE.rawValue)
}
