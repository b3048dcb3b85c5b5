// The only file in FerryCompression that calls libdeflate (Linux only; see Package.swift).
//
// Each libdeflate compressor and decompressor is owned by exactly one final class whose deinit
// frees it once. libdeflate works on whole buffers: nothing is kept between calls but the
// compressor's or decompressor's own tables. Every result is checked here.
#if os(Linux) && canImport(CLibDeflate)
import CLibDeflate

/// A raw deflate compressor for whole buffers (`libdeflate_alloc_compressor`,
/// `libdeflate_deflate_compress`), freed with `libdeflate_free_compressor` in deinit. Used by one
/// thread at a time. Every buffer is borrowed for the call only.
final class LibDeflateCompressor {
    private let compressor: OpaquePointer
    private let name: String

    /// A compressor at libdeflate's `level` (0–12; Ferry uses 0–9).
    ///
    /// - Throws: ``CompressionError`` `.libdeflateFailure` when the allocation fails.
    init(level: Int, name: String) throws(CompressionError) {
        guard let compressor = libdeflate_alloc_compressor(Int32(level)) else {
            throw CompressionError(
                .libdeflateFailure,
                "expected libdeflate_alloc_compressor(\(level)) to return a compressor, found NULL (out of memory or a bad level)",
                source: name
            )
        }
        self.compressor = compressor
        self.name = name
    }

    deinit {
        libdeflate_free_compressor(compressor)
    }

    /// The most bytes ``compress(_:into:)`` writes for `count` input bytes, for any compressor
    /// (`libdeflate_deflate_compress_bound` with no compressor).
    static func bound(_ count: Int) -> Int {
        libdeflate_deflate_compress_bound(nil, count)
    }

    /// Compresses all of `input` into one complete raw deflate stream (its last block final) at
    /// the start of `output`, and returns its length.
    ///
    /// - Throws: `.libdeflateFailure` when `output` is too small (`libdeflate_deflate_compress`
    ///   returned 0); at least ``bound(_:)`` of the input's length is always enough.
    func compress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(CompressionError) -> Int {
        let written = libdeflate_deflate_compress(compressor, input.baseAddress, input.count, output.baseAddress, output.count)
        guard written > 0 else {
            throw CompressionError(
                .libdeflateFailure,
                "expected libdeflate_deflate_compress to fit \(input.count) bytes into \(output.count), found it did not",
                source: name
            )
        }
        return written
    }
}

/// A gzip decompressor for whole buffers (`libdeflate_alloc_decompressor`,
/// `libdeflate_gzip_decompress_ex`), freed with `libdeflate_free_decompressor` in deinit. Used by
/// one thread at a time. Every buffer is borrowed for the call only.
final class LibDeflateDecompressor {
    /// What one ``decompressMember(_:into:)`` call did (`enum libdeflate_result`).
    enum Result: Equatable {
        /// One member was decompressed (`LIBDEFLATE_SUCCESS`): its compressed and output lengths.
        case member(consumed: Int, produced: Int)
        /// The output buffer was too small for the member (`LIBDEFLATE_INSUFFICIENT_SPACE`).
        case insufficientSpace
        /// The member is not valid gzip (`LIBDEFLATE_BAD_DATA`), or another result.
        case badData
    }

    private let decompressor: OpaquePointer

    /// A decompressor, or `nil` when the allocation fails.
    init?() {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        self.decompressor = decompressor
    }

    deinit {
        libdeflate_free_decompressor(decompressor)
    }

    /// Decompresses the gzip member at the start of `input` into the start of `output`; bytes
    /// after the member are left alone. libdeflate checks the member's CRC-32 and ISIZE but not a
    /// header CRC (FHCRC).
    func decompressMember(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Result {
        var consumed = 0, produced = 0
        let result = libdeflate_gzip_decompress_ex(decompressor, input.baseAddress, input.count,
                                                   output.baseAddress, output.count, &consumed, &produced)
        switch result {
        case LIBDEFLATE_SUCCESS: return .member(consumed: consumed, produced: produced)
        case LIBDEFLATE_INSUFFICIENT_SPACE: return .insufficientSpace
        default: return .badData
        }
    }
}
#endif
