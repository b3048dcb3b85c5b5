/// JSON paths into a stored record body, written the same way wherever SQL names a field's
/// value, so that expression indexes (`ferry index`) and queries use the same expression text
/// (SQLite uses an index on an expression only for that exact expression).
enum StoreFieldPath {
    /// `$.fields.NAME.value` (or a member of the value: `$.fields.NAME.value.recordName`), with a
    /// name that is not a plain identifier quoted (`$.fields."a b".value`); `nil` for names with
    /// quotes, backslashes or control characters, which are not written into SQL.
    static func valuePath(_ name: String, member: String? = nil) -> String? {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "'") && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else { return nil }
        let plain = name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F }
            && !(name.utf8.first! >= 0x30 && name.utf8.first! <= 0x39)
        let label = plain ? name : "\"" + name + "\""
        return "$.fields." + label + ".value" + (member.map { "." + $0 } ?? "")
    }

    /// The SQL expression of a field's value in `records` (alias `r` when `alias`).
    static func valueExpression(_ name: String, alias: Bool = true) -> String? {
        valuePath(name).map { "json_extract(\(alias ? "r." : "")body, '\($0)')" }
    }
}
