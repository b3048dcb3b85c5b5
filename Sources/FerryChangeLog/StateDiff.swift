import FerryInternals
import FerryPipeline
import FerryRecords

/// The differences between two sets of records (two states, exports or snapshots): records only
/// in the first, only in the second, and in both but changed, with the fields and system keys
/// that differ.
///
/// Records are matched by zone (name and owner) and `recordName`, compared by their bytes, and
/// compared as JSON values: key order does not matter, numbers compare by value. An input that
/// holds a record more than once is not a state and is refused (which version would be compared
/// is unknown). Memory is proportional to the records of the first input (held as compact JSON);
/// the second is streamed.
///
/// ```swift
/// let diff = try StateDiff(comparing: readerA, with: readerB)
/// if !diff.isIdentical { print(diff.changed.map(\.recordName)) }
/// ```
public struct StateDiff: Sendable {
    /// A record present in one input only.
    public struct Entry: Sendable, Equatable {
        /// The record's database, when its input tells databases apart (stores, archives).
        public var database: String?
        /// The record's zone.
        public var zoneID: ZoneID
        /// The record's name.
        public var recordName: String
        /// The record's type, when it has one.
        public var recordType: String?
    }

    /// A record present in both inputs with different contents.
    public struct Change: Sendable, Equatable {
        /// The record's database (in the second input, else the first), when an input tells.
        public var database: String?
        /// The record's zone.
        public var zoneID: ZoneID
        /// The record's name.
        public var recordName: String
        /// The record's type (in the second input).
        public var recordType: String?
        /// Fields added, removed or changed, by name, in byte order.
        public var fields: [String]
        /// System keys (and unknown top-level keys) that differ: `recordChangeTag`, `modified`, …
        public var keys: [String]
    }

    /// Records only in the first input, by zone then name.
    public private(set) var onlyInA: [Entry] = []
    /// Records only in the second input, by zone then name.
    public private(set) var onlyInB: [Entry] = []
    /// Records in both whose contents differ, by zone then name.
    public private(set) var changed: [Change] = []
    /// Records in both with the same contents.
    public private(set) var identicalCount = 0
    /// Records read from the first input.
    public private(set) var countA = 0
    /// Records read from the second input.
    public private(set) var countB = 0

    /// Whether both inputs hold the same records with the same contents.
    public var isIdentical: Bool { onlyInA.isEmpty && onlyInB.isEmpty && changed.isEmpty }

    private struct Key: Hashable, Comparable {
        var zone: ZoneKey
        var name: ExactName
        /// The database, when the input tells databases apart.
        var database: ExactName?
        /// The zone and name alone.
        var withoutDatabase: Key { Key(zone: zone, name: name, database: nil) }
        static func < (a: Key, b: Key) -> Bool {
            if a.zone != b.zone { return a.zone < b.zone }
            if a.name != b.name { return a.name < b.name }
            switch (a.database, b.database) {
            case (nil, nil), (_, nil): return false
            case (nil, _): return true
            case (let x?, let y?): return x < y
            }
        }
    }

    private struct Held {
        var bytes: [UInt8]
        var zoneID: ZoneID
        var recordType: String?
        var database: String?
        var index: Int
    }

    private enum Outcome {
        case onlyInB(Entry)
        case changed(Change)
        case identical
    }

    /// Compares the records `a` returns with those `b` returns.
    ///
    /// A record is one zone and name of one database, when its input tells databases apart
    /// (stores, archives): a store may hold the same name in the same zone of two databases. A
    /// record whose input does not tell matches the record of that zone and name in the other
    /// input, whatever its database.
    ///
    /// - Throws: what the readers throw (bad input, with its position), and a ``ChangeLogError``:
    ///   ``ChangeLogError/Code-swift.enum/duplicateRecord`` naming the records an input holds
    ///   more than once and where, once that input has been read;
    ///   ``ChangeLogError/Code-swift.enum/ambiguousRecord`` for a record of `b` that does not say
    ///   its database when `a` holds its zone and name in several.
    public init(comparing a: any RecordReader, with b: any RecordReader) throws {
        var held: [Key: Held] = [:]
        /// The keys of `held` by zone and name alone.
        var databases: [Key: [Key]] = [:]
        var repeats = Repeats()
        while let record = try a.next() {
            countA += 1
            let key = Self.key(of: record, database: a.currentDatabase)
            if let first = held[key] {
                repeats.note(key, first: first.index, again: a.recordIndex)
                continue
            }
            held[key] = Held(bytes: Self.encode(record), zoneID: record.zoneID ?? .default, recordType: record.recordType,
                             database: a.currentDatabase, index: a.recordIndex)
            databases[key.withoutDatabase, default: []].append(key)
        }
        try repeats.check(a.sourceName)
        /// Outcomes by the key of the record of `a` matched, else of the record of `b`.
        var outcomes: [Key: Outcome] = [:]
        /// The records of `b` read, by their key, with their index.
        var seen: [Key: Int] = [:]
        while let record = try b.next() {
            countB += 1
            let key = Self.key(of: record, database: b.currentDatabase)
            if let first = seen[key] {
                repeats.note(key, first: first, again: b.recordIndex)
                continue
            }
            seen[key] = b.recordIndex
            var matched: Key?
            if held[key] != nil {
                matched = key
            } else if key.database == nil {
                let candidates = databases[key] ?? []
                guard candidates.count < 2 else {
                    throw Self.ambiguous(key, at: b.recordIndex, of: b.sourceName, heldIn: candidates.count, by: a.sourceName)
                }
                matched = candidates.first
            } else if let other = held[key.withoutDatabase] {
                // Another database's record of `b` matched it already.
                guard outcomes[key.withoutDatabase] == nil else {
                    throw Self.ambiguous(key.withoutDatabase, at: other.index, of: a.sourceName, heldIn: 2, by: b.sourceName)
                }
                matched = key.withoutDatabase
            }
            if let match = matched, outcomes[match] == nil, let other = held[match] {
                outcomes[match] = try Self.compare(record, database: b.currentDatabase, with: other)
            } else {
                outcomes[key] = try Self.compare(record, database: b.currentDatabase, with: nil)
            }
        }
        try repeats.check(b.sourceName)
        onlyInA = held.filter { outcomes[$0.key] == nil }.sorted { $0.key < $1.key }
            .map { Entry(database: $0.value.database, zoneID: $0.value.zoneID, recordName: $0.key.name.string, recordType: $0.value.recordType) }
        for (_, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
            switch outcome {
            case .onlyInB(let entry): onlyInB.append(entry)
            case .changed(let change): changed.append(change)
            case .identical: identicalCount += 1
            }
        }
    }

    /// The records an input holds more than once, with the index of each time.
    private struct Repeats {
        /// The records named in the error; the rest are counted.
        static let named = 3
        var indexes: [Key: [Int]] = [:]

        mutating func note(_ key: Key, first: Int, again: Int) {
            indexes[key, default: [first]].append(again)
        }

        /// Throws when `source` held a record more than once, naming the first few in input order.
        func check(_ source: String) throws(ChangeLogError) {
            guard !indexes.isEmpty else { return }
            let repeated = indexes.sorted { $0.value[0] < $1.value[0] }
            var parts = repeated.prefix(Self.named).map { key, indexes in
                let times = indexes.count == 2 ? "twice" : "\(indexes.count) times"
                let list = indexes.dropLast().map(String.init).joined(separator: ", ") + " and \(indexes.last!)"
                return StateDiff.describe(key) + " \(times) (records \(list))"
            }
            if repeated.count > Self.named {
                let more = repeated.count - Self.named
                parts.append("\(Plural.count(more, "more record")) more than once")
            }
            let list = parts.count == 1 ? parts[0] : parts.dropLast().joined(separator: ", ") + " and " + parts.last!
            throw ChangeLogError(.duplicateRecord, "expected each record (zone and recordName) once, as a state holds it, found " + list,
                                 source: source)
        }
    }

    private static func compare(_ record: Record, database: String?, with other: Held?) throws -> Outcome {
        let zoneID = record.zoneID ?? .default
        guard let other else {
            return .onlyInB(Entry(database: database, zoneID: zoneID, recordName: record.recordName, recordType: record.recordType))
        }
        let bytes = encode(record)
        if bytes == other.bytes { return .identical }
        let (fields, keys) = try differences(other.bytes, bytes)
        if fields.isEmpty && keys.isEmpty { return .identical }
        return .changed(Change(database: database ?? other.database, zoneID: zoneID, recordName: record.recordName,
                               recordType: record.recordType, fields: fields, keys: keys))
    }

    private static func key(of record: Record, database: String?) -> Key {
        Key(zone: ZoneKey(record.zoneID ?? .default), name: ExactName(record.recordName), database: database.map { ExactName($0) })
    }

    /// A record of `source` that does not say its database, whose zone and name `other` holds in
    /// several databases: which of them to compare it with is unknown.
    private static func ambiguous(_ key: Key, at index: Int, of source: String, heldIn count: Int,
                                  by other: String) -> ChangeLogError {
        ChangeLogError(.ambiguousRecord, "expected \(describe(key)) to say its database, as \(other) holds it in "
                       + (count == 2 ? "two databases" : "\(count) databases") + ", found it without one (record \(index))",
                       source: source)
    }

    /// `record "NAME" in zone "ZONE" (owner "OWNER") of database "DB"`, for messages.
    private static func describe(_ key: Key) -> String {
        "record \"\(key.name.string)\" in zone \"\(key.zone.zoneName.string)\""
            + (key.zone.ownerRecordName.map { " (owner \"\($0.string)\")" } ?? "")
            + (key.database.map { " of database \"\($0.string)\"" } ?? "")
    }

    private static func encode(_ record: Record) -> [UInt8] {
        var out = JSONOutput(capacity: 1024)
        RecordJSON.encode(record, into: &out)
        return out.array
    }

    /// The fields and top-level keys whose JSON values differ between two encoded records.
    private static func differences(_ a: [UInt8], _ b: [UInt8]) throws -> (fields: [String], keys: [String]) {
        let x = try a.withUnsafeBytes { try RecordJSON.parseValue($0) }.objectValue ?? JSONObject()
        let y = try b.withUnsafeBytes { try RecordJSON.parseValue($0) }.objectValue ?? JSONObject()
        let mx = members(x), my = members(y)
        var keys: [String] = []
        var fields: [String] = []
        for key in union(x, y) {
            let u = mx[ExactName(key)], v = my[ExactName(key)]
            if key == "fields", u?.objectValue != nil || v?.objectValue != nil {
                let fx = u?.objectValue ?? JSONObject(), fy = v?.objectValue ?? JSONObject()
                let nx = members(fx), ny = members(fy)
                for name in union(fx, fy) where !same(nx[ExactName(name)], ny[ExactName(name)]) { fields.append(name) }
                if (u == nil) != (v == nil) && fields.isEmpty { keys.append(key) }
            } else if !same(u, v) {
                keys.append(key)
            }
        }
        return (fields.sorted { ExactName($0) < ExactName($1) }, keys)
    }

    private static func members(_ object: JSONObject) -> [ExactName: JSONValue] {
        Dictionary(object.members.map { (ExactName($0.key), $0.value) }, uniquingKeysWith: { $1 })
    }

    private static func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let x?, let y?): return JSONEquality.equal(x, y)
        default: return false
        }
    }

    /// The keys of both objects: the first's in order, then the second's new ones.
    private static func union(_ a: JSONObject, _ b: JSONObject) -> [String] {
        var seen = Set(a.members.map { ExactName($0.key) })
        var result = a.members.map(\.key)
        for member in b.members where seen.insert(ExactName(member.key)).inserted { result.append(member.key) }
        return result
    }
}
