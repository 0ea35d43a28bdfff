#ifndef C_SQLITE_FOR_TESTS_SHIM_H
#define C_SQLITE_FOR_TESTS_SHIM_H

// Only the tests import this module: they read the receiver's files and break them (a trigger that fails as a full
// disk would) through SQLite's own API, apart from the library code under test. The receiver itself uses the
// library's SQLite code (AttributionStores).
#include <sqlite3.h>

#endif
