/// One block of input and, once compressed, its output and CRC-32. Its two buffers are allocated
/// once, reused for block after block, and freed in deinit.
///
/// `input` holds `prefixCount` bytes of dictionary (the up to 32 KiB before the block, for zlib's
/// scheme) followed by the block's `count` bytes.
///
/// `@unchecked Sendable`: a block is filled by the writer, then handed to one worker
/// (``OrderedWorkers``), which writes `output`, `outputCount`, `crc` and `error`; the writer reads
/// them only after taking the block back, which waits for the worker to finish.
final class DeflateBlock: @unchecked Sendable {
    /// Dictionary bytes, then the block's bytes.
    let input: UnsafeMutableRawBufferPointer
    /// Where the compressed bytes go; large enough for the block's worst case.
    let output: UnsafeMutableRawBufferPointer
    /// Bytes of dictionary at the start of `input`.
    var prefixCount = 0
    /// Bytes of the block after the dictionary.
    var count = 0
    /// Whether this is the stream's last block (zlib's scheme ends it with `Z_FINISH`).
    var isLast = false
    /// Bytes written to `output`.
    var outputCount = 0
    /// The CRC-32 of the block's bytes (not the dictionary).
    var crc: UInt32 = 0
    /// Why compressing the block failed, if it did.
    var error: (any Error)?

    init(capacity: Int, outputCapacity: Int) {
        input = .allocate(byteCount: GzipFormat.dictionarySize + capacity, alignment: 64)
        output = .allocate(byteCount: outputCapacity, alignment: 64)
    }

    deinit {
        input.deallocate()
        output.deallocate()
    }

    /// The block's bytes, without the dictionary.
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: input[prefixCount..<(prefixCount + count)])
    }

    /// The dictionary before the block.
    var dictionary: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: input[..<prefixCount])
    }

    /// The compressed bytes.
    var compressed: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: output[..<outputCount])
    }

    /// Appends bytes to the block (the caller keeps within its capacity).
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        (input.baseAddress! + prefixCount + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    /// Empties the block for reuse, with the last 32 KiB (or fewer) of `previous` — its
    /// dictionary and bytes taken together — as the new dictionary; with `previous` `nil`, none.
    /// `previous` may be this block itself.
    func restart(after previous: DeflateBlock?) {
        if let previous {
            let end = previous.prefixCount + previous.count
            let keep = min(GzipFormat.dictionarySize, end)
            // copyMemory is a memmove: when `previous` is this block, the tail may overlap its new place.
            input.baseAddress!.copyMemory(from: previous.input.baseAddress! + (end - keep), byteCount: keep)
            prefixCount = keep
        } else {
            prefixCount = 0
        }
        count = 0
        isLast = false
        outputCount = 0
        crc = 0
        error = nil
    }
}
