import FerryRecords

/// An event as replay sees it: a saved record is a ``RecordBlob`` the event owns until it is
/// applied (see ``EventBuffer``).
enum RawEvent {
    case zoneSaved(ZoneID)
    case zoneDeleted(ZoneID)
    case zonePurged(ZoneID)
    case recordSaved(RecordBlob, zoneID: ZoneID)
    case recordDeleted(recordName: String, zoneID: ZoneID, recordType: String?)
    case checkpoint(ChangeEvent.Checkpoint)
    /// An error entry (`serverErrorCode`) of a change response, for a zone or a record.
    case serverError(zoneID: ZoneID?, recordName: String?, code: String, reason: String?)
}

/// Events waiting to be applied, taken in order; the blobs of events never taken are freed
/// (unless they live in an arena).
final class EventBuffer {
    private(set) var events: [RawEvent] = []
    private var next = 0
    /// The arena the blobs of these events were made in, if any.
    let arena: BlobArena?

    /// A buffer for events whose blobs are `malloc`ed one by one, or made in `arena`.
    init(arena: BlobArena? = nil) { self.arena = arena }

    /// Whether every event was taken.
    var isEmpty: Bool { next >= events.count }

    /// The number of events not taken yet.
    var remaining: Int { events.count - next }

    func append(_ event: RawEvent) { events.append(event) }

    /// Takes the next event; the caller owns its blob.
    @inline(__always)
    func take() -> RawEvent? {
        guard next < events.count else { return nil }
        defer { next += 1 }
        return events[next]
    }

    /// Frees what was not taken and empties the buffer.
    func reset() {
        while next < events.count {
            if arena == nil, case .recordSaved(let blob, _) = events[next] { blob.free() }
            next += 1
        }
        events.removeAll(keepingCapacity: true)
        next = 0
    }

    deinit { reset() }
}
