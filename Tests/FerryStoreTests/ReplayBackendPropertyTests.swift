import Testing
import FerryChangeLog
import FerryIO
import FerryRecords
@testable import FerryStore
import FerryTestSupport

/// The rules of replay are written once (`ReplayCore`) over two backends: `ferry replay`'s
/// in-memory state and a store (replaying into an existing store applies each change to it).
/// Fed the same histories, both must end with the same records and the same anomalies.
@Suite("One replay core, two backends")
struct ReplayBackendPropertyTests {
    /// An anomaly as both backends must report it (details name the backend: "the state" or
    /// "the store"; a zone's type is not part of its identity).
    struct Seen: Hashable, Comparable, CustomStringConvertible {
        var kind: String
        var zone: String
        var record: String
        var token: String
        var event: Int

        init(_ anomaly: ReplayAnomaly) {
            kind = anomaly.kind.rawValue
            zone = anomaly.zoneID.map { $0.zoneName + "/" + ($0.ownerRecordName ?? "") } ?? "-"
            record = anomaly.recordName ?? "-"
            token = anomaly.syncToken ?? "-"
            event = anomaly.eventIndex ?? 0
        }

        static func < (a: Seen, b: Seen) -> Bool { a.description < b.description }

        var description: String { "\(event) \(kind) \(zone) \(record) \(token)" }
    }

    /// `history` made hostile: pages (lines) repeated, so tokens come twice and records are
    /// saved again with the change tag held; pages swapped, so deletes come before saves and
    /// modification times go back; a zone's page moved after its zone was deleted.
    static func perturbed(_ history: [UInt8], random: inout SeededRandom) -> [UInt8] {
        var pages = lines(of: history)
        guard pages.count > 4 else { return history }
        for _ in 0..<(1 + random.below(3)) {
            let index = random.below(pages.count)
            pages.insert(pages[index], at: min(pages.count, index + 1 + random.below(4)))
        }
        for _ in 0..<(1 + random.below(3)) {
            let index = random.below(pages.count - 1)
            pages.swapAt(index, index + 1 + random.below(min(3, pages.count - index - 1)))
        }
        return pages.flatMap { $0 + [0x0A] }
    }

    @Test("Property: random histories (zone deletes and purges, cascades, repeated tokens, out-of-order pages) give both backends the same records and anomalies")
    func sameStatesAndAnomalies() throws {
        var kindsSeen = Set<ReplayAnomaly.Kind>()
        for seed in UInt64(1)...24 {
            var random = SeededRandom(seed: seed &* 7919)
            let history = HistoryGenerator.generate(seed: seed, configuration: .init(
                zones: 2 + Int(seed % 3), batches: 18, changesPerBatch: 10, zoneChangeChance: 0.15, keepsSnapshots: false,
                hostileFields: seed % 4 == 0))
            let form = seed % 2 == 0 ? history.cloudKitLines : history.ferryLines
            let lines = Self.perturbed(form, random: &random)
            let cascade = seed % 3 != 1

            let memory = Replayer(configuration: .init(cascade: cascade))
            try memory.apply(MemorySource(lines, name: "history", chunkSize: 4096))
            try memory.finish()

            let path = StoreFixture.newPath()
            try StoreFixture.importRecords([], into: path)
            let store = try StoreReplayTests.replay(lines, into: path, configuration: .init(cascade: cascade))

            let context = "seed \(seed), \(seed % 2 == 0 ? "CloudKit" : "Ferry") form, cascade \(cascade)"
            #expect(StoreReplayTests.expected(try memory.state.records()) == (try StoreReplayTests.state(path)), "records, \(context)")
            let inMemory = memory.anomalies.anomalies.map(Seen.init).sorted()
            let inStore = store.anomalies.anomalies.map(Seen.init).sorted()
            let difference = "only in memory \(Set(inMemory).subtracting(inStore).sorted()), only in the store \(Set(inStore).subtracting(inMemory).sorted())"
            #expect(inMemory == inStore, "anomalies, \(context): \(difference)")
            #expect(memory.appliedCount == store.appliedCount, "applied, \(context)")
            kindsSeen.formUnion(memory.anomalies.counts.keys)
            #expect(try RecordStore(path: path).verify().isIntact, "\(context)")
        }
        // The histories reach the rules this is about.
        for kind in [ReplayAnomaly.Kind.unchangedChangeTag, .modificationTimeWentBackwards, .unknownRecordDeleted, .tokenSeenTwice,
                     .eventForDeletedZone] {
            #expect(kindsSeen.contains(kind), "no history raised \(kind)")
        }
    }
}
