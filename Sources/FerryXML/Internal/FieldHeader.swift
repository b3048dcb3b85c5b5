import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The attributes that make a value element a field: `name` (short form), `type` and `untyped`.
struct FieldHeader {
    enum Mode { case item, value, field }

    /// `.item`: a list item or a system reference (none of these attributes); `.value`: inside
    /// `<field>` (`type`, `untyped`); `.field`: directly in `<fields>` (also `name`).
    let mode: Mode
    var name: String?
    /// The `type` attribute, when given.
    var type: FieldType?
    var untyped = false

    init(mode: Mode) { self.mode = mode }

    /// Every standard tag and its list form (and the older spellings), with its bytes.
    private static let standardTypes: [([UInt8], FieldType)] = {
        let scalars = FieldType.allStandard.filter { !$0.isList } + ["NUMBER_INT64", "NUMBER_DOUBLE", "ASSET"].map(FieldType.init(rawValue:))
        let all = scalars + scalars.map { FieldType(rawValue: $0.rawValue + "_LIST") } + [.unknownList]
        return all.map { (Array($0.rawValue.utf8), $0) }
    }()

    /// The standard type spelled by `bytes`, if any.
    static func standardType(_ bytes: UnsafeBufferPointer<UInt8>) -> FieldType? {
        guard let base = bytes.baseAddress else { return nil }
        for (tag, type) in standardTypes where tag.count == bytes.count {
            if tag.withUnsafeBufferPointer({ memcmp($0.baseAddress!, base, bytes.count) == 0 }) { return type }
        }
        return nil
    }

    /// Takes one of these attributes, if the mode allows it.
    mutating func take(_ attribute: XMLName, _ a: XMLAttributeRef, _ escaped: Bool, _ node: XMLNodeRef,
                       _ decoder: RecordXMLDecoder) throws(XMLDecodeError) -> Bool {
        guard mode != .item else { return false }
        switch attribute {
        case .name where mode == .field: name = try decoder.string(a, "name", escaped, node)
        case .type:
            // Standard tags are matched in place (no String, no parsing of the tag).
            if !escaped, let standard = a.withValue({ Self.standardType($0) }) {
                type = standard
            } else {
                type = FieldType(rawValue: try decoder.string(a, "type", escaped, node))
            }
        case .untyped: untyped = try decoder.boolean(a, "untyped", node)
        default: return false
        }
        return true
    }
}
