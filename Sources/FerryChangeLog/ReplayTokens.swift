import FerryIO
import FerryRecords

/// The change tokens that go with a replayed state, so a later run can continue from them.
///
/// Stored beside the state as `<state>.tokens.json` (see ``sidecarPath(for:)``):
/// `{"format":"ferry-replay-tokens","version":1,"recordCount":N,"lastCheckpoint":{…}?,
/// "database":{…}?,"zones":[{"zoneID":{…},"syncToken":"…"?,"moreComing":false,"deleted":false}]}`.
/// `recordCount` is the number of records of the state they were written with, so tokens that
/// belong to another state are noticed.
public struct ReplayTokens: Sendable, Equatable {
    /// The latest token of one zone.
    public struct ZoneToken: Sendable, Equatable {
        /// The zone.
        public var zoneID: ZoneID
        /// The zone's latest token; `nil` when the history named the zone but carried no token for it.
        public var syncToken: String?
        /// `moreComing` of that checkpoint.
        public var moreComing: Bool
        /// Whether the zone was deleted or purged (its records are gone from the state).
        public var isDeleted: Bool

        /// Creates a zone token.
        public init(zoneID: ZoneID, syncToken: String?, moreComing: Bool = false, isDeleted: Bool = false) {
            self.zoneID = zoneID
            self.syncToken = syncToken
            self.moreComing = moreComing
            self.isDeleted = isDeleted
        }
    }

    /// Every zone the history named, ordered by zone name then owner.
    public var zones: [ZoneToken]
    /// The latest database-wide checkpoint (`changes/database`, `zones/changes`).
    public var database: ChangeEvent.Checkpoint?
    /// The last checkpoint applied: pass its token as `since` to continue.
    public var lastCheckpoint: ChangeEvent.Checkpoint?
    /// The number of records of the state these tokens were written with, when known.
    public var recordCount: Int?

    /// Creates tokens.
    public init(zones: [ZoneToken] = [], database: ChangeEvent.Checkpoint? = nil, lastCheckpoint: ChangeEvent.Checkpoint? = nil,
                recordCount: Int? = nil) {
        self.zones = zones
        self.database = database
        self.lastCheckpoint = lastCheckpoint
        self.recordCount = recordCount
    }

    /// The latest token of `zone` (matched by name and owner).
    public func token(for zone: ZoneID) -> String? {
        let key = ZoneKey(zone)
        return zones.first { ZoneKey($0.zoneID) == key }?.syncToken
    }

    /// Where the tokens of the state at `statePath` are kept: `<statePath>.tokens.json`.
    public static func sidecarPath(for statePath: String) -> String { statePath + ".tokens.json" }

    /// The tokens as one line of JSON.
    public func json() -> String {
        var out = JSONOutput(capacity: 1024)
        out.append("{\"format\":\"ferry-replay-tokens\",\"version\":1")
        if let recordCount {
            out.append(",\"recordCount\":")
            out.appendInteger(Int64(recordCount))
        }
        if let last = lastCheckpoint {
            out.append(",\"lastCheckpoint\":")
            Self.encode(last, into: &out)
        }
        if let database {
            out.append(",\"database\":")
            Self.encode(database, into: &out)
        }
        out.append(",\"zones\":[")
        for (i, zone) in zones.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"zoneID\":")
            RecordJSON.encode(zone.zoneID, into: &out)
            if let token = zone.syncToken {
                out.append(",\"syncToken\":")
                out.appendString(token)
            }
            out.append(zone.moreComing ? ",\"moreComing\":true" : ",\"moreComing\":false")
            out.append(zone.isDeleted ? ",\"deleted\":true}" : ",\"deleted\":false}")
        }
        out.append("]}\n")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    private static func encode(_ checkpoint: ChangeEvent.Checkpoint, into out: inout JSONOutput) {
        out.append(UInt8(ascii: "{"))
        if let zone = checkpoint.zoneID {
            out.append("\"zoneID\":")
            RecordJSON.encode(zone, into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append("\"syncToken\":")
        out.appendString(checkpoint.syncToken)
        out.append(checkpoint.moreComing ? ",\"moreComing\":true}" : ",\"moreComing\":false}")
    }

    /// Reads tokens written by ``json()``.
    public init(parsing text: String) throws {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text)
        } catch {
            throw ChangeLogError(.invalidTokens, "expected a Ferry tokens file, found invalid JSON: \(error.message)", underlying: error)
        }
        guard value["format"]?.stringValue == "ferry-replay-tokens" else {
            var found = "none"
            if let format = value["format"] {
                var out = JSONOutput(capacity: 64)
                out.appendValue(format)
                found = String(decoding: out.bytes, as: UTF8.self)
            }
            throw ChangeLogError(.invalidTokens, "expected \"format\": \"ferry-replay-tokens\", found \(found)")
        }
        func checkpoint(_ value: JSONValue?) throws -> ChangeEvent.Checkpoint? {
            guard let value else { return nil }
            guard let token = value["syncToken"]?.stringValue else {
                throw ChangeLogError(.invalidTokens, "expected a \"syncToken\" string in a checkpoint, found none")
            }
            let zone = try value["zoneID"].map(Self.zone)
            return .init(zoneID: zone, syncToken: token, moreComing: value["moreComing"] == .bool(true))
        }
        if let count = value["recordCount"] {
            guard let number = count.numberValue?.int64Value, number >= 0 else {
                throw ChangeLogError(.invalidTokens, "expected a count of records for \"recordCount\", found \(count)")
            }
            recordCount = Int(number)
        }
        lastCheckpoint = try checkpoint(value["lastCheckpoint"])
        database = try checkpoint(value["database"])
        zones = []
        for entry in value["zones"]?.arrayValue ?? [] {
            guard let zoneValue = entry["zoneID"] else {
                throw ChangeLogError(.invalidTokens, "expected a \"zoneID\" object in a zone entry, found none")
            }
            let zone = try Self.zone(zoneValue)
            zones.append(ZoneToken(zoneID: zone, syncToken: entry["syncToken"]?.stringValue,
                                   moreComing: entry["moreComing"] == .bool(true), isDeleted: entry["deleted"] == .bool(true)))
        }
    }

    /// A zone ID read exactly as record dictionaries' zone IDs are.
    private static func zone(_ value: JSONValue) throws -> ZoneID {
        var out = JSONOutput(capacity: 256)
        out.appendValue(value)
        let bytes = out.array
        let result = bytes.withUnsafeBytes { text in
            Result { () throws(RecordFormatError) -> ZoneID in
                var s = JSONScanner(text)
                return try s.decodeZoneID()
            }
        }
        switch result {
        case .success(let zone): return zone
        case .failure(let error):
            throw ChangeLogError(.invalidTokens, "expected a zone ID object: \(error.message)", underlying: error)
        }
    }

    /// Writes the tokens to `path` atomically (through `OutputFile`).
    public func write(toPath path: String) throws {
        let file = try OutputFile(path: path)
        try file.write(json())
        try file.commit()
    }

    /// Reads tokens from `path`.
    public init(contentsOfFile path: String) throws {
        let bytes = try InputFile(path: path).readAll(limit: 1 << 30)
        do {
            try self.init(parsing: String(decoding: bytes, as: UTF8.self))
        } catch var error as ChangeLogError {
            error.source = path
            throw error
        }
    }
}
