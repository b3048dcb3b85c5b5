import FerryRecords

/// What an ``Inspection`` found: the stores and archives that describe themselves, and the
/// summary of the records read, with the report `ferry inspect` prints.
public struct InspectionReport {
    /// The records read (NDJSON, responses, XML, archives without a manifest up front).
    public var summary: DatasetSummary
    /// The archives described by their manifests.
    public var archives: [ManifestSummary] = []
    /// The stores described by their tables.
    public var stores: [StoreSummary] = []

    /// A report of `summary`, and of no archive or store.
    public init(summary: DatasetSummary) {
        self.summary = summary
    }

    /// Whether the records' summary is shown: when records were read (or rejected), or nothing
    /// described itself.
    public var showsRecords: Bool {
        summary.records > 0 || summary.rejected > 0 || (archives.isEmpty && stores.isEmpty)
    }

    /// The text `ferry inspect` prints: the stores, the archives, then the records.
    public var text: String {
        var parts = stores.map(\.text) + archives.map(\.text)
        if showsRecords { parts.append(summary.text) }
        return parts.joined(separator: "\n")
    }

    /// The JSON document `ferry inspect --json` prints (ending in a newline): the records'
    /// summary alone, or an object of `stores`, `archives` and `records`.
    public var json: String {
        if stores.isEmpty && archives.isEmpty { return summary.json }
        var object = JSONObject()
        if !stores.isEmpty { object.append(key: "stores", value: .array(stores.map(\.json))) }
        if !archives.isEmpty { object.append(key: "archives", value: .array(archives.map(\.json))) }
        if showsRecords, let records = try? JSONValue(parsing: summary.json) { object.append(key: "records", value: records) }
        return JSONValue.object(object).compactText + "\n"
    }
}
