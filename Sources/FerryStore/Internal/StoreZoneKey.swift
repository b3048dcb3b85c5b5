import FerryRecords

/// A zone of the store as its `zones` table identifies it: database, name and owner (`''` for
/// none), the names by their bytes, as the table's columns compare them (not as Swift strings,
/// which take "é" and "e" + U+0301 for one).
struct StoreZoneKey: Hashable {
    var database: Int64
    var name: ExactName
    var owner: ExactName

    init(database: Int64, name: String, owner: String) {
        self.database = database
        self.name = ExactName(name)
        self.owner = ExactName(owner)
    }

    /// The key of `zone` in `database`.
    init(database: Int64, zone: ZoneID) {
        self.init(database: database, name: zone.zoneName, owner: StoreCodec.ownerColumn(zone))
    }
}
