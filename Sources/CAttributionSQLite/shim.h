#ifndef C_ATTRIBUTION_SQLITE_SHIM_H
#define C_ATTRIBUTION_SQLITE_SHIM_H

// Only the deduplication state (Sources/Attribution/State/) imports this module.
#include <sqlite3.h>

/// SQLITE_TRANSIENT, which Swift cannot import (a macro casting -1 to a function pointer): SQLite copies the
/// bound bytes before the call returns, so the caller's buffer need not outlive the statement.
static inline sqlite3_destructor_type attribution_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
