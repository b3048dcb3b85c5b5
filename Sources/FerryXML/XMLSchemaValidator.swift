import FerryIO

/// Checks documents against Ferry's XML Schema (``XMLRecordFormat/schema``, the bytes of
/// `Schemas/ferry-records-1.xsd`) with libxml2's `xmlschemas`, streaming, and reports every
/// violation with its line and column.
///
/// The document is read with libxml2's `xmlTextReader` and validated as it is read
/// (`xmlTextReaderSchemaValidateCtxt`), so memory stays flat. Reading is as secure as
/// ``XMLRecordReader``'s: no network, no DTD, no entities (a `<!DOCTYPE` is refused before libxml2
/// sees it). Schema violations do not stop validation; a well-formedness error does (libxml2
/// cannot read past it), and is reported as the last violation.
///
/// The schema says what the format looks like; ``XMLRecordReader`` additionally checks what a
/// schema cannot (see `Docs/XMLFormat.md`, "Beyond the schema").
///
/// ```swift
/// let report = try XMLSchemaValidator().validate(try InputFile(path: "records.xml"))
/// for violation in report.violations { print(violation) }   // records.xml:12:7: …
/// ```
public final class XMLSchemaValidator {
    /// One way a document departs from the schema (or from XML).
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// The file or stream.
        public var source: String
        /// 1-based line.
        public var line: Int
        /// 1-based column in characters (for schema violations: the start of the element's tag).
        public var column: Int?
        /// What was expected and what was found (libxml2's message for schema violations).
        public var message: String
        /// `schemaViolation` for the schema; otherwise why the document could not be read.
        public var code: XMLFormatError.Code

        /// Creates a violation.
        public init(source: String, line: Int, column: Int?, message: String, code: XMLFormatError.Code) {
            self.source = source
            self.line = line
            self.column = column
            self.message = message
            self.code = code
        }

        /// `file:line:column: message`, as compilers print it.
        public var description: String {
            "\(source):\(line):" + (column.map { "\($0):" } ?? "") + " " + message
        }
    }

    /// What validating one document found.
    public struct Report: Sendable {
        /// The violations in document order (at most ``Configuration/maximumViolations``).
        public var violations: [Violation]
        /// Violations beyond ``Configuration/maximumViolations``, counted but not kept.
        public var omittedCount: Int
        /// Elements read.
        public var elementCount: Int
        /// Whether the document is well-formed and valid.
        public var isValid: Bool { violations.isEmpty && omittedCount == 0 }
    }

    /// Limits.
    public struct Configuration: Sendable {
        /// Most violations kept per document; the rest are counted in ``Report/omittedCount``.
        public var maximumViolations: Int = 10_000

        /// Creates a configuration.
        public init(maximumViolations: Int = 10_000) {
            self.maximumViolations = maximumViolations
        }
    }

    private let configuration: Configuration
    private let schema: LibXMLSchema

    /// Creates a validator for Ferry's schema, compiling it (`xmlSchemaParse`; about a millisecond).
    /// Each validator has its own compiled schema: libxml2 does not promise that validations
    /// running on several threads may share one.
    ///
    /// - Throws: ``XMLFormatError`` (`.library`) if libxml2 cannot compile the schema.
    public init(configuration: Configuration = .init()) throws(XMLFormatError) {
        self.configuration = configuration
        schema = try LibXMLSchema(xsd: XMLRecordFormat.schema)
    }

    /// Validates the document `source` holds.
    ///
    /// - Throws: ``XMLFormatError`` (`.io`) only when the source cannot be read; everything wrong
    ///   with the document is in the report.
    public func validate(_ source: ByteSource) throws(XMLFormatError) -> Report {
        let xml = try LibXMLTextReader(source: source, options: LibXMLTextReader.secureOptions,
                                       scanner: XMLStructureScanner(recordsOnly: false, maximumTextBytes: LibXMLTextReader.defaultTextLimit))
        xml.diagnostics.minimumLevel = 2
        xml.diagnostics.limit = configuration.maximumViolations
        try xml.validate(with: try LibXMLSchemaValidation(schema: schema))

        var violations: [Violation] = []
        var omitted = 0
        var elements = 0
        var seen = 0
        while true {
            let status = xml.collectingThreadErrors { xml.read() }
            if status == 1 && xml.nodeType == XMLReaderNodeType.element { elements += 1 }
            for d in xml.diagnostics.items[seen...] where LibXML2Diagnostics.isValidity(d) {
                // Violations are reported as libxml2 parses the element's tags: place each at the
                // start tag of the latest element of its name before the parser's position.
                let mark = xml.box.scanner.lastMark(named: Self.elementName(in: d.message), before: d.parserOffset)
                violations.append(Violation(source: source.name, line: mark?.line ?? d.line, column: mark?.column,
                                            message: Self.clean(d.message), code: .schemaViolation))
            }
            seen = xml.diagnostics.items.count
            omitted += xml.diagnostics.dropped
            xml.diagnostics.dropped = 0
            if status == 1 { continue }
            if status < 0 || xml.diagnostics.items.contains(where: { $0.level >= 3 }) {
                let error = xml.failure()
                if error.code == .io { throw error }
                violations.append(Violation(source: source.name, line: error.line ?? xml.box.scanner.line,
                                            column: error.column, message: error.message, code: error.code))
            } else if elements == 0 {
                violations.append(Violation(source: source.name, line: xml.box.scanner.line, column: nil,
                                            message: "expected the root element <records xmlns=\"\(XMLRecordFormat.namespace)\" version=\"1\">, found the end of the input",
                                            code: .truncated))
            }
            break
        }
        return Report(violations: violations, omittedCount: omitted, elementCount: elements)
    }

    /// The local name in libxml2's "Element '{namespace}name'…" message.
    static func elementName(in message: String) -> [UInt8]? {
        let bytes = Array(message.utf8)
        guard bytes.starts(with: Array("Element '".utf8)) else { return nil }
        var name = bytes.dropFirst(9)
        guard let end = name.firstIndex(of: UInt8(ascii: "'")) else { return nil }
        name = name[..<end]
        if let brace = name.lastIndex(of: UInt8(ascii: "}")) { name = name[(brace + 1)...] }
        if let colon = name.lastIndex(of: UInt8(ascii: ":")) { name = name[(colon + 1)...] }
        return Array(name)
    }

    /// libxml2's message without the `{namespace}` noise Ferry's own namespace adds.
    static func clean(_ message: String) -> String {
        let noise = Array("{\(XMLRecordFormat.namespace)}".utf8)
        var bytes = Array(message.utf8)
        var i = 0
        while i + noise.count <= bytes.count {
            if bytes[i..<(i + noise.count)].elementsEqual(noise) {
                bytes.removeSubrange(i..<(i + noise.count))
            } else {
                i += 1
            }
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("Element ") { text = "element " + text.dropFirst(8) }
        return text
    }
}
