// What Swift cannot reach directly, wrapped in plain C as swift-nio's CNIOLinux does: the CPU
// affinity mask (glibc hides it behind _GNU_SOURCE) and the compiler's prefetch hint. Nothing else
// lives here.
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

#endif
