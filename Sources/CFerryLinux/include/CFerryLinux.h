// What Swift cannot call directly on Linux (glibc hides it behind _GNU_SOURCE), wrapped in plain C
// as swift-nio's CNIOLinux does. Nothing else lives here.
#ifndef C_FERRY_LINUX_H
#define C_FERRY_LINUX_H

/// The number of CPUs in the calling thread's affinity mask (`sched_getaffinity` + `CPU_COUNT`),
/// or 0 when it cannot be read or on systems without affinity masks.
int CFerryLinux_allowedCPUCount(void);

#endif
