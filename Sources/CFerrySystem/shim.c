#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <stdint.h>
#include <sys/syscall.h>
#endif
#include "CFerrySystem.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void CFerrySystem_keepFreedMemory(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

int CFerrySystem_flushStandardOutput(void) {
    int error = fflush(stdout) == 0 ? 0 : (errno != 0 ? errno : EIO);
    if (error == 0 && ferror(stdout)) error = EIO;
    clearerr(stdout);
    return error;
}

int CFerrySystem_allowedCPUCount(void) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 0;
    }
    return CPU_COUNT(&set);
#else
    return 0;
#endif
}

int CFerrySystem_temporaryFileFlag(void) {
#ifdef O_TMPFILE
    return O_TMPFILE;
#else
    return 0;
#endif
}

int CFerrySystem_startWriteback(int fd) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    return 0;
#endif
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int CFerrySystem_hasCRC32Fold(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) {
        return 0;
    }
    return (c & bit_PCLMUL) != 0 && (c & bit_SSE4_1) != 0;
}

// Four 128-bit lanes folded forward by 512 bits per step, then into one lane, then 128 → 64 bits,
// then Barrett reduction to 32. The constants are the bit-reflected x^k mod P(x) of the paper
// (k1..k5) and P(x)'s Barrett pair. The steps follow Chromium's zlib (crc32_simd.c,
// crc32_sse42_simd_), which carries this notice:
//
//   Copyright 2017 The Chromium Authors. All rights reserved.
//   Use of this source code is governed by a BSD-style license that can be
//   found in the Chromium source repository LICENSE file.
__attribute__((target("pclmul,sse4.1")))
unsigned int CFerrySystem_crc32Fold(unsigned int crc, const void *bytes, unsigned long length) {
    const unsigned char *p = (const unsigned char *)bytes;
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);

    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 0x00));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 0x10));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 0x20));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)~crc));
    p += 64;
    length -= 64;

    while (length >= 64) {
        __m128i x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
        __m128i x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
        __m128i x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
        __m128i x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(p + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(p + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(p + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(p + 0x30)));
        p += 64;
        length -= 64;
    }

    // Four lanes into one.
    __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);

    // The remaining 16-byte pieces.
    while (length >= 16) {
        x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm_loadu_si128((const __m128i *)p)), x5);
        p += 16;
        length -= 16;
    }

    // 128 bits to 64.
    x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, mask32);
    x1 = _mm_clmulepi64_si128(x1, k5k0, 0x00);
    x1 = _mm_xor_si128(x1, x2);

    // Barrett reduction to 32 bits.
    x2 = _mm_and_si128(x1, mask32);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
    x2 = _mm_and_si128(x2, mask32);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return ~(unsigned int)_mm_extract_epi32(x1, 1);
}

#else

int CFerrySystem_hasCRC32Fold(void) {
    return 0;
}

unsigned int CFerrySystem_crc32Fold(unsigned int crc, const void *bytes, unsigned long length) {
    (void)bytes;
    (void)length;
    return crc; // never called: CFerrySystem_hasCRC32Fold() is 0
}

#endif

// JSON compaction, 64 bytes at a time: bit masks of quotes, backslashes and whitespace; the bytes
// escaped by backslashes (rare: a loop over them); the bytes inside strings as the prefix XOR of
// the unescaped quotes; then every byte but whitespace outside strings is kept.
static inline unsigned long long prefix_xor(unsigned long long x) {
    x ^= x << 1; x ^= x << 2; x ^= x << 4; x ^= x << 8; x ^= x << 16; x ^= x << 32;
    return x;
}

// The bytes of a block escaped by a backslash: each backslash not itself escaped escapes the next
// byte (rare: a loop over them). `*carry` says the block's first byte is escaped, and is set when
// the next block's is.
static inline unsigned long long escaped_bytes(unsigned long long backslashes, unsigned long long *carry) {
    unsigned long long escaped = *carry;
    *carry = 0;
    unsigned long long starts = backslashes & ~escaped;
    while (starts) {
        int at = __builtin_ctzll(starts);
        if (at == 63) {
            *carry = 1;
            starts = 0;
        } else {
            escaped |= 1ULL << (at + 1);
            starts &= ~(1ULL << (at + 1));
            starts &= starts - 1;
        }
    }
    return escaped;
}
#if defined(__SSE2__)
static inline unsigned long long mask64(__m128i a, __m128i b, __m128i c, __m128i d, __m128i value) {
    unsigned long long m0 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, value));
    unsigned long long m1 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, value));
    unsigned long long m2 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(c, value));
    unsigned long long m3 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(d, value));
    return m0 | m1 << 16 | m2 << 32 | m3 << 48;
}
#endif

static inline void block_masks(const unsigned char *block, unsigned long long *quotes, unsigned long long *backslashes,
                               unsigned long long *white) {
#if defined(__SSE2__)
    __m128i a = _mm_loadu_si128((const __m128i *)block), b = _mm_loadu_si128((const __m128i *)(block + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(block + 32)), d = _mm_loadu_si128((const __m128i *)(block + 48));
    *quotes = mask64(a, b, c, d, _mm_set1_epi8('"'));
    *backslashes = mask64(a, b, c, d, _mm_set1_epi8('\\'));
    *white = mask64(a, b, c, d, _mm_set1_epi8(' ')) | mask64(a, b, c, d, _mm_set1_epi8('\n'))
        | mask64(a, b, c, d, _mm_set1_epi8('\r')) | mask64(a, b, c, d, _mm_set1_epi8('\t'));
#else
    unsigned long long q = 0, s = 0, w = 0;
    for (int i = 0; i < 64; i++) {
        unsigned char x = block[i];
        if (x == '"') q |= 1ULL << i;
        if (x == '\\') s |= 1ULL << i;
        if (x == ' ' || x == '\n' || x == '\r' || x == '\t') w |= 1ULL << i;
    }
    *quotes = q; *backslashes = s; *white = w;
#endif
}

#if defined(__x86_64__)
// Kept bytes of an 8-byte group moved to its front with one byte shuffle (SSSE3's pshufb): the
// shuffle of each of the 256 keep masks, and how many bytes it keeps.
static unsigned char compactShuffles[256][16];
static int compactShufflesReady;

static void prepareCompactShuffles(void) {
    for (int mask = 0; mask < 256; mask++) {
        int k = 0;
        for (int bit = 0; bit < 8; bit++) {
            if (mask & (1 << bit)) compactShuffles[mask][k++] = (unsigned char)bit;
        }
        for (; k < 16; k++) compactShuffles[mask][k] = 0x80; // zero
    }
}

static int hasSSSE3(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSSE3) != 0;
}

/// Writes the kept bytes of `block` (64, `keep` one bit per byte) to `out`, 8 at a time, and
/// returns how many; it may write up to 8 bytes past them.
__attribute__((target("ssse3")))
static long compressBlock(const unsigned char *block, unsigned long long keep, unsigned char *out) {
    long n = 0;
    for (int group = 0; group < 8; group++) {
        unsigned mask = (unsigned)(keep >> (8 * group)) & 0xFF;
        __m128i bytes = _mm_loadl_epi64((const __m128i *)(block + 8 * group));
        __m128i moved = _mm_shuffle_epi8(bytes, _mm_loadu_si128((const __m128i *)compactShuffles[mask]));
        _mm_storel_epi64((__m128i *)(out + n), moved);
        n += __builtin_popcount(mask);
    }
    return n;
}
#endif

#if defined(__x86_64__)
// Whether the processor and the operating system support AVX-512 with VBMI2's byte compress (and
// the carry-less multiplication the prefix XOR uses): CPUID leaves 1 and 7 for the instructions,
// XGETBV for the saved register state (opmask, and the upper halves of ZMM0-15 and ZMM16-31,
// besides SSE and AVX). macOS enables that state only on a thread's first AVX-512 instruction,
// so there the SSSE3 path runs.
static int hasAVX512Compress(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_PCLMUL)) return 0;
    unsigned int xcr0Low, xcr0High;
    __asm__ volatile("xgetbv" : "=a"(xcr0Low), "=d"(xcr0High) : "c"(0));
    if ((xcr0Low & 0xE6) != 0xE6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, vbmi2 = (c >> 6) & 1;
    return avx512f && avx512bw && vbmi2;
}
// The same compaction with 64-byte registers: one compare per character class gives its bit
// mask, carry-less multiplication by all ones gives the prefix XOR, and VBMI2's byte compress
// packs the kept bytes, stored with a mask so nothing past them is written.
__attribute__((target("avx512f,avx512bw,avx512vbmi2,pclmul")))
static long compactJSON512(const unsigned char *in, long count, unsigned char *out) {
    const __m512i quote = _mm512_set1_epi8('"'), backslash = _mm512_set1_epi8('\\');
    const __m512i space = _mm512_set1_epi8(' '), lf = _mm512_set1_epi8('\n');
    const __m512i cr = _mm512_set1_epi8('\r'), tab = _mm512_set1_epi8('\t');
    const __m128i ones = _mm_set1_epi8((char)0xFF);
    unsigned long long inString = 0, escapedCarry = 0;
    long n = 0;
    for (long start = 0; start < count; start += 64) {
        long length = count - start < 64 ? count - start : 64;
        __mmask64 valid = length == 64 ? ~0ULL : (1ULL << length) - 1;
        __m512i bytes = _mm512_maskz_loadu_epi8(valid, in + start); // zeros past the end
        unsigned long long quotes = _mm512_cmpeq_epi8_mask(bytes, quote);
        unsigned long long backslashes = _mm512_cmpeq_epi8_mask(bytes, backslash);
        unsigned long long white = _mm512_cmpeq_epi8_mask(bytes, space) | _mm512_cmpeq_epi8_mask(bytes, lf)
            | _mm512_cmpeq_epi8_mask(bytes, cr) | _mm512_cmpeq_epi8_mask(bytes, tab);
        unsigned long long escaped = escaped_bytes(backslashes, &escapedCarry);
        __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(quotes & ~escaped)), ones, 0);
        unsigned long long inside = (unsigned long long)_mm_cvtsi128_si64(product) ^ inString;
        inString = (unsigned long long)((long long)inside >> 63);
        unsigned long long keep = ~(white & ~inside) & valid;
        if (keep == ~0ULL) {
            _mm512_storeu_si512((void *)(out + n), bytes);
            n += 64;
            continue;
        }
        int kept = __builtin_popcountll(keep);
        __mmask64 store = kept == 64 ? ~0ULL : (1ULL << kept) - 1;
        _mm512_mask_storeu_epi8(out + n, store, _mm512_maskz_compress_epi8(keep, bytes));
        n += kept;
    }
    return n;
}
#endif

// The portable and SSSE3 compactions (`shuffles`: with SSSE3's byte shuffle).
static long compactJSON128(const unsigned char *in, long count, unsigned char *out, int shuffles) {
#if !defined(__x86_64__)
    (void)shuffles;
#endif
    unsigned long long inString = 0;    // all ones while inside a string at a block's end
    unsigned long long escapedCarry = 0; // the next block's first byte is escaped
    long n = 0;
    unsigned char tail[64];
    for (long start = 0; start < count; start += 64) {
        const unsigned char *block = in + start;
        long length = count - start < 64 ? count - start : 64;
        if (length < 64) {
            memset(tail, 'x', 64);
            memcpy(tail, block, (size_t)length);
            block = tail;
        }
        unsigned long long quotes, backslashes, white;
        block_masks(block, &quotes, &backslashes, &white);
        unsigned long long escaped = escaped_bytes(backslashes, &escapedCarry);
        unsigned long long inside = prefix_xor(quotes & ~escaped) ^ inString;
        inString = (unsigned long long)((long long)inside >> 63);
        unsigned long long keep = ~(white & ~inside);
        if (length < 64) keep &= (1ULL << length) - 1;
        if (keep == ~0ULL) {
            memcpy(out + n, block, 64);
            n += 64;
            continue;
        }
#if defined(__x86_64__)
        // Eight bytes are written per group: room for them while a whole block of input remains.
        if (shuffles && length == 64 && start + 64 + 8 <= count) {
            n += compressBlock(block, keep, out + n);
            continue;
        }
#endif
        while (keep) {
            out[n++] = block[__builtin_ctzll(keep)];
            keep &= keep - 1;
        }
    }
    return n;
}

#if defined(__x86_64__)
static void prepareCompaction(void) {
    if (!__atomic_load_n(&compactShufflesReady, __ATOMIC_ACQUIRE)) {
        prepareCompactShuffles(); // the same table from any thread that gets here first
        __atomic_store_n(&compactShufflesReady, 1, __ATOMIC_RELEASE);
    }
}
#endif

int CFerrySystem_hasCompaction(int kind) {
    switch (kind) {
    case CFerrySystem_compactionPortable: return 1;
#if defined(__x86_64__)
    case CFerrySystem_compactionSSSE3: return hasSSSE3();
    case CFerrySystem_compactionAVX512: return hasAVX512Compress();
#endif
    default: return 0;
    }
}

long CFerrySystem_compactJSONWith(int kind, const unsigned char *in, long count, unsigned char *out) {
#if defined(__x86_64__)
    prepareCompaction();
    if (kind == CFerrySystem_compactionAVX512) return compactJSON512(in, count, out);
    return compactJSON128(in, count, out, kind == CFerrySystem_compactionSSSE3);
#else
    (void)kind;
    return compactJSON128(in, count, out, 0);
#endif
}

long CFerrySystem_compactJSON(const unsigned char *in, long count, unsigned char *out) {
    static int best = -1;
    int kind = __atomic_load_n(&best, __ATOMIC_RELAXED);
    if (kind < 0) {
        kind = CFerrySystem_compactionPortable;
        if (CFerrySystem_hasCompaction(CFerrySystem_compactionSSSE3)) kind = CFerrySystem_compactionSSSE3;
        if (CFerrySystem_hasCompaction(CFerrySystem_compactionAVX512)) kind = CFerrySystem_compactionAVX512;
        __atomic_store_n(&best, kind, __ATOMIC_RELAXED);
    }
    return CFerrySystem_compactJSONWith(kind, in, count, out);
}

int CFerrySystem_removeFlatFolder(const char *path) {
#ifdef __linux__
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        // The kernel's record (struct linux_dirent64), which no header declares for user space.
        struct entry {
            uint64_t inode;
            int64_t offset;
            unsigned short length;
            unsigned char type;
            char name[];
        };
        char buffer[4096] __attribute__((aligned(8)));
        // Removing entries while reading them may hide some from this pass: read again from the
        // start until a pass removes nothing.
        int removed = 1;
        while (removed) {
            removed = 0;
            if (lseek(fd, 0, SEEK_SET) != 0) break;
            long n;
            while ((n = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
                for (long at = 0; at < n;) {
                    struct entry *e = (struct entry *)(buffer + at);
                    at += e->length;
                    if (e->name[0] == '.' && (e->name[1] == 0 || (e->name[1] == '.' && e->name[2] == 0))) continue;
                    if (unlinkat(fd, e->name, 0) == 0) removed = 1;
                }
            }
        }
        close(fd);
    }
#endif
    return rmdir(path);
}
