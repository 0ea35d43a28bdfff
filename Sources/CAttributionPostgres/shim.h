#ifndef C_ATTRIBUTION_POSTGRES_SHIM_H
#define C_ATTRIBUTION_POSTGRES_SHIM_H

// libpq, PostgreSQL's C client library (Debian: libpq-dev; Homebrew: libpq). Only the PostgreSQL deduplication
// store (Sources/Attribution/State/PostgreSQL/) imports this module.
#include <libpq-fe.h>

#endif
