// Change logs and saved change responses, read by replay's two decoding paths: on the calling
// thread (the streaming path ChangeLogReader takes) and on worker threads (the parallel path
// `ferry replay` takes). Differential:
// - ChangeLogReader cutting the input into 61-byte units and into 16 KiB units gives the same
//   events, or fails with the same error;
// - for one input in 16 (picked by its bytes, so a crash reproduces), a Replayer decoding on the
//   calling thread and one decoding on two workers give the same applied events, state, tokens
//   and anomalies, or the same error. (Only one in 16: a Replayer reads in 4 MiB blocks, which
//   under AddressSanitizer costs some 5 ms a run.)
// The mapped path (inputs of 8 MiB and more read in place) is out of reach of 64 KiB inputs.
import FerryChangeLog
import FerryIO
import FerryRecords
import FuzzDriver

struct Outcome: Equatable {
    var events: [ChangeEvent] = []
    var records: [Record] = []
    var tokens: ReplayTokens?
    var anomalies: [ReplayAnomaly] = []
    var error: String?
}

func readerConfiguration(chunkSize: Int) -> ChangeLogReader.Configuration {
    .init(maximumLineBytes: maximumInputBytes, maximumDocumentBytes: maximumInputBytes, maximumDepth: 64, chunkSize: chunkSize)
}

func read(_ bytes: [UInt8], chunkSize: Int) -> Outcome {
    var outcome = Outcome()
    let reader = ChangeLogReader(source: MemorySource(bytes, chunkSize: 1000), configuration: readerConfiguration(chunkSize: chunkSize))
    do {
        while let event = try reader.next() { outcome.events.append(event) }
    } catch {
        outcome.error = "\(error)"
    }
    return outcome
}

func replay(_ bytes: [UInt8], threads: Int) -> Outcome {
    var outcome = Outcome()
    let replayer = Replayer(configuration: .init(reader: readerConfiguration(chunkSize: 4096), decodingThreads: threads))
    replayer.onApply = { outcome.events.append($0) }
    do {
        try replayer.apply(MemorySource(bytes, chunkSize: 4096))
        try replayer.finish()
        outcome.records = try replayer.state.records()
        outcome.tokens = replayer.tokens
    } catch {
        outcome.error = "\(error)"
    }
    outcome.anomalies = replayer.anomalies.anomalies
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let input = fuzzInput(data, size) else { return 0 }
    let bytes = Array(input)
    let small = read(bytes, chunkSize: 61)
    let large = read(bytes, chunkSize: 16 << 10)
    fuzzCheck(small == large, "ChangeLogReader's units change what it reads:\n61 B:   \(small)\n16 KiB: \(large)")

    var hash: UInt32 = 2_166_136_261
    for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    guard hash % 16 == 0 else { return 0 }
    let streaming = replay(bytes, threads: 0)
    let parallel = replay(bytes, threads: 2)
    fuzzCheck(streaming == parallel, "replay's two paths disagree:\nstreaming: \(streaming)\nparallel:  \(parallel)")
    return 0
}

runFuzzer(testOneInput)
