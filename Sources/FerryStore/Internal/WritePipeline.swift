import Dispatch
import FerryIO

/// Runs a store's writes on a thread of their own, so that the thread producing records (reading
/// and decoding the input) and SQLite work at the same time.
///
/// Threading: batches submitted by the producing thread run in order on one serial queue; the
/// context (a mutator, a replay's state), and through it the connection, are used only there,
/// and by ``sync(_:)`` (which runs on that queue too). At most `depth` batches wait, so memory
/// stays flat. The first error stops the work and is thrown to the producer by its next call.
final class WritePipeline<Context: AnyObject, Item: Sendable>: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ferry.store.writer", qos: .userInitiated)
    private let slots: DispatchSemaphore
    private let lock = Lock()
    /// Guarded by `lock`.
    private var failure: (any Error)?
    private let context: Context
    private let apply: @Sendable (Context, Item) throws -> Void

    init(context: Context, depth: Int = 4, apply: @escaping @Sendable (Context, Item) throws -> Void) {
        self.context = context
        self.apply = apply
        slots = DispatchSemaphore(value: depth)
    }

    deinit {
        // Let submitted batches finish before the context goes.
        queue.sync {}
    }

    private var currentFailure: (any Error)? {
        lock.withLock { failure }
    }

    private func fail(_ error: any Error) {
        lock.withLock { if failure == nil { failure = error } }
    }

    /// Queues a batch; throws the error of an earlier batch instead, if one failed.
    func submit(_ batch: [Item]) throws {
        if let failure = currentFailure { throw failure }
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard currentFailure == nil else { return }
            do {
                for item in batch { try apply(context, item) }
            } catch {
                fail(error)
            }
        }
    }

    /// Waits for the queued batches, then runs `work` on the writing thread; throws the error of
    /// a failed batch first.
    func sync<T>(_ work: (Context) throws -> T) throws -> T {
        try queue.sync {
            if let failure = currentFailure { throw failure }
            return try work(context)
        }
    }

    /// Waits for the queued batches, ignoring their errors (when abandoning).
    func drain() {
        queue.sync {}
    }
}
