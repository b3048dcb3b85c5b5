/// A field's type tag (`fields.<name>.type`), e.g. `STRING`, `INT64`, `REFERENCE_LIST`.
///
/// Unknown tags are kept verbatim (``Kind/unknown``) so they survive a round trip; `NUMBER_INT64`,
/// seen from one Apple web API, decodes as INT64 and is written back as `NUMBER_INT64`.
public struct FieldType: Hashable, Sendable, CustomStringConvertible {
    /// The element kind of a type.
    public enum Kind: UInt8, Hashable, Sendable {
        case string, int64, double, timestamp, bytes, encryptedBytes, reference, asset, location
        /// `UNKNOWN_LIST` (with ``FieldType/isList``) or a tag Ferry does not know.
        case unknown
    }

    /// The tag as written in JSON.
    public let rawValue: String
    /// What the value holds (for lists, each element).
    public let kind: Kind
    /// Whether the value is a list (`*_LIST`).
    public let isList: Bool

    /// Creates a type from its tag; never fails: unknown tags are kept.
    public init(rawValue: String) {
        self.rawValue = rawValue
        var base = Substring(rawValue)
        var list = false
        if base.hasSuffix("_LIST") {
            base = base.dropLast(5)
            list = true
        }
        let known: Kind? = switch base {
        case "STRING": .string
        case "INT64", "NUMBER_INT64": .int64
        case "DOUBLE", "NUMBER_DOUBLE": .double
        case "TIMESTAMP": .timestamp
        case "BYTES": .bytes
        case "ENCRYPTED_BYTES": .encryptedBytes
        case "REFERENCE": .reference
        case "ASSETID", "ASSET": .asset
        case "LOCATION": .location
        default: nil
        }
        if let known {
            kind = known
            isList = list
        } else if rawValue == "UNKNOWN_LIST" {
            kind = .unknown
            isList = true
        } else {
            kind = .unknown
            isList = false
        }
    }

    /// A standard tag spelled out, so that the constants below are laid down at compile time
    /// rather than computed on first use (each use of a lazily computed one costs a call).
    init(standard rawValue: String, _ kind: Kind, list: Bool = false) {
        self.rawValue = rawValue
        self.kind = kind
        isList = list
    }

    public var description: String { rawValue }

    public static let string = FieldType(standard: "STRING", .string)
    public static let int64 = FieldType(standard: "INT64", .int64)
    public static let double = FieldType(standard: "DOUBLE", .double)
    public static let timestamp = FieldType(standard: "TIMESTAMP", .timestamp)
    public static let bytes = FieldType(standard: "BYTES", .bytes)
    public static let encryptedBytes = FieldType(standard: "ENCRYPTED_BYTES", .encryptedBytes)
    public static let reference = FieldType(standard: "REFERENCE", .reference)
    public static let asset = FieldType(standard: "ASSETID", .asset)
    public static let location = FieldType(standard: "LOCATION", .location)
    public static let stringList = FieldType(standard: "STRING_LIST", .string, list: true)
    public static let int64List = FieldType(standard: "INT64_LIST", .int64, list: true)
    public static let doubleList = FieldType(standard: "DOUBLE_LIST", .double, list: true)
    public static let timestampList = FieldType(standard: "TIMESTAMP_LIST", .timestamp, list: true)
    public static let bytesList = FieldType(standard: "BYTES_LIST", .bytes, list: true)
    public static let encryptedBytesList = FieldType(standard: "ENCRYPTED_BYTES_LIST", .encryptedBytes, list: true)
    public static let referenceList = FieldType(standard: "REFERENCE_LIST", .reference, list: true)
    public static let assetList = FieldType(standard: "ASSETID_LIST", .asset, list: true)
    public static let locationList = FieldType(standard: "LOCATION_LIST", .location, list: true)
    public static let unknownList = FieldType(standard: "UNKNOWN_LIST", .unknown, list: true)

    /// Every standard tag, scalar and list.
    public static let allStandard: [FieldType] = [
        .string, .int64, .double, .timestamp, .bytes, .encryptedBytes, .reference, .asset, .location,
        .stringList, .int64List, .doubleList, .timestampList, .bytesList, .encryptedBytesList,
        .referenceList, .assetList, .locationList, .unknownList,
    ]
}
