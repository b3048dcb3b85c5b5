import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Work items done on several threads and taken in order: worker threads claim the next item
/// (at most `window` ahead of the one taken last, so memory stays bounded) and deliver its result;
/// the consumer takes results in item order, waiting for each.
///
/// Threading: every member is guarded by `lock`; `ready` is signalled on each delivery and each take.
final class OrderedResults<Result: Sendable>: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let ready: UnsafeMutablePointer<pthread_cond_t>
    private let count: Int
    private let window: Int
    private var nextClaim = 0
    private var nextTake = 0
    private var results: [Int: Result] = [:]
    private var isCancelled = false

    init(count: Int, window: Int) {
        self.count = count
        self.window = max(1, window)
        lock = .allocate(capacity: 1)
        ready = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(ready, nil)
    }

    deinit {
        pthread_cond_destroy(ready)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        ready.deallocate()
    }

    /// The next item to work on, waiting while the window is full; `nil` when there is none left
    /// or the work was cancelled.
    func claim() -> Int? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while !isCancelled && nextClaim < count && nextClaim >= nextTake + window { pthread_cond_wait(ready, lock) }
        guard !isCancelled, nextClaim < count else { return nil }
        nextClaim += 1
        return nextClaim - 1
    }

    /// Hands in the result of an item.
    func deliver(_ index: Int, _ result: Result) {
        pthread_mutex_lock(lock)
        results[index] = result
        pthread_cond_broadcast(ready)
        pthread_mutex_unlock(lock)
    }

    /// The result of the next item, waiting for it; `nil` after the last.
    func take() -> Result? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard nextTake < count else { return nil }
        while results[nextTake] == nil { pthread_cond_wait(ready, lock) }
        let result = results.removeValue(forKey: nextTake)
        nextTake += 1
        pthread_cond_broadcast(ready)
        return result
    }

    /// Stops handing out items (after a failure); workers finish the item they hold.
    func cancel() {
        pthread_mutex_lock(lock)
        isCancelled = true
        pthread_cond_broadcast(ready)
        pthread_mutex_unlock(lock)
    }
}
