import FerryRecords

/// Generates a random history of changes over several zones, deterministically from a seed, in
/// two forms that mean the same — Ferry's change-log lines and CloudKit Web Services responses —
/// with the state expected at every checkpoint.
///
/// The history is a sequence of fetches. A zone fetch is one or more batches (the last with
/// `moreComing: false`); a batch creates records, modifies about a third of what it touches and
/// deletes about a tenth, each record at most once, and ends with a checkpoint carrying a fresh
/// opaque token. Now and then the database changes: a zone is deleted or purged (its records go)
/// and later created again, each change ending with a database-wide checkpoint.
///
/// Ferry's form: `recordSaved` / `recordDeleted` (record type given half of the time) /
/// `zoneSaved` / `zoneDeleted` / `zonePurged` / `checkpoint` events, one per line. CloudKit's form:
/// a batch is a `records/changes` page (`records`, `syncToken`, `moreComing`; tombstones are
/// `{"recordName", "zoneID", "deleted": true}`, a `recordType` sometimes), or now and then a
/// `changes/zone` response; database changes are `changes/database` pages (`zones`, `syncToken`)
/// or legacy `zones/changes` ones (`metaSyncToken`). Records carry every field type with hostile
/// values, references and parents between records of a zone, and names that differ only in
/// Unicode normalization.
public struct HistoryGenerator: ~Copyable {
    /// What to generate.
    public struct Configuration: Sendable {
        /// The number of zones.
        public var zones: Int
        /// The number of batches (zone fetch pages) to generate.
        public var batches: Int
        /// Changes per batch, at most.
        public var changesPerBatch: Int
        /// The chance that a database change (zone deletion, purge, re-creation) comes before a batch.
        public var zoneChangeChance: Double
        /// Whether the expected state is kept at every checkpoint (else only at the end).
        public var keepsSnapshots: Bool
        /// Whether records get fields of every type with hostile values (else a few plain fields).
        public var hostileFields: Bool
        /// When ``keepsSnapshots`` is off: also keep the state at the first zone checkpoint after
        /// this many events (for checking `--until` on large histories).
        public var snapshotAfterEvents: Int?

        /// Creates a configuration.
        public init(zones: Int = 3, batches: Int = 40, changesPerBatch: Int = 12, zoneChangeChance: Double = 0.06,
                    keepsSnapshots: Bool = true, hostileFields: Bool = true, snapshotAfterEvents: Int? = nil) {
            self.zones = zones
            self.batches = batches
            self.changesPerBatch = changesPerBatch
            self.zoneChangeChance = zoneChangeChance
            self.keepsSnapshots = keepsSnapshots
            self.hostileFields = hostileFields
            self.snapshotAfterEvents = snapshotAfterEvents
        }
    }

    /// A checkpoint of the history and the state at it.
    public struct Checkpoint: Sendable {
        /// The token.
        public var token: String
        /// The zone the token belongs to; `nil` for a database-wide token.
        public var zoneName: String?
        /// `moreComing` of the batch.
        public var moreComing: Bool
        /// The records live at this checkpoint, in replay's output order (empty unless
        /// ``Configuration/keepsSnapshots``, except for the last checkpoint).
        public var snapshot: [Record]
    }

    /// A generated history.
    public struct History: Sendable {
        /// Ferry's change-log form, one event per line.
        public var ferryLines: [UInt8]
        /// The CloudKit form, one response per line.
        public var cloudKitLines: [UInt8]
        /// Every checkpoint, in history order (the same tokens in both forms).
        public var checkpoints: [Checkpoint]
        /// The records live at the end, in replay's output order.
        public var finalSnapshot: [Record]
        /// The latest token of each zone that has one, and whether the zone ended deleted.
        public var zoneTokens: [String: (token: String?, isDeleted: Bool)]
        /// Events in Ferry's form.
        public var eventCount: Int
        /// Records created, modified and deleted (counts of changes, zone deletions not included).
        public var created = 0, modified = 0, deleted = 0
    }

    /// The owner of every generated zone.
    public static let owner = "_historyOwner"

    private var random: SeededRandom
    private var records: RecordGenerator
    private let configuration: Configuration
    private var zoneNames: [String]
    /// The model: per zone, the live records.
    private var live: [LiveRecords]
    private var zoneIsDeleted: [Bool]
    private var zoneTokens: [String?]
    private var clock: Int64 = 1_600_000_000_000
    private var tokenCounter = 0
    private var snapshotTaken = false
    private var nameCounter = 0
    private var ferry = JSONOutput(capacity: 1 << 16)
    private var cloudKit = JSONOutput(capacity: 1 << 16)
    private var history = History(ferryLines: [], cloudKitLines: [], checkpoints: [], finalSnapshot: [], zoneTokens: [:], eventCount: 0)

    /// Generates the history for `seed`.
    public static func generate(seed: UInt64, configuration: Configuration = .init()) -> History {
        var generator = HistoryGenerator(seed: seed, configuration: configuration)
        return generator.run()
    }

    private init(seed: UInt64, configuration: Configuration) {
        random = SeededRandom(seed: seed)
        records = RecordGenerator(seed: seed ^ 0x5EED_5EED)
        self.configuration = configuration
        let names = ["Chats", "Work", "Family", "Zone ✓ 日本", "Inbox", "Notes", "Trips", "Photos"]
        zoneNames = (0..<max(1, configuration.zones)).map { $0 < names.count ? names[$0] : "Zone\($0)" }
        live = Array(repeating: LiveRecords(), count: zoneNames.count)
        zoneIsDeleted = Array(repeating: false, count: zoneNames.count)
        zoneTokens = Array(repeating: nil, count: zoneNames.count)
    }

    private func zoneID(_ zone: Int) -> ZoneID {
        ZoneID(zoneName: zoneNames[zone], ownerRecordName: Self.owner)
    }

    private mutating func run() -> History {
        databaseChange(Array(zoneNames.indices).map { ($0, .created) })
        var batches = 0
        while batches < configuration.batches {
            if random.chance(configuration.zoneChangeChance) { randomDatabaseChange() }
            let zones = zoneNames.indices.filter { !zoneIsDeleted[$0] }
            guard let zone = zones.isEmpty ? nil : random.pick(zones) else {
                databaseChange([(random.below(zoneNames.count), .created)])
                continue
            }
            // One fetch: a few pages, the last without moreComing.
            let pages = 1 + (random.chance(0.3) ? random.below(3) : 0)
            for page in 0..<pages where batches < configuration.batches {
                batch(zone: zone, moreComing: page < pages - 1 && batches < configuration.batches - 1)
                batches += 1
            }
        }
        history.ferryLines = ferry.array
        history.cloudKitLines = cloudKit.array
        history.finalSnapshot = snapshot()
        if !history.checkpoints.isEmpty { history.checkpoints[history.checkpoints.count - 1].snapshot = history.finalSnapshot }
        for zone in zoneNames.indices {
            history.zoneTokens[zoneNames[zone]] = (zoneTokens[zone], zoneIsDeleted[zone])
        }
        return history
    }

    private enum ZoneChange { case created, deleted, purged }

    private mutating func randomDatabaseChange() {
        let zone = random.below(zoneNames.count)
        if zoneIsDeleted[zone] {
            databaseChange([(zone, .created)])
        } else {
            databaseChange([(zone, random.chance(0.3) ? .purged : .deleted)])
        }
    }

    /// Zone changes and a database checkpoint, in both forms.
    private mutating func databaseChange(_ changes: [(Int, ZoneChange)]) {
        let token = nextToken("db")
        let legacy = random.chance(0.3)
        cloudKit.append("{\"zones\":[")
        for (i, (zone, change)) in changes.enumerated() {
            switch change {
            case .created:
                zoneIsDeleted[zone] = false
                ferry.append("{\"event\":\"zoneSaved\",\"zoneID\":")
            case .deleted:
                zoneIsDeleted[zone] = true
                live[zone].removeAll()
                ferry.append("{\"event\":\"zoneDeleted\",\"zoneID\":")
            case .purged:
                zoneIsDeleted[zone] = true
                live[zone].removeAll()
                zoneTokens[zone] = nil
                ferry.append("{\"event\":\"zonePurged\",\"zoneID\":")
            }
            RecordJSON.encode(zoneID(zone), into: &ferry)
            ferry.append("}\n")
            history.eventCount += 1
            if i > 0 { cloudKit.append(UInt8(ascii: ",")) }
            cloudKit.append("{\"zoneID\":")
            RecordJSON.encode(zoneID(zone), into: &cloudKit)
            switch change {
            case .created: cloudKit.append("}")
            case .deleted: cloudKit.append(",\"deleted\":true}")
            case .purged: cloudKit.append(legacy ? ",\"deleted\":true,\"purged\":true}" : ",\"purged\":true}")
            }
        }
        ferry.append("{\"event\":\"checkpoint\",\"syncToken\":")
        ferry.appendString(token)
        ferry.append(",\"moreComing\":false}\n")
        cloudKit.append(legacy ? "],\"metaSyncToken\":" : "],\"syncToken\":")
        cloudKit.appendString(token)
        cloudKit.append(",\"moreComing\":false}\n")
        checkpoint(token: token, zone: nil, moreComing: false)
    }

    /// One page of changes to `zone` and its checkpoint, in both forms.
    private mutating func batch(zone: Int, moreComing: Bool) {
        var touched: Set<[UInt8]> = []
        var changes: [(name: String, record: Record?, type: String?)] = []
        for _ in 0..<(1 + random.below(configuration.changesPerBatch)) {
            let roll = random.below(100)
            let key = roll < 40 ? live[zone].randomName(using: &random, excluding: touched) : nil
            if roll < 30, let key {
                touched.insert(key)
                var record = live[zone].records[key]!
                modify(&record, zone: zone)
                live[zone].records[key] = record
                changes.append((record.recordName, record, nil))
                history.modified += 1
            } else if roll < 40, let key {
                touched.insert(key)
                let record = live[zone].remove(key)
                changes.append((record.recordName, nil, random.chance(0.5) ? record.recordType : nil))
                history.deleted += 1
            } else {
                let record = newRecord(zone: zone)
                let key = Array(record.recordName.utf8)
                touched.insert(key)
                live[zone].insert(record, named: key)
                changes.append((record.recordName, record, nil))
                history.created += 1
            }
        }
        let token = nextToken(zoneNames[zone])
        // Ferry's form.
        for change in changes {
            if let record = change.record {
                ferry.append("{\"event\":\"recordSaved\",\"record\":")
                RecordJSON.encode(record, into: &ferry)
                ferry.append("}\n")
            } else {
                ferry.append("{\"event\":\"recordDeleted\",\"recordName\":")
                ferry.appendString(change.name)
                ferry.append(",\"zoneID\":")
                RecordJSON.encode(zoneID(zone), into: &ferry)
                if let type = change.type {
                    ferry.append(",\"recordType\":")
                    ferry.appendString(type)
                }
                ferry.append("}\n")
            }
            history.eventCount += 1
        }
        ferry.append("{\"event\":\"checkpoint\",\"zoneID\":")
        RecordJSON.encode(zoneID(zone), into: &ferry)
        ferry.append(",\"syncToken\":")
        ferry.appendString(token)
        ferry.append(moreComing ? ",\"moreComing\":true}\n" : ",\"moreComing\":false}\n")
        history.eventCount += 1
        // CloudKit's form: a records/changes page, sometimes a changes/zone response; records
        // sometimes leave out the zone the page names.
        let asZoneChanges = random.chance(0.2)
        let pageNamesZone = asZoneChanges || random.chance(0.5)
        cloudKit.append(asZoneChanges ? "{\"zones\":[{\"zoneID\":" : "{")
        if asZoneChanges {
            RecordJSON.encode(zoneID(zone), into: &cloudKit)
            cloudKit.append(",")
        } else if pageNamesZone {
            cloudKit.append("\"zoneID\":")
            RecordJSON.encode(zoneID(zone), into: &cloudKit)
            cloudKit.append(",")
        }
        cloudKit.append("\"records\":[")
        for (i, change) in changes.enumerated() {
            if i > 0 { cloudKit.append(UInt8(ascii: ",")) }
            if var record = change.record {
                if pageNamesZone && random.chance(0.3) { record.zoneID = nil }
                RecordJSON.encode(record, into: &cloudKit)
            } else {
                cloudKit.append("{\"recordName\":")
                cloudKit.appendString(change.name)
                if let type = change.type {
                    cloudKit.append(",\"recordType\":")
                    cloudKit.appendString(type)
                }
                cloudKit.append(",\"zoneID\":")
                RecordJSON.encode(zoneID(zone), into: &cloudKit)
                cloudKit.append(",\"deleted\":true}")
            }
        }
        cloudKit.append("],\"syncToken\":")
        cloudKit.appendString(token)
        cloudKit.append(moreComing ? ",\"moreComing\":true}" : ",\"moreComing\":false}")
        cloudKit.append(asZoneChanges ? "]}\n" : "\n")
        zoneTokens[zone] = token
        checkpoint(token: token, zone: zone, moreComing: moreComing)
    }

    private mutating func checkpoint(token: String, zone: Int?, moreComing: Bool) {
        if zone == nil { history.eventCount += 1 }
        history.checkpoints.append(Checkpoint(token: token, zoneName: zone.map { zoneNames[$0] }, moreComing: moreComing,
                                              snapshot: keepsSnapshot(zone: zone) ? snapshot() : []))
    }

    /// Whether the checkpoint being added keeps the state: every one with ``Configuration/keepsSnapshots``,
    /// else the first zone checkpoint after ``Configuration/snapshotAfterEvents``.
    private mutating func keepsSnapshot(zone: Int?) -> Bool {
        if configuration.keepsSnapshots { return true }
        guard let after = configuration.snapshotAfterEvents, zone != nil, !snapshotTaken,
              history.eventCount >= after else { return false }
        snapshotTaken = true
        return true
    }

    /// An opaque token, unique in the history.
    private mutating func nextToken(_ scope: String) -> String {
        tokenCounter += 1
        return "\(scope)~" + String(random.next() & 0xFFFF_FFFF, radix: 36) + "~\(tokenCounter)"
    }

    /// The live records in replay's order: zone by name bytes, then record name bytes.
    private func snapshot() -> [Record] {
        let zones = zoneNames.indices.sorted { zoneNames[$0].utf8.lexicographicallyPrecedes(zoneNames[$1].utf8) }
        var result: [Record] = []
        for zone in zones {
            result += live[zone].names.sorted { $0.lexicographicallyPrecedes($1) }.map { live[zone].records[$0]! }
        }
        return result
    }

    private mutating func nextName() -> String {
        nameCounter += 1
        switch random.below(10) {
        case 0: return "café-\(nameCounter)" // composed é
        case 1: return "cafe\u{301}-\(nameCounter)" // decomposed: another name
        case 2 where configuration.hostileFields: return records.string(maxPieces: 2) + "#\(nameCounter)"
        default: return String(random.next() & 0xFFFF_FFFF_FFFF, radix: 16) + "-\(nameCounter)"
        }
    }

    private mutating func newRecord(zone: Int) -> Record {
        let type = random.pick(["Chat", "Message", "Reaction", "Attachment", "Note"])
        var record = Record(recordName: nextName(), recordType: type, zoneID: zoneID(zone))
        record.created = RecordStamp(timestamp: tick(), userRecordName: "_user\(random.below(5))")
        record.fields = RecordFields()
        for i in 0..<random.below(5) {
            if configuration.hostileFields {
                record.fields!.entries.append(.init(name: "f\(i)", field: records.field()))
            } else {
                record.fields!.entries.append(.init(name: "f\(i)", field: RecordField(.string(records.string()), type: .string)))
            }
        }
        // References to live records of the zone: fields (sometimes DELETE_SELF) and parents.
        if let target = live[zone].randomRecord(using: &random), random.chance(0.4) {
            let action: Reference.Action = random.chance(0.5) ? .deleteSelf : .none
            record.fields!.entries.append(.init(name: "ref", field: RecordField(.reference(Reference(recordName: target.recordName, action: action)),
                                                                            type: .reference)))
        }
        if let target = live[zone].randomRecord(using: &random), random.chance(0.2) {
            record.parent = Reference(recordName: target.recordName)
        }
        stamp(&record)
        return record
    }

    private mutating func modify(_ record: inout Record, zone: Int) {
        if record.fields == nil { record.fields = RecordFields() }
        let value: FieldValue = configuration.hostileFields ? .string(records.string()) : .int64(Int64(random.below(1000)))
        record.fields!.entries.removeAll { $0.name == "edit" }
        record.fields!.entries.append(.init(name: "edit", field: RecordField(value, type: configuration.hostileFields ? .string : .int64)))
        stamp(&record)
    }

    /// A fresh change tag and a later modification time.
    private mutating func stamp(_ record: inout Record) {
        record.recordChangeTag = String(random.next() & 0xFF_FFFF_FFFF, radix: 36)
        record.modified = RecordStamp(timestamp: tick(), userRecordName: "_user\(random.below(5))")
    }

    private mutating func tick() -> Int64 {
        clock += Int64(1 + random.below(60_000))
        return clock
    }
}

/// The live records of one zone, by the bytes of their names, with their names in an array so
/// that a random one is picked in constant time (histories of millions of events stay linear).
private struct LiveRecords {
    var records: [[UInt8]: Record] = [:]
    private(set) var names: [[UInt8]] = []
    private var positions: [[UInt8]: Int] = [:]

    mutating func insert(_ record: Record, named name: [UInt8]) {
        if records.updateValue(record, forKey: name) == nil {
            positions[name] = names.count
            names.append(name)
        }
    }

    mutating func remove(_ name: [UInt8]) -> Record {
        let record = records.removeValue(forKey: name)!
        let position = positions.removeValue(forKey: name)!
        let last = names.removeLast()
        if position < names.count {
            names[position] = last
            positions[last] = position
        }
        return record
    }

    mutating func removeAll() {
        records = [:]
        names = []
        positions = [:]
    }

    /// A random live name not in `excluded`, or `nil` when a few tries find none.
    func randomName(using random: inout SeededRandom, excluding excluded: Set<[UInt8]>) -> [UInt8]? {
        guard !names.isEmpty else { return nil }
        for _ in 0..<8 {
            let name = names[random.below(names.count)]
            if !excluded.contains(name) { return name }
        }
        return names.first { !excluded.contains($0) }
    }

    func randomRecord(using random: inout SeededRandom) -> Record? {
        names.isEmpty ? nil : records[names[random.below(names.count)]]
    }
}
