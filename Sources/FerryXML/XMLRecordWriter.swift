import FerryIO
import FerryInternals
import FerryPipeline
import FerryRecords

/// Writes records as Ferry's XML (see `Docs/XMLFormat.md`), streaming, with libxml2's
/// `xmlTextWriter` into a ``ByteSink``.
///
/// `xmlTextWriter` writes the document's structure — the XML declaration, `<records>`, each
/// `<record>` with its attributes, `<fields>`, `<list>` and `<field>` — and closes every element it
/// opened. The leaf elements inside (values, zones, stamps, references, unknown members) are
/// serialized by Ferry, escaped exactly as `xmlTextWriter` would plus Ferry's `\uXXXX` escape, and
/// handed over with `xmlTextWriterWriteRawLen` in one piece per run: one call instead of some
/// twenty per element, which is where most of the time went.
///
/// Memory stays flat: each record is written as it comes and libxml2 hands its output buffer to the
/// sink every few kilobytes. ``finish()`` closes the document and commits the sink (for files, the
/// atomic rename), so a failed run never leaves a partial file under the final name.
///
/// ```swift
/// let writer = try XMLRecordWriter(sink: try OutputFile(path: "out.xml"))
/// for record in records { try writer.write(record) }
/// try writer.finish()
/// ```
public final class XMLRecordWriter: RecordWriter {
    private let writer: LibXMLTextWriter
    private let sink: ByteSink
    /// Serialized leaf elements not yet handed to libxml2.
    var markup = JSONOutput(capacity: 1 << 16)
    /// Escaped attribute values of the elements libxml2 writes.
    private var scratch = JSONOutput(capacity: 1 << 12)
    /// JSON text of unknown keys and values kept as JSON.
    var json = JSONOutput(capacity: 1 << 12)
    private var isFinished = false
    /// Why a value just written could not be read back (set by the leaf writers, which do not
    /// throw; ``write(_:)`` checks it after each part of the record and throws before going on).
    var refusal: (code: XMLFormatError.Code, expected: String, found: String)?
    /// The longest text written in one piece (escaped, as the reader counts it): the reader's
    /// default limit, so that whatever is written reads back.
    static let maximumTextBytes = XMLRecordReader.Configuration.defaultMaximumTextBytes
    /// Records written.
    public private(set) var recordCount = 0
    /// Bytes handed to the sink so far (libxml2 buffers a few kilobytes until ``finish()``).
    public var bytesWritten: Int { writer.bytesWritten }

    /// Starts a document on `sink`: the XML declaration and the `<records>` root element.
    ///
    /// - Throws: ``XMLFormatError`` when libxml2 cannot create its writer or the sink fails.
    public init(sink: ByteSink) throws {
        self.sink = sink
        writer = try LibXMLTextWriter(sink: sink)
        try writer.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        try writer.startElement("records")
        try writer.attribute("xmlns", constant: "https://ferry.dev/ns/records/1")
        try writer.attribute("version", constant: "1")
    }

    /// Writes one record as a `<record>` element.
    ///
    /// - Throws: ``XMLFormatError`` naming the record and field for a value the XML reader would
    ///   refuse: a double that is not finite (`.invalidValue`), or text longer than
    ///   ``XMLRecordReader/Configuration/defaultMaximumTextBytes`` once escaped (`.tooLarge`).
    ///   The document is then unusable: the caller abandons its output.
    public func write(_ record: Record) throws {
        precondition(!isFinished, "XMLRecordWriter.write after finish()")
        var escaped = XMLTextEscaping.needsEscape(record.recordName)
        if let v = record.recordType, !escaped { escaped = XMLTextEscaping.needsEscape(v) }
        if let v = record.recordChangeTag, !escaped { escaped = XMLTextEscaping.needsEscape(v) }
        if let v = record.shortGUID, !escaped { escaped = XMLTextEscaping.needsEscape(v) }
        markup.append("\n  ")
        try startElement("record")
        try elementAttribute("recordName", record.recordName, escaped)
        if let v = record.recordType { try elementAttribute("recordType", v, escaped) }
        if let v = record.recordChangeTag { try elementAttribute("recordChangeTag", v, escaped) }
        if let v = record.deleted { try writer.attribute("deleted", constant: v ? "true" : "false") }
        if let v = record.shortGUID { try elementAttribute("shortGUID", v, escaped) }
        if escaped { try writer.attribute("escaped", constant: "true") }
        try checkRefusal(record, field: nil)
        var hasChildren = false
        if let zone = record.zoneID {
            markup.append("\n    ")
            write(zone)
            hasChildren = true
        }
        if let stamp = record.created {
            markup.append("\n    ")
            write(stamp, element: "created")
            hasChildren = true
        }
        if let stamp = record.modified {
            markup.append("\n    ")
            write(stamp, element: "modified")
            hasChildren = true
        }
        if let parent = record.parent {
            markup.append("\n    ")
            write(parent, element: "parent", FieldAttributes())
            hasChildren = true
        }
        if let share = record.share {
            markup.append("\n    ")
            write(share, element: "share", FieldAttributes())
            hasChildren = true
        }
        if let fields = record.fields {
            try checkRefusal(record, field: nil)
            markup.append("\n    ")
            try startElement("fields")
            for entry in fields.entries {
                markup.append("\n      ")
                try writeField(entry.name, entry.field)
                try checkRefusal(record, field: entry.name)
            }
            if !fields.entries.isEmpty { markup.append("\n    ") }
            try endElement()
            hasChildren = true
        }
        if let plugin = record.pluginFields {
            markup.append("\n    ")
            writeJSON(plugin, element: "pluginFields")
            hasChildren = true
        }
        for member in record.unknownKeys.members {
            markup.append("\n    ")
            writeUnknown(member)
            hasChildren = true
        }
        if hasChildren { markup.append("\n  ") }
        try checkRefusal(record, field: nil)
        try endElement()
        recordCount += 1
    }

    /// Throws the ``refusal`` a part of `record` left, naming the record and the field.
    @inline(__always)
    func checkRefusal(_ record: Record, field: String?) throws {
        guard let refusal else { return }
        self.refusal = nil
        let part = field.map { "field \"\($0)\" of record \"\(record.recordName)\"" } ?? "record \"\(record.recordName)\""
        throw XMLFormatError(refusal.code, "expected \(refusal.expected) in \(part), found \(refusal.found)",
                             recordIndex: recordCount + 1)
    }

    /// Sets ``refusal`` when the markup written since `start` is one piece of text longer than the
    /// XML reader reads (libxml2's limit; CloudKit's own limit for a whole record is 1 MB).
    @inline(__always)
    func checkPiece(from start: Int) {
        let count = markup.count - start
        if count > Self.maximumTextBytes { refuseLongText(count) }
    }

    func refuseLongText(_ count: Int) {
        guard refusal == nil else { return }
        refusal = (.tooLarge, "text of at most \(Self.maximumTextBytes) bytes in one piece once escaped",
                   "\(count) bytes (the XML reader's limit, libxml2's; CloudKit's own limit for a whole record is 1 MB): "
                   + "keep such values in NDJSON, an archive or a store")
    }

    /// Sets ``refusal`` for a double the XML reader refuses: INF, -INF, NaN.
    @inline(__always)
    func checkFinite(_ value: Double) {
        guard !value.isFinite, refusal == nil else { return }
        refusal = (.invalidValue, "a finite number",
                   "\(value) (the XML reader, JSON, NDJSON and CloudKit have no infinity or NaN)")
    }

    /// Closes the document, flushes libxml2's buffer and commits the sink.
    public func finish() throws {
        guard !isFinished else { return }
        isFinished = true
        if recordCount > 0 { markup.append("\n") }
        try endElement()
        try writer.endDocument() // ends the last line
        try sink.commit()
    }

    // MARK: Elements written by xmlTextWriter

    /// Hands the serialized leaf elements to libxml2 (`xmlTextWriterWriteRawLen`).
    @inline(__always)
    func flushMarkup() throws {
        guard markup.count > 0 else { return }
        try writer.raw(markup.bytes.assumingMemoryBound(to: UInt8.self))
        markup.removeAll()
    }

    /// `xmlTextWriterStartElement`, after the pending markup.
    @inline(__always)
    func startElement(_ name: StaticString) throws {
        try flushMarkup()
        try writer.startElement(name)
    }

    /// `xmlTextWriterEndElement`, after the pending markup.
    @inline(__always)
    func endElement() throws {
        try flushMarkup()
        try writer.endElement()
    }

    /// An attribute of the element libxml2 has open, escaped as needed.
    func elementAttribute(_ name: StaticString, _ value: String, _ escaped: Bool) throws {
        var value = value
        try value.withUTF8 { bytes in
            if XMLContentEscaper.isPlain(bytes, attribute: true, escaped: escaped) {
                if bytes.count > Self.maximumTextBytes { refuseLongText(bytes.count) }
                try writer.attribute(name, escapedValue: bytes)
            } else {
                scratch.removeAll()
                XMLContentEscaper.append(bytes, attribute: true, escaped: escaped, to: &scratch)
                if scratch.count > Self.maximumTextBytes { refuseLongText(scratch.count) }
                try writer.attribute(name, escapedValue: scratch.bytes.assumingMemoryBound(to: UInt8.self))
            }
        }
    }

    /// An attribute of the element libxml2 has open, with a constant value.
    func elementAttribute(_ name: StaticString, constant: StaticString) throws {
        try writer.attribute(name, constant: constant)
    }

    // MARK: Leaf markup

    /// ` name="value"`, escaped as needed.
    @inline(__always)
    func attribute(_ name: StaticString, _ value: String, _ escaped: Bool) {
        markup.append(UInt8(ascii: " "))
        markup.append(name)
        markup.append("=\"")
        let start = markup.count
        var value = value
        value.withUTF8 { bytes in
            if XMLContentEscaper.isPlain(bytes, attribute: true, escaped: escaped) {
                markup.append(UnsafeRawBufferPointer(bytes))
            } else {
                XMLContentEscaper.append(bytes, attribute: true, escaped: escaped, to: &markup)
            }
        }
        checkPiece(from: start)
        markup.append(UInt8(ascii: "\""))
    }

    /// ` name="123"`.
    @inline(__always)
    func attribute(_ name: StaticString, integer: Int64) {
        markup.append(UInt8(ascii: " "))
        markup.append(name)
        markup.append("=\"")
        markup.appendInteger(integer)
        markup.append(UInt8(ascii: "\""))
    }

    /// ` name="1.5"`: the shortest round-trip text; `INF`, `-INF`, `NaN` as XML Schema spells them.
    @inline(__always)
    func attribute(_ name: StaticString, double: Double) {
        checkFinite(double)
        markup.append(UInt8(ascii: " "))
        markup.append(name)
        markup.append("=\"")
        Self.appendDouble(double, to: &markup)
        markup.append(UInt8(ascii: "\""))
    }

    /// ` name="true"`.
    @inline(__always)
    func attribute(_ name: StaticString, constant: StaticString) {
        markup.append(UInt8(ascii: " "))
        markup.append(name)
        markup.append("=\"")
        markup.append(constant)
        markup.append(UInt8(ascii: "\""))
    }

    /// The ISO-8601 ` date="…"` for a millisecond timestamp (none outside 0001–9999).
    @inline(__always)
    func dateAttribute(_ milliseconds: Int64) {
        var text = ISO8601.Text(0, 0, 0)
        let n = ISO8601.format(milliseconds: milliseconds, into: &text)
        guard n > 0 else { return }
        markup.append(" date=\"")
        withUnsafeBytes(of: &text) { markup.append(UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
        markup.append(UInt8(ascii: "\""))
    }

    /// Element text, escaped as needed.
    @inline(__always)
    func text(_ value: String, _ escaped: Bool) {
        var value = value
        value.withUTF8 { bytes in text(utf8: bytes, escaped) }
    }

    @inline(__always)
    func text(utf8 bytes: UnsafeBufferPointer<UInt8>, _ escaped: Bool) {
        let start = markup.count
        if XMLContentEscaper.isPlain(bytes, attribute: false, escaped: escaped) {
            markup.append(UnsafeRawBufferPointer(bytes))
        } else {
            XMLContentEscaper.append(bytes, attribute: false, escaped: escaped, to: &markup)
        }
        checkPiece(from: start)
    }

    /// `<name`.
    @inline(__always)
    func open(_ name: StaticString) {
        markup.append(UInt8(ascii: "<"))
        markup.append(name)
    }

    /// `</name>`.
    @inline(__always)
    func close(_ name: StaticString) {
        markup.append("</")
        markup.append(name)
        markup.append(UInt8(ascii: ">"))
    }

    /// The shortest text that reads back as exactly `value` (Swift's `description`: `-0.0`,
    /// `5e-324`, `0.30000000000000004`), or `INF`, `-INF`, `NaN` as XML Schema spells them (which
    /// the writer refuses before the record is done: ``checkFinite(_:)``).
    static func appendDouble(_ value: Double, to out: inout JSONOutput) {
        if value.isFinite {
            out.appendDouble(value)
        } else if value.isNaN {
            out.append("NaN")
        } else {
            out.append(value < 0 ? "-INF" : "INF")
        }
    }

    /// `<element>JSON</element>` (JSON text of `value`), with `escaped="true"` when needed.
    func writeJSON(_ value: JSONValue, element: StaticString, key: String? = nil) {
        json.removeAll()
        json.appendValue(value)
        writeJSONText(element: element, key: key, FieldAttributes())
    }

    /// Writes the JSON text already in `json` as the content of `element`.
    func writeJSONText(element: StaticString, key: String?, _ field: FieldAttributes) {
        let bytes = json.bytes.assumingMemoryBound(to: UInt8.self)
        let escaped = XMLTextEscaping.needsEscape(bytes) || (key.map(XMLTextEscaping.needsEscape) ?? false)
            || field.needsEscape
        open(element)
        writeFieldAttributes(field, escaped)
        if let key { attribute("key", key, escaped) }
        if escaped { attribute("escaped", constant: "true") }
        if bytes.isEmpty {
            markup.append("/>")
        } else {
            markup.append(UInt8(ascii: ">"))
            text(utf8: bytes, escaped)
            close(element)
        }
    }

    /// Encodes a field value as its JSON into `json` (for `<json>`).
    func encodeJSON(_ value: FieldValue) {
        json.removeAll()
        RecordJSON.encode(value, into: &json)
    }

    /// `<unknown key="…">JSON</unknown>`: a member Ferry does not model, kept as JSON text.
    func writeUnknown(_ member: JSONObject.Member) {
        writeJSON(member.value, element: "unknown", key: member.key)
    }

    func writeUnknownKeys(_ object: JSONObject) {
        for member in object.members { writeUnknown(member) }
    }
}
