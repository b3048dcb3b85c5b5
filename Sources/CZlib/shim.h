#ifndef FERRY_CZLIB_SHIM_H
#define FERRY_CZLIB_SHIM_H
#include <zlib.h>
#endif
