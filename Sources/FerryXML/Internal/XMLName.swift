/// Every element and attribute name of Ferry's format.
enum XMLName: UInt8, CaseIterable {
    // Elements (`timestamp` is also an attribute).
    case records, record, zoneID, created, modified, parent, share, fields, field, pluginFields, unknown
    case string, int64, double, timestamp, bytes, encryptedBytes, reference, asset, location, null, list, json
    // Attributes
    case version, recordName, recordType, recordChangeTag, deleted, shortGUID, escaped
    case zoneName, ownerRecordName, zoneType, date, userRecordName, deviceID, action
    case name, type, untyped, key, fileChecksum, size, referenceChecksum, wrappingKey, receipt, downloadURL
    case latitude, longitude, horizontalAccuracy, verticalAccuracy, altitude, speed, course

    /// The name as written.
    var text: String { "\(self)" }

    /// Whether the name is one of the format's elements.
    var isElement: Bool { rawValue <= XMLName.json.rawValue }

    /// Whether the name is one of the format's attributes.
    var isAttribute: Bool { rawValue > XMLName.json.rawValue || self == .timestamp }

    /// The value element this name spells, if it is one.
    var valueKind: XMLValueKind? {
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
        case .null: .null
        case .list: .list
        case .json: .json
        default: nil
        }
    }
}
