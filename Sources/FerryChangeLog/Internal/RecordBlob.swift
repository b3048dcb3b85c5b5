import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One live record in one `malloc`ed block: what replay compares and looks up, then the record's
/// compact JSON — or the address of its JSON in a mapped input, which may be pretty-printed
/// (flag 8: compacted when it is written or copied, see ``appendCompactJSON(to:)``).
///
/// Layout (native byte order, unaligned):
///
/// | offset | bytes | content |
/// |---:|---:|---|
/// | 0 | 4 | JSON length |
/// | 4 | 4 | record name length (UTF-8, unescaped) |
/// | 8 | 4 | encoded references length |
/// | 12 | 2 | change tag length |
/// | 14 | 1 | flags: 1 has a change tag, 2 has a modification time, 4 the JSON lies elsewhere, 8 and has whitespace between tokens |
/// | 15 | 1 | size class in a ``BlobAllocator`` (0: `malloc`ed or in an arena) |
/// | 16 | 8 | `modified.timestamp` |
/// | 24 | 8 | hash of the record name (``RecordBlob/hash(of:)``) |
/// | 32 | 8 | stamp: what the replayer's ``Replayer/onChange`` gave the save (a store's journal number) |
/// | 40 | … | name, change tag, references, JSON (or, with flag 4, the JSON's address) |
///
/// References are encoded one after the other: a flags byte (1 parent, 2 DELETE_SELF, 4 names a
/// zone), the target's name (4-byte length, bytes) and, when it names a zone, the zone name and
/// owner (4-byte length, bytes; owner length `UInt32.max` when absent).
///
/// A blob has exactly one owner at a time: the event carrying it, then the table holding it,
/// which frees it (``free()``) when the record is replaced, deleted or the table goes. Blobs
/// made in a ``BlobArena`` belong to the arena and are copied (``copy()``) to be kept.
struct RecordBlob {
    let raw: UnsafeMutableRawPointer

    static let headerSize = 40
    static let sizeClassOffset = 15

    /// The hash replay's tables use for a record name's bytes: eight bytes at a time, mixed with
    /// a seed drawn per process (so inputs cannot aim at collisions run after run) and finished
    /// with MurmurHash3's mixer, whose low bits the tables use.
    @inline(__always)
    static func hash(of name: UnsafeRawBufferPointer) -> Int {
        let n = name.count
        var h = hashSeed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        if let base = name.baseAddress {
            while i + 8 <= n {
                h = (h ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
                h ^= h >> 31
                i += 8
            }
            if i < n {
                var tail: UInt64 = 0
                for k in 0..<(n - i) { tail |= UInt64(base.load(fromByteOffset: i + k, as: UInt8.self)) << (8 * UInt64(k)) }
                h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
                h ^= h >> 29
            }
        }
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h)
    }

    /// A new blob. `json` is copied without its whitespace between tokens when `compacting`; a
    /// `zonePrefix` (`"zoneID":{…}`) is inserted as the record's first member. With
    /// `referencingJSON` (and nothing to insert), the blob only points at `json`, which must then
    /// outlive it: for blobs in transit, copied (``BlobAllocator/copy(_:)``) to be kept. It points
    /// at JSON that needs compacting only when `pointingAtWhitespace` too (the text is a mapping
    /// the state keeps): the JSON is then compacted whenever it is written or copied.
    static func make(name: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer?, modified: Int64?,
                     references: UnsafeRawBufferPointer, json: UnsafeRawBufferPointer, compacting: Bool,
                     zonePrefix: UnsafeRawBufferPointer? = nil, in arena: BlobArena? = nil,
                     referencingJSON: Bool = false, pointingAtWhitespace: Bool = false) -> RecordBlob {
        let tagCount = tag?.count ?? 0
        let prefixCount = zonePrefix.map { $0.count + 1 } ?? 0
        let external = referencingJSON && (!compacting || pointingAtWhitespace) && zonePrefix == nil
        let whitespace = external && compacting
        let capacity = headerSize + name.count + tagCount + references.count + (external ? 8 : json.count + prefixCount)
        let raw = arena?.allocate(capacity) ?? malloc(capacity)!
        var offset = headerSize
        func put(_ bytes: UnsafeRawBufferPointer) {
            if bytes.count > 0 { (raw + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            offset += bytes.count
        }
        put(name)
        if let tag { put(tag) }
        put(references)
        let jsonStart = offset
        if external {
            raw.storeBytes(of: json.baseAddress!, toByteOffset: offset, as: UnsafeRawPointer.self)
            offset += json.count
        } else if let zonePrefix, json.count >= 2 {
            raw.storeBytes(of: UInt8(ascii: "{"), toByteOffset: offset, as: UInt8.self)
            offset += 1
            put(zonePrefix)
            if Self.isEmptyObject(json) == false {
                raw.storeBytes(of: UInt8(ascii: ","), toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
            let rest = UnsafeRawBufferPointer(rebasing: json[1...])
            if compacting { offset += JSONCompaction.compact(rest, into: raw + offset) } else { put(rest) }
        } else if compacting {
            offset += JSONCompaction.compact(json, into: raw + offset)
        } else {
            put(json)
        }
        raw.storeBytes(of: UInt32(offset - jsonStart), toByteOffset: 0, as: UInt32.self)
        raw.storeBytes(of: UInt32(name.count), toByteOffset: 4, as: UInt32.self)
        raw.storeBytes(of: UInt32(references.count), toByteOffset: 8, as: UInt32.self)
        raw.storeBytes(of: UInt16(tagCount), toByteOffset: 12, as: UInt16.self)
        raw.storeBytes(of: (tag != nil ? 1 : 0) | (modified != nil ? 2 : 0) | (external ? 4 : 0) | (whitespace ? 8 : 0) as UInt8,
                       toByteOffset: 14, as: UInt8.self)
        raw.storeBytes(of: 0 as UInt8, toByteOffset: sizeClassOffset, as: UInt8.self)
        raw.storeBytes(of: modified ?? 0, toByteOffset: 16, as: Int64.self)
        raw.storeBytes(of: hash(of: name), toByteOffset: 24, as: Int.self)
        raw.storeBytes(of: 0 as Int64, toByteOffset: 32, as: Int64.self)
        return RecordBlob(raw: raw)
    }

    private static func isEmptyObject(_ json: UnsafeRawBufferPointer) -> Bool {
        for b in json.dropFirst() where b != 0x20 && b != 0x09 && b != 0x0A && b != 0x0D { return b == UInt8(ascii: "}") }
        return true
    }

    /// Releases the block.
    func free() { Glibc_free(raw) }

    @inline(__always) private func u32(_ offset: Int) -> Int { Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }

    /// The hash of the record name.
    @inline(__always) var nameHash: Int { raw.loadUnaligned(fromByteOffset: 24, as: Int.self) }

    /// What the replayer's ``Replayer/onChange`` gave the save that made the blob (0 without one).
    var stamp: Int64 {
        get { raw.loadUnaligned(fromByteOffset: 32, as: Int64.self) }
        nonmutating set { raw.storeBytes(of: newValue, toByteOffset: 32, as: Int64.self) }
    }

    /// The record name's UTF-8 bytes.
    @inline(__always) var name: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: raw + Self.headerSize, count: u32(4)) }

    /// The record name.
    var nameString: String { String(decoding: name, as: UTF8.self) }

    private var tagCount: Int { Int(raw.loadUnaligned(fromByteOffset: 12, as: UInt16.self)) }
    private var flags: UInt8 { raw.load(fromByteOffset: 14, as: UInt8.self) }

    /// The `recordChangeTag`'s bytes, when the record has one.
    var tag: UnsafeRawBufferPointer? {
        guard flags & 1 != 0 else { return nil }
        return UnsafeRawBufferPointer(start: raw + Self.headerSize + u32(4), count: tagCount)
    }

    /// `modified.timestamp`, when the record has one.
    var modified: Int64? { flags & 2 != 0 ? raw.loadUnaligned(fromByteOffset: 16, as: Int64.self) : nil }

    /// The encoded references.
    var references: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: raw + Self.headerSize + u32(4) + tagCount, count: u32(8))
    }

    /// The record's JSON: compact, unless ``hasWhitespace`` (then see ``appendCompactJSON(to:)``
    /// and ``withCompactJSON(_:)``).
    @inline(__always) var json: UnsafeRawBufferPointer {
        let at = Self.headerSize + u32(4) + tagCount + u32(8)
        if flags & 4 != 0 {
            return UnsafeRawBufferPointer(start: raw.loadUnaligned(fromByteOffset: at, as: UnsafeRawPointer.self), count: u32(0))
        }
        return UnsafeRawBufferPointer(start: raw + at, count: u32(0))
    }

    /// The bytes before the JSON: header, name, change tag, references.
    @inline(__always) var prefixSize: Int { Self.headerSize + u32(4) + tagCount + u32(8) }

    /// Writes the blob, its JSON in place (compacted when it ``hasWhitespace``), to `destination`
    /// (room for ``size`` bytes).
    @inline(__always)
    func copyContiguous(to destination: UnsafeMutableRawPointer, sizeClass: UInt8) {
        let prefix = prefixSize
        destination.copyMemory(from: raw, byteCount: prefix)
        let json = json
        if hasWhitespace {
            let count = JSONCompaction.compact(json, into: destination + prefix)
            destination.storeBytes(of: UInt32(count), toByteOffset: 0, as: UInt32.self)
        } else if json.count > 0 {
            (destination + prefix).copyMemory(from: json.baseAddress!, byteCount: json.count)
        }
        destination.storeBytes(of: flags & ~12, toByteOffset: 14, as: UInt8.self)
        destination.storeBytes(of: sizeClass, toByteOffset: Self.sizeClassOffset, as: UInt8.self)
    }

    /// Whether ``json`` is pretty-printed text the blob points at (flag 8), not compact JSON.
    @inline(__always) var hasWhitespace: Bool { flags & 8 != 0 }

    /// Appends the record's compact JSON to `out`.
    @inline(__always)
    func appendCompactJSON(to out: inout JSONOutput) {
        if hasWhitespace { out.appendCompacting(json) } else { out.append(json) }
    }

    /// Calls `body` with the record's compact JSON: ``json`` itself, or a compacted copy in
    /// `scratch`.
    func withCompactJSON<R>(scratch: inout [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard hasWhitespace else { return try body(json) }
        let json = json
        if scratch.count < json.count { scratch = [UInt8](repeating: 0, count: max(json.count, 2 * scratch.count)) }
        return try scratch.withUnsafeMutableBytes { buffer in
            let count = JSONCompaction.compact(json, into: buffer.baseAddress!)
            return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<count]))
        }
    }

    /// Whether the blob holds its JSON's address, not the JSON (flag 4).
    @inline(__always) var pointsAtJSON: Bool { flags & 4 != 0 }

    /// The size of a blob pointing at its JSON: the bytes before the JSON and the address.
    @inline(__always) var pointerSize: Int { prefixSize + 8 }

    /// Writes a blob pointing at its JSON, as it is, to `destination` (room for ``pointerSize`` bytes).
    @inline(__always)
    func copyPointing(to destination: UnsafeMutableRawPointer, sizeClass: UInt8) {
        destination.copyMemory(from: raw, byteCount: pointerSize)
        destination.storeBytes(of: sizeClass, toByteOffset: Self.sizeClassOffset, as: UInt8.self)
    }

    /// A copy of a blob pointing at its JSON in a `malloc`ed block of its own.
    func copyPointing() -> RecordBlob {
        let copy = malloc(pointerSize)!
        copyPointing(to: copy, sizeClass: 0)
        return RecordBlob(raw: copy)
    }

    /// Whether two blobs hold the same record name.
    @inline(__always)
    func hasName(_ other: UnsafeRawBufferPointer, hash: Int) -> Bool {
        guard nameHash == hash else { return false }
        let mine = name
        return mine.count == other.count && (mine.count == 0 || memcmp(mine.baseAddress!, other.baseAddress!, mine.count) == 0)
    }

    /// Name order (bytes), for output.
    @inline(__always)
    static func nameOrder(_ a: RecordBlob, _ b: RecordBlob) -> Bool {
        let x = a.name, y = b.name
        let n = min(x.count, y.count)
        let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
        return c != 0 ? c < 0 : x.count < y.count
    }

    /// The blob's size in bytes, its JSON in place.
    var size: Int { Self.headerSize + u32(4) + tagCount + u32(8) + u32(0) }

    /// The ``BlobAllocator`` size class the blob lives in (0: `malloc`ed or in an arena).
    var sizeClass: UInt8 { raw.load(fromByteOffset: Self.sizeClassOffset, as: UInt8.self) }

    /// A copy in a `malloc`ed block of its own.
    func copy() -> RecordBlob {
        let copy = malloc(size)!
        copyContiguous(to: copy, sizeClass: 0)
        return RecordBlob(raw: copy)
    }

    /// Calls `body` with each reference the record makes.
    func forEachReference(_ body: (BlobReference) throws -> Void) rethrows {
        let refs = references
        var i = 0
        func take() -> UnsafeRawBufferPointer? {
            let n = refs.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            i += 4
            if n == UInt32.max { return nil }
            defer { i += Int(n) }
            return UnsafeRawBufferPointer(rebasing: refs[i..<(i + Int(n))])
        }
        while i < refs.count {
            let flags = refs[i]
            i += 1
            let name = take()!
            var zone: BlobReference.Zone?
            if flags & 4 != 0 {
                let zoneName = take()!
                zone = BlobReference.Zone(name: zoneName, owner: take())
            }
            try body(BlobReference(isParent: flags & 1 != 0, deletesSelf: flags & 2 != 0, name: name, zone: zone))
        }
    }
}

/// Memory for blobs that live as long as one block of input: handed out in 1 MiB chunks, freed
/// all at once. Decoding threads make blobs here; the thread that applies them copies each into a
/// block of its own, so every `malloc` and `free` of kept blobs happens on one thread.
final class BlobArena {
    private var chunks: [UnsafeMutableRawPointer] = []
    private var next: UnsafeMutableRawPointer?
    private var left = 0
    private static let chunkSize = 1 << 20

    /// `size` bytes, aligned to 8.
    func allocate(_ size: Int) -> UnsafeMutableRawPointer {
        let rounded = (size + 7) & ~7
        if rounded > left {
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: max(Self.chunkSize, rounded), alignment: 16)
            chunks.append(chunk)
            next = chunk
            left = max(Self.chunkSize, rounded)
        }
        let pointer = next!
        next = pointer + rounded
        left -= rounded
        return pointer
    }

    /// Forgets every blob made so far (their memory is reused): only once none is in use.
    func reset() {
        guard let first = chunks.first else { return }
        for chunk in chunks.dropFirst() { chunk.deallocate() }
        chunks = [first]
        next = first
        left = Self.chunkSize
    }

    deinit { for chunk in chunks { chunk.deallocate() } }
}

/// The per-process seed of ``RecordBlob/hash(of:)``.
private let hashSeed: UInt64 = {
    var hasher = Hasher()
    hasher.combine(0x5EED as UInt64)
    return UInt64(truncatingIfNeeded: hasher.finalize())
}()

/// A reference read from a blob; its bytes live as long as the blob.
struct BlobReference {
    /// A zone named by a reference.
    struct Zone {
        var name: UnsafeRawBufferPointer
        var owner: UnsafeRawBufferPointer?

        /// The zone as a value.
        var zoneID: ZoneID {
            ZoneID(zoneName: String(decoding: name, as: UTF8.self), ownerRecordName: owner.map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// The record's `parent` (not a field).
    var isParent: Bool
    /// `"action": "DELETE_SELF"`.
    var deletesSelf: Bool
    /// The target's record name.
    var name: UnsafeRawBufferPointer
    /// The target's zone, when the reference names one.
    var zone: Zone?
}

@inline(__always)
private func Glibc_free(_ pointer: UnsafeMutableRawPointer) { free(pointer) }
