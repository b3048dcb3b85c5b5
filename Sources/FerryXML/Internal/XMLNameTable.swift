#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// Maps names as libxml2 hands them out (pointers into the reader's dictionary) to ``XMLName``
/// with one or two probes of a small hash table; names that are not interned fall back to a
/// string comparison.
struct XMLNameTable {
    private var keys: [UnsafePointer<UInt8>?]
    private var values: [XMLName]
    private static let mask = 255
    private let strings: [[UInt8]]
    /// The interned `escaped`, checked on every element.
    let escaped: UnsafePointer<UInt8>?

    /// Builds the table from the reader's interned copies of every name.
    init(intern: (String) -> UnsafePointer<UInt8>?) {
        keys = Array(repeating: nil, count: Self.mask + 1)
        values = Array(repeating: .records, count: Self.mask + 1)
        strings = XMLName.allCases.map { Array($0.text.utf8) }
        for name in XMLName.allCases {
            guard let pointer = intern(name.text) else { continue }
            var i = Self.slot(pointer)
            while keys[i] != nil { i = (i + 1) & Self.mask }
            keys[i] = pointer
            values[i] = name
        }
        escaped = intern(XMLName.escaped.text)
    }

    @inline(__always)
    private static func slot(_ pointer: UnsafePointer<UInt8>) -> Int {
        let bits = UInt(bitPattern: pointer)
        return Int(truncatingIfNeeded: (bits >> 3) ^ (bits >> 11)) & mask
    }

    /// The name `pointer` spells, or `nil` for a name the format does not have.
    @inline(__always)
    func lookup(_ pointer: UnsafePointer<UInt8>?) -> XMLName? {
        guard let pointer else { return nil }
        var i = Self.slot(pointer)
        while let candidate = keys[i] {
            if candidate == pointer { return values[i] }
            i = (i + 1) & Self.mask
        }
        return slowLookup(pointer)
    }

    /// Names that are not interned (never the case for names libxml2 parsed) compare as strings.
    private func slowLookup(_ pointer: UnsafePointer<UInt8>) -> XMLName? {
        let length = strlen(pointer)
        for (index, bytes) in strings.enumerated() where bytes.count == length {
            if bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, pointer, length) == 0 }) {
                return XMLName.allCases[index]
            }
        }
        return nil
    }
}
