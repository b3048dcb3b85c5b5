/// The value of a record field, typed by its ``FieldType``.
///
/// | type | case |
/// |---|---|
/// | STRING | ``string(_:)`` |
/// | INT64 | ``int64(_:)`` — exact, never through Double |
/// | DOUBLE | ``double(_:)`` |
/// | TIMESTAMP | ``timestamp(_:)`` — milliseconds since 1970 |
/// | BYTES, ENCRYPTED_BYTES | ``bytes(_:)`` — the base64 text as sent |
/// | REFERENCE | ``reference(_:)`` |
/// | ASSETID | ``asset(_:)`` |
/// | LOCATION | ``location(_:)`` |
/// | `*_LIST` | ``list(_:)`` of the element cases |
/// | UNKNOWN_LIST, unknown tags | ``json(_:)`` — the value exactly as it was |
public enum FieldValue: Hashable, Sendable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case timestamp(Int64)
    case bytes(String)
    indirect case reference(Reference)
    indirect case asset(Asset)
    indirect case location(Location)
    case list([FieldValue])
    case json(JSONValue)

    /// The type tag this value is written with when a field gives none.
    public var inferredType: FieldType {
        switch self {
        case .string: .string
        case .int64: .int64
        case .double: .double
        case .timestamp: .timestamp
        case .bytes: .bytes
        case .reference: .reference
        case .asset: .asset
        case .location: .location
        case .list(let items):
            switch items.first?.inferredType.kind {
            case .string: .stringList
            case .int64: .int64List
            case .double: .doubleList
            case .timestamp: .timestampList
            case .bytes: .bytesList
            case .encryptedBytes: .encryptedBytesList
            case .reference: .referenceList
            case .asset: .assetList
            case .location: .locationList
            case .unknown, nil: .unknownList
            }
        case .json: FieldType(rawValue: "UNKNOWN")
        }
    }

    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    public var timestampValue: Int64? { if case .timestamp(let v) = self { v } else { nil } }
    public var referenceValue: Reference? { if case .reference(let v) = self { v } else { nil } }
    public var listValue: [FieldValue]? { if case .list(let v) = self { v } else { nil } }
}

/// One field of a record: its value, its type tag, and any unknown members of the field dictionary.
public struct RecordField: Hashable, Sendable {
    /// The value.
    public var value: FieldValue
    /// The type tag as given; `nil` when the input omitted it (requests may), and then it is
    /// omitted again on output.
    public var type: FieldType?
    /// Members of the field dictionary other than `value` and `type`, kept and written back.
    public var unknownKeys: JSONObject

    public init(_ value: FieldValue, type: FieldType? = nil, unknownKeys: JSONObject = JSONObject()) {
        self.value = value
        self.type = type
        self.unknownKeys = unknownKeys
    }

    /// The type tag given, or the one inferred from the value.
    public var effectiveType: FieldType { type ?? value.inferredType }
}
