@testable import FerryChangeLog
import FerryIO
import FerryJSON
import FerryRecords
import Testing

/// A sink that fails on its `failingAt`-th write.
private final class FailingSink: ByteSink {
    let name = "failing"
    private var writes = 0
    private let failingAt: Int

    init(failingAt: Int) { self.failingAt = failingAt }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        writes += 1
        if writes == failingAt { throw FerryIOError(.write, path: name, errno: 28) }
    }

    func commit() throws {}
}

@Suite("Writing a state's records, gathered on two threads")
struct RecordGatherTests {
    /// A state of `count` records over three zones of different sizes, in Ferry's change-log form.
    private static func state(records count: Int) throws -> ReplayState {
        var lines: [String] = []
        for i in 0..<count {
            let zone = ["A", "B", "B", "C", "C", "C"][i % 6]
            let name = String((i &* 7919) % 1_000_003, radix: 36)
            lines.append(#"{"event":"recordSaved","record":{"recordName":"r\#(name)","recordType":"Item","zoneID":{"zoneName":"\#(zone)"},"fields":{"n":{"value":\#(i),"type":"INT64"}}}}"#)
        }
        return try replay(lines.joined(separator: "\n")).state
    }

    /// The lines the state's records make, one after the other on this thread.
    private static func serialLines(_ state: ReplayState, order: ReplayState.OutputOrder) -> [UInt8] {
        var bytes: [UInt8] = []
        state.forEachBlob(order: order) { _, blob in
            bytes += Array(blob.json)
            bytes.append(0x0A)
        }
        return bytes
    }

    @Test("Records come out in the state's order, every byte, around every chunk boundary",
          arguments: [0, 1, RecordGather.chunkRecords - 1, RecordGather.chunkRecords, 3 * RecordGather.chunkRecords + 1, 9 * RecordGather.chunkRecords + 17])
    func order(count: Int) throws {
        let state = try Self.state(records: count)
        #expect(state.recordCount == count)
        for order in [ReplayState.OutputOrder.byName, .dependencies] {
            let sink = MemorySink()
            let writer = NDJSONWriter(sink: sink)
            try state.write(to: writer, order: order)
            #expect(sink.bytes == Self.serialLines(state, order: order))
            #expect(writer.recordCount == count)
            #expect(writer.bytesWritten == sink.bytes.count)
        }
    }

    @Test("A failing sink stops the writing with its error, whichever write fails", arguments: [1, 2, 3, 5, 6])
    func failingSink(at write: Int) throws {
        let state = try Self.state(records: 6 * RecordGather.chunkRecords)
        #expect(throws: FerryIOError.self) { try state.write(to: NDJSONWriter(sink: FailingSink(failingAt: write))) }
    }
}
