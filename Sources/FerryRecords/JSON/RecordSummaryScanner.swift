#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What replay (and anything else that keeps records as JSON) needs of a record dictionary,
/// read without decoding it: its name, type, change tag, modification time and zone, whether it
/// is a tombstone or a server error, where its JSON lies and whether that has whitespace to
/// compact. The references it holds are in the scanner's ``RecordSummaryScanner/references``.
package struct RecordSummary {
    package enum Kind {
        case saved
        case deleted
        case error(code: String, reason: String?)
    }

    package var kind: Kind
    /// `recordName` (absent only in an error entry).
    package var name: JSONStringToken?
    package var type: JSONStringToken?
    package var tag: JSONStringToken?
    /// `modified.timestamp`.
    package var modified: Int64?
    package var zoneID: ZoneID?
    /// The scanner's ``ZoneCache`` index of `zoneID`, when cached.
    package var zoneIndex: Int?
    /// The byte range of the record's JSON.
    package var json: Range<Int>
    /// Whether there is whitespace between its tokens (the JSON is not compact).
    package var hasWhitespace: Bool
    /// Whether it has `"zoneID": null` (it names no zone, and a zone given to it replaces the null).
    package var hasNullZoneID = false
}

/// Reads record dictionaries for a ``RecordSummary`` and checks that the rest is valid JSON
/// (strings, escapes, UTF-8, numbers, duplicate keys) without decoding it.
///
/// It lives beside ``JSONScanner`` so that the scanner's hot paths are inlined into it (package
/// methods are not inlined across modules). Each thread keeps its own copy.
package struct RecordSummaryScanner {
    /// The keys of open objects (duplicate-key checks without allocating).
    package var scratch = JSONKeyScratch()
    private var zoneCache = ZoneCache()
    /// The references found by the latest scan, encoded one after another (see
    /// ``appendReference(isParent:deletesSelf:name:zoneName:owner:into:)``).
    package private(set) var references: [UInt8] = []
    /// With ``collectsFieldNames``: the field of each reference found by the latest scan (`nil`
    /// for `parent`), in order.
    package private(set) var referenceFields: [String?] = []
    /// Whether scans note the field of each reference (for messages).
    package var collectsFieldNames = false

    package init() {}

    /// Reads a zone ID object, reusing the value decoded for byte-identical zone objects.
    package mutating func readZone(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> ZoneID {
        try readIndexedZone(&s, in: text).zone
    }

    /// Reads a zone ID object as ``readZone(_:in:)`` does, with its index in the zone cache
    /// (`nil` when the cache is full or the object too long to keep).
    package mutating func readIndexedZone(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> (zone: ZoneID, index: Int?) {
        s.skipWhitespace()
        let start = s.position
        guard s.current == UInt8(ascii: "{") else { throw s.unexpected("a zone ID object") }
        var probe = s
        try s.skipValue(scratch: &scratch)
        if let index = zoneCache.index(of: text, start..<s.position) { return (zoneCache.zone(at: index), index) }
        let zone = try probe.decodeZoneID()
        return (zone, zoneCache.add(zone, from: text, start..<s.position))
    }

    /// The zone decoded earlier for the same bytes.
    package func cachedZone(_ text: UnsafeRawBufferPointer, _ range: Range<Int>) -> ZoneID? {
        zoneCache.index(of: text, range).map { zoneCache.zone(at: $0) }
    }

    /// The ``CloudKitKey`` a key names: matched in place, or decoded first when it has escapes.
    /// Transparent: inlined into the loop over every member of every record (`@inline(__always)`
    /// is not enough there; the call cost replay 0.7%).
    @_transparent
    private static func member(_ key: JSONStringToken, in text: UnsafeRawBufferPointer, _ s: JSONScanner) -> CloudKitKey? {
        if key.isEscaped { return key.escapedCloudKitKey(in: s) }
        return CloudKitKey.named(text.baseAddress!.assumingMemoryBound(to: UInt8.self) + key.start, count: key.end - key.start)
    }

    /// Scans the record dictionary at the scanner, checking everything and wording the errors.
    package mutating func scan(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) -> RecordSummary {
        s.skipWhitespace()
        let start = s.position
        s.sawWhitespace = false
        try s.beginObject("a record object")
        let mark = scratch.mark
        defer { scratch.forget(from: mark) }
        references.removeAll(keepingCapacity: true)
        if collectsFieldNames { referenceFields.removeAll() }
        var summary = RecordSummary(kind: .saved, json: start..<start, hasWhitespace: false)
        var isDeleted = false
        var errorCode: String?
        var reason: String?
        var sawFields = false
        var first = true
        while try s.nextMember(&first) {
            let key = try s.readKey(recordingIn: &scratch, from: mark)
            s.skipWhitespace()
            // (The scanner is not passed along: a call that borrows it copies it here.)
            let known = Self.member(key, in: text, s)
            if s.current == UInt8(ascii: "n") {
                // `null` under any key is kept as it is and means nothing here (a `fields: null`
                // is a fields member all the same, as the record decoder counts it).
                if known == .zoneID { summary.hasNullZoneID = true }
                if known == .fields { sawFields = true }
                try s.skipValue(scratch: &scratch)
                continue
            }
            switch known {
            case .fields?:
                sawFields = true
                try scanFields(&s, in: text)
            case .recordName?: summary.name = try readString(&s, "recordName")
            case .recordType?: summary.type = try readString(&s, "recordType")
            case .zoneID?: (summary.zoneID, summary.zoneIndex) = try readIndexedZone(&s, in: text)
            case .recordChangeTag?: summary.tag = try readString(&s, "recordChangeTag")
            case .modified?: summary.modified = try readStampTime(&s)
            case .parent?: try scanReference(&s, in: text, field: nil, isParent: true)
            case .deleted?:
                let c = s.current
                guard c == UInt8(ascii: "t") || c == UInt8(ascii: "f") else {
                    throw s.error(.wrongType, "expected true or false for \"deleted\", found \(s.describeCurrent())")
                }
                isDeleted = try s.readBool()
            case .serverErrorCode?: errorCode = try s.readString(for: "serverErrorCode")
            case .reason?: reason = try s.readString(for: "reason")
            default: try s.skipValue(scratch: &scratch)
            }
        }
        summary.json = start..<s.position
        summary.hasWhitespace = s.sawWhitespace
        // What the entry is, as every reader tells it (an error entry: a `serverErrorCode` and no
        // `recordName` or no `fields`).
        switch ResponseWalker.entryKind(hasName: summary.name != nil, hasFields: sawFields, hasErrorCode: errorCode != nil,
                                        isDeleted: isDeleted) {
        case .error: summary.kind = .error(code: errorCode!, reason: reason)
        case .tombstone, .record:
            guard summary.name != nil else {
                throw s.error(.missingKey, "expected key \"recordName\" in the record, found none", at: start)
            }
            if isDeleted { summary.kind = .deleted }
        }
        return summary
    }

    /// A reference (`parent`, or the value of a REFERENCE field): its target's name and whether
    /// it deletes its record with the target, noted without making strings in the common case —
    /// a plain `recordName`, an `action`, no zone; anything else is decoded as a value.
    private mutating func scanReference(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer, field: String?,
                                        isParent: Bool) throws(RecordFormatError) {
        s.skipWhitespace()
        let probe = s
        if s.current == UInt8(ascii: "{") {
            try s.beginObject()
            let mark = scratch.mark
            defer { scratch.forget(from: mark) }
            var name: JSONStringToken?
            var deletesSelf = false
            var plain = true
            var first = true
            while try s.nextMember(&first) {
                let key = try s.readKey(recordingIn: &scratch, from: mark)
                s.skipWhitespace()
                // (Operands are worked out first: `&&` and `||` would capture the scanner, a copy.)
                let isString = s.current == UInt8(ascii: "\"")
                let isName = Self.token(key, is: "recordName", in: text), isAction = Self.token(key, is: "action", in: text)
                if isName && isString {
                    name = try s.readStringToken()
                } else if isAction && isString {
                    let action = try s.readStringToken()
                    deletesSelf = Self.token(action, is: "DELETE_SELF", in: text)
                } else {
                    if key.isEscaped || isName || Self.token(key, is: "zoneID", in: text) { plain = false }
                    try s.skipValue(scratch: &scratch)
                }
            }
            if plain, let name, !name.isEscaped {
                Self.appendReference(isParent: isParent, deletesSelf: deletesSelf && !isParent,
                                     name: UnsafeRawBufferPointer(rebasing: text[name.start..<name.end]), zoneName: nil, owner: nil,
                                     into: &references)
                if collectsFieldNames { referenceFields.append(field) }
                return
            }
        }
        // A zone, escapes, or something wrong: decoded as a value, which says what is wrong.
        var careful = probe
        try addReference(try careful.decodeReference(), field: field, isParent: isParent)
        s = careful
    }

    private func readString(_ s: inout JSONScanner, _ key: StaticString) throws(RecordFormatError) -> JSONStringToken {
        guard s.current == UInt8(ascii: "\"") else {
            throw s.error(.wrongType, "expected a string for \"\(key)\", found \(s.describeCurrent())")
        }
        return try s.readStringToken()
    }

    /// The `timestamp` of a `created`/`modified` object (other members are checked and skipped).
    private mutating func readStampTime(_ s: inout JSONScanner) throws(RecordFormatError) -> Int64? {
        try s.beginObject("an object for \"modified\"")
        let mark = scratch.mark
        defer { scratch.forget(from: mark) }
        var time: Int64?
        var first = true
        while try s.nextMember(&first) {
            let key = try s.readKey(recordingIn: &scratch, from: mark)
            s.skipWhitespace()
            let b = s.current
            let isTimestamp = s.equals(key, "timestamp")
            if isTimestamp && (b == UInt8(ascii: "-") || b &- UInt8(ascii: "0") <= 9) {
                time = try s.readNumber().exactInteger
            } else {
                try s.skipValue(scratch: &scratch)
            }
        }
        return time
    }

    private mutating func addReference(_ reference: Reference, field: String?, isParent: Bool) throws(RecordFormatError) {
        Self.appendReference(isParent: isParent, deletesSelf: !isParent && reference.action == .deleteSelf,
                             name: Array(reference.recordName.utf8), zoneName: reference.zoneID?.zoneName,
                             owner: reference.zoneID?.ownerRecordName, into: &references)
        if collectsFieldNames { referenceFields.append(field) }
    }

    /// Walks `fields`, checking it and noting the values of `REFERENCE` and `REFERENCE_LIST` fields.
    private mutating func scanFields(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer) throws(RecordFormatError) {
        try s.beginObject("an object for \"fields\"")
        let fieldsMark = scratch.mark
        defer { scratch.forget(from: fieldsMark) }
        var first = true
        while try s.nextMember(&first) {
            let name = try s.readKey(recordingIn: &scratch, from: fieldsMark)
            s.skipWhitespace()
            guard s.current == UInt8(ascii: "{") else {
                try s.skipValue(scratch: &scratch) // not a field object: the record decoder reports it
                continue
            }
            try s.beginObject()
            let mark = scratch.mark
            defer { scratch.forget(from: mark) }
            var valueAt = -1
            var isReference = false
            var firstMember = true
            while try s.nextMember(&firstMember) {
                let key = try s.readKey(recordingIn: &scratch, from: mark)
                s.skipWhitespace()
                // (Operands are worked out first: `&&` and `||` would capture the scanner, a copy.)
                let isValue = key.isEscaped ? s.equals(key, "value") : Self.token(key, is: "value", in: text)
                let isType = key.isEscaped ? s.equals(key, "type") : Self.token(key, is: "type", in: text)
                let isString = s.current == UInt8(ascii: "\"")
                if isValue {
                    valueAt = s.position
                    try s.skipValue(scratch: &scratch)
                } else if isType && isString {
                    let type = try s.readStringToken()
                    if type.isEscaped {
                        let isSingle = s.equals(type, "REFERENCE"), isList = s.equals(type, "REFERENCE_LIST")
                        isReference = isSingle || isList
                    } else {
                        isReference = Self.token(type, is: "REFERENCE", in: text) || Self.token(type, is: "REFERENCE_LIST", in: text)
                    }
                } else {
                    try s.skipValue(scratch: &scratch)
                }
            }
            guard isReference && valueAt >= 0 else { continue }
            var value = s
            value.position = valueAt
            let field = collectsFieldNames ? try s.string(name) : nil
            if value.current == UInt8(ascii: "{") {
                try scanReference(&value, in: text, field: field, isParent: false)
            } else if value.current == UInt8(ascii: "[") {
                try value.beginArray()
                var firstElement = true
                while try value.nextElement(&firstElement) {
                    value.skipWhitespace()
                    if value.current == UInt8(ascii: "{") {
                        try scanReference(&value, in: text, field: field, isParent: false)
                    } else {
                        try value.skipValue(scratch: &scratch)
                    }
                }
            }
        }
    }

    /// Whether a token without escapes spells `literal` (a token with escapes never does here:
    /// callers that care about those decode them). Static, so that it captures no scanner.
    @inline(__always)
    static func token(_ token: JSONStringToken, is literal: StaticString, in text: UnsafeRawBufferPointer) -> Bool {
        let n = literal.utf8CodeUnitCount
        return !token.isEscaped && token.end - token.start == n && memcmp(text.baseAddress! + token.start, literal.utf8Start, n) == 0
    }

    /// Appends one encoded reference to `out`: a flags byte (1 parent, 2 deletes its record with
    /// the target, 4 names a zone), then the target's name, and with flag 4 the zone name and the
    /// owner, each as a 32-bit length (`UInt32.max` for none) and its UTF-8 bytes.
    package static func appendReference(isParent: Bool, deletesSelf: Bool, name: some Collection<UInt8>, zoneName: String?,
                                        owner: String?, into out: inout [UInt8]) {
        out.append((isParent ? 1 : 0) | (deletesSelf ? 2 : 0) | (zoneName != nil ? 4 : 0))
        func put(_ bytes: (some Collection<UInt8>)?) {
            guard let bytes else {
                withUnsafeBytes(of: UInt32.max) { out.append(contentsOf: $0) }
                return
            }
            withUnsafeBytes(of: UInt32(bytes.count)) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
        }
        put(name)
        if let zoneName {
            put(zoneName.utf8)
            put(owner?.utf8)
        }
    }
}
