import FerryIO
import FerryRecords

/// Zones numbered as the decoding threads meet them, so that saved-record events carry a number
/// and the applying thread finds a zone's records by indexing an array.
///
/// `@unchecked Sendable`: every access goes through `lock`. Decoders keep their own small cache
/// (``EventDecoder``), so the lock is taken only for zones they have not seen.
final class ZoneRegistry: @unchecked Sendable {
    private let lock = Lock()
    private var numbers: [ZoneKey: Int] = [:]
    private var zones: [ZoneID] = []

    /// The number of `zone` (name and owner, compared as bytes), given on first sight.
    func number(of zone: ZoneID) -> Int {
        lock.withLock {
            let key = ZoneKey(zone)
            if let number = numbers[key] { return number }
            zones.append(zone)
            numbers[key] = zones.count - 1
            return zones.count - 1
        }
    }

    /// The zone numbered `number`.
    func zone(_ number: Int) -> ZoneID {
        lock.withLock { zones[number] }
    }
}
