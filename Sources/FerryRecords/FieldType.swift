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

    public var description: String { rawValue }

    public static let string = FieldType(rawValue: "STRING")
    public static let int64 = FieldType(rawValue: "INT64")
    public static let double = FieldType(rawValue: "DOUBLE")
    public static let timestamp = FieldType(rawValue: "TIMESTAMP")
    public static let bytes = FieldType(rawValue: "BYTES")
    public static let encryptedBytes = FieldType(rawValue: "ENCRYPTED_BYTES")
    public static let reference = FieldType(rawValue: "REFERENCE")
    public static let asset = FieldType(rawValue: "ASSETID")
    public static let location = FieldType(rawValue: "LOCATION")
    public static let stringList = FieldType(rawValue: "STRING_LIST")
    public static let int64List = FieldType(rawValue: "INT64_LIST")
    public static let doubleList = FieldType(rawValue: "DOUBLE_LIST")
    public static let timestampList = FieldType(rawValue: "TIMESTAMP_LIST")
    public static let bytesList = FieldType(rawValue: "BYTES_LIST")
    public static let encryptedBytesList = FieldType(rawValue: "ENCRYPTED_BYTES_LIST")
    public static let referenceList = FieldType(rawValue: "REFERENCE_LIST")
    public static let assetList = FieldType(rawValue: "ASSETID_LIST")
    public static let locationList = FieldType(rawValue: "LOCATION_LIST")
    public static let unknownList = FieldType(rawValue: "UNKNOWN_LIST")

    /// Every standard tag, scalar and list.
    public static let allStandard: [FieldType] = [
        .string, .int64, .double, .timestamp, .bytes, .encryptedBytes, .reference, .asset, .location,
        .stringList, .int64List, .doubleList, .timestampList, .bytesList, .encryptedBytesList,
        .referenceList, .assetList, .locationList, .unknownList,
    ]
}
