/// A zone's identity: its name and owner, compared by their bytes (`zoneType` and unknown members
/// do not count). Ordered by name, then owner (no owner first).
///
/// Replay keys its zones by it, and an archive files records into one member per database and key.
package struct ZoneKey: Hashable, Comparable {
    package var zoneName: ExactName
    package var ownerRecordName: ExactName?

    @inlinable
    package init(_ zone: ZoneID) {
        zoneName = ExactName(zone.zoneName)
        ownerRecordName = zone.ownerRecordName.map { ExactName($0) }
    }

    @inlinable
    package static func < (a: ZoneKey, b: ZoneKey) -> Bool {
        if a.zoneName != b.zoneName { return a.zoneName < b.zoneName }
        switch (a.ownerRecordName, b.ownerRecordName) {
        case (nil, nil), (_, nil): return false
        case (nil, _): return true
        case (let x?, let y?): return x < y
        }
    }
}
