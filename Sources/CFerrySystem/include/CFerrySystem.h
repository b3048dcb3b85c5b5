// What Swift cannot reach directly, wrapped in plain C as swift-nio's CNIOLinux does: the CPU
// affinity mask (glibc hides it behind _GNU_SOURCE), the compiler's prefetch hint, and the
// processor's carry-less multiplication (x86-64 intrinsics, which Swift cannot call), used for
// CRC-32. Nothing else lives here.
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

/// Whether ``CFerrySystem_crc32Fold`` runs on this processor: x86-64 with PCLMULQDQ and SSE4.1.
int CFerrySystem_hasCRC32Fold(void);

/// The CRC-32 of gzip and zlib (`crc32_z`: polynomial 0xEDB88320, bit-reflected) continued from
/// `crc` over the `length` bytes at `bytes`, folded 64 bytes at a time with carry-less
/// multiplication (Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ").
/// `length` must be a multiple of 16 and at least 64, and ``CFerrySystem_hasCRC32Fold`` true.
unsigned int CFerrySystem_crc32Fold(unsigned int crc, const void *bytes, unsigned long length);

#endif
