internal import CAttributionPostgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libpq, PostgreSQL's client library, loaded when the first PostgreSQL state is opened, not when a program
/// starts.
///
/// Linked the usual way, libpq and the ~20 libraries it pulls in (Kerberos, LDAP, GnuTLS, ...) were mapped and
/// relocated at every start of every program linking `AttributionStores`: ~4 ms of a command-line run that never
/// touches PostgreSQL (a C program linking the same libraries starts in 7 ms with libpq, 3 ms without). Here the
/// `CAttributionPostgres` module gives the types only, ``load()`` opens the library with `dlopen` the first time a
/// connection string is read or a connection made (``PostgresConnectionString``, ``PostgresConnection``), and
/// the functions below, named and typed as libpq's own, shadow the C declarations in this module and call
/// through the pointers `dlsym` gave. A machine without libpq runs everything but a PostgreSQL state, which
/// fails with ``PostgresFailure`` naming the package to install.
///
/// The compiler, not this file, types each pointer: ``Functions``'s fields have the types shim.h derives from
/// libpq-fe.h's declarations (`typedef __typeof__(&PQfinish) attribution_PQfinish_fn;`), so a wrapper whose
/// parameters or result differ from the header does not compile. Only the cast of `dlsym`'s untyped address to
/// that type remains unchecked, as it must be for a library opened at run time.
enum LibPQ {
    /// The libpq functions the stores call, as `dlsym` found them, each typed as libpq-fe.h declares it (the
    /// `attribution_PQ..._fn` typedefs of `CAttributionPostgres`'s shim.h).
    struct Functions {
        let setNoticeProcessor: attribution_PQsetNoticeProcessor_fn
        let status: attribution_PQstatus_fn
        let finish: attribution_PQfinish_fn
        let connectdbParams: attribution_PQconnectdbParams_fn
        let serverVersion: attribution_PQserverVersion_fn
        let host: attribution_PQhost_fn
        let db: attribution_PQdb_fn
        let user: attribution_PQuser_fn
        let port: attribution_PQport_fn
        let reset: attribution_PQreset_fn
        let execPrepared: attribution_PQexecPrepared_fn
        let execParams: attribution_PQexecParams_fn
        let exec: attribution_PQexec_fn
        let sendQueryPrepared: attribution_PQsendQueryPrepared_fn
        let getResult: attribution_PQgetResult_fn
        let prepare: attribution_PQprepare_fn
        let resultStatus: attribution_PQresultStatus_fn
        let resultErrorField: attribution_PQresultErrorField_fn
        let resultErrorMessage: attribution_PQresultErrorMessage_fn
        let clear: attribution_PQclear_fn
        let errorMessage: attribution_PQerrorMessage_fn
        let conninfoParse: attribution_PQconninfoParse_fn
        let freemem: attribution_PQfreemem_fn
        let conninfoFree: attribution_PQconninfoFree_fn
        let conndefaults: attribution_PQconndefaults_fn
        let ntuples: attribution_PQntuples_fn
        let cmdTuples: attribution_PQcmdTuples_fn
        let getisnull: attribution_PQgetisnull_fn
        let getlength: attribution_PQgetlength_fn
        let getvalue: attribution_PQgetvalue_fn
    }

    /// The library's file names, most specific first (Linux's soname, then macOS's).
    static let fileNames = ["libpq.so.5", "libpq.so", "libpq.5.dylib", "libpq.dylib"]

    /// The functions, or why libpq could not be loaded: loaded once, on first use (thread-safe).
    private static let loaded: Result<Functions, PostgresFailure> = open()

    /// Loads libpq if it is not loaded yet; throws, with what to install, when it cannot be.
    static func load() throws(PostgresFailure) {
        if case .failure(let failure) = loaded { throw failure }
    }

    /// The functions, once ``load()`` succeeded (every caller reaches them through a connection string or a
    /// connection, whose initialisers load first).
    static var functions: Functions {
        guard case .success(let functions) = loaded else {
            preconditionFailure("LibPQ: a libpq function called before LibPQ.load() succeeded")
        }
        return functions
    }

    private static func open() -> Result<Functions, PostgresFailure> {
        var reasons: [String] = []
        for name in fileNames {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                do throws(PostgresFailure) {
                    return .success(try functions(in: handle))
                } catch {
                    return .failure(error)
                }
            }
            reasons.append(dlerror().map { String(cString: $0) } ?? name)
        }
        return .failure(PostgresFailure(
            message: "a PostgreSQL state needs libpq, which could not be loaded (install it: `apt-get install "
                + "libpq5` on Debian and Ubuntu, `brew install libpq` on macOS): " + reasons.joined(separator: "; ")))
    }

    private static func functions(in handle: UnsafeMutableRawPointer) throws(PostgresFailure) -> Functions {
        func symbol<T>(_ name: String) throws(PostgresFailure) -> T {
            guard let address = dlsym(handle, name) else {
                throw PostgresFailure(message: "the libpq found has no \(name) (libpq 12 or later is needed)")
            }
            return unsafeBitCast(address, to: T.self)
        }
        return Functions(
            setNoticeProcessor: try symbol("PQsetNoticeProcessor"), status: try symbol("PQstatus"),
            finish: try symbol("PQfinish"), connectdbParams: try symbol("PQconnectdbParams"),
            serverVersion: try symbol("PQserverVersion"), host: try symbol("PQhost"), db: try symbol("PQdb"),
            user: try symbol("PQuser"), port: try symbol("PQport"), reset: try symbol("PQreset"),
            execPrepared: try symbol("PQexecPrepared"), execParams: try symbol("PQexecParams"),
            exec: try symbol("PQexec"), sendQueryPrepared: try symbol("PQsendQueryPrepared"),
            getResult: try symbol("PQgetResult"), prepare: try symbol("PQprepare"),
            resultStatus: try symbol("PQresultStatus"), resultErrorField: try symbol("PQresultErrorField"),
            resultErrorMessage: try symbol("PQresultErrorMessage"), clear: try symbol("PQclear"),
            errorMessage: try symbol("PQerrorMessage"), conninfoParse: try symbol("PQconninfoParse"),
            freemem: try symbol("PQfreemem"), conninfoFree: try symbol("PQconninfoFree"),
            conndefaults: try symbol("PQconndefaults"), ntuples: try symbol("PQntuples"),
            cmdTuples: try symbol("PQcmdTuples"), getisnull: try symbol("PQgetisnull"),
            getlength: try symbol("PQgetlength"), getvalue: try symbol("PQgetvalue"))
    }
}

// libpq's functions as the stores call them, through the loaded pointers (these shadow the C module's
// declarations, so no libpq symbol is linked). Pointer results are implicitly unwrapped, as Swift imports them from C.
@discardableResult
func PQsetNoticeProcessor(_ conn: OpaquePointer?, _ proc: PQnoticeProcessor?, _ arg: UnsafeMutableRawPointer?)
    -> PQnoticeProcessor? { LibPQ.functions.setNoticeProcessor(conn, proc, arg) }
func PQstatus(_ conn: OpaquePointer?) -> ConnStatusType { LibPQ.functions.status(conn) }
func PQfinish(_ conn: OpaquePointer?) { LibPQ.functions.finish(conn) }
func PQconnectdbParams(_ keywords: UnsafePointer<UnsafePointer<CChar>?>?,
                       _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ expandDatabaseName: Int32) -> OpaquePointer! {
    LibPQ.functions.connectdbParams(keywords, values, expandDatabaseName)
}
func PQserverVersion(_ conn: OpaquePointer?) -> Int32 { LibPQ.functions.serverVersion(conn) }
func PQhost(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.host(conn) }
func PQdb(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.db(conn) }
func PQuser(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.user(conn) }
func PQport(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.port(conn) }
func PQreset(_ conn: OpaquePointer?) { LibPQ.functions.reset(conn) }
func PQexecPrepared(_ conn: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: Int32,
                    _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ lengths: UnsafePointer<Int32>?,
                    _ formats: UnsafePointer<Int32>?, _ resultFormat: Int32) -> OpaquePointer! {
    LibPQ.functions.execPrepared(conn, name, count, values, lengths, formats, resultFormat)
}
func PQexecParams(_ conn: OpaquePointer?, _ command: UnsafePointer<CChar>?, _ count: Int32,
                  _ types: UnsafePointer<Oid>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
                  _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?,
                  _ resultFormat: Int32) -> OpaquePointer! {
    LibPQ.functions.execParams(conn, command, count, types, values, lengths, formats, resultFormat)
}
func PQexec(_ conn: OpaquePointer?, _ query: UnsafePointer<CChar>?) -> OpaquePointer! {
    LibPQ.functions.exec(conn, query)
}
func PQsendQueryPrepared(_ conn: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: Int32,
                         _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ lengths: UnsafePointer<Int32>?,
                         _ formats: UnsafePointer<Int32>?, _ resultFormat: Int32) -> Int32 {
    LibPQ.functions.sendQueryPrepared(conn, name, count, values, lengths, formats, resultFormat)
}
func PQgetResult(_ conn: OpaquePointer?) -> OpaquePointer! { LibPQ.functions.getResult(conn) }
func PQprepare(_ conn: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ query: UnsafePointer<CChar>?,
               _ count: Int32, _ types: UnsafePointer<Oid>?) -> OpaquePointer! {
    LibPQ.functions.prepare(conn, name, query, count, types)
}
func PQresultStatus(_ result: OpaquePointer?) -> ExecStatusType { LibPQ.functions.resultStatus(result) }
func PQresultErrorField(_ result: OpaquePointer?, _ code: Int32) -> UnsafeMutablePointer<CChar>! {
    LibPQ.functions.resultErrorField(result, code)
}
func PQresultErrorMessage(_ result: OpaquePointer?) -> UnsafeMutablePointer<CChar>! {
    LibPQ.functions.resultErrorMessage(result)
}
func PQclear(_ result: OpaquePointer?) { LibPQ.functions.clear(result) }
func PQerrorMessage(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.errorMessage(conn) }
func PQconninfoParse(_ conninfo: UnsafePointer<CChar>?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> UnsafeMutablePointer<PQconninfoOption>! { LibPQ.functions.conninfoParse(conninfo, error) }
func PQfreemem(_ pointer: UnsafeMutableRawPointer?) { LibPQ.functions.freemem(pointer) }
func PQconninfoFree(_ options: UnsafeMutablePointer<PQconninfoOption>?) { LibPQ.functions.conninfoFree(options) }
func PQconndefaults() -> UnsafeMutablePointer<PQconninfoOption>! { LibPQ.functions.conndefaults() }
func PQntuples(_ result: OpaquePointer?) -> Int32 { LibPQ.functions.ntuples(result) }
func PQcmdTuples(_ result: OpaquePointer?) -> UnsafeMutablePointer<CChar>! { LibPQ.functions.cmdTuples(result) }
func PQgetisnull(_ result: OpaquePointer?, _ row: Int32, _ column: Int32) -> Int32 {
    LibPQ.functions.getisnull(result, row, column)
}
func PQgetlength(_ result: OpaquePointer?, _ row: Int32, _ column: Int32) -> Int32 {
    LibPQ.functions.getlength(result, row, column)
}
func PQgetvalue(_ result: OpaquePointer?, _ row: Int32, _ column: Int32) -> UnsafeMutablePointer<CChar>! {
    LibPQ.functions.getvalue(result, row, column)
}
