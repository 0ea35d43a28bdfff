#ifndef C_ATTRIBUTION_POSTGRES_SHIM_H
#define C_ATTRIBUTION_POSTGRES_SHIM_H

// libpq's declarations (Debian: libpq-dev, which puts them in /usr/include/postgresql; elsewhere, where the
// compiler's include path has libpq-fe.h). Types only: the library itself is loaded when a PostgreSQL state is
// first used (Sources/AttributionStores/PostgreSQL/LibPQ.swift), so nothing links against it.
#if __has_include(<postgresql/libpq-fe.h>)
#include <postgresql/libpq-fe.h>
#else
#include <libpq-fe.h>
#endif

#endif
