#ifndef FERRY_CLIBDEFLATE_SHIM_H
#define FERRY_CLIBDEFLATE_SHIM_H
// libdeflate: whole-buffer deflate compression (gzip output) and gzip decompression (whole small
// files), about twice zlib's speed. Linux only (see Package.swift); elsewhere zlib does both.
#include <libdeflate.h>
#endif
