import FerryKit
import FerryTestSupport
import Foundation
import Testing

@Suite("Replaying through FerryKit")
struct ReplayTests {
    let history = HistoryGenerator.generate(seed: 41, configuration: .init(batches: 20))

    private func historyFile() throws -> (folder: String, path: String) {
        let folder = TestFiles.folder()
        try TestFiles.write(history.ferryLines, to: folder + "/h.ndjson")
        return (folder, folder + "/h.ndjson")
    }

    @Test("A history replays to its final snapshot, with its tokens beside the state")
    func state() throws {
        let (folder, path) = try historyFile()
        let state = folder + "/state.ndjson"
        let summary = try StateReplay(configuration: .init(histories: [path], output: state)).run()
        #expect(summary.eventCount == history.eventCount)
        #expect(summary.recordCount == history.finalSnapshot.count)
        #expect(try TestFiles.records(state) == history.finalSnapshot.map { RecordJSON.encodedString($0) })
        let tokens = try ReplayTokens(contentsOfFile: ReplayTokens.sidecarPath(for: state))
        #expect(tokens.lastCheckpoint?.syncToken == history.checkpoints.last?.token)
        #expect(tokens == summary.tokens)
        #expect(try JSONValue(parsing: summary.json)["lastToken"] == .string(history.checkpoints.last?.token ?? ""))
        #expect(summary.line.hasPrefix("\(history.eventCount) events, \(summary.appliedCount) applied"))
    }

    @Test("A base continues from its last checkpoint; a history that does not reach it is read again, all of it after the base")
    func base() throws {
        let (folder, path) = try historyFile()
        let middle = history.checkpoints[history.checkpoints.count / 2].token
        let base = folder + "/base.ndjson"
        try StateReplay(configuration: .init(histories: [path], output: base, until: middle)).run()
        // The whole history again: it reaches the base's checkpoint, and what follows is applied.
        let state = folder + "/state.ndjson"
        var notes: [String] = []
        let replay = StateReplay(configuration: .init(histories: [path], output: state, base: base))
        replay.onNote = { notes.append($0) }
        try replay.run()
        #expect(notes.isEmpty)
        #expect(try TestFiles.records(state) == history.finalSnapshot.map { RecordJSON.encodedString($0) })
        // A history without that checkpoint (another one): all of it follows the base, said in a note.
        try TestFiles.write(HistoryGenerator.generate(seed: 42, configuration: .init(batches: 3)).ferryLines, to: folder + "/tail.ndjson")
        let again = StateReplay(configuration: .init(histories: [folder + "/tail.ndjson"], output: folder + "/later.ndjson", base: state))
        again.onNote = { notes.append($0) }
        try again.run()
        #expect(notes.count == 1 && notes[0].hasPrefix("the history holds no checkpoint with --base's last token"))
    }

    @Test("A base without tokens and without since is a usage error; a history that does not parse, a data error")
    func errors() throws {
        let (folder, path) = try historyFile()
        try TestFiles.write(try String(contentsOfFile: TestFiles.sample("chat.ndjson"), encoding: .utf8), to: folder + "/base.ndjson")
        #expect {
            try StateReplay(configuration: .init(histories: [path], output: folder + "/o.ndjson", base: folder + "/base.ndjson")).run()
        } throws: { error in
            guard let error = error as? FerryError else { return false }
            return error.kind == .usage && error.message.contains("comes with no tokens file naming its last checkpoint")
        }
        try TestFiles.write("{\"recordName\": \n", to: folder + "/broken.ndjson")
        #expect {
            try StateReplay(configuration: .init(histories: [folder + "/broken.ndjson"], output: folder + "/o.ndjson")).run()
        } throws: { error in
            (error as? FerryError)?.kind == .data
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/o.ndjson"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/o.ndjson.tokens.json"))
    }

    @Test("With tokens only, the tokens are read and no state is written")
    func tokensOnly() throws {
        let (_, path) = try historyFile()
        let summary = try StateReplay(configuration: .init(histories: [path], output: nil, tokensOnly: true)).run()
        #expect(summary.tokens.lastCheckpoint?.syncToken == history.checkpoints.last?.token)
        #expect(summary.tokensText.split(separator: "\n").count >= summary.tokens.zones.count)
        #expect(try JSONValue(parsing: summary.tokensJSON)["recordCount"] == nil)
    }

    @Test("A history replayed into a store twice applies nothing the second time")
    func store() throws {
        let (folder, path) = try historyFile()
        let store = folder + "/s.sqlite"
        let first = try StoreReplay(configuration: .init(histories: [path], store: store)).run()
        #expect(first.appliedCount > 0)
        let second = try StoreReplay(configuration: .init(histories: [path], store: store)).run()
        #expect(second.appliedCount == 0 && second.skippedCount == second.eventCount)
        #expect(try TestFiles.records(store).count == history.finalSnapshot.count)
        #expect(try JSONValue(parsing: second.json)["applied"] == .number(JSONNumber(Int64(0))))
    }
}
