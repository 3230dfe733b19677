/* errors.c — the error path of the MPI layer: mpii_err and the error handlers, error
 * classes, codes and strings (MPI-4.0 chapter 9.3-9.5).
 *
 * Error codes are the classes themselves for everything the library raises (0 ..
 * MPI_ERR_LASTCODE); MPI_Add_error_class / MPI_Add_error_code hand out codes above
 * MPI_ERR_LASTCODE, each with its class and an optional string.
 *
 * Which handler runs: the one attached to the object of the call (a valid communicator
 * handle). Calls without an object (or with an invalid one) use MPI_COMM_SELF's handler
 * when the program set one there (MPI-4.0 9.3), else MPI_COMM_WORLD's (what MPI-3 said
 * and what most programs rely on); before MPI_Init and after MPI_Finalize,
 * MPI_ERRORS_ARE_FATAL. Windows carry their own handler (win.c). Files: the file's
 * handler, or MPI_FILE_NULL's when there is no file (mpii_file_errh, file.c;
 * MPI_ERRORS_RETURN by default). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

enum { EH_USER = 0, EH_FATAL = 1, EH_RETURN = 2, EH_ABORT = 3 };

static mpii_errhandler_t eh_predef[4] = {
    [EH_FATAL] = {1, 0, EH_FATAL, NULL},
    [EH_RETURN] = {1, 0, EH_RETURN, NULL},
    [EH_ABORT] = {1, 0, EH_ABORT, NULL},
};
/* 1: the user set an error handler on MPI_COMM_SELF (then calls without an object use
 * it, as MPI-4.0 says). */
static int self_errh_set;

int mpii_lastusedcode = MPI_ERR_LASTCODE;

/* User-added codes above MPI_ERR_LASTCODE: [code - MPI_ERR_LASTCODE - 1]. */
typedef struct user_code {
    int cls; /* its class (itself for a class) */
    char *str;
} user_code_t;
static user_code_t *ucodes;
static int nucodes, capucodes;

static const char *const class_msg[MPI_ERR_LASTCODE + 1] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument of some other kind",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "known error not in this list",
    [MPI_ERR_INTERN] = "internal MPI (implementation) error",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_AMODE] = "error related to the amode passed to MPI_FILE_OPEN",
    [MPI_ERR_ASSERT] = "invalid assertion argument",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_BASE] = "invalid base argument",
    [MPI_ERR_CONVERSION] = "an error occurred in a user-supplied data conversion function",
    [MPI_ERR_DISP] = "invalid displacement argument",
    [MPI_ERR_DUP_DATAREP] = "conversion functions could not be registered because a data "
                            "representation identifier that was already defined was passed "
                            "to MPI_REGISTER_DATAREP",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_FILE_IN_USE] = "file operation could not be completed, as the file is currently "
                            "open by some process",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_INFO_KEY] = "key longer than MPI_MAX_INFO_KEY",
    [MPI_ERR_INFO_NOKEY] = "invalid key passed to MPI_INFO_DELETE",
    [MPI_ERR_INFO_VALUE] = "value longer than MPI_MAX_INFO_VAL",
    [MPI_ERR_INFO] = "invalid info argument",
    [MPI_ERR_IO] = "other I/O error",
    [MPI_ERR_KEYVAL] = "invalid keyval",
    [MPI_ERR_LOCKTYPE] = "invalid locktype argument",
    [MPI_ERR_NAME] = "invalid service name passed to MPI_LOOKUP_NAME",
    [MPI_ERR_NO_MEM] = "MPI_ALLOC_MEM failed because memory is exhausted",
    [MPI_ERR_NOT_SAME] = "collective argument not identical on all processes, or collective "
                         "routines called in a different order by different processes",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_NO_SUCH_FILE] = "file does not exist",
    [MPI_ERR_PORT] = "invalid port name passed to MPI_COMM_CONNECT",
    [MPI_ERR_PROC_ABORTED] = "operation failed because a peer process has aborted",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached (e.g., because of resource exhaustion)",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to window",
    [MPI_ERR_RMA_RANGE] = "target memory is not part of the window (in the case of a window "
                          "created with MPI_WIN_CREATE_DYNAMIC, target memory is not attached)",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared (e.g., some process in the group of the "
                           "specified communicator cannot expose shared memory)",
    [MPI_ERR_RMA_SYNC] = "incorrect synchronization of RMA calls",
    [MPI_ERR_RMA_FLAVOR] = "passed window has the wrong flavor for the called function",
    [MPI_ERR_SERVICE] = "invalid service name passed to MPI_UNPUBLISH_NAME",
    [MPI_ERR_SESSION] = "invalid session handle",
    [MPI_ERR_SIZE] = "invalid size argument",
    [MPI_ERR_SPAWN] = "error in spawning processes",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported datarep passed to MPI_FILE_SET_VIEW",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "unsupported operation, such as seeking on a file which "
                                      "supports sequential access only",
    [MPI_ERR_VALUE_TOO_LARGE] = "value is too large to store",
    [MPI_ERR_WIN] = "invalid window argument",
    [MPI_T_ERR_CANNOT_INIT] = "interface not in the state to be initialized",
    [MPI_T_ERR_NOT_ACCESSIBLE] = "requested functionality not accessible",
    [MPI_T_ERR_NOT_INITIALIZED] = "the MPI tool information interface is not initialized",
    [MPI_T_ERR_NOT_SUPPORTED] = "requested functionality not supported",
    [MPI_T_ERR_MEMORY] = "out of memory",
    [MPI_T_ERR_INVALID] = "invalid use of the interface or bad parameter value(s)",
    [MPI_T_ERR_INVALID_INDEX] = "the index is invalid or has been deleted",
    [MPI_T_ERR_INVALID_ITEM] = "item index queried is out of range",
    [MPI_T_ERR_INVALID_SESSION] = "session argument is not a valid session",
    [MPI_T_ERR_INVALID_HANDLE] = "the handle is invalid",
    [MPI_T_ERR_INVALID_NAME] = "the variable or category name is invalid",
    [MPI_T_ERR_OUT_OF_HANDLES] = "no more handles available",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "no more sessions available",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "variable cannot be set at this moment",
    [MPI_T_ERR_CVAR_SET_NEVER] = "variable cannot be set until end of execution",
    [MPI_T_ERR_PVAR_NO_WRITE] = "variable cannot be written or reset",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "variable cannot be read and written atomically",
    [MPI_ERR_LASTCODE] = "last error code",
};

/* ------------------------------------------------------------ detailed codes
 * An error the library raises on a predefined class reaches the program (as the return
 * value under MPI_ERRORS_RETURN, or as the code a user handler gets) as a detailed code:
 * DETAIL_BASE + seq * DETAIL_CLASSES + class, where seq numbers the error and picks a slot
 * of a per-process ring of the last DETAIL_SLOTS messages ("MPI_Send: invalid rank:
 * destination 2 is not in 0..1"). MPI_Error_class gives the class back; MPI_Error_string
 * gives the message while its slot holds it, and the class text after that. MPI allows
 * codes beyond the classes (MPICH does the same); the codes stay far above the codes
 * MPI_Add_error_code hands out. */
enum {
    DETAIL_CLASSES = 128, /* > MPI_ERR_LASTCODE */
    DETAIL_SEQS = 1 << 16,
    DETAIL_BASE = 1 << 24,
    DETAIL_SLOTS = 64,
};
_Static_assert(MPI_ERR_LASTCODE < DETAIL_CLASSES, "classes fit below DETAIL_CLASSES");
_Static_assert((int64_t)DETAIL_BASE + (int64_t)DETAIL_SEQS * DETAIL_CLASSES < INT32_MAX,
               "detailed codes are ints");

typedef struct detail_slot {
    _Atomic uint32_t seq; /* the seq whose message text holds (0: none yet) */
    char text[MPI_MAX_ERROR_STRING];
} detail_slot_t;
static detail_slot_t detail_ring[DETAIL_SLOTS];
static _Atomic uint32_t detail_next;

/* A detailed code of class cls for a call named fname, with optional detail text. */
static int detail_code(int cls, const char *fname, const char *detail)
{
    uint32_t seq = atomic_fetch_add(&detail_next, 1) % (DETAIL_SEQS - 1) + 1; /* 1.. */
    detail_slot_t *d = &detail_ring[seq % DETAIL_SLOTS];
    atomic_store(&d->seq, 0);
    snprintf(d->text, sizeof d->text, "%s: %s%s%s", fname, class_msg[cls],
             detail && *detail ? ": " : "", detail ? detail : "");
    atomic_store(&d->seq, seq);
    return DETAIL_BASE + (int)seq * DETAIL_CLASSES + cls;
}

/* 1 when code is a detailed code; then *cls is its class and *text its message, or NULL
 * when the ring has dropped it. */
static int detail_decode(int code, int *cls, const char **text)
{
    if (code < DETAIL_BASE + DETAIL_CLASSES || code >= DETAIL_BASE + DETAIL_SEQS * DETAIL_CLASSES)
        return 0;
    int c = (code - DETAIL_BASE) % DETAIL_CLASSES;
    uint32_t seq = (uint32_t)((code - DETAIL_BASE) / DETAIL_CLASSES);
    if (c <= MPI_SUCCESS || c > MPI_ERR_LASTCODE)
        return 0;
    detail_slot_t *d = &detail_ring[seq % DETAIL_SLOTS];
    *cls = c;
    *text = atomic_load(&d->seq) == seq ? d->text : NULL;
    return 1;
}

/* The class of a valid code, or -1. */
static int code_class(int code)
{
    int cls;
    const char *text;
    if (code >= 0 && code <= MPI_ERR_LASTCODE)
        return code;
    if (detail_decode(code, &cls, &text))
        return cls;
    if (code > MPI_ERR_LASTCODE && code <= MPI_ERR_LASTCODE + nucodes)
        return ucodes[code - MPI_ERR_LASTCODE - 1].cls;
    return -1;
}

/* The message of any int (never NULL). */
static const char *code_msg(int code)
{
    int cls;
    const char *text;
    if (code >= 0 && code <= MPI_ERR_LASTCODE)
        return class_msg[code];
    if (detail_decode(code, &cls, &text))
        return text ? text : class_msg[cls];
    if (code > MPI_ERR_LASTCODE && code <= MPI_ERR_LASTCODE + nucodes) {
        const char *s = ucodes[code - MPI_ERR_LASTCODE - 1].str;
        return s ? s : "";
    }
    return "invalid error code";
}

static mpii_errhandler_t *errh_obj(MPI_Errhandler h)
{
    if (FMPL_MPI_HANDLE_KIND(h) != FMPL_MPI_KIND_ERRHANDLER)
        return NULL;
    int i = FMPL_MPI_HANDLE_INDEX(h);
    if (i >= EH_FATAL && i <= EH_ABORT)
        return &eh_predef[i];
    return (mpii_errhandler_t *)mpii_handle_get(FMPL_MPI_KIND_ERRHANDLER, h);
}

void mpii_errh_ref(MPI_Errhandler h)
{
    mpii_errhandler_t *e = errh_obj(h);
    if (e && !e->predefined)
        e->refs++;
}

void mpii_errh_release(MPI_Errhandler h)
{
    mpii_errhandler_t *e = errh_obj(h);
    if (!e || e->predefined)
        return;
    if (--e->refs == 0) {
        mpii_handle_del(FMPL_MPI_KIND_ERRHANDLER, h);
        free(e);
    }
}

int mpii_errors_init(void)
{
    for (int i = EH_FATAL; i <= EH_ABORT; i++)
        mpii_handle_set(FMPL_MPI_KIND_ERRHANDLER, i, &eh_predef[i]);
    self_errh_set = 0;
    return MPI_SUCCESS;
}

void mpii_errors_finalize(void)
{
    /* User handlers the program did not free are reclaimed with the table; user codes
     * stay valid (MPI_Error_string works after MPI_Finalize). */
    mpii_table_t *t = &mpii_tables[FMPL_MPI_KIND_ERRHANDLER];
    for (int i = FMPL_MPI_PREDEF_MAX; i < t->cap; i++) {
        free(t->obj[i]);
        t->obj[i] = NULL;
    }
}

/* Ends the job for a fatal handler: message through the launcher. */
static _Noreturn void err_abort(int code, const char *fname, const char *detail)
{
    char msg[MPI_MAX_ERROR_STRING + 640];
    int cls = code_class(code), exit_code = cls > 0 && cls < 256 ? cls : 1;
    snprintf(msg, sizeof msg, "FMPL MPI error in %s: %s%s%s (error class %d)",
             fname ? fname : "MPI", code_msg(code), detail && *detail ? ": " : "",
             detail ? detail : "", cls >= 0 ? cls : code);
    boot_abort(mpii.boot, exit_code, msg);
}

/* The communicator whose handler serves a call raising on (kind, handle). */
static MPI_Comm err_target(int kind, int handle)
{
    if (mpii.state != MPII_ACTIVE)
        return MPI_COMM_NULL;
    if (kind == FMPL_MPI_KIND_COMM && mpii_comm_get(handle))
        return handle;
    if (self_errh_set && mpii_comm_get(MPI_COMM_SELF))
        return MPI_COMM_SELF;
    return mpii_comm_get(MPI_COMM_WORLD) ? MPI_COMM_WORLD : MPI_COMM_NULL;
}

/* Runs handler eh (invalid: MPI_ERRORS_ARE_FATAL) for object (kind, handle). raised: the
 * library raises code (a class: the program gets a detailed code), rather than the
 * program through MPI_*_call_errhandler (its code goes through as it is). */
static int errh_invoke(MPI_Errhandler eh, int kind, int handle, int code, const char *fname,
                       const char *detail, int raised)
{
    mpii_errhandler_t *e = errh_obj(eh);
    if (!e)
        e = &eh_predef[EH_FATAL];
    switch (e->predefined) {
    case EH_FATAL:
    case EH_ABORT: err_abort(code, fname, detail);
    default: break;
    }
    if (raised && code > MPI_SUCCESS && code <= MPI_ERR_LASTCODE && fname)
        code = detail_code(code, fname, detail);
    if (e->predefined == EH_RETURN)
        return code;
    /* A user handler may free the handler or change the object's handler: hold it. */
    mpii_errh_ref(eh);
    int h = handle, ucode = code;
    if (kind == FMPL_MPI_KIND_SESSION)
        ((MPI_Session_errhandler_function *)(void (*)(void))e->fn)(&h, &ucode, fname, detail);
    else
        ((MPI_Comm_errhandler_function *)(void (*)(void))e->fn)(&h, &ucode, fname, detail);
    mpii_errh_release(eh);
    return ucode;
}

/* mpii_err_note's text, for the next raise of note_code by this thread. */
static _Thread_local int note_code;
static _Thread_local char note_text[256];

void mpii_err_note(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note_text, sizeof note_text, fmt, ap);
    va_end(ap);
    note_code = code;
}

static int err_run(int kind, int handle, int code, const char *fname, const char *detail,
                   int raised)
{
    if (BASE_UNLIKELY(note_code) && note_code == code) {
        if (!detail || !*detail)
            detail = note_text;
        note_code = 0;
    }
    if (kind == FMPL_MPI_KIND_SESSION && mpii.state == MPII_ACTIVE) {
        mpii_session_t *ss = mpii_session_get(handle);
        if (ss)
            return errh_invoke(ss->errh, kind, handle, code, fname, detail, raised);
    }
    if (kind == FMPL_MPI_KIND_WIN && mpii.state == MPII_ACTIVE) {
        int weh = mpii_win_errhandler(handle);
        if (weh != MPI_ERRHANDLER_NULL)
            return errh_invoke(weh, kind, handle, code, fname, detail, raised);
    }
    if (kind == FMPL_MPI_KIND_FILE && mpii.state == MPII_ACTIVE) /* file.c */
        return errh_invoke(mpii_file_errh(handle), kind, handle, code, fname, detail, raised);
    MPI_Comm target = err_target(kind, handle);
    mpii_comm_t *c = target != MPI_COMM_NULL ? mpii_comm_get(target) : NULL;
    return errh_invoke(c ? c->errh : MPI_ERRORS_ARE_FATAL, FMPL_MPI_KIND_COMM, target, code, fname,
                       detail, raised);
}

/* Contract: mpi_impl.h. */
int mpii_err_call(int kind, int handle, int code, const char *fname)
{
    return err_run(kind, handle, code, fname, NULL, 0);
}

int mpii_err_with(MPI_Errhandler eh, int kind, int handle, int code, const char *fname,
                  const char *detail)
{
    return errh_invoke(eh, kind, handle, code, fname, detail, 1);
}

int mpii_errh_check(MPI_Errhandler h, int kind)
{
    mpii_errhandler_t *e = errh_obj(h);
    if (!e)
        return MPI_ERR_ARG;
    return e->predefined || e->kind == kind ? MPI_SUCCESS : MPI_ERR_ARG;
}

int mpii_err(int kind, int handle, int code, const char *fname)
{
    return err_run(kind, handle, code, fname, NULL, 1);
}

int mpii_errf(int kind, int handle, int code, const char *fname, const char *fmt, ...)
{
    char detail[256] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    return err_run(kind, handle, code, fname, detail, 1);
}

/* Contract: mpi_impl.h. */
_Noreturn void mpii_err_abort(int code, const char *fname, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    err_abort(code, fname, detail);
}

/* Contract: mpi_impl.h. */
void mpii_bad_handle_text(char *buf, size_t len, int code, const char *arg, int h)
{
    static const struct {
        int code, null;
        const char *null_name, *what;
    } names[] = {
        {MPI_ERR_COMM, MPI_COMM_NULL, "MPI_COMM_NULL", "a communicator"},
        {MPI_ERR_GROUP, MPI_GROUP_NULL, "MPI_GROUP_NULL", "a group"},
        {MPI_ERR_INFO, MPI_INFO_NULL, "MPI_INFO_NULL", "an info object"},
        {MPI_ERR_TYPE, MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL", "a datatype"},
    };
    size_t i = 0;
    while (i + 1 < sizeof names / sizeof *names && names[i].code != code)
        i++;
    if (h == names[i].null)
        snprintf(buf, len, "%s is %s", arg, names[i].null_name);
    else
        snprintf(buf, len, "%s %#x is not %s", arg, (unsigned)h, names[i].what);
}

/* Contract: mpi_impl.h. */
int mpii_err_handle(int kind, int obj, int code, const char *fname, const char *arg, int h)
{
    char d[128];
    mpii_bad_handle_text(d, sizeof d, code, arg, h);
    return mpii_errf(kind, obj, code, fname, "%s", d);
}

int mpii_err_from_fmpl(int fmpl_code)
{
    switch (fmpl_code) {
    case FMPL_SUCCESS: return MPI_SUCCESS;
    case FMPL_ERR_ARG: return MPI_ERR_ARG;
    case FMPL_ERR_RANK: return MPI_ERR_RANK;
    case FMPL_ERR_COMM: return MPI_ERR_COMM;
    case FMPL_ERR_MAI: return MPI_ERR_TAG;
    case FMPL_ERR_BUSY: return MPI_ERR_PENDING;
    case FMPL_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case FMPL_ERR_SPOOL: return MPI_ERR_BUFFER;
    case FMPL_ERR_TIMEOUT: return MPI_ERR_OTHER;
    case FMPL_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case FMPL_ERR_NOT_INIT: return MPI_ERR_OTHER;
    case FMPL_ERR_INIT: return MPI_ERR_OTHER;
    case FMPL_ERR_TYPE: return MPI_ERR_TYPE;
    case FMPL_ERR_OP: return MPI_ERR_OP;
    case FMPL_ERR_ROOT: return MPI_ERR_ROOT;
    case FMPL_ERR_BUFFER: return MPI_ERR_BUFFER;
    case FMPL_ERR_KEY: return MPI_ERR_INTERN;
    case FMPL_ERR_PEER: return MPI_ERR_PROC_ABORTED;
    case FMPL_ERR_SYS: return MPI_ERR_OTHER;
    case FMPL_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case FMPL_ERR_NO_PENDING: return MPI_ERR_REQUEST;
    case FMPL_ERR_INTERNAL: return MPI_ERR_INTERN;
    case FMPL_ERR_MISMATCH: return MPI_ERR_COUNT;
    default: return MPI_ERR_UNKNOWN;
    }
}

/* ---------------------------------------------------------------- classes, strings */

/* MPI_Error_string: the message of a predefined class or a user code (its string, or ""
 * when none was added). Works at any time. */
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Error_string");
    if (code_class(errorcode) < 0)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Error_string");
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", code_msg(errorcode));
    *resultlen = BASE_MIN(n, MPI_MAX_ERROR_STRING - 1);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Error_string, PMPI_Error_string)

/* MPI_Error_class: the class of a valid code. Works at any time. */
int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Error_class");
    int c = code_class(errorcode);
    if (c < 0)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Error_class");
    *errorclass = c;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Error_class, PMPI_Error_class)

static int add_code(int cls)
{
    if (nucodes == capucodes) {
        int cap = capucodes ? capucodes * 2 : 16;
        user_code_t *u = realloc(ucodes, (size_t)cap * sizeof *u);
        if (!u)
            return -1;
        ucodes = u;
        capucodes = cap;
    }
    int code = MPI_ERR_LASTCODE + 1 + nucodes;
    ucodes[nucodes].cls = cls < 0 ? code : cls;
    ucodes[nucodes].str = NULL;
    nucodes++;
    mpii_lastusedcode = code;
    return code;
}

/* MPI_Add_error_class: a new class above MPI_ERR_LASTCODE (MPI_LASTUSEDCODE follows). */
int PMPI_Add_error_class(int *errorclass)
{
    MPII_CHECK_INIT("MPI_Add_error_class");
    if (!errorclass)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Add_error_class");
    int c = add_code(-1);
    if (c < 0)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Add_error_class");
    *errorclass = c;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Add_error_class, PMPI_Add_error_class)

/* MPI_Add_error_code: a new code of an existing class (predefined or user). */
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    MPII_CHECK_INIT("MPI_Add_error_code");
    if (!errorcode)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Add_error_code");
    if (code_class(errorclass) != errorclass)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class", errorclass);
    int c = add_code(errorclass);
    if (c < 0)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Add_error_code");
    *errorcode = c;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Add_error_code, PMPI_Add_error_code)

/* MPI_Add_error_string: the string of a user code or class (replaces an earlier one);
 * predefined codes cannot be changed (MPI_ERR_ARG). */
int PMPI_Add_error_string(int errorcode, const char *string)
{
    MPII_CHECK_INIT("MPI_Add_error_string");
    if (!string)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Add_error_string");
    if (errorcode <= MPI_ERR_LASTCODE || code_class(errorcode) < 0)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Add_error_string",
                         "%d is not a code added by MPI_Add_error_code/class", errorcode);
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Add_error_string",
                         "string longer than MPI_MAX_ERROR_STRING-1");
    char *s = strdup(string);
    if (!s)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Add_error_string");
    user_code_t *u = &ucodes[errorcode - MPI_ERR_LASTCODE - 1];
    free(u->str);
    u->str = s;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Add_error_string, PMPI_Add_error_string)

/* ---------------------------------------------------------------- error handlers */

static int errh_create(int kind, void (*fn)(void), MPI_Errhandler *errhandler, const char *fname)
{
    if (!fn || !errhandler)
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_errhandler_t *e = calloc(1, sizeof *e);
    if (!e)
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    e->refs = 1;
    e->kind = kind;
    e->predefined = EH_USER;
    e->fn = fn;
    int h = mpii_handle_new(FMPL_MPI_KIND_ERRHANDLER, e);
    if (h == MPI_ERRHANDLER_NULL) {
        free(e);
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    }
    *errhandler = h;
    return MPI_SUCCESS;
}

/* MPI_Comm_create_errhandler: a user handler for communicators (refs 1: the handle). */
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    MPII_CHECK_INIT("MPI_Comm_create_errhandler");
    return errh_create(FMPL_MPI_KIND_COMM, (void (*)(void))comm_errhandler_fn, errhandler,
                       "MPI_Comm_create_errhandler");
}
MPII_WEAK(MPI_Comm_create_errhandler, PMPI_Comm_create_errhandler)

/* MPI_Win_create_errhandler: a user handler for windows (none exist yet). */
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    MPII_CHECK_INIT("MPI_Win_create_errhandler");
    return errh_create(FMPL_MPI_KIND_WIN, (void (*)(void))win_errhandler_fn, errhandler,
                       "MPI_Win_create_errhandler");
}
MPII_WEAK(MPI_Win_create_errhandler, PMPI_Win_create_errhandler)

/* MPI_File_create_errhandler: a user handler for files (none exist yet). */
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    MPII_CHECK_INIT("MPI_File_create_errhandler");
    return errh_create(FMPL_MPI_KIND_FILE, (void (*)(void))file_errhandler_fn, errhandler,
                       "MPI_File_create_errhandler");
}
MPII_WEAK(MPI_File_create_errhandler, PMPI_File_create_errhandler)

/* MPI_Session_create_errhandler: a user handler for sessions. Like MPI_Session_init,
 * callable before MPI_Init. */
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    return errh_create(FMPL_MPI_KIND_SESSION, (void (*)(void))session_errhandler_fn, errhandler,
                       "MPI_Session_create_errhandler");
}
MPII_WEAK(MPI_Session_create_errhandler, PMPI_Session_create_errhandler)

/* MPI_Comm_set_errhandler: attaches a predefined or communicator handler to comm. */
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    MPII_CHECK_INIT("MPI_Comm_set_errhandler");
    mpii_comm_t *c = mpii_comm_get(comm);
    if (!c)
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, "MPI_Comm_set_errhandler");
    mpii_errhandler_t *e = errh_obj(errhandler);
    if (!e)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler");
    if (!e->predefined && e->kind != FMPL_MPI_KIND_COMM)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                         "the error handler was not created for communicators");
    mpii_errh_ref(errhandler);
    int old = c->errh;
    c->errh = errhandler;
    mpii_errh_release(old);
    if (comm == MPI_COMM_SELF)
        self_errh_set = 1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_set_errhandler, PMPI_Comm_set_errhandler)

/* MPI_Comm_get_errhandler: a new reference to comm's handler (free it with
 * MPI_Errhandler_free). */
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    MPII_CHECK_INIT("MPI_Comm_get_errhandler");
    mpii_comm_t *c = mpii_comm_get(comm);
    if (!c)
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, "MPI_Comm_get_errhandler");
    if (!errhandler)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler");
    mpii_errh_ref(c->errh);
    *errhandler = c->errh;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_get_errhandler, PMPI_Comm_get_errhandler)

/* MPI_Errhandler_free: drops the user's reference; the handler lives on while objects use
 * it. Predefined handlers (as returned by *_get_errhandler) just set the handle to
 * MPI_ERRHANDLER_NULL. */
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Errhandler_free");
    if (!errh_obj(*errhandler))
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler");
    mpii_errh_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Errhandler_free, PMPI_Errhandler_free)

/* MPI_Comm_call_errhandler: runs comm's handler with errorcode; MPI_SUCCESS when it
 * returns (MPI_ERRORS_RETURN, or a user handler). */
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    MPII_CHECK_INIT("MPI_Comm_call_errhandler");
    if (!mpii_comm_get(comm))
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, "MPI_Comm_call_errhandler");
    if (code_class(errorcode) < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Comm_call_errhandler",
                              "invalid error code %d", errorcode);
    (void)mpii_err_call(FMPL_MPI_KIND_COMM, comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_call_errhandler, PMPI_Comm_call_errhandler)

/* Windows and files do not exist yet: every handle of theirs is invalid. */
#define NO_OBJECT(cls, what, fname)                                                                \
    MPII_ERRF(cls, fname,                                                                          \
              "no " what " exists in this version of FMPL (one-sided windows and MPI-IO "          \
              "are not implemented)")

/* MPI_Win_set/get/call_errhandler live with the windows (win.c). */

/* MPI_Session_set_errhandler: attaches a predefined or session handler to session. */
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Session_set_errhandler";
    MPII_CHECK_INIT(fn);
    mpii_session_t *ss = mpii_session_get(session);
    if (!ss)
        return MPII_ERR(MPI_ERR_SESSION, fn);
    if (mpii_errh_check(errhandler, FMPL_MPI_KIND_SESSION) != MPI_SUCCESS)
        return mpii_errf(FMPL_MPI_KIND_SESSION, session, MPI_ERR_ARG, fn,
                         "not a predefined or session error handler");
    mpii_errh_ref(errhandler);
    int old = ss->errh;
    ss->errh = errhandler;
    mpii_errh_release(old);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_set_errhandler, PMPI_Session_set_errhandler)

/* MPI_Session_get_errhandler: a new reference to session's handler. */
int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Session_get_errhandler";
    MPII_CHECK_INIT(fn);
    mpii_session_t *ss = mpii_session_get(session);
    if (!ss)
        return MPII_ERR(MPI_ERR_SESSION, fn);
    if (!errhandler)
        return mpii_err(FMPL_MPI_KIND_SESSION, session, MPI_ERR_ARG, fn);
    mpii_errh_ref(ss->errh);
    *errhandler = ss->errh;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_get_errhandler, PMPI_Session_get_errhandler)

/* MPI_Session_call_errhandler: runs session's handler with errorcode; MPI_SUCCESS when it
 * returns. */
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char fn[] = "MPI_Session_call_errhandler";
    MPII_CHECK_INIT(fn);
    if (!mpii_session_get(session))
        return MPII_ERR(MPI_ERR_SESSION, fn);
    if (code_class(errorcode) < 0)
        return mpii_errf(FMPL_MPI_KIND_SESSION, session, MPI_ERR_ARG, fn, "invalid error code %d",
                         errorcode);
    (void)mpii_err_call(FMPL_MPI_KIND_SESSION, session, errorcode, fn);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_call_errhandler, PMPI_Session_call_errhandler)
