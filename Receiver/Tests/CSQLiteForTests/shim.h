#ifndef C_RECEIVER_SQLITE_SHIM_H
#define C_RECEIVER_SQLITE_SHIM_H

// Only the receipt archive (Sources/ReceiverCore/Storage/SQLite*) imports this module.
#include <sqlite3.h>

/// SQLITE_TRANSIENT, which Swift cannot import (a macro casting -1 to a function pointer).
static inline sqlite3_destructor_type receiver_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
