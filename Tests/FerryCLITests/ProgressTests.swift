@testable import FerryCLI
import Testing

@Suite("Progress on a terminal")
struct ProgressTests {
    @Test("Sources that report a block of records at a time show progress, at most four times a second")
    func blocksShowProgress() {
        var shown: [String] = []
        let progress = Progress(enabled: true) { shown.append($0) }
        // Three blocks of 4 MiB, half a second apart: each is shown.
        for block in 1...3 { progress.update(records: block * 5000, bytes: block << 22, seconds: { Double(block) / 2 }) }
        #expect(shown.count == 3, "\(shown)")
        #expect(shown.last?.contains("15000 records") == true, "\(shown)")
        // Another block within the same quarter second is not.
        progress.update(records: 20000, bytes: 4 << 22, seconds: { 1.6 })
        #expect(shown.count == 3)
        progress.clear()
        #expect(shown.last == "\r\u{1B}[K")
    }

    @Test("Records reported one at a time read the clock only every 1024 calls, and nothing is shown when disabled")
    func perRecordAndDisabled() {
        var reads = 0
        let progress = Progress(enabled: true) { _ in }
        for record in 1...4096 { progress.update(records: record, bytes: record * 100, seconds: { reads += 1; return Double(record) }) }
        #expect(reads == 4)
        var shown: [String] = []
        let off = Progress(enabled: false) { shown.append($0) }
        off.update(records: 1, bytes: 1 << 30, seconds: { 10 })
        off.clear()
        #expect(shown.isEmpty)
    }
}
