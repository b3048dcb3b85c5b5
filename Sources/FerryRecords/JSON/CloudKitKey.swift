#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A key of CloudKit's JSON objects that Ferry reads: a record dictionary's members, a response
/// wrapper's, an error entry's and a zone entry's — the one table of which key is what, for
/// every reader (``ResponseWalker`` classifies each key with it; see `Docs/RecordJSON.md`).
///
/// The record dictionary's members come first, in the order Ferry writes them: a record key's
/// raw value is its place in that order (``recordMembers``), and `1 << rawValue` its bit.
package enum CloudKitKey: UInt8, CaseIterable, Sendable {
    // A record dictionary's members (a tombstone's too: `deleted`), in the order Ferry writes them.
    case recordName = 0, recordType, zoneID, recordChangeTag, created, modified, deleted, parent, share, shortGUID
    case fields, pluginFields
    /// A response's array of record entries (`records/query`, `records/lookup`, `records/modify`,
    /// `records/changes`), or of one zone's changed records in a `changes/zone` entry.
    case records
    /// A response's array of zone entries (`changes/zone`, `changes/database`, `zones/changes`,
    /// `zones/list`, `zones/lookup`, `zones/modify`).
    case zones
    /// A query page's marker for the next page.
    case continuationMarker
    /// A change token: of a zone (`records/changes`, a `changes/zone` entry, a `zones/list`
    /// entry) or of the database (`changes/database`).
    case syncToken
    /// The database's change token of the legacy `zones/changes`.
    case metaSyncToken
    /// Whether the server has more changes.
    case moreComing
    /// What makes an object an error: a per-record or per-zone error entry, or a failed request.
    case serverErrorCode
    /// An error's explanation.
    case reason
    /// A zone entry's flag: the zone was purged (`changes/database`).
    case purged

    /// The record dictionary's members, in the order Ferry writes them.
    package static let recordMembers: [CloudKitKey] = [
        .recordName, .recordType, .zoneID, .recordChangeTag, .created, .modified, .deleted, .parent, .share, .shortGUID,
        .fields, .pluginFields,
    ]

    /// Whether the key is one of a record dictionary's members (an object with one is a record,
    /// unless it is a response naming its zone or an error entry).
    @inlinable @inline(__always)
    package var isRecordMember: Bool { rawValue <= CloudKitKey.pluginFields.rawValue }

    /// The key's bit, for sets of keys seen (duplicate checks, shapes).
    @inlinable @inline(__always)
    package var bit: UInt32 { 1 << UInt32(rawValue) }

    /// The key as it is spelled in JSON.
    @inlinable @inline(__always)
    package var name: StaticString {
        switch self {
        case .recordName: "recordName"
        case .recordType: "recordType"
        case .zoneID: "zoneID"
        case .recordChangeTag: "recordChangeTag"
        case .created: "created"
        case .modified: "modified"
        case .deleted: "deleted"
        case .parent: "parent"
        case .share: "share"
        case .shortGUID: "shortGUID"
        case .fields: "fields"
        case .pluginFields: "pluginFields"
        case .records: "records"
        case .zones: "zones"
        case .continuationMarker: "continuationMarker"
        case .syncToken: "syncToken"
        case .metaSyncToken: "metaSyncToken"
        case .moreComing: "moreComing"
        case .serverErrorCode: "serverErrorCode"
        case .reason: "reason"
        case .purged: "purged"
        }
    }

    /// The key whose UTF-8 bytes are the `count` bytes at `bytes` (a key's bytes without escapes),
    /// or `nil` for a key of no CloudKit object: matched by length, then bytes (record members
    /// first, the common case). The lengths are those of ``name`` (a test holds them so).
    @inlinable @inline(__always)
    package static func named(_ bytes: UnsafePointer<UInt8>, count: Int) -> CloudKitKey? {
        @inline(__always) func spells(_ key: CloudKitKey) -> Bool {
            memcmp(bytes, key.name.utf8Start, count) == 0
        }
        switch count {
        case 5: return spells(.share) ? .share : spells(.zones) ? .zones : nil
        case 6:
            return spells(.fields) ? .fields : spells(.zoneID) ? .zoneID : spells(.parent) ? .parent
                : spells(.reason) ? .reason : spells(.purged) ? .purged : nil
        case 7: return spells(.created) ? .created : spells(.deleted) ? .deleted : spells(.records) ? .records : nil
        case 8: return spells(.modified) ? .modified : nil
        case 9: return spells(.shortGUID) ? .shortGUID : spells(.syncToken) ? .syncToken : nil
        case 10: return spells(.recordName) ? .recordName : spells(.recordType) ? .recordType : spells(.moreComing) ? .moreComing : nil
        case 12: return spells(.pluginFields) ? .pluginFields : nil
        case 13: return spells(.metaSyncToken) ? .metaSyncToken : nil
        case 15: return spells(.recordChangeTag) ? .recordChangeTag : spells(.serverErrorCode) ? .serverErrorCode : nil
        case 18: return spells(.continuationMarker) ? .continuationMarker : nil
        default: return nil
        }
    }

    /// The key a decoded key string names (a key that had escapes).
    package static func named(_ name: String) -> CloudKitKey? {
        var name = name
        return name.withUTF8 { utf8 in utf8.baseAddress.flatMap { named($0, count: utf8.count) } }
    }

    /// Whether the key bytes (as they stand, escapes undecoded) name a member that makes an object
    /// something other than a record dictionary when it stands at the object's top level —
    /// `records` or `zones` (a response) or `serverErrorCode` (an error entry or a failed
    /// request) — for checks that see only raw bytes (``JSONValidator``). Keys spelled with
    /// escapes are not recognized: such callers treat any text with `\u` as possibly anything.
    @inlinable @inline(__always)
    package static func marksNonRecord(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        @inline(__always) func spells(_ key: CloudKitKey) -> Bool {
            count == key.name.utf8CodeUnitCount && memcmp(bytes, key.name.utf8Start, count) == 0
        }
        return spells(.records) || spells(.zones) || spells(.serverErrorCode)
    }
}

extension JSONKey {
    /// The CloudKit key this key names, if any.
    @inlinable @inline(__always)
    package var cloudKitKey: CloudKitKey? {
        if let raw { return CloudKitKey.named(raw.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: raw.count) }
        return CloudKitKey.named(decoded!)
    }
}

extension JSONStringToken {
    /// The CloudKit key this token of `scanner`'s text names, if any (a token with escapes is
    /// decoded first, out of line: keys seldom have escapes).
    @inlinable @inline(__always)
    package func cloudKitKey(in scanner: JSONScanner) -> CloudKitKey? {
        if isEscaped { return escapedCloudKitKey(in: scanner) }
        return CloudKitKey.named(scanner.base + start, count: end - start)
    }

    /// The CloudKit key this token, which has escapes, names once decoded.
    @usableFromInline @inline(never)
    func escapedCloudKitKey(in scanner: JSONScanner) -> CloudKitKey? {
        guard let name = try? scanner.string(self) else { return nil }
        return CloudKitKey.named(name)
    }
}
