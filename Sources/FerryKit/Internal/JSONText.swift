import FerryRecords

extension JSONValue {
    /// The value as compact JSON text.
    package var compactText: String {
        var out = JSONOutput()
        out.appendValue(self)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

extension Int {
    /// The integer as a JSON number.
    package var json: JSONValue { .number(JSONNumber(Int64(self))) }
}
