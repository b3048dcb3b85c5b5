import Dispatch
import FerryIO


/// Memory for the records of a state: blocks in size classes of 64 bytes (up to 16,320 bytes)
/// carved from 16 MiB regions — backed by transparent huge pages where Linux offers them, so
/// growing the state costs few page faults — with freed blocks kept per class for reuse. Larger
/// blobs use `malloc`. No locks: one thread changes a state at a time.
///
/// A blob records its class in its header (``RecordBlob/sizeClass``), so ``release(_:)`` knows
/// where it came from. Once a state has used half of its first region, the next one is mapped
/// and its pages touched on another thread ahead of need, and so on, so page faults leave the
/// applying thread.
///
/// Regions are small because every page of one prepared ahead is zeroed whether or not the state
/// grows into it: with 64 MiB regions, a state of 150 MB had zeroed 256 MB, and the zeroing was
/// a tenth of a replay's CPU time (measured on the 2M-event benchmark history).
///
/// One thread at a time allocates: the bump pointer is not checked for exclusive access.
final class BlobAllocator {
    private static let granule = 64
    private static let classCount = 255
    private static let regionSize = 16 << 20
    private var regions: [UnsafeMutableRawPointer] = []
    private let spare = SpareRegion(size: regionSize)
    @exclusivity(unchecked) private var next: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var left = 0
    /// The first free block of each class; a free block holds the next one in its first 8 bytes.
    private let freeLists: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init() {
        freeLists = .allocate(capacity: Self.classCount + 1)
        freeLists.initialize(repeating: nil, count: Self.classCount + 1)
    }

    deinit {
        for region in regions { Syscall.unmapMemory(region, size: Self.regionSize) }
        spare.discard()
        freeLists.deallocate()
    }

    /// A copy of `blob` that this allocator owns: the JSON too, unless `keepingJSON` and the blob
    /// points at JSON elsewhere (in a mapping of the input its owner keeps).
    @inline(__always)
    func copy(_ blob: RecordBlob, keepingJSON: Bool = false) -> RecordBlob {
        let inPlace = keepingJSON && blob.pointsAtJSON
        let size = inPlace ? blob.pointerSize : blob.size
        let sizeClass = (size + Self.granule - 1) / Self.granule
        guard sizeClass <= Self.classCount else { return inPlace ? blob.copyPointing() : blob.copy() }
        let raw: UnsafeMutableRawPointer
        if let free = freeLists[sizeClass] {
            freeLists[sizeClass] = free.load(as: UnsafeMutableRawPointer?.self)
            raw = free
        } else {
            raw = carve(sizeClass * Self.granule)
        }
        if inPlace {
            blob.copyPointing(to: raw, sizeClass: UInt8(sizeClass))
        } else {
            blob.copyContiguous(to: raw, sizeClass: UInt8(sizeClass))
        }
        return RecordBlob(raw: raw)
    }

    /// Gives back a blob made by ``copy(_:)`` (or `malloc`ed, which is freed).
    @inline(__always)
    func release(_ blob: RecordBlob) {
        let sizeClass = Int(blob.sizeClass)
        guard sizeClass > 0 else {
            blob.free()
            return
        }
        blob.raw.storeBytes(of: freeLists[sizeClass], as: UnsafeMutableRawPointer?.self)
        freeLists[sizeClass] = blob.raw
    }

    private func carve(_ size: Int) -> UnsafeMutableRawPointer {
        if size > left {
            // The first region is mapped here and faulted in as it is used; the spare starts on
            // the second when the first is half used (a small state never needs it), and on
            // each next one as soon as the one before is taken.
            let region = regions.isEmpty ? SpareRegion.map(size: Self.regionSize, touching: false) : spare.take()
            regions.append(region)
            if regions.count >= 2 { spare.prepare() }
            next = region
            left = Self.regionSize
        } else if regions.count == 1 && left >= Self.regionSize / 2 && left - size < Self.regionSize / 2 {
            spare.prepare()
        }
        let pointer = next!
        next = pointer + size
        left -= size
        return pointer
    }
}

/// A region mapped, and its pages faulted in, on another thread before it is needed.
///
/// `@unchecked Sendable`: the region is handed over through `ready` under `lock`, after `done`
/// is signalled; the applying thread uses it only then.
final class SpareRegion: @unchecked Sendable {
    private let size: Int
    private let lock = Lock()
    private var ready: UnsafeMutableRawPointer?
    private var isPending = false
    private let done = DispatchSemaphore(value: 0)

    init(size: Int) { self.size = size }

    /// Maps `size` bytes (huge pages asked for on Linux), writing a byte in every page when
    /// `touching`, so the faults happen now.
    static func map(size: Int, touching: Bool) -> UnsafeMutableRawPointer {
        guard let region = Syscall.mapMemory(size: size, hugePages: true) else {
            fatalError("cannot map \(size) bytes for replay's records (errno \(Syscall.errno))")
        }
        if touching {
            var offset = 0
            while offset < size {
                region.storeBytes(of: 0 as UInt8, toByteOffset: offset, as: UInt8.self)
                offset += 4096
            }
        }
        return region
    }

    /// Starts preparing a region, unless one is on its way.
    func prepare() {
        guard !lock.withLock({ isPending }) else { return }
        lock.withLock { isPending = true }
        let size = size
        DispatchQueue.global().async { [self] in
            let region = Self.map(size: size, touching: true)
            lock.withLock { ready = region }
            done.signal()
        }
    }

    /// The prepared region (waiting for it, preparing it here if none is on its way).
    func take() -> UnsafeMutableRawPointer {
        prepare()
        done.wait()
        return lock.withLock {
            defer {
                ready = nil
                isPending = false
            }
            return ready!
        }
    }

    /// Unmaps a region prepared and not taken (waiting for one on its way).
    func discard() {
        guard lock.withLock({ isPending }) else { return }
        Syscall.unmapMemory(take(), size: size)
    }
}
