#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory for the records of a state: blocks in size classes of 64 bytes (up to 16,320 bytes)
/// carved from 64 MiB regions — backed by transparent huge pages where Linux offers them, so
/// growing the state costs few page faults — with freed blocks kept per class for reuse. Larger
/// blobs use `malloc`. No locks: one thread changes a state at a time.
///
/// A blob records its class in its header (``RecordBlob/sizeClass``), so ``release(_:)`` knows
/// where it came from.
final class BlobAllocator {
    private static let granule = 64
    private static let classCount = 255
    private static let regionSize = 64 << 20
    private var regions: [UnsafeMutableRawPointer] = []
    private var next: UnsafeMutableRawPointer?
    private var left = 0
    /// The first free block of each class; a free block holds the next one in its first 8 bytes.
    private let freeLists: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init() {
        freeLists = .allocate(capacity: Self.classCount + 1)
        freeLists.initialize(repeating: nil, count: Self.classCount + 1)
    }

    deinit {
        for region in regions { munmap(region, Self.regionSize) }
        freeLists.deallocate()
    }

    /// A copy of `blob` that this allocator owns.
    @inline(__always)
    func copy(_ blob: RecordBlob) -> RecordBlob {
        let size = blob.size
        let sizeClass = (size + Self.granule - 1) / Self.granule
        guard sizeClass <= Self.classCount else { return blob.copy() }
        let raw: UnsafeMutableRawPointer
        if let free = freeLists[sizeClass] {
            freeLists[sizeClass] = free.load(as: UnsafeMutableRawPointer?.self)
            raw = free
        } else {
            raw = carve(sizeClass * Self.granule)
        }
        blob.copyContiguous(to: raw, sizeClass: UInt8(sizeClass))
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
            guard let region = mmap(nil, Self.regionSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  region != UnsafeMutableRawPointer(bitPattern: -1) else { // MAP_FAILED
                fatalError("cannot map \(Self.regionSize) bytes for replay's records (errno \(errno))")
            }
            #if os(Linux)
            _ = madvise(region, Self.regionSize, MADV_HUGEPAGE)
            #endif
            regions.append(region)
            next = region
            left = Self.regionSize
        }
        let pointer = next!
        next = pointer + size
        left -= size
        return pointer
    }
}
