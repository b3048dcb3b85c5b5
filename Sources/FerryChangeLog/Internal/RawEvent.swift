import FerryRecords

/// An event as replay sees it: a saved record is a ``RecordBlob`` in the arena of the block it was
/// read from, valid until the next event is asked for, and names its zone by its number in the
/// reader's ``ZoneRegistry``.
typealias RawEvent = ReplayEvent<RecordBlob, Int>

/// Events waiting to be applied, taken in order.
final class EventBuffer {
    private(set) var events: [RawEvent] = []
    private var next = 0

    /// Whether every event was taken.
    var isEmpty: Bool { next >= events.count }

    /// The number of events not taken yet.
    var remaining: Int { events.count - next }

    func append(_ event: RawEvent) { events.append(event) }

    /// Takes the next event.
    @inline(__always)
    func take() -> RawEvent? {
        guard next < events.count else { return nil }
        defer { next += 1 }
        return events[next]
    }

    /// The record and zone number of the event `distance` places after the next one to be
    /// taken, if the buffer holds it and it is a save (read in place: the event is not copied).
    @inline(__always)
    func savedRecord(ahead distance: Int) -> (RecordBlob, Int)? {
        let index = next + distance
        guard index < events.count, case .recordSaved(let blob, let zone) = events[index] else { return nil }
        return (blob, zone)
    }

    /// The number of events appended.
    var count: Int { events.count }

    /// Drops the events appended from `index` on.
    func truncate(to index: Int) { events.removeSubrange(index...) }

    /// Replaces the event at `index`.
    func replace(at index: Int, with event: RawEvent) { events[index] = event }

    /// Removes the events at `indices` (ascending).
    func remove(at indices: [Int]) {
        guard !indices.isEmpty else { return }
        var next = indices.makeIterator()
        var skip = next.next()
        var kept = 0
        for index in events.indices {
            if index == skip {
                skip = next.next()
                continue
            }
            events.swapAt(kept, index)
            kept += 1
        }
        events.removeSubrange(kept...)
    }

    /// Empties the buffer.
    func reset() {
        events.removeAll(keepingCapacity: true)
        next = 0
    }
}
