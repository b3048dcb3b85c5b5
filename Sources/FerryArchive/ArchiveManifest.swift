import FerryRecords

/// The contents of `manifest.json`, the first member of every archive Ferry writes: what the archive
/// holds (zones, record counts, the inferred field schema, change tokens) and the size and
/// SHA-256 of every other member. See `Docs/ArchiveLayout.md`.
public struct ArchiveManifest: Hashable, Sendable {
    /// The layout version this build writes and reads.
    public static let currentFormatVersion = 1
    /// The value of the manifest's `format` key.
    public static let formatName = "ferry-archive"

    /// One zone of one database and the member holding its records.
    public struct Zone: Hashable, Sendable {
        /// The database: `public`, `private` or `shared` (any non-empty name is kept).
        public var database: String
        /// The zone's full identity, owner and type included.
        public var zoneID: ZoneID
        /// The records member, `records/<database>/<zoneName>[@<owner>].ndjson`.
        public var path: String
        /// Records in the member.
        public var recordCount: Int
        /// Records per record type (records without a type, such as tombstones, are not counted
        /// here); types told apart by their bytes, as CloudKit does.
        public var recordTypeCounts: [ExactName: Int]
        /// The zone's change token (sync token), when the writer was given one.
        public var changeToken: String?

        /// Creates a zone entry.
        public init(database: String, zoneID: ZoneID, path: String, recordCount: Int = 0,
                    recordTypeCounts: [ExactName: Int] = [:], changeToken: String? = nil) {
            self.database = database
            self.zoneID = zoneID
            self.path = path
            self.recordCount = recordCount
            self.recordTypeCounts = recordTypeCounts
            self.changeToken = changeToken
        }
    }

    /// The fields seen on one record type.
    public struct RecordTypeSchema: Hashable, Sendable {
        /// Records of this type.
        public var recordCount: Int
        /// Field name (told apart by its bytes) → type tag (`STRING`, `INT64_LIST`, …) → how many
        /// records had it with that type.
        public var fields: [ExactName: [String: Int]]

        /// Adds `record` (when it has a type) to the schema `schema`, keyed by record type.
        public static func add(_ record: Record, to schema: inout [ExactName: RecordTypeSchema]) {
            guard let name = record.recordType else { return }
            let type = ExactName(name)
            schema[type, default: RecordTypeSchema()].recordCount += 1
            for entry in record.fields ?? RecordFields() {
                schema[type]!.fields[ExactName(entry.name), default: [:]][entry.field.effectiveType.rawValue, default: 0] += 1
            }
        }

        /// Creates a schema entry.
        public init(recordCount: Int = 0, fields: [ExactName: [String: Int]] = [:]) {
            self.recordCount = recordCount
            self.fields = fields
        }
    }

    /// One member other than the manifest.
    public struct Member: Hashable, Sendable {
        /// What a member holds.
        public enum Kind: String, Hashable, Sendable {
            /// NDJSON records of one zone.
            case records
            /// The bytes of one asset.
            case asset
            /// A change log.
            case changes
        }

        /// The path inside the archive.
        public var path: String
        /// What it holds.
        public var kind: Kind
        /// Its size in bytes.
        public var size: Int
        /// Its SHA-256 as 64 lowercase hexadecimal digits.
        public var sha256: String
        /// For assets: the `fileChecksum` of the asset fields that refer to it.
        public var fileChecksum: String?

        /// Creates a member entry.
        public init(path: String, kind: Kind, size: Int, sha256: String, fileChecksum: String? = nil) {
            self.path = path
            self.kind = kind
            self.size = size
            self.sha256 = sha256
            self.fileChecksum = fileChecksum
        }
    }

    /// The layout version (``currentFormatVersion`` when written by this build).
    public var formatVersion: Int
    /// When the archive was written, in milliseconds since 1970 (written as ISO 8601 UTC).
    public var createdAt: Int64
    /// The version of Ferry that wrote the archive.
    public var ferryVersion: String
    /// Every zone, in the order their members appear.
    public var zones: [Zone]
    /// Record type (told apart by its bytes) → the fields seen on it.
    public var schema: [ExactName: RecordTypeSchema]
    /// Every member other than the manifest, in archive order.
    public var members: [Member]

    /// Creates a manifest.
    public init(formatVersion: Int = ArchiveManifest.currentFormatVersion, createdAt: Int64, ferryVersion: String,
                zones: [Zone] = [], schema: [ExactName: RecordTypeSchema] = [:], members: [Member] = []) {
        self.formatVersion = formatVersion
        self.createdAt = createdAt
        self.ferryVersion = ferryVersion
        self.zones = zones
        self.schema = schema
        self.members = members
    }

    /// Records in all zones.
    public var recordCount: Int { zones.reduce(0) { $0 + $1.recordCount } }

    /// The member at `path`, if listed.
    public func member(at path: String) -> Member? { members.first { $0.path == path } }

    /// The zone whose records live at `path`, if any.
    public func zone(at path: String) -> Zone? { zones.first { $0.path == path } }
}
