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

// The type of each libpq function the stores call, as libpq-fe.h declares it: LibPQ.swift's `Functions` holds the
// pointers `dlsym` returns as these types, so a Swift type that differs from the header cannot compile.
// `__typeof__` only names the declaration's type: nothing here references a libpq symbol.
typedef __typeof__(&PQsetNoticeProcessor) attribution_PQsetNoticeProcessor_fn;
typedef __typeof__(&PQstatus) attribution_PQstatus_fn;
typedef __typeof__(&PQfinish) attribution_PQfinish_fn;
typedef __typeof__(&PQconnectdbParams) attribution_PQconnectdbParams_fn;
typedef __typeof__(&PQserverVersion) attribution_PQserverVersion_fn;
typedef __typeof__(&PQhost) attribution_PQhost_fn;
typedef __typeof__(&PQdb) attribution_PQdb_fn;
typedef __typeof__(&PQuser) attribution_PQuser_fn;
typedef __typeof__(&PQport) attribution_PQport_fn;
typedef __typeof__(&PQreset) attribution_PQreset_fn;
typedef __typeof__(&PQexecPrepared) attribution_PQexecPrepared_fn;
typedef __typeof__(&PQexecParams) attribution_PQexecParams_fn;
typedef __typeof__(&PQexec) attribution_PQexec_fn;
typedef __typeof__(&PQsendQueryPrepared) attribution_PQsendQueryPrepared_fn;
typedef __typeof__(&PQgetResult) attribution_PQgetResult_fn;
typedef __typeof__(&PQprepare) attribution_PQprepare_fn;
typedef __typeof__(&PQresultStatus) attribution_PQresultStatus_fn;
typedef __typeof__(&PQresultErrorField) attribution_PQresultErrorField_fn;
typedef __typeof__(&PQresultErrorMessage) attribution_PQresultErrorMessage_fn;
typedef __typeof__(&PQclear) attribution_PQclear_fn;
typedef __typeof__(&PQerrorMessage) attribution_PQerrorMessage_fn;
typedef __typeof__(&PQconninfoParse) attribution_PQconninfoParse_fn;
typedef __typeof__(&PQfreemem) attribution_PQfreemem_fn;
typedef __typeof__(&PQconninfoFree) attribution_PQconninfoFree_fn;
typedef __typeof__(&PQconndefaults) attribution_PQconndefaults_fn;
typedef __typeof__(&PQntuples) attribution_PQntuples_fn;
typedef __typeof__(&PQcmdTuples) attribution_PQcmdTuples_fn;
typedef __typeof__(&PQgetisnull) attribution_PQgetisnull_fn;
typedef __typeof__(&PQgetlength) attribution_PQgetlength_fn;
typedef __typeof__(&PQgetvalue) attribution_PQgetvalue_fn;

#endif
