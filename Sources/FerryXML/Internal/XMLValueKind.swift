import FerryRecords

/// The value elements of Ferry's XML: one per kind of CloudKit value, plus `list`, `json` and
/// `null`. A field is one of them (with `name`), a list item one of the first ten.
enum XMLValueKind: UInt8, CaseIterable {
    case string, int64, double, timestamp, bytes, encryptedBytes, reference, asset, location, null, list, json

    /// The element name.
    var elementName: StaticString {
        switch self {
        case .string: "string"
        case .int64: "int64"
        case .double: "double"
        case .timestamp: "timestamp"
        case .bytes: "bytes"
        case .encryptedBytes: "encryptedBytes"
        case .reference: "reference"
        case .asset: "asset"
        case .location: "location"
        case .null: "null"
        case .list: "list"
        case .json: "json"
        }
    }

    /// The type tag a field of this element has when the element carries no `type` attribute.
    var standardType: FieldType? {
        switch self {
        case .string: .string
        case .int64: .int64
        case .double: .double
        case .timestamp: .timestamp
        case .bytes: .bytes
        case .encryptedBytes: .encryptedBytes
        case .reference: .reference
        case .asset: .asset
        case .location: .location
        case .null, .list, .json: nil
        }
    }

    /// The element for scalar values of `kind` (`nil` for unknown kinds).
    init?(scalar kind: FieldType.Kind) {
        switch kind {
        case .string: self = .string
        case .int64: self = .int64
        case .double: self = .double
        case .timestamp: self = .timestamp
        case .bytes: self = .bytes
        case .encryptedBytes: self = .encryptedBytes
        case .reference: self = .reference
        case .asset: self = .asset
        case .location: self = .location
        case .unknown: return nil
        }
    }

    /// The element a value is written as when nothing else decides (untyped fields, list items).
    init?(natural value: FieldValue) {
        switch value {
        case .string: self = .string
        case .int64: self = .int64
        case .double: self = .double
        case .timestamp: self = .timestamp
        case .bytes: self = .bytes
        case .reference: self = .reference
        case .asset: self = .asset
        case .location: self = .location
        case .json(.null): self = .null
        case .list, .json: return nil
        }
    }

    /// Whether `value` is what this element holds natively.
    func holds(_ value: FieldValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.int64, .int64), (.double, .double), (.timestamp, .timestamp),
             (.bytes, .bytes), (.encryptedBytes, .bytes), (.reference, .reference), (.asset, .asset),
             (.location, .location), (.null, .json(.null)): true
        default: false
        }
    }

    /// Whether the element may be a list item.
    var isItem: Bool { rawValue <= XMLValueKind.null.rawValue }
}
