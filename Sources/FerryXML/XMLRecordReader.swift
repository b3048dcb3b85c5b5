import FerryIO
import FerryPipeline
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads records from Ferry's XML (see `Docs/XMLFormat.md`), streaming, with libxml2's
/// `xmlTextReader` pulling from a ``ByteSource``.
///
/// Each `<record>` is expanded on its own, turned into a ``Record`` and freed before the next one
/// is read, so memory stays flat whatever the input's size (bounded by
/// ``Configuration/maximumRecordBytes``).
///
/// Secure by default: libxml2 never touches the network (`XML_PARSE_NONET`), never loads a DTD and
/// never expands an entity, and Ferry refuses any `<!DOCTYPE` before libxml2 sees it, so XXE and
/// billion-laughs documents read nothing and fail at once. Every limit is in ``Configuration``.
///
/// Errors are ``XMLFormatError``s that name the source, line, column (in characters) and record
/// index and say what was expected and what was found. With ``RecordErrorPolicy/skip(rejects:)``
/// a `<record>` that is well-formed XML but not a valid record is skipped: its exact bytes go to the
/// rejects sink, each followed by a newline (the rejects file is an XML fragment: wrap it in
/// `<records xmlns="https://ferry.dev/ns/records/1" version="1">…</records>` to read it again).
/// Input that is not well-formed always fails, because nothing after it can be trusted.
///
/// ```swift
/// let reader = XMLRecordReader(source: try InputFile(path: "records.xml"))
/// while let record = try reader.next() { print(record.recordName) }
/// ```
public final class XMLRecordReader: RecordReader {
    /// What to do with a `<record>` that is not a valid record.
    public typealias ErrorPolicy = RecordErrorPolicy

    /// Limits. Defaults suit CloudKit records (at most 1 MB each) with room to spare; values beyond
    /// libxml2's own limits (text 10,000,000 bytes, names 50,000 bytes, depth 256) turn on
    /// `XML_PARSE_HUGE`, after which only these limits apply.
    public struct Configuration: Sendable {
        /// Deepest element nesting accepted (`<records>` is level 0, `<record>` level 1; Ferry's
        /// format needs 8).
        public var maximumDepth: Int = 32
        /// Longest element or attribute name accepted, in bytes.
        public var maximumNameBytes: Int = 1_000
        /// The default ``maximumTextBytes``: libxml2's own limit (`XML_MAX_TEXT_LENGTH`), the most
        /// it reads without `XML_PARSE_HUGE`. ``XMLRecordWriter`` writes no longer piece, so what
        /// it writes reads back with the default configuration.
        public static let defaultMaximumTextBytes = 10_000_000

        /// Longest text accepted in one piece — text between two tags, an attribute value, a
        /// comment — in bytes as written (escaped); checked as bytes arrive, before libxml2 parses them.
        public var maximumTextBytes: Int = defaultMaximumTextBytes
        /// Most attributes accepted on one element.
        public var maximumAttributes: Int = 64
        /// Largest `<record>` element accepted, in bytes of input; bounds the memory of a record.
        public var maximumRecordBytes: Int = 64 << 20
        /// Deepest nesting accepted inside JSON text (`<json>`, `<unknown>`, `<pluginFields>`).
        public var maximumJSONDepth: Int = 512

        /// Creates a configuration; every limit has a default that suits CloudKit records.
        public init(maximumDepth: Int = 32, maximumNameBytes: Int = 1_000, maximumTextBytes: Int = defaultMaximumTextBytes,
                    maximumAttributes: Int = 64, maximumRecordBytes: Int = 64 << 20, maximumJSONDepth: Int = 512) {
            self.maximumDepth = maximumDepth
            self.maximumNameBytes = maximumNameBytes
            self.maximumTextBytes = maximumTextBytes
            self.maximumAttributes = maximumAttributes
            self.maximumRecordBytes = maximumRecordBytes
            self.maximumJSONDepth = maximumJSONDepth
        }

        /// libxml2's parser options for these limits.
        var parserOptions: Int32 {
            var options = LibXMLTextReader.secureOptions
            if maximumTextBytes > LibXMLTextReader.defaultTextLimit || maximumNameBytes > LibXMLTextReader.defaultNameLimit
                || maximumDepth > LibXMLTextReader.defaultDepthLimit {
                options |= LibXMLTextReader.hugeOption
            }
            return options
        }
    }

    private enum Phase {
        case notStarted, reading, finished
        case failed(XMLFormatError)
    }

    private let source: ByteSource
    private let policy: ErrorPolicy
    private let configuration: Configuration
    private var xml: LibXMLTextReader?
    private var decoder: RecordXMLDecoder?
    private var phase = Phase.notStarted
    /// Whether the next move skips the current node's subtree (after a record).
    private var skipsSubtree = false
    /// Set by ``step()`` at the end of the document.
    private var atEnd = false
    /// Elements read in `<records>`: the number of the scanner's mark for the current one (text
    /// rejected between elements counts in ``recordIndex`` but has no mark).
    private var elementIndex = 0

    /// Called for every `<record>` skipped under ``RecordErrorPolicy/skip(rejects:)``.
    public var onReject: ((any Error) -> Void)?
    /// The 1-based index of the latest `<record>` (or other element in `<records>`) read.
    public private(set) var recordIndex = 0
    /// Records returned so far.
    public private(set) var recordCount = 0
    /// The line where the latest `<record>` read starts.
    public private(set) var recordLine: Int?
    /// Elements rejected under ``RecordErrorPolicy/skip(rejects:)``.
    public private(set) var rejectedCount = 0
    /// Bytes read from the source so far (libxml2 reads a few kilobytes ahead).
    public var bytesRead: Int { xml?.box.bytesRead ?? 0 }
    /// The name of the source, for messages.
    public var sourceName: String { source.name }

    /// Creates a reader over `source`. Nothing is read until the first ``next()``.
    public init(source: ByteSource, policy: ErrorPolicy = .fail, configuration: Configuration = .init()) {
        self.source = source
        self.policy = policy
        self.configuration = configuration
    }

    /// Returns the next record, or `nil` at the end of the document.
    ///
    /// - Throws: ``XMLFormatError``. After an error that is not skipped, every later call throws
    ///   the same error.
    public func next() throws -> Record? {
        switch phase {
        case .finished: return nil
        case .failed(let error): throw error
        case .notStarted, .reading: break
        }
        do {
            if case .notStarted = phase { try start() }
            while !atEnd {
                if let record = try step() {
                    recordCount += 1
                    return record
                }
            }
            phase = .finished
            return nil
        } catch {
            phase = .failed(error)
            throw error
        }
    }

    // MARK: Reading

    /// Opens libxml2's reader and reads up to the root element, which must be Ferry's `<records>`.
    private func start() throws(XMLFormatError) {
        let scanner = XMLStructureScanner(recordsOnly: true, maximumDepth: configuration.maximumDepth,
                                          maximumAttributes: configuration.maximumAttributes,
                                          maximumTextBytes: configuration.maximumTextBytes)
        let xml = try LibXMLTextReader(source: source, options: configuration.parserOptions, scanner: scanner)
        self.xml = xml
        decoder = RecordXMLDecoder(names: XMLNameTable(intern: xml.intern), limits: configuration)
        phase = .reading
        xml.box.budget = configuration.maximumRecordBytes
        while true {
            let status = xml.read()
            if status < 0 { throw fatal(xml) }
            if status == 0 {
                throw located(XMLFormatError(.truncated, "expected the root element <records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">, found the end of the input"), xml)
            }
            guard xml.nodeType == XMLReaderNodeType.element, let root = xml.currentNode else { continue }
            try checkRoot(root, xml)
            return
        }
    }

    /// Checks `<records xmlns="https://ferry.dev/ns/records/1" version="1">`.
    private func checkRoot(_ root: XMLNodeRef, _ xml: LibXMLTextReader) throws(XMLFormatError) {
        let name = RecordXMLDecoder.describe(root.name)
        let namespace = root.namespace.map { RecordXMLDecoder.describe($0) }
        guard name == "records", namespace == XMLRecordFormat.namespace else {
            let found = namespace.map { "<\(name)> in namespace \($0)" } ?? "<\(name)> in no namespace"
            throw rootError(.wrongNamespace, "expected the root element <records> in namespace \(XMLRecordFormat.namespace), found \(found)", xml)
        }
        var version: String?
        var attribute = root.firstAttribute
        while let a = attribute {
            attribute = a.next
            guard a.namespace == nil else { continue } // xsi:schemaLocation and the like
            let attributeName = RecordXMLDecoder.describe(a.name)
            guard attributeName == "version" else {
                throw rootError(.unexpectedContent, "expected only version=\"1\" on <records>, found \(attributeName)=\"…\"", xml)
            }
            version = a.withValue { String(decoding: $0, as: UTF8.self) }
        }
        guard let version else {
            throw rootError(.unexpectedContent, "expected version=\"1\" on <records>, found no version", xml)
        }
        guard version == XMLRecordFormat.version else {
            throw rootError(.unexpectedContent, "expected version=\"1\" on <records> (this Ferry reads version 1), found version=\"\(version)\"", xml)
        }
    }

    private func rootError(_ code: XMLFormatError.Code, _ message: String, _ xml: LibXMLTextReader) -> XMLFormatError {
        var error = XMLFormatError(code, message, source: source.name)
        if let mark = xml.box.scanner.rootMark {
            error.line = mark.line
            error.column = mark.column
        }
        return error
    }

    /// Moves to the next node in `<records>`: a record, or `nil` for anything else and at the end
    /// (then ``atEnd`` is set).
    private func step() throws(XMLFormatError) -> Record? {
        guard let xml else {
            atEnd = true
            return nil
        }
        let status = skipsSubtree ? xml.next() : xml.read()
        skipsSubtree = false
        if status < 0 { throw fatal(xml) }
        if status == 0 {
            // libxml2 can report a fatal error at the very end and still end with 0.
            if xml.diagnostics.items.contains(where: { $0.level >= 3 }) { throw fatal(xml) }
            atEnd = true
            return nil
        }
        guard xml.depth == 1 else { return nil }
        xml.box.budgetStart = xml.box.bytesRead
        switch xml.nodeType {
        case XMLReaderNodeType.element:
            return try readRecord(xml)
        case XMLReaderNodeType.text, XMLReaderNodeType.cdata:
            if let text = xml.value, !RecordXMLDecoder.isBlank(UnsafeBufferPointer(start: text, count: strlen(text))) {
                recordIndex += 1
                var error = XMLFormatError(.unexpectedContent, "expected only <record> elements in <records>, found text \"\(RecordXMLDecoder.describe(text))\"",
                                           source: source.name, recordIndex: recordIndex)
                error.line = xml.parserPosition.line
                try reject(error, bytes: xml.outerXML() ?? [])
            }
            return nil
        default:
            return nil
        }
    }

    /// Expands the element at depth 1 and decodes it; a record, or `nil` when it was rejected.
    private func readRecord(_ xml: LibXMLTextReader) throws(XMLFormatError) -> Record? {
        recordIndex += 1
        elementIndex += 1
        let box = xml.box
        box.scanner.discardMarks(before: elementIndex)
        let mark = box.scanner.mark(elementIndex)
        recordLine = mark?.line
        box.pinnedOffset = mark?.offset
        box.budgetStart = mark?.offset ?? box.bytesRead
        defer {
            box.pinnedOffset = nil
            box.budgetStart = box.bytesRead
        }
        skipsSubtree = true
        guard let node = xml.expand() else { throw fatal(xml) }
        let decoder = decoder!
        do throws(XMLDecodeError) {
            guard decoder.isInNamespace(node), decoder.names.lookup(node.name) == .record else {
                let namespace = node.namespace.map { "namespace \(RecordXMLDecoder.describe($0))" } ?? "no namespace"
                throw decoder.error(node.namespace == nil || !decoder.isInNamespace(node) ? .wrongNamespace : .unexpectedContent,
                                    "expected <record> in namespace \(XMLRecordFormat.namespace), found <\(RecordXMLDecoder.describe(node.name))> in \(namespace)", node)
            }
            return try decoder.decodeRecord(node)
        } catch {
            // The scanner found the element's end while libxml2 expanded it.
            let mark = box.scanner.mark(elementIndex)
            var located = XMLFormatError(error.code, error.message, source: source.name, recordIndex: recordIndex)
            if let mark, let position = position(of: error, in: node, mark: mark, box: box) {
                located.line = position.line
                located.column = position.column
            }
            var bytes: [UInt8]
            if let mark, mark.end > mark.offset, let raw = box.window?.bytes(from: mark.offset, to: mark.end) {
                bytes = Array(raw)
            } else {
                bytes = xml.outerXML() ?? []
            }
            try reject(located, bytes: bytes)
            return nil
        }
    }

    /// The line and column of the element (or its attribute) an error is about.
    private func position(of error: XMLDecodeError, in record: XMLNodeRef, mark: XMLMark, box: SourceBox) -> (line: Int, column: Int)? {
        guard let index = XMLLocator.elementIndex(of: error.node, in: record) else { return (mark.line, mark.column) }
        guard let bytes = box.window?.bytes(from: mark.offset) else { return (mark.line, mark.column) }
        return XMLLocator.locate(in: bytes, line: mark.line, column: mark.column, elementIndex: index, attribute: error.attribute)
            ?? (mark.line, mark.column)
    }

    /// Fails or skips a rejected element.
    private func reject(_ error: XMLFormatError, bytes: [UInt8]) throws(XMLFormatError) {
        guard case .skip(let rejects) = policy else { throw error }
        rejectedCount += 1
        if let rejects {
            do {
                try rejects.write(bytes)
                try rejects.write([0x0A])
            } catch {
                throw XMLFormatError(.io, "cannot write to the rejects output \(rejects.name): \(error)", source: source.name)
            }
        }
        onReject?(error)
    }

    /// The error that stopped libxml2, with the position of the record when the budget stopped it.
    private func fatal(_ xml: LibXMLTextReader) -> XMLFormatError {
        var error = xml.failure(anchor: xml.box.pinnedOffset == nil ? nil : xml.box.scanner.mark(elementIndex))
        if xml.box.budgetExceeded {
            error = XMLFormatError(.tooLarge, "expected elements of at most \(configuration.maximumRecordBytes) bytes in <records> (maximumRecordBytes; CloudKit records are at most 1 MB), found a larger one",
                                   source: source.name)
            if let mark = xml.box.scanner.mark(elementIndex), xml.box.pinnedOffset != nil {
                error.line = mark.line
                error.column = mark.column
                error.recordIndex = recordIndex
            } else {
                error.line = xml.box.scanner.line
            }
        } else if recordIndex > 0, xml.box.pinnedOffset != nil, !(error.code == .truncated && xml.box.scanner.depth <= 1) {
            // (A document cut after a whole record lacks only its end: no record to blame.)
            error.recordIndex = recordIndex
        }
        return error
    }

    private func located(_ error: XMLFormatError, _ xml: LibXMLTextReader) -> XMLFormatError {
        var error = error
        error.source = source.name
        error.line = xml.box.scanner.line
        return error
    }
}
