import FerryRecords

/// Something in a history that replay can get past but a person should look at.
public struct ReplayAnomaly: Hashable, Sendable {
    /// What kind of anomaly.
    public enum Kind: String, CaseIterable, Sendable, Comparable {
        /// A delete of a record the state does not hold.
        case unknownRecordDeleted
        /// A save of a record whose `recordChangeTag` equals the one already held.
        case unchangedChangeTag
        /// A save whose `modified.timestamp` is earlier than the one already held.
        case modificationTimeWentBackwards
        /// A record whose `parent` names a record the final state does not hold.
        case danglingParent
        /// A record with a `REFERENCE` field naming a record the final state does not hold.
        case danglingReference
        /// A checkpoint whose token was already seen for the same zone (or for the database).
        case tokenSeenTwice
        /// A record event for a zone that was deleted (the zone is taken as re-created).
        case eventForDeletedZone
        /// Records of one batch that reference each other in a cycle (applied in history order).
        case referenceCycle
        /// An error entry (`serverErrorCode`) in a change response, for a zone or a record.
        case serverError

        /// Orders kinds by their raw names.
        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    /// What kind of anomaly.
    public var kind: Kind
    /// The zone involved, when there is one.
    public var zoneID: ZoneID?
    /// The record involved, when there is one.
    public var recordName: String?
    /// The change token involved, when there is one.
    public var syncToken: String?
    /// A sentence saying what was found.
    public var detail: String
    /// 1-based position of the event in the history (`nil` for checks of the final state).
    public var eventIndex: Int?

    /// Creates an anomaly.
    public init(kind: Kind, zoneID: ZoneID? = nil, recordName: String? = nil, syncToken: String? = nil,
                detail: String, eventIndex: Int? = nil) {
        self.kind = kind
        self.zoneID = zoneID
        self.recordName = recordName
        self.syncToken = syncToken
        self.detail = detail
        self.eventIndex = eventIndex
    }
}

/// The anomalies of a replay: counted per kind, the first ones listed.
public struct AnomalyReport: Sendable {
    /// How many of each kind were found.
    public private(set) var counts: [ReplayAnomaly.Kind: Int] = [:]
    /// The anomalies found, up to ``limit``, in the order found.
    public private(set) var anomalies: [ReplayAnomaly] = []
    /// The most anomalies listed (counts go on past it).
    public let limit: Int

    /// Creates an empty report listing at most `limit` anomalies.
    public init(limit: Int = 10_000) { self.limit = limit }

    /// The number of anomalies found.
    public var total: Int { counts.values.reduce(0, +) }

    /// Whether some anomalies were counted but not listed.
    public var isTruncated: Bool { total > anomalies.count }

    /// The count of one kind.
    public func count(of kind: ReplayAnomaly.Kind) -> Int { counts[kind] ?? 0 }

    /// Whether the list is full (later anomalies are only counted).
    public var isFull: Bool { anomalies.count >= limit }

    /// Counts an anomaly of `kind` without listing it.
    public mutating func count(_ kind: ReplayAnomaly.Kind) {
        counts[kind, default: 0] += 1
    }

    /// Records an anomaly.
    public mutating func add(_ anomaly: ReplayAnomaly) {
        counts[anomaly.kind, default: 0] += 1
        if anomalies.count < limit { anomalies.append(anomaly) }
    }

    /// Adds what another report found: its counts, and its anomalies while the list has room.
    mutating func merge(_ other: AnomalyReport) {
        for (kind, count) in other.counts { counts[kind, default: 0] += count }
        anomalies.append(contentsOf: other.anomalies.prefix(max(0, limit - anomalies.count)))
    }

    /// One line per kind found, e.g. `unknownRecordDeleted: 3`, for standard error.
    public var summary: String {
        counts.keys.sorted().map { "\($0.rawValue): \(counts[$0]!)" }.joined(separator: "\n")
    }

    /// The report as JSON: `{"total", "counts": {kind: n}, "truncated", "anomalies": [{kind, zoneID?,
    /// recordName?, syncToken?, eventIndex?, detail}]}`.
    public func json() -> String {
        var out = JSONOutput(capacity: 4096)
        out.append("{\"total\":")
        out.appendInteger(Int64(total))
        out.append(",\"counts\":{")
        for (i, kind) in counts.keys.sorted().enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.appendString(kind.rawValue)
            out.append(UInt8(ascii: ":"))
            out.appendInteger(Int64(counts[kind]!))
        }
        out.append(isTruncated ? "},\"truncated\":true,\"anomalies\":[" : "},\"truncated\":false,\"anomalies\":[")
        for (i, anomaly) in anomalies.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"kind\":")
            out.appendString(anomaly.kind.rawValue)
            if let zone = anomaly.zoneID {
                out.append(",\"zoneID\":")
                RecordJSON.encode(zone, into: &out)
            }
            if let name = anomaly.recordName {
                out.append(",\"recordName\":")
                out.appendString(name)
            }
            if let token = anomaly.syncToken {
                out.append(",\"syncToken\":")
                out.appendString(token)
            }
            if let index = anomaly.eventIndex {
                out.append(",\"eventIndex\":")
                out.appendInteger(Int64(index))
            }
            out.append(",\"detail\":")
            out.appendString(anomaly.detail)
            out.append(UInt8(ascii: "}"))
        }
        out.append("]}")
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
