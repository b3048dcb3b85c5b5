#ifndef FERRY_CZLIB_SHIM_H
#define FERRY_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass ZLIB_VERSION and sizeof(z_stream)),
// which Swift cannot call; these inline functions make them callable.

static inline int ferry_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel,
                                     int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, strategy);
}

static inline int ferry_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

// crc32_combine takes z_off_t, whose width depends on large-file macros; fix it at 64 bits.
static inline unsigned long ferry_crc32_combine(unsigned long crc1, unsigned long crc2,
                                                long long length2) {
    return crc32_combine(crc1, crc2, (z_off_t)length2);
}

#endif
