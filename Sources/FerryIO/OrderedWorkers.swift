import Dispatch

/// Ferry's one ordered parallel pipeline: jobs are handed to worker threads as they are cut and
/// taken back in the order they were submitted, whatever order the workers finish them in.
///
/// The caller cuts input into jobs, ``submit(_:)``s them, and ``takeHead()``s finished ones —
/// keeping at most ``maximumInFlight`` in flight, so memory is bounded by that many jobs. Each
/// worker is a serial queue, and jobs go to workers in turn, so per-worker state (a decoder
/// with its scratch space) is touched by one thread at a time: `work` receives the worker's
/// index. The JSON record reader (convert) and replay's event reader both run on this.
///
/// `@unchecked Sendable` jobs: a job's results are written by its worker before it signals
/// completion, and read by the caller only after ``takeHead()`` has waited for that signal.
package final class OrderedWorkers<Job: AnyObject & Sendable> {
    private let queues: [DispatchQueue]
    private let work: @Sendable (Job, Int) -> Void
    private var nextWorker = 0
    private var inFlight: [(job: Job, done: DispatchSemaphore)] = []
    private var head = 0

    /// The most jobs in flight the caller should keep (twice the workers, or more for cheap jobs).
    package let maximumInFlight: Int

    /// Creates `threads` workers (clamped to 1…``Processors/maximumThreads``) running
    /// `work(job, workerIndex)`.
    package init(threads: Int, jobsPerWorker: Int = 2, work: @escaping @Sendable (Job, Int) -> Void) {
        let count = Processors.clampedThreads(threads)
        queues = (0..<count).map { DispatchQueue(label: "ferry.worker.\($0)") }
        maximumInFlight = count * max(1, jobsPerWorker)
        self.work = work
    }

    deinit {
        // Workers may still hold jobs of a run that stopped early: let them finish first.
        for index in head..<inFlight.count { inFlight[index].done.wait() }
    }

    /// The number of workers.
    package var threads: Int { queues.count }

    /// Jobs submitted and not yet taken back.
    package var count: Int { inFlight.count - head }

    /// Whether ``maximumInFlight`` jobs are in flight (take one before submitting more).
    package var isFull: Bool { count >= maximumInFlight }

    /// Hands `job` to the next worker.
    package func submit(_ job: Job) {
        let done = DispatchSemaphore(value: 0)
        let work = self.work, index = nextWorker
        queues[index].async {
            work(job, index)
            done.signal()
        }
        nextWorker = (nextWorker + 1) % queues.count
        inFlight.append((job, done))
    }

    /// Whether the oldest job in flight is finished (taking it back would not wait).
    package var isHeadDone: Bool {
        guard head < inFlight.count else { return false }
        let done = inFlight[head].done
        guard done.wait(timeout: .now()) == .success else { return false }
        done.signal() // `takeHead` waits on it again
        return true
    }

    /// The oldest job in flight once it is finished, or `nil` when none is in flight.
    package func takeHead() -> Job? {
        guard head < inFlight.count else { return nil }
        let (job, done) = inFlight[head]
        done.wait()
        head += 1
        if head == inFlight.count || head >= 64 {
            inFlight.removeFirst(head)
            head = 0
        }
        return job
    }

    /// Waits for every job in flight and drops them (a run that stopped early).
    package func drain() {
        while takeHead() != nil {}
    }
}
