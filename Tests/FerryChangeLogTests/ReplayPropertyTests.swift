@testable import FerryChangeLog
import FerryIO
import FerryRecords
import FerryTestSupport
import Testing

@Suite("Replaying generated histories")
struct ReplayPropertyTests {
    @Test("Replaying a whole history gives the final snapshot, in Ferry's form and as CloudKit responses",
          arguments: [1, 2] as [UInt64])
    func wholeHistory(seed: UInt64) throws {
        let history = HistoryGenerator.generate(seed: seed)
        #expect(history.eventCount > 100)
        for threads in decodingModes {
            let ferry = try replay(history.ferryLines, .init(decodingThreads: threads))
            #expect(try contents(ferry.state) == canonical(history.finalSnapshot), "Ferry form, \(threads) threads")
            let cloudKit = try replay(history.cloudKitLines, .init(decodingThreads: threads))
            #expect(try contents(cloudKit.state) == canonical(history.finalSnapshot), "CloudKit form, \(threads) threads")
        }
    }

    @Test("Replaying until any checkpoint gives the snapshot taken there", arguments: [4] as [UInt64])
    func untilEveryCheckpoint(seed: UInt64) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 15, zoneChangeChance: 0.15))
        for point in history.checkpoints {
            for lines in [history.ferryLines, history.cloudKitLines] {
                let replayer = try replay(lines, .init(until: point.token))
                #expect(replayer.reachedUntil)
                #expect(try contents(replayer.state) == canonical(point.snapshot), "until \(point.token)")
                #expect(replayer.tokens.lastCheckpoint?.syncToken == point.token)
            }
        }
    }

    @Test("A base taken at a checkpoint, plus what follows it, equals the whole replay", arguments: [6] as [UInt64])
    func baseAndSince(seed: UInt64) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 15, zoneChangeChance: 0.15))
        let full = try contents(try replay(history.ferryLines).state)
        for point in history.checkpoints.dropLast() {
            let base = try replay(history.ferryLines, .init(until: point.token)).state
            let continued = try replay(history.ferryLines, .init(since: point.token), base: base)
            #expect(try contents(continued.state) == full, "since \(point.token)")
        }
    }

    @Test("Property: over many random histories, full, until and base+since replays agree with the snapshots in both forms")
    func property() throws {
        for seed in UInt64(100)..<125 {
            var random = SeededRandom(seed: seed)
            let configuration = HistoryGenerator.Configuration(zones: 1 + random.below(4), batches: 3 + random.below(20),
                                                               changesPerBatch: 1 + random.below(15),
                                                               zoneChangeChance: Double(random.below(20)) / 100)
            let history = HistoryGenerator.generate(seed: seed, configuration: configuration)
            let threads = random.pick(decodingModes)
            let point = random.pick(history.checkpoints)
            for lines in [history.ferryLines, history.cloudKitLines] {
                let full = try replay(lines, .init(decodingThreads: threads))
                #expect(try contents(full.state) == canonical(history.finalSnapshot), "seed \(seed): full")
                let until = try replay(lines, .init(until: point.token, decodingThreads: threads))
                #expect(try contents(until.state) == canonical(point.snapshot), "seed \(seed): until \(point.token)")
                if point.token != history.checkpoints.last?.token {
                    let since = try replay(lines, .init(since: point.token, decodingThreads: threads), base: until.state)
                    #expect(try contents(since.state) == canonical(history.finalSnapshot), "seed \(seed): since \(point.token)")
                    #expect(since.tokens == full.tokens, "seed \(seed): tokens after since")
                }
            }
        }
    }

    @Test("CloudKit responses and Ferry's form give the same tokens, zone by zone", arguments: [8, 9] as [UInt64])
    func sameTokens(seed: UInt64) throws {
        let history = HistoryGenerator.generate(seed: seed, configuration: .init(zoneChangeChance: 0.15))
        let ferry = try replay(history.ferryLines).tokens
        let cloudKit = try replay(history.cloudKitLines).tokens
        #expect(ferry == cloudKit)
        for zone in ferry.zones {
            let expected = history.zoneTokens[zone.zoneID.zoneName]
            #expect(zone.syncToken == expected?.token, "\(zone.zoneID.zoneName)")
            #expect(zone.isDeleted == expected?.isDeleted, "\(zone.zoneID.zoneName)")
        }
    }

    @Test("Applying a history twice gives the same state as applying it once", arguments: [10, 11] as [UInt64])
    func idempotent(seed: UInt64) throws {
        let history = HistoryGenerator.generate(seed: seed)
        let once = try replay(history.ferryLines)
        let twice = Replayer()
        try twice.apply(MemorySource(history.ferryLines))
        try twice.apply(MemorySource(history.cloudKitLines))
        try twice.finish()
        #expect(try contents(twice.state) == contents(once.state))
        // A history replayed on the state it produced changes nothing either.
        let again = try replay(history.ferryLines, base: once.state)
        #expect(try contents(again.state) == contents(once.state))
    }

    @Test("Histories read the same fed in every chunk size", arguments: Array(1...12) + [31, 64, 1000, 4096])
    func chunkSizes(chunk: Int) throws {
        let history = HistoryGenerator.generate(seed: 12, configuration: .init(batches: 6, changesPerBatch: 5))
        let expected = canonical(history.finalSnapshot)
        for threads in decodingModes {
            for lines in [history.ferryLines, history.cloudKitLines] {
                let replayer = Replayer(configuration: .init(decodingThreads: threads))
                try replayer.apply(MemorySource(lines, chunkSize: chunk))
                try replayer.finish()
                #expect(try contents(replayer.state) == expected, "chunk \(chunk), \(threads) threads")
            }
            let reader = ChangeLogReader(source: MemorySource(history.ferryLines, chunkSize: chunk), configuration: .init(chunkSize: 16))
            var count = 0
            while try reader.next() != nil { count += 1 }
            #expect(count == history.eventCount)
        }
    }

    @Test("The generator's histories are what the issue asks for: several zones, modifications, deletions, zone changes")
    func generatorShape() {
        let history = HistoryGenerator.generate(seed: 13, configuration: .init(batches: 200, changesPerBatch: 20, zoneChangeChance: 0.05))
        let saves = history.created + history.modified
        #expect(history.created > 0 && history.modified > 0 && history.deleted > 0)
        #expect(Double(history.modified) / Double(saves) > 0.15)
        #expect(Double(history.deleted) / Double(history.created + history.modified + history.deleted) > 0.05)
        #expect(history.checkpoints.contains { $0.zoneName == nil }) // database changes
        #expect(Set(history.checkpoints.compactMap(\.zoneName)).count >= 3)
        #expect(history.checkpoints.contains { $0.moreComing })
    }
}
