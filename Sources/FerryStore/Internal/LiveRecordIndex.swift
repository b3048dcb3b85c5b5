/// The live records of a new store being built by a replay, held in memory until the end of the
/// run: each as its prepared row, the journal number of its latest change, and what it points at.
/// Saves, modifications and deletions change only this map (and append to the journal); the
/// records are written once, at the end, in the order they were first created — so a record saved
/// ten times is written once, and the name index is built once, sorted. Memory is the size of the
/// final state (about the size of its JSON).
final class LiveRecordIndex {
    struct Entry {
        var row: StoreRow
        /// The journal number of the record's latest change.
        var seq: Int64
        /// When the record was first created in this run (the order records are written).
        var order: Int
        /// Records of the same zone its REFERENCE fields name (for the final check).
        var references: [String]
    }

    /// Per zone row id, the live records by name.
    var zones: [Int64: [String: Entry]] = [:]
    private var created = 0

    /// The next creation number.
    func nextOrder() -> Int {
        created += 1
        return created
    }
}
