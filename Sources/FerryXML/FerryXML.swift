// FerryXML: CloudKit records as XML over libxml2 — streaming, lossless, secure by default.
//
// - XMLRecordWriter: records → XML (xmlTextWriter into a ByteSink).
// - XMLRecordReader: XML → records (xmlTextReader pulling from a ByteSource).
// - XMLSchemaValidator: checks a document against the published XSD (RecordsSchema).
// The format is described in Docs/XMLFormat.md; the only file that calls libxml2 is
// Internal/LibXML2.swift.

/// Constants of Ferry's XML format.
public enum XMLRecordFormat {
    /// The namespace of every element: `https://ferry.dev/ns/records/1`.
    public static let namespace = "https://ferry.dev/ns/records/1"
    /// The format version written in the root's `version` attribute.
    public static let version = "1"
}
