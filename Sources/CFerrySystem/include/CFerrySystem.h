// What Swift cannot reach directly, wrapped in plain C as swift-nio's CNIOLinux does: the CPU
// affinity mask, O_TMPFILE and sync_file_range (glibc hides them behind _GNU_SOURCE), a folder's
// removal from a signal handler (the getdents64 system call, which Swift cannot call variadically),
// glibc's allocator settings (`mallopt`), the C library's `stdout` stream (a global Swift 6 will not
// touch), the compiler's prefetch hint, the
// processor's carry-less multiplication (x86-64 intrinsics, which Swift cannot call) used for
// CRC-32, and 16-byte SSE2 scans of JSON text — string bytes and the whitespace of
// pretty-printed documents (Swift's SIMD types compile these to byte-at-a-time loops). Nothing
// else lives here.
#ifndef C_FERRY_SYSTEM_H
#define C_FERRY_SYSTEM_H

/// The number of CPUs in the calling thread's affinity mask (`sched_getaffinity` + `CPU_COUNT`),
/// or 0 when it cannot be read or on systems without affinity masks.
int CFerrySystem_allowedCPUCount(void);

/// Asks the processor to start loading the cache line at `address` for a read soon
/// (`__builtin_prefetch`); never faults, whatever the address.
static inline void CFerrySystem_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Tells glibc's allocator to keep memory it gets back for reuse (`mallopt`): buffers of up to
/// 32 MiB come from its heap rather than fresh mappings, and freed memory is returned to the
/// system only beyond 256 MiB. Chunks of input and output allocated and freed thousands of times
/// otherwise cost a page fault per page each time. Does nothing with other C libraries.
void CFerrySystem_keepFreedMemory(void);

/// Flushes `stdout` (what Swift's `print` wrote) and reports whether a write to it failed, now or
/// earlier (`fflush`, `ferror`, then `clearerr`): 0, or the `errno` of the failed flush (`EIO`
/// when only an earlier write failed).
int CFerrySystem_flushStandardOutput(void);

/// Removes the folder at `path` and the files directly in it, using only async-signal-safe calls
/// (`open`, the `getdents64` system call, `unlinkat`, `rmdir`), so a signal handler may call it:
/// Ferry's staging folders are flat. Returns 0, or -1 when the folder remains. Elsewhere than on
/// Linux it only removes an empty folder.
int CFerrySystem_removeFlatFolder(const char *path);

/// `O_TMPFILE` (an unnamed file in a directory, linked into it later), which glibc declares only
/// under `_GNU_SOURCE`; 0 where the system has no such flag.
int CFerrySystem_temporaryFileFlag(void);

/// Starts writing a file's dirty pages to the device without waiting for them (Linux
/// `sync_file_range` with `SYNC_FILE_RANGE_WRITE`), so that a later `fsync` has less left to
/// write. Returns 0, or -1 with `errno` set; does nothing and returns 0 elsewhere.
int CFerrySystem_startWriteback(int fd);

/// Whether ``CFerrySystem_crc32Fold`` runs on this processor: x86-64 with PCLMULQDQ and SSE4.1.
int CFerrySystem_hasCRC32Fold(void);

/// The CRC-32 of gzip and zlib (`crc32_z`: polynomial 0xEDB88320, bit-reflected) continued from
/// `crc` over the `length` bytes at `bytes`, folded 64 bytes at a time with carry-less
/// multiplication (Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ").
/// `length` must be a multiple of 16 and at least 64, and ``CFerrySystem_hasCRC32Fold`` true.
unsigned int CFerrySystem_crc32Fold(unsigned int crc, const void *bytes, unsigned long length);

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// Scans JSON string content from `bytes` 16 bytes at a time while no byte is a quote, a
/// backslash or a control character (below 0x20). Returns the offset of the first such byte and
/// sets `*found` to 1, or returns the offset where fewer than 16 bytes remain and leaves `*found`
/// alone (the caller scans the rest). Sets `*high` non-zero when a byte at 0x80 or above precedes
/// the returned offset. Returns 0 (nothing scanned) on processors without SSE2, where the
/// caller's word-at-a-time loop runs.
static inline long CFerrySystem_scanPlainString(const unsigned char *bytes, long count, unsigned *high, int *found) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    unsigned seenHigh = 0;
    long i = 0;
    for (; i + 16 <= count; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                       _mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
        unsigned mask = (unsigned)_mm_movemask_epi8(special);
        unsigned top = (unsigned)_mm_movemask_epi8(v);
        if (mask != 0) {
            unsigned at = (unsigned)__builtin_ctz(mask);
            seenHigh |= top & ((1u << at) - 1u);
            *high |= seenHigh;
            *found = 1;
            return i + at;
        }
        seenHigh |= top;
    }
    *high |= seenHigh;
    return i;
#else
    (void)bytes; (void)count; (void)high; (void)found;
    return 0;
#endif
}

/// Skips JSON whitespace (space, tab, line feed, carriage return) from `bytes` 16 bytes at a time.
/// Returns the offset of the first other byte and sets `*found` to 1, or returns the offset where
/// fewer than 16 bytes remain and leaves `*found` alone (the caller scans the rest). Returns 0
/// on processors without SSE2.
static inline long CFerrySystem_skipWhitespace(const unsigned char *bytes, long count, int *found) {
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    long i = 0;
    for (; i + 16 <= count; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i white = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab)),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        unsigned other = ~(unsigned)_mm_movemask_epi8(white) & 0xFFFFu;
        if (other != 0) {
            *found = 1;
            return i + (long)__builtin_ctz(other);
        }
    }
    return i;
#else
    (void)bytes; (void)count; (void)found;
    return 0;
#endif
}

/// Copies `count` bytes of JSON text from `input` to `output` without the whitespace between
/// tokens (strings kept as they are, escapes and all), 64 bytes at a time; returns the bytes
/// written. `output` must have room for `count` bytes.
long CFerrySystem_compactJSON(const unsigned char *input, long count, unsigned char *output);

/// The implementations of ``CFerrySystem_compactJSON``, which picks the fastest this processor has.
enum {
    CFerrySystem_compactionPortable = 0,
    /// SSE2 masks, SSSE3 byte shuffles (x86-64).
    CFerrySystem_compactionSSSE3 = 1,
    /// AVX-512 masks and VBMI2 byte compress (x86-64).
    CFerrySystem_compactionAVX512 = 2,
};
/// Whether this processor (and its operating system) runs compaction `kind`.
int CFerrySystem_hasCompaction(int kind);
/// ``CFerrySystem_compactJSON`` with implementation `kind`, which must be one
/// ``CFerrySystem_hasCompaction`` says runs here (for tests of each).
long CFerrySystem_compactJSONWith(int kind, const unsigned char *input, long count, unsigned char *output);

/// Whether any of the `count` bytes (at least 16) at `bytes` is a quote, a backslash or a control
/// character, 16 at a time (the last block overlapping the one before). Returns -1 on processors
/// without SSE2, where the caller checks the bytes itself.
static inline int CFerrySystem_needsEscaping16(const unsigned char *bytes, long count) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    __m128i found = _mm_setzero_si128();
    long i = 0;
    for (;; i += 16) {
        if (i + 16 > count) i = count - 16;
        __m128i v = _mm_loadu_si128((const __m128i *)(bytes + i));
        found = _mm_or_si128(found, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                                 _mm_cmpeq_epi8(_mm_min_epu8(v, control), v)));
        if (i + 16 >= count) break;
    }
    return _mm_movemask_epi8(found) != 0;
#else
    (void)bytes; (void)count;
    return -1;
#endif
}

#endif
