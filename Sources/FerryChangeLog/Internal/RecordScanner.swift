import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A zone's identity for replay: its name and owner (`zoneType` and unknown members do not count).
struct ZoneKey: Hashable, Comparable {
    var zoneName: String
    var ownerRecordName: String?

    init(_ zone: ZoneID) {
        zoneName = zone.zoneName
        ownerRecordName = zone.ownerRecordName
    }

    static func < (a: ZoneKey, b: ZoneKey) -> Bool {
        if a.zoneName != b.zoneName { return a.zoneName.utf8.lexicographicallyPrecedes(b.zoneName.utf8) }
        return (a.ownerRecordName ?? "").utf8.lexicographicallyPrecedes((b.ownerRecordName ?? "").utf8)
    }
}

/// A reference a record makes: its `parent`, or a `REFERENCE` / `REFERENCE_LIST` field value.
struct ReferenceSummary {
    var recordName: String
    /// The target's zone when the reference names one; else the referring record's zone.
    var zoneID: ZoneID?
    var isParent: Bool
    var deletesSelf: Bool
    /// The field holding the reference (`nil` for `parent`).
    var field: String?
}

/// What replay needs to know about a saved record, and the record's compact JSON.
struct RecordSummary {
    var bytes: [UInt8]
    var recordName: String
    var recordType: String?
    var zoneID: ZoneID?
    var changeTag: String?
    var modifiedTimestamp: Int64?
    var isDeleted: Bool
    var references: [ReferenceSummary]
}

/// Picks the replay-relevant members out of record dictionaries, validating the rest as JSON.
struct RecordScanner {
    private var zoneCache: [(bytes: [UInt8], zone: ZoneID)] = []

    /// Reads a zone ID object (validated), reusing the value for byte-identical zone objects.
    mutating func readZone(_ c: inout JSONCursor) throws(RecordFormatError) -> ZoneID {
        c.skipWhitespace()
        let start = c.position
        guard c.current == UInt8(ascii: "{") else { throw c.unexpected("a zone ID object") }
        try c.skipValue()
        let count = c.position - start
        for entry in zoneCache where entry.bytes.count == count && memcmp(entry.bytes, c.base + start, count) == 0 {
            return entry.zone
        }
        let slice = UnsafeRawBufferPointer(start: c.base + start, count: count)
        let value: JSONValue
        do {
            value = try RecordJSON.parseValue(slice)
        } catch {
            var shifted = error
            shifted.byteOffset += start
            throw shifted
        }
        guard let zone = ZoneID(changeLogJSON: value) else {
            throw c.failure(.missingKey, "expected key \"zoneName\" in the zone ID, found none", at: start)
        }
        if zoneCache.count < 256 { zoneCache.append((c.copy(start..<c.position), zone)) }
        return zone
    }

    /// Scans the record dictionary at the cursor; `references` are collected when asked.
    mutating func scan(_ c: inout JSONCursor, collectReferences: Bool) throws(RecordFormatError) -> RecordSummary {
        c.skipWhitespace()
        let start = c.position
        c.sawWhitespace = false
        try c.beginObject("a record object")
        var summary = RecordSummary(bytes: [], recordName: "", recordType: nil, zoneID: nil, changeTag: nil,
                                    modifiedTimestamp: nil, isDeleted: false, references: [])
        var hasName = false
        var first = true
        while try c.nextMember(&first) {
            let key = try c.readKey()
            c.skipWhitespace()
            if c.current == UInt8(ascii: "n") {
                try c.skipValue()
                continue
            }
            switch key.end - key.start {
            case 10 where c.equals(key, "recordName"):
                summary.recordName = try c.readString("a string for \"recordName\"")
                hasName = true
            case 10 where c.equals(key, "recordType"):
                summary.recordType = try c.readString("a string for \"recordType\"")
            case 6 where c.equals(key, "zoneID"):
                summary.zoneID = try readZone(&c)
            case 15 where c.equals(key, "recordChangeTag"):
                summary.changeTag = try c.readString("a string for \"recordChangeTag\"")
            case 8 where c.equals(key, "modified"):
                summary.modifiedTimestamp = try readStampTime(&c)
            case 7 where c.equals(key, "deleted"):
                summary.isDeleted = try c.readBool()
            case 6 where c.equals(key, "parent"):
                if collectReferences {
                    var reference = try readReference(&c)
                    reference.isParent = true
                    summary.references.append(reference)
                } else {
                    try c.skipValue()
                }
            case 6 where c.equals(key, "fields") && collectReferences:
                try scanFields(&c, into: &summary.references)
            default:
                try c.skipValue()
            }
        }
        guard hasName else { throw c.failure(.missingKey, "expected key \"recordName\" in the record, found none", at: start) }
        summary.bytes = c.sawWhitespace ? c.compactCopy(start..<c.position) : c.copy(start..<c.position)
        return summary
    }

    private func readStampTime(_ c: inout JSONCursor) throws(RecordFormatError) -> Int64? {
        try c.beginObject("an object for \"modified\"")
        var time: Int64?
        var first = true
        while try c.nextMember(&first) {
            let key = try c.readKey()
            c.skipWhitespace()
            let b = c.current
            if c.equals(key, "timestamp") && (b == UInt8(ascii: "-") || b &- UInt8(ascii: "0") <= 9) {
                time = try c.scanNumber()
            } else {
                try c.skipValue()
            }
        }
        return time
    }

    private mutating func readReference(_ c: inout JSONCursor) throws(RecordFormatError) -> ReferenceSummary {
        let start = c.position
        try c.beginObject("a reference object")
        var reference = ReferenceSummary(recordName: "", zoneID: nil, isParent: false, deletesSelf: false, field: nil)
        var hasName = false
        var first = true
        while try c.nextMember(&first) {
            let key = try c.readKey()
            c.skipWhitespace()
            if c.current == UInt8(ascii: "n") {
                try c.skipValue()
            } else if c.equals(key, "recordName") {
                reference.recordName = try c.readString("a string for \"recordName\"")
                hasName = true
            } else if c.equals(key, "zoneID") {
                reference.zoneID = try readZone(&c)
            } else if c.equals(key, "action") {
                reference.deletesSelf = try c.readString("a string for \"action\"") == "DELETE_SELF"
            } else {
                try c.skipValue()
            }
        }
        guard hasName else { throw c.failure(.missingKey, "expected key \"recordName\" in the reference, found none", at: start) }
        return reference
    }

    private mutating func scanFields(_ c: inout JSONCursor, into references: inout [ReferenceSummary]) throws(RecordFormatError) {
        try c.beginObject("an object for \"fields\"")
        var first = true
        while try c.nextMember(&first) {
            let nameToken = try c.readKey()
            try c.beginObject("a field object")
            var valueStart = -1
            var isReference = false
            var firstMember = true
            while try c.nextMember(&firstMember) {
                let key = try c.readKey()
                c.skipWhitespace()
                if c.equals(key, "value") {
                    valueStart = c.position
                    try c.skipValue()
                } else if c.equals(key, "type") && c.current == UInt8(ascii: "\"") {
                    let type = try c.scanString()
                    isReference = c.equals(type, "REFERENCE") || c.equals(type, "REFERENCE_LIST")
                } else {
                    try c.skipValue()
                }
            }
            guard isReference && valueStart >= 0 else { continue }
            var sub = c
            sub.position = valueStart
            sub.depth = 0
            let field = try c.string(nameToken)
            if sub.current == UInt8(ascii: "{") {
                var reference = try readReference(&sub)
                reference.field = field
                references.append(reference)
            } else if sub.current == UInt8(ascii: "[") {
                try sub.beginArray()
                var firstElement = true
                while try sub.nextElement(&firstElement) {
                    sub.skipWhitespace()
                    if sub.current == UInt8(ascii: "{") {
                        var reference = try readReference(&sub)
                        reference.field = field
                        references.append(reference)
                    } else {
                        try sub.skipValue()
                    }
                }
            }
        }
    }
}

extension ZoneID {
    /// A zone ID from its JSON object; `nil` when it is not an object with a string `zoneName`.
    init?(changeLogJSON value: JSONValue) {
        guard let object = value.objectValue, let name = object["zoneName"]?.stringValue else { return nil }
        self.init(zoneName: name)
        for member in object.members {
            switch member.key {
            case "zoneName": continue
            case "ownerRecordName" where member.value.stringValue != nil: ownerRecordName = member.value.stringValue
            case "zoneType" where member.value.stringValue != nil: zoneType = member.value.stringValue
            default: unknownKeys.members.append(member)
            }
        }
    }
}
