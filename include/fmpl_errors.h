/* fmpl_errors.h — FMPL's one status type: every layer returns these codes.
 * Part of the public API (included by fmpl.h); internal layers include it too,
 * so a code travels unchanged from the transport to the user. */
#ifndef FMPL_ERRORS_H
#define FMPL_ERRORS_H

enum {
    FMPL_SUCCESS = 0,
    FMPL_ERR_ARG = 1,       /* an argument is invalid (NULL pointer, negative size, ...) */
    FMPL_ERR_RANK = 2,      /* rank out of range for the communicator */
    FMPL_ERR_COMM = 3,      /* invalid or freed communicator */
    FMPL_ERR_MAI = 4,       /* matching-area index out of range */
    FMPL_ERR_BUSY = 5,      /* the matching area is in use by an in-flight operation */
    FMPL_ERR_TRUNCATE = 6,  /* message longer than the receive buffer */
    FMPL_ERR_SPOOL = 7,     /* the send spool (fmpl_sendbuf_set) has no room */
    FMPL_ERR_TIMEOUT = 8,   /* an operation did not complete in the time allowed */
    FMPL_ERR_NOMEM = 9,     /* out of memory */
    FMPL_ERR_NOT_INIT = 10, /* fmpl_init has not been called (or fmpl_finalize has) */
    FMPL_ERR_INIT = 11,     /* initialisation failed or was repeated */
    FMPL_ERR_TYPE = 12,     /* invalid datatype */
    FMPL_ERR_OP = 13,       /* invalid reduction operation */
    FMPL_ERR_ROOT = 14,     /* invalid root */
    FMPL_ERR_BUFFER = 15,   /* invalid buffer (NULL with nonzero size, not from fmpl_alloc_mem) */
    FMPL_ERR_KEY = 16,      /* remote access with a wrong key or out of the registered bounds */
    FMPL_ERR_PEER = 17,     /* a peer died or stopped answering */
    FMPL_ERR_SYS = 18,      /* a system call failed */
    FMPL_ERR_UNSUPPORTED = 19, /* the operation is not supported by the active transport */
    FMPL_ERR_NO_PENDING = 20,  /* a wait names no pending operation */
    FMPL_ERR_INTERNAL = 21,    /* internal error: a bug, please report it */
    FMPL_ERR_MISMATCH = 22,    /* the ranks of a collective disagree on its size */
    FMPL_ERR_LAST = 23
};

#endif
