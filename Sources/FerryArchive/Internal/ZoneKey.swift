import FerryRecords

/// What makes two records land in the same records member: database, zone name and owner.
struct ZoneKey: Hashable {
    var database: String
    var zoneName: String
    var owner: String?

    init(database: String, zoneID: ZoneID?) {
        self.database = database
        zoneName = zoneID?.zoneName ?? ZoneID.defaultZoneName
        owner = zoneID?.ownerRecordName
    }
}
