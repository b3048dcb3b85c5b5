import FerryIO
@testable import FerryJSON
import FerryPipeline
import Foundation
import Testing

/// A thread count from a caller (`--threads`, a library configuration) never makes more workers
/// than ``Processors/maximumThreads``: each worker costs a queue and buffers of its own.
@Suite("Worker counts")
struct WorkerCountTests {
    final class Job: @unchecked Sendable {
        var value = 0
    }

    @Test("Ordered workers are clamped to 1…maximumThreads, and still run every job in order",
          arguments: [(-3, 1), (0, 1), (1, 1), (256, 256), (257, 256), (4096, 256)])
    func clamped(requested: Int, expected: Int) {
        let workers = OrderedWorkers<Job>(threads: requested) { job, _ in job.value *= 2 }
        #expect(workers.threads == expected)
        var results: [Int] = []
        for index in 0..<10 {
            if workers.isFull, let job = workers.takeHead() { results.append(job.value) }
            let job = Job()
            job.value = index
            workers.submit(job)
        }
        while let job = workers.takeHead() { results.append(job.value) }
        #expect(results == (0..<10).map { $0 * 2 })
    }

    @Test("The threads a pipeline offers its sources (the parallel reader's workers) are clamped too")
    func converterConfiguration() {
        #expect(RecordPipeline(writer: NDJSONWriter(sink: MemorySink()), threads: 1 << 32).threads == Processors.maximumThreads)
        #expect(RecordPipeline(writer: NDJSONWriter(sink: MemorySink()), threads: 0).threads == 1)
    }
}
