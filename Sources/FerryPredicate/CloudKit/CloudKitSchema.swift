/// A CloudKit schema parsed from the `.ckdb` schema language:
///
/// ```
/// DEFINE SCHEMA
///     RECORD TYPE Message (
///         "___recordID" REFERENCE QUERYABLE,
///         text   STRING QUERYABLE SEARCHABLE,
///         count  INT64 QUERYABLE SORTABLE,
///         tags   LIST<STRING> QUERYABLE,
///         GRANT READ TO "_world"
///     );
/// ```
public struct CloudKitSchema: Hashable, Sendable {
    /// A field's declared type.
    public struct FieldType: Hashable, Sendable, CustomStringConvertible {
        /// The element type: `ASSET BYTES DOUBLE INT64 LOCATION REFERENCE STRING TIMESTAMP NUMBER`.
        public var base: String
        /// `LIST<…>`.
        public var isList: Bool
        /// `ENCRYPTED …`.
        public var isEncrypted: Bool
        /// For `NUMBER PREFERRED AS INT64|DOUBLE`, the preferred type.
        public var preferred: String?

        /// Creates a type.
        public init(base: String, isList: Bool = false, isEncrypted: Bool = false, preferred: String? = nil) {
            self.base = base
            self.isList = isList
            self.isEncrypted = isEncrypted
            self.preferred = preferred
        }

        /// `LIST<STRING>`, `ENCRYPTED BYTES`, `NUMBER PREFERRED AS INT64`…
        public var description: String {
            var text = base + (preferred.map { " PREFERRED AS \($0)" } ?? "")
            if isList { text = "LIST<\(text)>" }
            return isEncrypted ? "ENCRYPTED " + text : text
        }

        /// Whether values are numbers (INT64, DOUBLE, NUMBER).
        public var isNumeric: Bool { ["INT64", "DOUBLE", "NUMBER"].contains(base) }
    }

    /// A field and its indexes.
    public struct Field: Hashable, Sendable {
        /// The field name (system fields start with `___`).
        public var name: String
        /// The declared type.
        public var type: FieldType
        /// Equality index.
        public var isQueryable: Bool
        /// Range and sort index.
        public var isSortable: Bool
        /// Full-text token index.
        public var isSearchable: Bool

        /// Creates a field.
        public init(name: String, type: FieldType, isQueryable: Bool = false, isSortable: Bool = false, isSearchable: Bool = false) {
            self.name = name
            self.type = type
            self.isQueryable = isQueryable
            self.isSortable = isSortable
            self.isSearchable = isSearchable
        }
    }

    /// `GRANT READ, WRITE TO "_world"`.
    public struct Grant: Hashable, Sendable {
        /// `READ`, `CREATE`, `WRITE`.
        public var permissions: [String]
        /// The role.
        public var role: String
        /// Creates a grant.
        public init(permissions: [String], role: String) {
            self.permissions = permissions
            self.role = role
        }
    }

    /// A record type.
    public struct RecordType: Hashable, Sendable {
        /// The type name.
        public var name: String
        /// Its fields in order, including the declared `___` system fields.
        public var fields: [Field]
        /// Its grants.
        public var grants: [Grant]

        /// Creates a record type.
        public init(name: String, fields: [Field] = [], grants: [Grant] = []) {
            self.name = name
            self.fields = fields
            self.grants = grants
        }

        /// The field named `name`.
        public func field(named name: String) -> Field? { fields.first { $0.name == name } }
    }

    /// `CREATE ROLE` names.
    public var roles: [String]
    /// The record types in order.
    public var recordTypes: [RecordType]

    /// Creates a schema.
    public init(roles: [String] = [], recordTypes: [RecordType] = []) {
        self.roles = roles
        self.recordTypes = recordTypes
    }

    /// Parses `.ckdb` text.
    ///
    /// - Throws: ``PredicateError`` (code `.syntax`) with what was expected, what was found, line
    ///   and column.
    public init(parsing text: String) throws(PredicateError) {
        var parser = SchemaParser(text)
        do {
            self = try parser.parseSchema()
        } catch {
            throw PredicateParser.attachSource(error, text: text)
        }
    }

    /// The record type named `name`.
    public func recordType(named name: String) -> RecordType? { recordTypes.first { $0.name == name } }
}
