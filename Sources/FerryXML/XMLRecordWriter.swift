import FerryIO
import FerryRecords

/// Writes records as Ferry's XML (see `Docs/XMLFormat.md`), streaming, with libxml2's
/// `xmlTextWriter` into a ``ByteSink``.
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
    /// Escaped values are built here before they are handed to libxml2.
    private var scratch = JSONOutput(capacity: 1 << 12)
    /// JSON text of unknown keys and values kept as JSON.
    private var json = JSONOutput(capacity: 1 << 12)
    private var isFinished = false
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
    public func write(_ record: Record) throws {
        precondition(!isFinished, "XMLRecordWriter.write after finish()")
        var escaped = XMLTextEscaping.needsEscape(record.recordName)
        if let v = record.recordType, !escaped { escaped = XMLTextEscaping.needsEscape(v) }
        if let v = record.recordChangeTag, !escaped { escaped = XMLTextEscaping.needsEscape(v) }
        if let v = record.shortGUID, !escaped { escaped = XMLTextEscaping.needsEscape(v) }
        try writer.raw("\n  ")
        try writer.startElement("record")
        try attribute("recordName", record.recordName, escaped)
        if let v = record.recordType { try attribute("recordType", v, escaped) }
        if let v = record.recordChangeTag { try attribute("recordChangeTag", v, escaped) }
        if let v = record.deleted { try writer.attribute("deleted", constant: v ? "true" : "false") }
        if let v = record.shortGUID { try attribute("shortGUID", v, escaped) }
        if escaped { try writerEscapedFlag() }
        var hasChildren = false
        if let zone = record.zoneID {
            try writer.raw("\n    ")
            try write(zone)
            hasChildren = true
        }
        if let stamp = record.created {
            try writer.raw("\n    ")
            try write(stamp, element: "created")
            hasChildren = true
        }
        if let stamp = record.modified {
            try writer.raw("\n    ")
            try write(stamp, element: "modified")
            hasChildren = true
        }
        if let parent = record.parent {
            try writer.raw("\n    ")
            try write(parent, element: "parent", FieldAttributes())
            hasChildren = true
        }
        if let share = record.share {
            try writer.raw("\n    ")
            try write(share, element: "share", FieldAttributes())
            hasChildren = true
        }
        if let fields = record.fields {
            try writer.raw("\n    ")
            try writer.startElement("fields")
            for entry in fields.entries {
                try writer.raw("\n      ")
                try writeField(entry.name, entry.field)
            }
            if !fields.entries.isEmpty { try writer.raw("\n    ") }
            try writer.endElement()
            hasChildren = true
        }
        if let plugin = record.pluginFields {
            try writer.raw("\n    ")
            try writeJSON(plugin, element: "pluginFields")
            hasChildren = true
        }
        for member in record.unknownKeys.members {
            try writer.raw("\n    ")
            try writeUnknown(member)
            hasChildren = true
        }
        if hasChildren { try writer.raw("\n  ") }
        try writer.endElement()
        recordCount += 1
    }

    /// Closes the document, flushes libxml2's buffer and commits the sink.
    public func finish() throws {
        guard !isFinished else { return }
        isFinished = true
        if recordCount > 0 { try writer.raw("\n") }
        try writer.endElement()
        try writer.endDocument() // ends the last line
        try sink.commit()
    }

    // MARK: Values

    /// Writes an attribute, escaping the value as needed.
    @inline(__always)
    func attribute(_ name: StaticString, _ value: String, _ escaped: Bool) throws {
        var value = value
        try value.withUTF8 { bytes in try attribute(name, utf8: bytes, escaped) }
    }

    @inline(__always)
    func attribute(_ name: StaticString, utf8 bytes: UnsafeBufferPointer<UInt8>, _ escaped: Bool) throws {
        if XMLContentEscaper.isPlain(bytes, attribute: true, escaped: escaped) {
            try writer.attribute(name, escapedValue: bytes)
        } else {
            scratch.removeAll()
            XMLContentEscaper.append(bytes, attribute: true, escaped: escaped, to: &scratch)
            try writer.attribute(name, escapedValue: scratch.bytes.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Writes an integer attribute.
    @inline(__always)
    func attribute(_ name: StaticString, integer: Int64) throws {
        scratch.removeAll()
        scratch.appendInteger(integer)
        try writer.attribute(name, escapedValue: scratch.bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Writes a double attribute (shortest round-trip text; `INF`, `-INF`, `NaN` as in XSD).
    @inline(__always)
    func attribute(_ name: StaticString, double: Double) throws {
        scratch.removeAll()
        Self.appendDouble(double, to: &scratch)
        try writer.attribute(name, escapedValue: scratch.bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Writes the ISO-8601 `date` attribute for a millisecond timestamp (none outside 0001–9999).
    @inline(__always)
    func dateAttribute(_ milliseconds: Int64) throws {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            let n = ISO8601.format(milliseconds: milliseconds, into: buffer.baseAddress!)
            if n > 0 { try writer.attribute("date", escapedValue: UnsafeBufferPointer(start: buffer.baseAddress!, count: n)) }
        }
    }

    /// Writes element text, escaping it as needed.
    @inline(__always)
    func text(_ value: String, _ escaped: Bool) throws {
        var value = value
        try value.withUTF8 { bytes in try text(utf8: bytes, escaped) }
    }

    @inline(__always)
    func text(utf8 bytes: UnsafeBufferPointer<UInt8>, _ escaped: Bool) throws {
        if XMLContentEscaper.isPlain(bytes, attribute: false, escaped: escaped) {
            try writer.raw(bytes)
        } else {
            scratch.removeAll()
            XMLContentEscaper.append(bytes, attribute: false, escaped: escaped, to: &scratch)
            try writer.raw(scratch.bytes.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Writes an integer as element text.
    @inline(__always)
    func text(integer: Int64) throws {
        scratch.removeAll()
        scratch.appendInteger(integer)
        try writer.raw(scratch.bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Writes a double as element text.
    @inline(__always)
    func text(double: Double) throws {
        scratch.removeAll()
        Self.appendDouble(double, to: &scratch)
        try writer.raw(scratch.bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// The shortest text that reads back as exactly `value` (Swift's `description`: `-0.0`,
    /// `5e-324`, `0.30000000000000004`), or `INF`, `-INF`, `NaN` as XML Schema spells them.
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
    func writeJSON(_ value: JSONValue, element: StaticString, key: String? = nil) throws {
        json.removeAll()
        json.appendValue(value)
        try writeJSONText(element: element, key: key, FieldAttributes())
    }

    /// Writes the JSON text already in `json` as the content of `element`.
    func writeJSONText(element: StaticString, key: String?, _ attributes: FieldAttributes) throws {
        let bytes = json.bytes.assumingMemoryBound(to: UInt8.self)
        let escaped = XMLTextEscaping.needsEscape(bytes) || (key.map(XMLTextEscaping.needsEscape) ?? false)
            || attributes.needsEscape
        try writer.startElement(element)
        try writeFieldAttributes(attributes, escaped)
        if let key { try attribute("key", key, escaped) }
        if escaped { try writerEscapedFlag() }
        try text(utf8: bytes, escaped)
        try writer.endElement()
    }

    /// Encodes a field value as its JSON into `json` (for `<json>`).
    func encodeJSON(_ value: FieldValue) {
        json.removeAll()
        RecordJSON.encode(value, into: &json)
    }

    /// `<unknown key="…">JSON</unknown>`: a member Ferry does not model, kept as JSON text.
    func writeUnknown(_ member: JSONObject.Member) throws {
        try writeJSON(member.value, element: "unknown", key: member.key)
    }

    @inline(__always)
    func writerStart(_ element: StaticString) throws { try writer.startElement(element) }

    @inline(__always)
    func writerEscapedFlag() throws { try writer.attribute("escaped", constant: "true") }

    @inline(__always)
    func writerUntypedFlag() throws { try writer.attribute("untyped", constant: "true") }

    @inline(__always)
    func writerEnd() throws { try writer.endElement() }

    func writeUnknownKeys(_ object: JSONObject) throws {
        for member in object.members { try writeUnknown(member) }
    }
}
