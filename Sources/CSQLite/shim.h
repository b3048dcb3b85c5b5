#ifndef FERRY_CSQLITE_SHIM_H
#define FERRY_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import;
// this inline function makes it callable. (SQLITE_STATIC is NULL: Swift passes nil.)
static inline sqlite3_destructor_type ferry_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
