#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Transcoding of record dictionaries straight from input bytes to Ferry's NDJSON: for a
// conversion with nothing to change in the records (no filter, no projection), each record is
// written as it is read, without building a `Record` and encoding it again.
//
// The transcoder accepts only what it can write exactly as decode-then-encode would: a record's
// known keys in any order (each written to scratch space, then copied out in the canonical
// order), the shapes of the decoder's fast paths inside them (`{"value":…,"type":"TAG"}` fields
// with a standard tag, zone IDs, stamps, references, assets and locations with their members in
// the encoder's order), ASCII field names without escapes, no `null` under a known key, no
// unknown keys. Its output is built from the encoder's own pieces — strings without escapes
// copied after the checks `readString()` makes (their encoding is the same bytes), other strings
// decoded and encoded again, integers and doubles parsed and printed by `JSONOutput`,
// `pluginFields` read as a value and written back — so what it writes is byte for byte what
// `RecordJSON.encode(decodeRecord(…))` writes. For anything else it returns `false` and the
// caller decodes the record the general way, which also reports what
// is wrong with a bad one. A differential test and the fuzz harness hold the two paths equal.

/// Scratch space the transcoder reuses from record to record (keep one per thread).
package struct TranscodingScratch: ~Copyable {
    /// Field names of the record being transcoded (ranges of the input).
    var names: [Range<Int>] = []
    /// Where each member of the record, by its place in the canonical order, was written in
    /// ``buffer``: start and end, or -1.
    var slots = [Int](repeating: -1, count: 2 * JSONScanner.canonicalMembers.count)
    /// The record's members, transcoded in input order, then copied out in the canonical order.
    var buffer = JSONOutput(capacity: 1 << 12)

    package init() { names.reserveCapacity(16) }
}

extension RecordJSON {
    /// The nesting the transcoder needs: inputs allowed less than this are decoded instead, so
    /// that the depth error is the decoder's.
    package static var minimumTranscodingDepth: Int { 16 }

    /// Transcodes the record dictionary that `text` holds (nothing but whitespace around it)
    /// into `out`, without its newline: the bytes ``encode(_:into:)`` would write for the
    /// decoded record. Returns `false`, with `out` as it was, when the record must be decoded
    /// (see ``JSONScanner/transcodeRecord(into:zone:scratch:)``).
    package static func transcodeRecord(_ text: UnsafeRawBufferPointer, into out: inout JSONOutput, scratch: inout TranscodingScratch,
                                         configuration: Configuration) -> Bool {
        guard configuration.maximumDepth >= minimumTranscodingDepth else { return false }
        var scanner = JSONScanner(text, maximumDepth: configuration.maximumDepth)
        let mark = out.count
        do {
            if try scanner.transcodeRecord(into: &out, zone: nil, scratch: &scratch) {
                scanner.skipWhitespace()
                if scanner.isAtEnd { return true }
            }
        } catch {}
        out.truncate(to: mark)
        return false
    }

    /// Transcodes the record element at `range` of a large response (see
    /// ``transcodeRecord(_:into:scratch:configuration:)``); `zone`, the encoded zone ID of the
    /// `changes/zone` entry it came in, is given to a record that names none.
    package static func transcodeElement(_ text: UnsafeRawBufferPointer, _ range: Range<Int>, zone: UnsafeRawBufferPointer?,
                                         into out: inout JSONOutput, scratch: inout TranscodingScratch,
                                         configuration: Configuration) -> Bool {
        guard configuration.maximumDepth >= minimumTranscodingDepth else { return false }
        var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: text[..<range.upperBound]), maximumDepth: configuration.maximumDepth)
        scanner.position = range.lowerBound
        let mark = out.count
        do {
            if try scanner.transcodeRecord(into: &out, zone: zone, scratch: &scratch) {
                scanner.skipWhitespace()
                if scanner.isAtEnd { return true }
            }
        } catch {}
        out.truncate(to: mark)
        return false
    }

    /// Transcodes the response document that starts at `offset` of `text` — a `records` response
    /// (`records/query`, `records/lookup`, …) or a `changes/zone` response — writing each of its
    /// records into `out` as an NDJSON line (newline included) and noting where each ends in
    /// `recordEnds`. Returns the offset just after the document, or `nil`, with `out` and
    /// `recordEnds` as they were, when the document must be decoded: anything but such a
    /// response, a record the transcoder does not take, an error entry, a zone listing, bad JSON.
    package static func transcodeResponse(in text: UnsafeRawBufferPointer, at offset: Int, into out: inout JSONOutput,
                                          recordEnds: inout [Int], scratch: inout TranscodingScratch,
                                          configuration: Configuration) -> Int? {
        guard configuration.maximumDepth >= minimumTranscodingDepth else { return nil }
        var scanner = JSONScanner(text, maximumDepth: configuration.maximumDepth)
        scanner.position = offset
        let mark = out.count, ends = recordEnds.count
        do {
            if try scanner.transcodeResponse(into: &out, recordEnds: &recordEnds, scratch: &scratch) { return scanner.position }
        } catch {}
        out.truncate(to: mark)
        recordEnds.removeSubrange(ends...)
        return nil
    }
}

extension JSONScanner {
    // MARK: Records

    /// The members of a record dictionary in the order the encoder writes them (their
    /// ``CloudKitKey`` raw values), each with what goes before its value in the output.
    static let canonicalMembers: [(key: StaticString, prefix: StaticString)] = [
        ("recordName", "{\"recordName\":"), ("recordType", ",\"recordType\":"), ("zoneID", ",\"zoneID\":"),
        ("recordChangeTag", ",\"recordChangeTag\":"), ("created", ",\"created\":"), ("modified", ",\"modified\":"),
        ("deleted", ",\"deleted\":"), ("parent", ",\"parent\":"), ("share", ",\"share\":"), ("shortGUID", ",\"shortGUID\":"),
        ("fields", ",\"fields\":"), ("pluginFields", ",\"pluginFields\":"),
    ]
    private static let zoneIDMember = Int(CloudKitKey.zoneID.rawValue)

    /// Transcodes the record object at `position` (see the top of this file): its members, in
    /// any order, each into `scratch`, then copied out in the canonical order. `zone` is the
    /// encoded zone ID written for a record that names none. Throws on bad JSON, returns `false`
    /// for a shape it does not take (an unknown key, a `null` member, a repeated key, no
    /// `recordName`); either way the caller rewinds `out` and decodes.
    package mutating func transcodeRecord(into out: inout JSONOutput, zone: UnsafeRawBufferPointer?,
                                          scratch: inout TranscodingScratch) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { return false }
        try beginObject()
        scratch.buffer.removeAll()
        for index in scratch.slots.indices { scratch.slots[index] = -1 }
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            // A record member's place in ``canonicalMembers`` is its raw value.
            guard let member = key.cloudKitKey, member.isRecordMember else { return false }
            let index = Int(member.rawValue)
            guard scratch.slots[2 * index] < 0 else { return false }
            skipWhitespace()
            let start = scratch.buffer.count
            switch index {
            case 0, 1, 3, 9: // recordName, recordType, recordChangeTag, shortGUID
                guard current == UInt8(ascii: "\"") else { return false }
                try transcodeString(into: &scratch.buffer)
            case 2: guard try transcodeZoneID(into: &scratch.buffer) else { return false }
            case 4, 5: guard try transcodeStamp(into: &scratch.buffer) else { return false }
            case 6:
                if matchLiteral("true") {
                    scratch.buffer.append("true")
                } else if matchLiteral("false") {
                    scratch.buffer.append("false")
                } else {
                    return false
                }
            case 7, 8: guard try transcodeReference(into: &scratch.buffer) else { return false }
            case 10: guard try transcodeFields(into: &scratch.buffer, names: &scratch.names) else { return false }
            default:
                // pluginFields: any JSON but `null`, written back as the decoder's value is.
                guard current != UInt8(ascii: "n") else { return false }
                scratch.buffer.appendValue(try readValue())
            }
            scratch.slots[2 * index] = start
            scratch.slots[2 * index + 1] = scratch.buffer.count
        }
        // No name: an error entry, or a record the decoder refuses.
        guard scratch.slots[0] >= 0 else { return false }
        let written = scratch.buffer.bytes
        for index in Self.canonicalMembers.indices {
            let start = scratch.slots[2 * index]
            if start >= 0 {
                out.append(Self.canonicalMembers[index].prefix)
                out.append(UnsafeRawBufferPointer(rebasing: written[start..<scratch.slots[2 * index + 1]]))
            } else if index == Self.zoneIDMember, let zone {
                out.append(",\"zoneID\":")
                out.append(zone)
            }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// Consumes `, "key":` and the whitespace after it if they come next.
    @inline(__always)
    private mutating func matchNextKey(_ quotedKey: StaticString) -> Bool {
        let start = position
        guard matchByte(UInt8(ascii: ",")), matchKey(quotedKey) else {
            position = start
            return false
        }
        return true
    }

    /// Consumes `"key":` (with a comma before it unless `first`) if it comes next.
    @inline(__always)
    private mutating func matchMemberKey(_ quotedKey: StaticString, first: Bool) -> Bool {
        first ? matchKey(quotedKey) : matchNextKey(quotedKey)
    }

    /// The string at `position`, as ``JSONOutput/appendString(_:)`` writes what ``readString()``
    /// reads: without escapes, its own bytes (checked as `readString` checks them).
    @inline(__always)
    private mutating func transcodeString(into out: inout JSONOutput) throws(RecordFormatError) {
        let start = position
        let (contentEnd, flags) = try scanStringBody()
        if flags & Self.escapeFlag == 0 {
            if flags & Self.highFlag != 0 { try validateUTF8(from: start + 1, to: contentEnd) }
            out.append(UnsafeRawBufferPointer(start: base + start, count: contentEnd + 1 - start))
        } else {
            position = start
            out.appendString(try readString())
        }
    }

    /// Skips the string at `position`, checking it as ``readString()`` would.
    mutating func skipCheckedString() throws(RecordFormatError) {
        let start = position
        let (contentEnd, flags) = try scanStringBody()
        try validateString(from: start + 1, to: contentEnd, flags: flags)
    }

    /// An integer exactly as the decoder takes it (within 64 bits, no fraction or exponent).
    @inline(__always)
    private mutating func transcodeInteger(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        let c = current
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else { return false }
        guard let exact = try readNumber().exactInteger else { return false }
        out.appendInteger(exact)
        return true
    }

    /// A number read as a double, within a double's range.
    @inline(__always)
    private mutating func transcodeDouble(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        let c = current
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else { return false }
        let value = doubleValue(of: try readNumber())
        guard value.isFinite else { return false }
        out.appendDouble(value)
        return true
    }

    /// `{"zoneName":…[,"ownerRecordName":…][,"zoneType":…]}`.
    mutating func transcodeZoneID(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        guard matchByte(UInt8(ascii: "{")), matchKey(#""zoneName""#), current == UInt8(ascii: "\"") else { return false }
        out.append("{\"zoneName\":")
        try transcodeString(into: &out)
        if matchNextKey(#""ownerRecordName""#) {
            guard current == UInt8(ascii: "\"") else { return false }
            out.append(",\"ownerRecordName\":")
            try transcodeString(into: &out)
        }
        if matchNextKey(#""zoneType""#) {
            guard current == UInt8(ascii: "\"") else { return false }
            out.append(",\"zoneType\":")
            try transcodeString(into: &out)
        }
        guard matchByte(UInt8(ascii: "}")) else { return false }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// `{["timestamp":N][,"userRecordName":…][,"deviceID":…]}`.
    private mutating func transcodeStamp(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        guard matchByte(UInt8(ascii: "{")) else { return false }
        out.append(UInt8(ascii: "{"))
        var first = true
        if matchMemberKey(#""timestamp""#, first: first) {
            out.append("\"timestamp\":")
            guard try transcodeInteger(into: &out) else { return false }
            first = false
        }
        if matchMemberKey(#""userRecordName""#, first: first) {
            guard current == UInt8(ascii: "\"") else { return false }
            out.append(first ? "\"userRecordName\":" : ",\"userRecordName\":")
            try transcodeString(into: &out)
            first = false
        }
        if matchMemberKey(#""deviceID""#, first: first) {
            guard current == UInt8(ascii: "\"") else { return false }
            out.append(first ? "\"deviceID\":" : ",\"deviceID\":")
            try transcodeString(into: &out)
        }
        guard matchByte(UInt8(ascii: "}")) else { return false }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// `{"recordName":…[,"zoneID":{…}][,"action":…]}`.
    private mutating func transcodeReference(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        guard matchByte(UInt8(ascii: "{")), matchKey(#""recordName""#), current == UInt8(ascii: "\"") else { return false }
        out.append("{\"recordName\":")
        try transcodeString(into: &out)
        if matchNextKey(#""zoneID""#) {
            out.append(",\"zoneID\":")
            guard try transcodeZoneID(into: &out) else { return false }
        }
        if matchNextKey(#""action""#) {
            guard current == UInt8(ascii: "\"") else { return false }
            out.append(",\"action\":")
            try transcodeString(into: &out)
        }
        guard matchByte(UInt8(ascii: "}")) else { return false }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// An asset's members in the encoder's order, any of them.
    private mutating func transcodeAsset(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        guard matchByte(UInt8(ascii: "{")) else { return false }
        out.append(UInt8(ascii: "{"))
        var first = true
        @inline(__always)
        func stringMember(_ quotedKey: StaticString, _ scanner: inout JSONScanner,
                          _ out: inout JSONOutput) throws(RecordFormatError) -> Bool {
            guard scanner.matchMemberKey(quotedKey, first: first) else { return true }
            guard scanner.current == UInt8(ascii: "\"") else { return false }
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(quotedKey)
            out.append(UInt8(ascii: ":"))
            try scanner.transcodeString(into: &out)
            first = false
            return true
        }
        guard try stringMember(#""fileChecksum""#, &self, &out) else { return false }
        if matchMemberKey(#""size""#, first: first) {
            out.append(first ? "\"size\":" : ",\"size\":")
            guard try transcodeInteger(into: &out) else { return false }
            first = false
        }
        guard try stringMember(#""referenceChecksum""#, &self, &out), try stringMember(#""wrappingKey""#, &self, &out),
              try stringMember(#""receipt""#, &self, &out), try stringMember(#""downloadURL""#, &self, &out) else { return false }
        guard matchByte(UInt8(ascii: "}")) else { return false }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// A location's members in the encoder's order: latitude and longitude, then any others.
    private mutating func transcodeLocation(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        guard matchByte(UInt8(ascii: "{")), matchKey(#""latitude""#) else { return false }
        out.append("{\"latitude\":")
        guard try transcodeDouble(into: &out), matchNextKey(#""longitude""#) else { return false }
        out.append(",\"longitude\":")
        guard try transcodeDouble(into: &out) else { return false }
        @inline(__always)
        func doubleMember(_ quotedKey: StaticString, _ scanner: inout JSONScanner,
                          _ out: inout JSONOutput) throws(RecordFormatError) -> Bool {
            guard scanner.matchNextKey(quotedKey) else { return true }
            out.append(UInt8(ascii: ","))
            out.append(quotedKey)
            out.append(UInt8(ascii: ":"))
            return try scanner.transcodeDouble(into: &out)
        }
        guard try doubleMember(#""horizontalAccuracy""#, &self, &out), try doubleMember(#""verticalAccuracy""#, &self, &out),
              try doubleMember(#""altitude""#, &self, &out), try doubleMember(#""speed""#, &self, &out),
              try doubleMember(#""course""#, &self, &out) else { return false }
        if matchNextKey(#""timestamp""#) {
            out.append(",\"timestamp\":")
            guard try transcodeInteger(into: &out) else { return false }
        }
        guard matchByte(UInt8(ascii: "}")) else { return false }
        out.append(UInt8(ascii: "}"))
        return true
    }

    // MARK: Fields

    /// The `fields` object: names plain ASCII without escapes (so that comparing bytes is
    /// comparing names), each once, each field `{"value":…,"type":"TAG"}`.
    private mutating func transcodeFields(into out: inout JSONOutput, names: inout [Range<Int>]) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { return false }
        try beginObject()
        out.append(UInt8(ascii: "{"))
        names.removeAll(keepingCapacity: true)
        var first = true
        while try nextMember(&first) {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { return false }
            let start = position
            let (contentEnd, flags) = try scanStringBody()
            guard flags == 0 else { return false }
            let name = (start + 1)..<contentEnd
            for other in names where other.count == name.count && memcmp(base + other.lowerBound, base + name.lowerBound, name.count) == 0 {
                return false
            }
            names.append(name)
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return false }
            position += 1
            if names.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(UnsafeRawBufferPointer(start: base + start, count: contentEnd + 1 - start))
            out.append(UInt8(ascii: ":"))
            guard try transcodeField(into: &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// `{"value":…,"type":"TAG"}` with a standard tag: the value is found, the tag read, then the
    /// value transcoded as the tag says.
    private mutating func transcodeField(into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        guard matchByte(UInt8(ascii: "{")), matchKey(#""value""#) else { return false }
        let valueStart = position
        switch current {
        case UInt8(ascii: "\""): _ = try scanStringBody()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try readNumber()
        default: try skipValueStructure()
        }
        guard matchNextKey(#""type""#), current == UInt8(ascii: "\"") else { return false }
        let tagStart = position
        guard let type = matchStandardFieldType(), type.kind != .unknown else { return false }
        let tagEnd = position
        guard matchByte(UInt8(ascii: "}")) else { return false }
        let after = position
        position = valueStart
        out.append("{\"value\":")
        if readNullIfPresent() {
            out.append("null")
        } else if type.isList {
            guard current == UInt8(ascii: "[") else { return false }
            try beginArray()
            out.append(UInt8(ascii: "["))
            var first = true
            var items = 0
            while try nextElement(&first) {
                if items > 0 { out.append(UInt8(ascii: ",")) }
                items += 1
                skipWhitespace()
                if readNullIfPresent() {
                    out.append("null")
                } else {
                    guard try transcodeScalar(type.kind, into: &out) else { return false }
                }
            }
            out.append(UInt8(ascii: "]"))
        } else {
            guard try transcodeScalar(type.kind, into: &out) else { return false }
        }
        // The value must end where the type's member begins.
        skipWhitespace()
        guard current == UInt8(ascii: ",") else { return false }
        out.append(",\"type\":")
        out.append(UnsafeRawBufferPointer(start: base + tagStart, count: tagEnd - tagStart))
        out.append(UInt8(ascii: "}"))
        position = after
        return true
    }

    /// A value (or list item) of element kind `kind`, at `position`.
    @inline(__always)
    private mutating func transcodeScalar(_ kind: FieldType.Kind, into out: inout JSONOutput) throws(RecordFormatError) -> Bool {
        switch kind {
        case .string, .bytes, .encryptedBytes:
            guard current == UInt8(ascii: "\"") else { return false }
            try transcodeString(into: &out)
            return true
        case .int64, .timestamp: return try transcodeInteger(into: &out)
        case .double: return try transcodeDouble(into: &out)
        case .reference: return try transcodeReference(into: &out)
        case .asset: return try transcodeAsset(into: &out)
        case .location: return try transcodeLocation(into: &out)
        case .unknown: return false
        }
    }
}
