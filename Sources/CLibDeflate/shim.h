#ifndef FERRY_CLIBDEFLATE_SHIM_H
#define FERRY_CLIBDEFLATE_SHIM_H
// libdeflate: whole-buffer gzip decompression, about twice zlib's speed. Linux only (see
// Package.swift); elsewhere whole gzip files are inflated with zlib.
#include <libdeflate.h>
#endif
