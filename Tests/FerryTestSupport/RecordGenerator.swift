import FerryRecords

/// Generates CloudKit records with every field type, every system field, unknown keys and hostile
/// values (Int64 extremes, -0.0, subnormals, 17-digit doubles, control characters, astral
/// characters, quotes and backslashes), deterministically from a seed.
public struct RecordGenerator {
    public var random: SeededRandom
    private var counter = 0

    public init(seed: UInt64) { random = SeededRandom(seed: seed) }

    static let types = ["Chat", "Message", "Reaction", "Attachment", "cloudkit.share", "Item", "JournalEntry"]
    static let zones = ["_defaultZone", "Chats", "Work", "Family", "ShoppingList", "Zone ✓ 日本"]
    static let actions: [Reference.Action] = [.none, .deleteSelf, .validate, Reference.Action(rawValue: "FUTURE_ACTION")]
    static let pieces = [
        "hello", "Hello", "world", " ", "\"", "\\", "/", "\n", "\t", "\r", "\u{08}", "\u{0C}", "\u{00}", "\u{1F}",
        "\u{7F}", "é", "ß", "日本語", "Ελλάδα", "😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "𝄞", "\u{2028}", "\u{2029}", "\u{FEFF}",
        "<tag>", "&amp;", "</record>", "%@", "${f}", "0", "-1", "null", "true", "{}", "[]",
    ]

    /// A string of random pieces, sometimes empty.
    public mutating func string(maxPieces: Int = 6) -> String {
        let n = random.below(maxPieces + 1)
        var s = ""
        for _ in 0..<n { s += random.pick(Self.pieces) }
        return s
    }

    public mutating func int64() -> Int64 {
        switch random.below(6) {
        case 0: return random.pick([Int64.max, Int64.min, 0, -1, 1, 9_007_199_254_740_993])
        case 1: return Int64(bitPattern: random.next())
        default: return Int64(random.below(1_000_000)) - 500_000
        }
    }

    public mutating func double() -> Double {
        switch random.below(8) {
        case 0: return random.pick([-0.0, 0.0, Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude, 2.2250738585072014e-308, 1.7976931348623157e308,
                                    0.1, 0.30000000000000004, 1e-7, 1e21, 123456789012345678.0, 3.141592653589793])
        case 1:
            // Any finite bit pattern.
            while true {
                let d = Double(bitPattern: random.next())
                if d.isFinite { return d }
            }
        case 2: return Double(random.below(1000)) / 8
        default: return Double(random.next() >> 11) / Double(1 << 53) * 200 - 100
        }
    }

    public mutating func timestamp() -> Int64 { 1_500_000_000_000 + Int64(random.below(300_000_000)) * 1000 + Int64(random.below(1000)) }

    public mutating func base64() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var s = ""
        for _ in 0..<(random.below(8) * 4) { s.append(random.pick(alphabet)) }
        return s
    }

    public mutating func zoneID() -> ZoneID {
        var zone = ZoneID(zoneName: random.pick(Self.zones))
        if random.chance(0.8) { zone.ownerRecordName = "_" + String(random.next(), radix: 16) }
        if random.chance(0.3) { zone.zoneType = random.pick(["DEFAULT_ZONE", "REGULAR_CUSTOM_ZONE"]) }
        if random.chance(0.05) { zone.unknownKeys = unknownKeys() }
        return zone
    }

    public mutating func reference() -> Reference {
        var r = Reference(recordName: name())
        if random.chance(0.5) { r.zoneID = zoneID() }
        if random.chance(0.8) { r.action = random.pick(Self.actions) }
        if random.chance(0.05) { r.unknownKeys = unknownKeys() }
        return r
    }

    public mutating func asset() -> Asset {
        var a = Asset()
        if random.chance(0.9) { a.fileChecksum = base64() }
        if random.chance(0.9) { a.size = Int64(random.below(50_000_000)) }
        if random.chance(0.3) { a.referenceChecksum = base64() }
        if random.chance(0.3) { a.wrappingKey = base64() }
        if random.chance(0.3) { a.receipt = string() }
        if random.chance(0.5) { a.downloadURL = "https://example.invalid/\(random.below(1000))/${f}" }
        if random.chance(0.05) { a.unknownKeys = unknownKeys() }
        return a
    }

    public mutating func location() -> Location {
        var l = Location(latitude: double(), longitude: double())
        if random.chance(0.5) { l.horizontalAccuracy = double() }
        if random.chance(0.5) { l.verticalAccuracy = double() }
        if random.chance(0.5) { l.altitude = double() }
        if random.chance(0.5) { l.speed = double() }
        if random.chance(0.5) { l.course = double() }
        if random.chance(0.5) { l.timestamp = timestamp() }
        if random.chance(0.05) { l.unknownKeys = unknownKeys() }
        return l
    }

    public mutating func name() -> String {
        counter += 1
        if random.chance(0.8) {
            return String(random.next(), radix: 16) + "-" + String(counter)
        }
        return string(maxPieces: 3) + "#\(counter)"
    }

    public mutating func json(depth: Int = 0) -> JSONValue {
        switch random.below(depth > 2 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(random.chance(0.5))
        case 2: return .number(random.chance(0.5) ? JSONNumber(int64()) : JSONNumber(double()))
        case 3: return .string(string())
        case 4: return .array((0..<random.below(4)).map { _ in json(depth: depth + 1) })
        default: return .object(unknownKeys(depth: depth + 1))
        }
    }

    public mutating func unknownKeys(depth: Int = 0) -> JSONObject {
        var object = JSONObject()
        for i in 0..<(1 + random.below(3)) {
            object.append(key: "x" + string(maxPieces: 2) + "\(i)", value: json(depth: depth))
        }
        return object
    }

    /// A value of `kind` (scalar).
    public mutating func scalar(_ kind: FieldType.Kind) -> FieldValue {
        switch kind {
        case .string: return .string(string())
        case .int64: return .int64(int64())
        case .double: return .double(double())
        case .timestamp: return .timestamp(timestamp())
        case .bytes, .encryptedBytes: return .bytes(base64())
        case .reference: return .reference(reference())
        case .asset: return .asset(asset())
        case .location: return .location(location())
        case .unknown: return .json(json())
        }
    }

    /// A field of any type, sometimes with unknown keys or without a type tag.
    public mutating func field() -> RecordField {
        let roll = random.below(24)
        if roll < 9 {
            let kind: FieldType.Kind = [.string, .int64, .double, .timestamp, .bytes, .encryptedBytes, .reference, .asset, .location][roll]
            let type = FieldType.allStandard[roll]
            var field = RecordField(scalar(kind), type: type)
            if random.chance(0.03) { field.unknownKeys = unknownKeys() }
            return field
        }
        if roll < 18 {
            let kind: FieldType.Kind = [.string, .int64, .double, .timestamp, .bytes, .encryptedBytes, .reference, .asset, .location][roll - 9]
            let type = FieldType.allStandard[roll]
            return RecordField(.list((0..<random.below(4)).map { _ in scalar(kind) }), type: type)
        }
        switch roll {
        case 18: return RecordField(.json(.array([])), type: .unknownList)
        case 19: return RecordField(.json(json()), type: FieldType(rawValue: "FUTURE_TYPE_\(random.below(3))"))
        case 20: return RecordField(.int64(int64()), type: FieldType(rawValue: "NUMBER_INT64"))
        case 21: return RecordField(.string(string()), type: nil)
        case 22: return RecordField(.json(.null), type: .string)
        default: return RecordField(.int64(int64()), type: nil)
        }
    }

    public mutating func stamp() -> RecordStamp {
        var s = RecordStamp()
        if random.chance(0.95) { s.timestamp = timestamp() }
        if random.chance(0.9) { s.userRecordName = "_" + String(random.next(), radix: 16) }
        if random.chance(0.4) { s.deviceID = random.chance(0.5) ? "2" : String(random.next(), radix: 16) + String(random.next(), radix: 16) }
        if random.chance(0.03) { s.unknownKeys = unknownKeys() }
        return s
    }

    /// A record; about 3% are tombstones without type or fields.
    public mutating func record() -> Record {
        var r = Record(recordName: name())
        if random.chance(0.97) {
            r.recordType = random.pick(Self.types)
            var fields = RecordFields()
            for i in 0..<random.below(8) {
                fields.entries.append(.init(name: (random.chance(0.8) ? "f\(i)" : string(maxPieces: 2) + "\(i)"), field: field()))
            }
            r.fields = fields
            if random.chance(0.7) { r.pluginFields = .object(JSONObject()) }
        } else {
            r.deleted = true
        }
        if random.chance(0.9) { r.zoneID = zoneID() }
        if random.chance(0.9) { r.recordChangeTag = String(random.next() % 1_000_000, radix: 36) }
        if random.chance(0.9) { r.created = stamp() }
        if random.chance(0.9) { r.modified = stamp() }
        if r.deleted == nil && random.chance(0.3) { r.deleted = false }
        if random.chance(0.3) { r.parent = reference() }
        if random.chance(0.05) { r.share = reference() }
        if random.chance(0.05) { r.shortGUID = base64() }
        if random.chance(0.05) { r.unknownKeys = unknownKeys() }
        return r
    }

    /// `count` records as NDJSON text.
    public mutating func ndjson(count: Int) -> [UInt8] {
        var out = JSONOutput(capacity: count * 512)
        for _ in 0..<count {
            RecordJSON.encode(record(), into: &out)
            out.append(0x0A)
        }
        return out.array
    }
}
