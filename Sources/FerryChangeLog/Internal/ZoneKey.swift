import FerryRecords

/// A zone's identity for replay: its name and owner, compared by their bytes (`zoneType` and
/// unknown members do not count). Ordered by name, then owner (no owner first).
struct ZoneKey: Hashable, Comparable {
    var zoneName: ExactName
    var ownerRecordName: ExactName?

    init(_ zone: ZoneID) {
        zoneName = ExactName(zone.zoneName)
        ownerRecordName = zone.ownerRecordName.map(ExactName.init)
    }

    static func < (a: ZoneKey, b: ZoneKey) -> Bool {
        if a.zoneName != b.zoneName { return a.zoneName < b.zoneName }
        switch (a.ownerRecordName, b.ownerRecordName) {
        case (nil, nil), (_, nil): return false
        case (nil, _): return true
        case (let x?, let y?): return x < y
        }
    }
}
