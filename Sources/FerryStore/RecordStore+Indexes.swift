import FerryIO
import FerryInternals
import FerryPredicate

extension RecordStore {
    /// A SQLite index made for a schema's QUERYABLE or SORTABLE field.
    public struct FieldIndex: Sendable, Equatable {
        /// The index's name in SQLite.
        public var name: String
        /// The record type it covers (a partial index: only that type's rows).
        public var recordType: String
        /// The field (or a system field: `___recordID`, `___createTime`, `___modTime`, …).
        public var fieldName: String
        /// `QUERYABLE`, `SORTABLE` or both, as the schema marked the field.
        public var kind: String
        /// The indexed SQL expression.
        public var expression: String
    }

    /// Makes a SQLite index for every QUERYABLE or SORTABLE field of the schema's record types
    /// (list, asset and location fields excepted: their queries are not comparisons of one value),
    /// then updates SQLite's statistics so that its planner picks them. Existing indexes are kept;
    /// returns the indexes the store has for the schema afterwards.
    ///
    /// Each is a partial index on the field's value within its record type:
    /// `CREATE INDEX … ON records (json_extract(body, '$.fields.F.value')) WHERE record_type = 'T'`.
    @discardableResult
    public func makeIndexes(for schema: CloudKitSchema) throws -> [FieldIndex] {
        guard access == .readWrite else { throw StoreError(.readOnly, "making indexes needs the store opened for writing", path: path) }
        var wanted: [FieldIndex] = []
        for type in schema.recordTypes {
            for field in type.fields where field.isQueryable || field.isSortable {
                guard !field.type.isList, !["ASSET", "LOCATION"].contains(field.type.base),
                      let expression = Self.indexExpression(field.name) else { continue }
                let kind = [field.isQueryable ? "QUERYABLE" : nil, field.isSortable ? "SORTABLE" : nil].compactMap { $0 }.joined(separator: " ")
                wanted.append(FieldIndex(name: Self.indexName(type.name, field.name), recordType: type.name, fieldName: field.name,
                                         kind: kind, expression: expression))
            }
        }
        try StoreWriter.beginWriting(self)
        do {
            // An index this store already has for the field keeps its name (stores indexed
            // before names carried a hash); one SQLite does not have by that exact name is made anew.
            let existing = try connection.prepare("""
                SELECT f.name FROM field_indexes f JOIN sqlite_master m ON m.type = 'index' AND m.name = f.name
                WHERE f.record_type = ?1 AND f.field_name = ?2
                """)
            for i in wanted.indices {
                existing.reset()
                try existing.bind(wanted[i].recordType, at: 1)
                try existing.bind(wanted[i].fieldName, at: 2)
                if try existing.step(), let name = existing.text(at: 0) { wanted[i].name = name }
            }
            for index in wanted {
                try connection.sortingOnThreads(Processors.available) {
                    try connection.execute("""
                        CREATE INDEX IF NOT EXISTS "\(index.name)" ON records (\(index.expression)) WHERE record_type = \(Self.literal(index.recordType))
                        """)
                }
                let note = try connection.prepare("""
                    INSERT INTO field_indexes (name, record_type, field_name, kind) VALUES (?1, ?2, ?3, ?4)
                    ON CONFLICT (name) DO UPDATE SET kind = excluded.kind
                    """)
                try note.bind(index.name, at: 1)
                try note.bind(index.recordType, at: 2)
                try note.bind(index.fieldName, at: 3)
                try note.bind(index.kind, at: 4)
                try note.run()
            }
            // Rows of names SQLite has no index by (two fields that once spelled one name).
            try connection.execute("DELETE FROM field_indexes WHERE name NOT IN (SELECT name FROM sqlite_master WHERE type = 'index')")
            // Full statistics (a sampled ANALYZE misjudges how many records share a type).
            try connection.execute("ANALYZE")
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return try fieldIndexes()
    }

    /// The indexes `makeIndexes(for:)` made.
    public func fieldIndexes() throws -> [FieldIndex] {
        let statement = try connection.prepare("SELECT name, record_type, field_name, kind FROM field_indexes ORDER BY record_type, field_name")
        var indexes: [FieldIndex] = []
        while try statement.step() {
            let field = statement.text(at: 2) ?? ""
            indexes.append(FieldIndex(name: statement.text(at: 0) ?? "", recordType: statement.text(at: 1) ?? "", fieldName: field,
                                      kind: statement.text(at: 3) ?? "", expression: Self.indexExpression(field) ?? ""))
        }
        return indexes
    }

    /// The indexed expression of a field: a system field's column, or the field's value.
    static func indexExpression(_ field: String) -> String? {
        switch field {
        case "___recordID": "record_name"
        case "___createTime": "created_at"
        case "___modTime": "modified_at"
        case "___createdBy": "created_by"
        case "___modifiedBy": "modified_by"
        case "___etag": "change_tag"
        default: StoreFieldPath.valueExpression(field, alias: false)
        }
    }

    /// `fx_<type>__<field>_<hash>`: the names with anything but letters, digits and `_` spelled
    /// in hex, for reading, then 16 hex digits of a hash (FNV-1a, 64 bits) of the type's and the
    /// field's exact bytes, so that names that spell alike (`a_`/`b`, `a`/`_b`) or differ only
    /// in case (SQLite's names do not) get indexes of their own.
    static func indexName(_ type: String, _ field: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in Array(type.utf8) + [0] + Array(field.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        func clean(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                if (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x5F {
                    out.append(Character(UnicodeScalar(byte)))
                } else {
                    out += "x" + String(byte, radix: 16)
                }
            }
            return out
        }
        return "fx_" + clean(type) + "__" + clean(field) + "_" + Hex.digits(of: hash, width: 16)
    }

    /// A SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacing("'", with: "''") + "'"
    }
}
