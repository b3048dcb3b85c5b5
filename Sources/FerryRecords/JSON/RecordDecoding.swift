#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Decoding of CloudKit record dictionaries straight from JSON bytes: no intermediate tree, keys
// matched in place, field values typed by their tag. Anything unknown is kept in `unknownKeys`;
// a `null` under a known key is kept there too, so it is written back as it came.

extension JSONScanner {
    // MARK: Typed reads with messages that name the key

    @inlinable
    package mutating func readString(for key: StaticString) throws(RecordFormatError) -> String {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else {
            throw error(.wrongType, "expected a string for \"\(key)\", found \(describeCurrent())")
        }
        return try readString()
    }

    @inlinable
    mutating func readInt64(for key: String) throws(RecordFormatError) -> Int64 {
        skipWhitespace()
        let c = current
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else {
            throw error(.wrongType, "expected an integer for \(key), found \(describeCurrent())")
        }
        let token = try readNumber()
        guard let value = token.exactInteger else {
            let what = token.isInteger ? "an integer beyond the 64-bit range" : "a number with a fraction or exponent"
            throw error(.outOfRange, "expected a 64-bit integer for \(key), found \(what) (\(text(of: token)))", at: token.start)
        }
        return value
    }

    @inlinable
    mutating func readDouble(for key: String) throws(RecordFormatError) -> Double {
        skipWhitespace()
        let c = current
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else {
            throw error(.wrongType, "expected a number for \(key), found \(describeCurrent())")
        }
        return try finiteDoubleValue(of: try readNumber(), for: key)
    }

    /// The double nearest to `token`, which must be within a double's range: JSON has no
    /// infinity, and one would be written back as `null`.
    @inlinable
    func finiteDoubleValue(of token: JSONNumberToken, for what: @autoclosure () -> String) throws(RecordFormatError) -> Double {
        let value = doubleValue(of: token)
        guard value.isFinite else {
            throw error(.outOfRange, "expected a number within the range of a double for \(what()), found \(text(of: token))",
                        at: token.start)
        }
        return value
    }

    /// Whether the next value is `null` (not consumed).
    @inlinable
    mutating func nextIsNull() -> Bool {
        skipWhitespace()
        return current == UInt8(ascii: "n")
    }

    @inlinable
    func duplicate(_ key: JSONKey) -> RecordFormatError {
        error(.duplicateKey, "expected each key once, found \"\(key.string)\" twice", at: key.offset)
    }

    /// Reads an unknown member into `object`, rejecting a repeated key.
    @inlinable
    mutating func readUnknown(_ key: JSONKey, into object: inout JSONObject) throws(RecordFormatError) {
        let name = key.string
        for member in object.members where ExactName.same(member.key, name) { throw duplicate(key) }
        object.append(key: name, value: try readValue())
    }

    // MARK: Nested system structures

    package mutating func decodeZoneID() throws(RecordFormatError) -> ZoneID {
        skipWhitespace()
        if let zone = try decodeCompactZoneID() { return zone }
        let start = position
        try beginObject("a zone ID object")
        var zone = ZoneID()
        var seen: UInt8 = 0
        var hasName = false
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            let bit: UInt8
            if key.equals("zoneName") { bit = 1 } else if key.equals("ownerRecordName") { bit = 2 } else if key.equals("zoneType") { bit = 4 } else { bit = 0 }
            if bit == 0 || nextIsNull() {
                if seen & bit != 0 { throw duplicate(key) }
                seen |= bit
                try readUnknown(key, into: &zone.unknownKeys)
                continue
            }
            if seen & bit != 0 { throw duplicate(key) }
            seen |= bit
            switch bit {
            case 1: zone.zoneName = try readString(for: "zoneName"); hasName = true
            case 2: zone.ownerRecordName = try readString(for: "ownerRecordName")
            default: zone.zoneType = try readString(for: "zoneType")
            }
        }
        if !hasName {
            throw error(.missingKey, "expected key \"zoneName\" in the zone ID, found none", at: start)
        }
        return zone
    }

    package mutating func decodeStamp() throws(RecordFormatError) -> RecordStamp {
        skipWhitespace()
        if let stamp = try decodeCompactStamp() { return stamp }
        try beginObject("a created/modified object")
        var stamp = RecordStamp()
        var seen: UInt8 = 0
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            let bit: UInt8
            if key.equals("timestamp") { bit = 1 } else if key.equals("userRecordName") { bit = 2 } else if key.equals("deviceID") { bit = 4 } else { bit = 0 }
            if seen & bit != 0 { throw duplicate(key) }
            seen |= bit
            if bit == 0 || nextIsNull() {
                try readUnknown(key, into: &stamp.unknownKeys)
                continue
            }
            switch bit {
            case 1: stamp.timestamp = try readInt64(for: "\"timestamp\"")
            case 2: stamp.userRecordName = try readString(for: "userRecordName")
            default: stamp.deviceID = try readString(for: "deviceID")
            }
        }
        return stamp
    }

    /// The fast path for `{"zoneName":"…"[,"ownerRecordName":"…"][,"zoneType":"…"]}`, compact
    /// or pretty-printed; `nil`, with the position unchanged, for any other shape.
    @inline(__always)
    mutating func decodeCompactZoneID() throws(RecordFormatError) -> ZoneID? {
        let start = position
        guard matchByte(UInt8(ascii: "{")), matchKey(#""zoneName""#), current == UInt8(ascii: "\"") else {
            position = start
            return nil
        }
        try enter()
        depth -= 1
        var zone = ZoneID(zoneName: try readString())
        if let owner = try matchStringMember(#""ownerRecordName""#) { zone.ownerRecordName = owner }
        if let type = try matchStringMember(#""zoneType""#) { zone.zoneType = type }
        guard matchByte(UInt8(ascii: "}")) else {
            position = start
            return nil
        }
        return zone
    }

    /// Reads `, "key": "string"` if it comes next (after any whitespace); otherwise leaves the
    /// position where it was and returns `nil`.
    @inline(__always)
    mutating func matchStringMember(_ quotedKey: StaticString) throws(RecordFormatError) -> String? {
        let start = position
        guard matchByte(UInt8(ascii: ",")), matchKey(quotedKey), current == UInt8(ascii: "\"") else {
            position = start
            return nil
        }
        return try readString()
    }

    /// The fast path for `{"recordName":"…"[,"zoneID":{…}][,"action":"…"]}`, compact or
    /// pretty-printed; `nil`, with the position unchanged, for any other shape.
    @inline(__always)
    mutating func decodeCompactReference() throws(RecordFormatError) -> Reference? {
        let start = position
        guard matchByte(UInt8(ascii: "{")), matchKey(#""recordName""#), current == UInt8(ascii: "\"") else {
            position = start
            return nil
        }
        try enter()
        let name = try readString()
        var zone: ZoneID?
        var action: Reference.Action?
        let afterName = position
        if matchByte(UInt8(ascii: ",")), matchKey(#""zoneID""#), current == UInt8(ascii: "{") {
            guard let compact = try decodeCompactZoneID() else {
                depth -= 1
                position = start
                return nil
            }
            zone = compact
        } else {
            position = afterName
        }
        if let text = try matchStringMember(#""action""#) { action = Reference.Action(rawValue: text) }
        depth -= 1
        guard matchByte(UInt8(ascii: "}")) else {
            position = start
            return nil
        }
        return Reference(recordName: name, zoneID: zone, action: action)
    }

    /// The fast path for `{"timestamp":N,"userRecordName":"…"[,"deviceID":"…"]}`, compact or
    /// pretty-printed; `nil`, with the position unchanged, for any other shape.
    @inline(__always)
    mutating func decodeCompactStamp() throws(RecordFormatError) -> RecordStamp? {
        let start = position
        guard matchByte(UInt8(ascii: "{")), matchKey(#""timestamp""#),
              current == UInt8(ascii: "-") || (current >= UInt8(ascii: "0") && current <= UInt8(ascii: "9")) else {
            position = start
            return nil
        }
        guard let timestamp = try readNumber().exactInteger,
              matchByte(UInt8(ascii: ",")), matchKey(#""userRecordName""#), current == UInt8(ascii: "\"") else {
            position = start
            return nil
        }
        try enter() // the depth limit applies as on the general path
        depth -= 1
        var stamp = RecordStamp(timestamp: timestamp, userRecordName: try readString())
        if let device = try matchStringMember(#""deviceID""#) { stamp.deviceID = device }
        guard matchByte(UInt8(ascii: "}")) else {
            position = start
            return nil
        }
        return stamp
    }

    package mutating func decodeReference() throws(RecordFormatError) -> Reference {
        skipWhitespace()
        if let reference = try decodeCompactReference() { return reference }
        let start = position
        try beginObject("a reference object")
        var name: String?
        var zone: ZoneID?
        var action: Reference.Action?
        var unknown = JSONObject()
        var seen: UInt8 = 0
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            let bit: UInt8
            if key.equals("recordName") { bit = 1 } else if key.equals("zoneID") { bit = 2 } else if key.equals("action") { bit = 4 } else { bit = 0 }
            if seen & bit != 0 { throw duplicate(key) }
            seen |= bit
            if bit == 0 || (bit != 1 && nextIsNull()) {
                try readUnknown(key, into: &unknown)
                continue
            }
            switch bit {
            case 1: name = try readString(for: "recordName")
            case 2: zone = try decodeZoneID()
            default: action = Reference.Action(rawValue: try readString(for: "action"))
            }
        }
        guard let name else {
            throw error(.missingKey, "expected key \"recordName\" in the reference, found none", at: start)
        }
        return Reference(recordName: name, zoneID: zone, action: action, unknownKeys: unknown)
    }

    mutating func decodeAsset() throws(RecordFormatError) -> Asset {
        try beginObject("an asset object")
        var asset = Asset()
        var seen: UInt8 = 0
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            let bit: UInt8
            if key.equals("fileChecksum") { bit = 1 } else if key.equals("size") { bit = 2 } else if key.equals("referenceChecksum") { bit = 4 } else if key.equals("wrappingKey") { bit = 8 } else if key.equals("receipt") { bit = 16 } else if key.equals("downloadURL") { bit = 32 } else { bit = 0 }
            if seen & bit != 0 { throw duplicate(key) }
            seen |= bit
            if bit == 0 || nextIsNull() {
                try readUnknown(key, into: &asset.unknownKeys)
                continue
            }
            switch bit {
            case 1: asset.fileChecksum = try readString(for: "fileChecksum")
            case 2: asset.size = try readInt64(for: "the asset \"size\"")
            case 4: asset.referenceChecksum = try readString(for: "referenceChecksum")
            case 8: asset.wrappingKey = try readString(for: "wrappingKey")
            case 16: asset.receipt = try readString(for: "receipt")
            default: asset.downloadURL = try readString(for: "downloadURL")
            }
        }
        return asset
    }

    mutating func decodeLocation() throws(RecordFormatError) -> Location {
        let start = position
        try beginObject("a location object")
        var location = Location(latitude: 0, longitude: 0)
        var seen: UInt16 = 0
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            let bit: UInt16
            if key.equals("latitude") { bit = 1 } else if key.equals("longitude") { bit = 2 } else if key.equals("horizontalAccuracy") { bit = 4 } else if key.equals("verticalAccuracy") { bit = 8 } else if key.equals("altitude") { bit = 16 } else if key.equals("speed") { bit = 32 } else if key.equals("course") { bit = 64 } else if key.equals("timestamp") { bit = 128 } else { bit = 0 }
            if seen & bit != 0 { throw duplicate(key) }
            seen |= bit
            if bit == 0 || (bit > 2 && nextIsNull()) {
                try readUnknown(key, into: &location.unknownKeys)
                continue
            }
            switch bit {
            case 1: location.latitude = try readDouble(for: "\"latitude\"")
            case 2: location.longitude = try readDouble(for: "\"longitude\"")
            case 4: location.horizontalAccuracy = try readDouble(for: "\"horizontalAccuracy\"")
            case 8: location.verticalAccuracy = try readDouble(for: "\"verticalAccuracy\"")
            case 16: location.altitude = try readDouble(for: "\"altitude\"")
            case 32: location.speed = try readDouble(for: "\"speed\"")
            case 64: location.course = try readDouble(for: "\"course\"")
            default: location.timestamp = try readInt64(for: "the location \"timestamp\"")
            }
        }
        if seen & 3 != 3 {
            let missing = seen & 1 == 0 ? "latitude" : "longitude"
            throw error(.missingKey, "expected key \"\(missing)\" in the location, found none", at: start)
        }
        return location
    }

    // MARK: Fields

    /// Room reserved up front for a record's fields and for a list's items: enough for most
    /// records in one allocation, where growing an empty array one append at a time would
    /// allocate and move four times.
    @usableFromInline static var initialFieldCapacity: Int { 8 }
    @usableFromInline static var initialListCapacity: Int { 8 }

    /// Enters a field's list (consumes `[`) and returns an array for its items, with room for
    /// the common list unless the list is empty.
    mutating func beginFieldList() throws(RecordFormatError) -> [FieldValue] {
        try beginArray()
        var items: [FieldValue] = []
        skipWhitespace()
        if current != UInt8(ascii: "]") { items.reserveCapacity(Self.initialListCapacity) }
        return items
    }

    /// Decodes `fields`, an object of field dictionaries, into `fields`, replacing its entries
    /// (and keeping its storage: a record decoded into a reused one needs no new array).
    mutating func decodeFields(into fields: inout RecordFields) throws(RecordFormatError) {
        try beginObject("an object of fields")
        fields.entries.removeAll(keepingCapacity: true)
        // One allocation for the common record (growing from empty took four: 1, 2, 4, 8).
        fields.entries.reserveCapacity(Self.initialFieldCapacity)
        var first = true
        while try nextMember(&first) {
            let key = try readKey()
            if let selection {
                if !selection.utf8Fields.contains(where: { key.equals(bytes: $0) }) {
                    try skipValueStructure()
                    continue
                }
            }
            let name = key.string
            // Records have few fields; past 32 a set keeps duplicate detection linear.
            if fields.entries.count < 32 {
                // Read in place: iterating the array would copy each entry (retaining its strings).
                let repeated = fields.entries.withUnsafeBufferPointer { entries in
                    for index in entries.indices where ExactName.same(entries[index].name, name) {
                        return true
                    }
                    return false
                }
                if repeated { throw duplicate(key) }
            } else if fields.entries.contains(where: { ExactName.same($0.name, name) }) {
                throw duplicate(key)
            }
            fields.entries.append(RecordFields.Entry(name: name, field: try decodeField(named: name)))
        }
    }

    /// Decodes one field dictionary `{"value": …, "type": …}` in either key order.
    mutating func decodeField(named name: String) throws(RecordFormatError) -> RecordField {
        skipWhitespace()
        if let field = try decodeCompactField(named: name) { return field }
        let start = position
        try beginObject("a field object {\"value\": …, \"type\": …} for field \"\(name)\"")
        var type: FieldType?
        var valueOffset = -1
        var stringValue: String?
        var numberValue: JSONNumberToken?
        var speculated: SpeculatedValue?
        var unknown = JSONObject()
        var first = true
        var typeOffset = 0
        while try nextMember(&first) {
            let key = try readKey()
            if key.equals("value") {
                if valueOffset >= 0 { throw duplicate(key) }
                skipWhitespace()
                valueOffset = position
                switch current {
                case UInt8(ascii: "\""): stringValue = try readString()
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): numberValue = try readNumber()
                default:
                    // Composite: decoded (and validated) below, once the type is known, unless
                    // its shape gives it away before the type has been read.
                    if type == nil { speculated = try speculateComposite() } else { try skipValueStructure() }
                }
            } else if key.equals("type") {
                if type != nil { throw duplicate(key) }
                skipWhitespace()
                typeOffset = position
                guard current == UInt8(ascii: "\"") else {
                    throw error(.wrongType, "expected a type tag string for field \"\(name)\", found \(describeCurrent())")
                }
                type = try readFieldType()
            } else {
                try readUnknown(key, into: &unknown)
            }
        }
        guard valueOffset >= 0 else {
            throw error(.missingKey, "expected key \"value\" in field \"\(name)\", found none", at: start)
        }
        _ = typeOffset
        if let type, let value = speculated.take()?.value(as: type) { return RecordField(consume value, type: type, unknownKeys: unknown) }
        let after = position
        position = valueOffset
        let value = try decodeFieldValue(type: type, string: stringValue, number: numberValue, field: name)
        position = after
        return RecordField(consume value, type: type, unknownKeys: unknown)
    }

    /// The fast path for the shape CloudKit and Ferry write, `{"value":…,"type":"TAG"}`, compact
    /// or pretty-printed: keys matched as literals instead of scanned and compared. Returns `nil`,
    /// with the position unchanged, for any other shape (the general path then reads it); errors
    /// in the value are the general path's errors.
    @inline(__always)
    mutating func decodeCompactField(named name: String) throws(RecordFormatError) -> RecordField? {
        let start = position
        guard matchByte(UInt8(ascii: "{")), matchKey(#""value""#) else {
            position = start
            return nil
        }
        try enter()
        let valueOffset = position
        var stringValue: String?
        var numberValue: JSONNumberToken?
        var speculated: SpeculatedValue?
        switch current {
        case UInt8(ascii: "\""): stringValue = try readString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): numberValue = try readNumber()
        default: speculated = try speculateComposite()
        }
        guard matchByte(UInt8(ascii: ",")), matchKey(#""type""#), current == UInt8(ascii: "\"") else {
            depth -= 1
            position = start
            return nil
        }
        let type = try readFieldType()
        guard matchByte(UInt8(ascii: "}")) else {
            depth -= 1
            position = start
            return nil
        }
        depth -= 1
        if let value = speculated.take()?.value(as: type) { return RecordField(consume value, type: type) }
        // The common scalars, exactly as decodeScalar would give them.
        if !type.isList {
            if let string = stringValue.take() {
                switch type.kind {
                case .string: return RecordField(.string(string), type: type)
                case .bytes, .encryptedBytes: return RecordField(.bytes(string), type: type)
                default: stringValue = string
                }
            } else if let number = numberValue {
                switch type.kind {
                case .int64: if let exact = number.exactInteger { return RecordField(.int64(exact), type: type) }
                case .timestamp: if let exact = number.exactInteger { return RecordField(.timestamp(exact), type: type) }
                case .double:
                    // Out of range: the general path below reports it.
                    let value = doubleValue(of: number)
                    if value.isFinite { return RecordField(.double(value), type: type) }
                default: break
                }
            }
        }
        // Decode the value in place, now that its type is known, then come back.
        let after = position
        position = valueOffset
        let value = try decodeFieldValue(type: type, string: stringValue, number: numberValue, field: name)
        position = after
        return RecordField(consume value, type: type)
    }

    /// Decodes the composite value at `position` (a list or an object) before its field's type
    /// is known, as what its shape suggests: a list of strings (STRING_LIST and the bytes lists),
    /// or a compact reference, an asset or a location. CloudKit writes `value` before `type`, so
    /// without this every such value would be scanned twice: skipped to reach the type, then
    /// decoded. Returns `nil`, with the value skipped, for any other shape and on any error, so
    /// that the typed decode (``decodeFieldValue(type:string:number:field:)``) reports errors
    /// exactly as it would have; its result is only used if the type agrees
    /// (``SpeculatedValue/value(as:)``).
    mutating func speculateComposite() throws(RecordFormatError) -> SpeculatedValue? {
        let start = position, startDepth = depth
        do {
            if let value = try speculateCompositeValue() { return value }
        } catch {
            // Fall through: the value is skipped now and decoded by type later.
        }
        position = start
        depth = startDepth
        try skipValueStructure()
        return nil
    }

    private mutating func speculateCompositeValue() throws(RecordFormatError) -> SpeculatedValue? {
        switch current {
        case UInt8(ascii: "["):
            var items = try beginFieldList()
            var first = true
            while try nextElement(&first) {
                skipWhitespace()
                switch current {
                case UInt8(ascii: "\""): items.append(.string(try readString()))
                case UInt8(ascii: "n") where readNullIfPresent(): items.append(.json(.null))
                default: return nil
                }
            }
            return .strings(items)
        case UInt8(ascii: "{"):
            if let reference = try decodeCompactReference() { return .reference(reference) }
            if firstKeyIs(#""fileChecksum""#) { return .asset(try decodeAsset()) }
            if firstKeyIs(#""latitude""#) { return .location(try decodeLocation()) }
            return nil
        default:
            return nil
        }
    }

    /// Whether the object at `position` starts with the key `quotedKey` (nothing is consumed).
    @inline(__always)
    mutating func firstKeyIs(_ quotedKey: StaticString) -> Bool {
        let start = position
        defer { position = start }
        return matchByte(UInt8(ascii: "{")) && matchKey(quotedKey)
    }

    /// Reads a type tag, returning the shared constant for standard tags (no allocation).
    @inline(__always)
    mutating func readFieldType() throws(RecordFormatError) -> FieldType {
        if let known = matchStandardFieldType() { return known }
        return try readOtherFieldType()
    }

    /// Reads a tag ``matchStandardFieldType()`` did not match: escaped, or not a standard one.
    @inline(never)
    mutating func readOtherFieldType() throws(RecordFormatError) -> FieldType {
        FieldType(rawValue: try readString())
    }

    /// Matches a standard tag without escapes at `position` (its opening quote) as literals,
    /// closing quote included: a switch on the first letter, then one or two word compares.
    /// Leaves `position` after the closing quote, or unchanged and returns `nil` for anything
    /// else (which ``readFieldType()`` then reads the general way).
    @inline(__always)
    mutating func matchStandardFieldType() -> FieldType? {
        let start = position
        guard position + 1 < end else { return nil }
        position += 1
        let type: FieldType? = switch base[position] {
        case UInt8(ascii: "S"): matchLiteral(#"STRING""#) ? .string : matchLiteral(#"STRING_LIST""#) ? .stringList : nil
        case UInt8(ascii: "I"): matchLiteral(#"INT64""#) ? .int64 : matchLiteral(#"INT64_LIST""#) ? .int64List : nil
        case UInt8(ascii: "T"): matchLiteral(#"TIMESTAMP""#) ? .timestamp : matchLiteral(#"TIMESTAMP_LIST""#) ? .timestampList : nil
        case UInt8(ascii: "D"): matchLiteral(#"DOUBLE""#) ? .double : matchLiteral(#"DOUBLE_LIST""#) ? .doubleList : nil
        case UInt8(ascii: "R"): matchLiteral(#"REFERENCE""#) ? .reference : matchLiteral(#"REFERENCE_LIST""#) ? .referenceList : nil
        case UInt8(ascii: "A"): matchLiteral(#"ASSETID""#) ? .asset : matchLiteral(#"ASSETID_LIST""#) ? .assetList : nil
        case UInt8(ascii: "L"): matchLiteral(#"LOCATION""#) ? .location : matchLiteral(#"LOCATION_LIST""#) ? .locationList : nil
        case UInt8(ascii: "B"): matchLiteral(#"BYTES""#) ? .bytes : matchLiteral(#"BYTES_LIST""#) ? .bytesList : nil
        case UInt8(ascii: "E"):
            matchLiteral(#"ENCRYPTED_BYTES""#) ? .encryptedBytes : matchLiteral(#"ENCRYPTED_BYTES_LIST""#) ? .encryptedBytesList : nil
        case UInt8(ascii: "U"): matchLiteral(#"UNKNOWN_LIST""#) ? .unknownList : nil
        default: nil
        }
        if type == nil { position = start }
        return type
    }

    /// Decodes a field value at `position` given its type (strings and numbers already scanned).
    mutating func decodeFieldValue(type: FieldType?, string: String?, number: JSONNumberToken?,
                                   field name: String) throws(RecordFormatError) -> FieldValue {
        if nextIsNull() {
            _ = readNullIfPresent()
            return .json(.null)
        }
        guard let type else {
            // Requests may omit `type`: infer the obvious ones, keep the rest as JSON.
            if let string { return .string(string) }
            if let number {
                if let exact = number.exactInteger { return .int64(exact) }
                let value = doubleValue(of: number)
                // Beyond both ranges, it stays JSON text, as an integer beyond 64 bits does.
                if number.isInteger || !value.isFinite { return .json(.number(JSONNumber(text: text(of: number)))) }
                return .double(value)
            }
            return .json(try readValue())
        }
        if type.kind == .unknown {
            if let string { return .json(.string(string)) }
            if let number { return .json(.number(JSONNumber(text: text(of: number)))) }
            return .json(try readValue())
        }
        if type.isList {
            guard current == UInt8(ascii: "[") else {
                throw error(.wrongType, "expected a list for \(type.rawValue) field \"\(name)\", found \(describeCurrent())")
            }
            var items = try beginFieldList()
            var first = true
            while try nextElement(&first) {
                skipWhitespace()
                if current == UInt8(ascii: "n") {
                    _ = readNullIfPresent()
                    items.append(.json(.null))
                } else {
                    items.append(try decodeScalar(kind: type.kind, type: type, string: nil, number: nil, field: name))
                }
            }
            return .list(items)
        }
        return try decodeScalar(kind: type.kind, type: type, string: string, number: number, field: name)
    }

    @inlinable
    mutating func decodeScalar(kind: FieldType.Kind, type: FieldType, string: String?, number: JSONNumberToken?,
                               field name: String) throws(RecordFormatError) -> FieldValue {
        switch kind {
        case .string, .bytes, .encryptedBytes:
            let s: String
            if let string { s = string } else {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else {
                    throw error(.wrongType, "expected a string for \(type.rawValue) field \"\(name)\", found \(describeCurrent())")
                }
                s = try readString()
            }
            return kind == .string ? .string(s) : .bytes(s)
        case .int64, .timestamp:
            let token: JSONNumberToken
            if let number { token = number } else {
                skipWhitespace()
                let c = current
                guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else {
                    throw error(.wrongType, "expected a number for \(type.rawValue) field \"\(name)\", found \(describeCurrent())")
                }
                token = try readNumber()
            }
            guard let exact = token.exactInteger else {
                let what = token.isInteger ? "an integer beyond the 64-bit range" : "a number with a fraction or exponent"
                throw error(.outOfRange, "expected a 64-bit integer for \(type.rawValue) field \"\(name)\", found \(what) (\(text(of: token)))", at: token.start)
            }
            return kind == .int64 ? .int64(exact) : .timestamp(exact)
        case .double:
            if let number { return .double(try finiteDoubleValue(of: number, for: "\(type.rawValue) field \"\(name)\"")) }
            skipWhitespace()
            let c = current
            guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else {
                throw error(.wrongType, "expected a number for \(type.rawValue) field \"\(name)\", found \(describeCurrent())")
            }
            return .double(try finiteDoubleValue(of: try readNumber(), for: "\(type.rawValue) field \"\(name)\""))
        case .reference:
            try expectObject(type, name)
            return .reference(try decodeReference())
        case .asset:
            try expectObject(type, name)
            return .asset(try decodeAsset())
        case .location:
            try expectObject(type, name)
            return .location(try decodeLocation())
        case .unknown:
            return .json(try readValue())
        }
    }

    @inlinable
    mutating func expectObject(_ type: FieldType, _ name: String) throws(RecordFormatError) {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else {
            throw error(.wrongType, "expected an object for \(type.rawValue) field \"\(name)\", found \(describeCurrent())")
        }
    }
}

/// A composite field value decoded before its type was read (see
/// ``JSONScanner/speculateComposite()``).
enum SpeculatedValue {
    /// A list whose items are all strings or `null` (kept as `.string` and `.json(.null)`).
    case strings([FieldValue])
    case reference(Reference)
    case asset(Asset)
    case location(Location)

    /// The value as a field of `type`, exactly as the typed decode would give it; `nil` when the
    /// type calls for a different decode (which then runs, and reports any mismatch).
    consuming func value(as type: FieldType) -> FieldValue? {
        switch consume self {
        case .strings(let items):
            guard type.isList else { return nil }
            switch type.kind {
            case .string: return .list(items)
            case .bytes, .encryptedBytes:
                return .list(items.map { item in
                    if case .string(let text) = item { .bytes(text) } else { item }
                })
            case .unknown: return nil
            default: return items.isEmpty ? .list([]) : nil
            }
        case .reference(let reference):
            return !type.isList && type.kind == .reference ? .reference(reference) : nil
        case .asset(let asset):
            return !type.isList && type.kind == .asset ? .asset(asset) : nil
        case .location(let location):
            return !type.isList && type.kind == .location ? .location(location) : nil
        }
    }
}
