#ifndef C_ATTRIBUTION_SQLITE_SHIM_H
#define C_ATTRIBUTION_SQLITE_SHIM_H

// Only the deduplication state (Sources/Attribution/State/) imports this module.
#include <sqlite3.h>

/// SQLITE_TRANSIENT, which Swift cannot import (a macro casting -1 to a function pointer): SQLite copies the
/// bound bytes before the call returns, so the caller's buffer need not outlive the statement.
static inline sqlite3_destructor_type attribution_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// Leaves the write-ahead log for the next connection to checkpoint instead of checkpointing (and syncing it) when
/// the last connection closes: `sqlite3_db_config` is variadic, which Swift cannot call.
static inline int attribution_sqlite_skip_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

#endif
