#ifndef FERRY_CSQLITE_SHIM_H
#define FERRY_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import;
// this inline function makes it callable. (SQLITE_STATIC is NULL: Swift passes nil.)
static inline sqlite3_destructor_type ferry_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's memory statistics
// (a global mutex taken on every allocation); Ferry never reads them. Effective only before
// SQLite initializes; returns SQLITE_MISUSE after.
static inline int ferry_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
