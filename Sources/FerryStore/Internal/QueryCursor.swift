import FerryInternals
import FerryRecords

/// A continuation cursor: where a page ended — the sort values and row id of its last record —
/// and which query it belongs to. The next page starts strictly after that position, so it is
/// stable across writes that do not change the sort keys of the records around it.
///
/// Text: base64url of `{"v":1,"q":"<fingerprint>","k":[[kind,value]…],"id":N}`.
struct QueryCursor: Equatable {
    var fingerprint: String
    var sortValues: [SQLValue]
    var rowID: Int64

    var encoded: String {
        var object = JSONObject()
        object.append(key: "v", value: .number(JSONNumber(Int64(1))))
        object.append(key: "q", value: .string(fingerprint))
        object.append(key: "k", value: .array(sortValues.map { value in
            switch value {
            case .null: .array([.string("n")])
            case .integer(let v): .array([.string("i"), .string(String(v))])
            case .real(let v): .array([.string("r"), .string(String(v.bitPattern, radix: 16))])
            case .text(let v): .array([.string("t"), .string(v)])
            case .textBytes(let bytes): .array([.string("t"), .string(String(decoding: bytes, as: UTF8.self))])
            }
        }))
        object.append(key: "id", value: .number(JSONNumber(rowID)))
        var out = JSONOutput(capacity: 256)
        out.appendValue(.object(object))
        return Base64.url.encode(Array(out.bytes))
    }

    init(fingerprint: String, sortValues: [SQLValue], rowID: Int64) {
        self.fingerprint = fingerprint
        self.sortValues = sortValues
        self.rowID = rowID
    }

    /// Reads a cursor made for the query with `fingerprint` and `sortCount` sort keys.
    init(parsing text: String, fingerprint expected: String, sortCount: Int) throws {
        let invalid = StoreError(.invalidCursor, "expected a continuation cursor from a previous page of this query, found \"\(text.prefix(60))\"")
        guard let bytes = Base64.url.decode(text),
              let value = try? bytes.withUnsafeBytes({ try RecordJSON.parseValue($0) }),
              value["v"] == .number(JSONNumber(Int64(1))), let fingerprint = value["q"]?.stringValue,
              let keys = value["k"]?.arrayValue, let id = value["id"]?.numberValue?.int64Value else { throw invalid }
        guard fingerprint == expected else {
            throw StoreError(.invalidCursor, "the cursor belongs to another query (other types, zones, predicate or sort keys); "
                             + "a cursor continues only the query that made it")
        }
        guard keys.count == sortCount else { throw invalid }
        var values: [SQLValue] = []
        for key in keys {
            guard let parts = key.arrayValue, let kind = parts.first?.stringValue else { throw invalid }
            switch (kind, parts.count > 1 ? parts[1].stringValue : nil) {
            case ("n", _): values.append(.null)
            case ("i", let text?): guard let v = Int64(text) else { throw invalid }; values.append(.integer(v))
            case ("r", let text?): guard let bits = UInt64(text, radix: 16) else { throw invalid }; values.append(.real(Double(bitPattern: bits)))
            case ("t", let text?): values.append(.text(text))
            default: throw invalid
            }
        }
        self.fingerprint = fingerprint
        sortValues = values
        rowID = id
    }
}
