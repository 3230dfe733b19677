/* mpi_impl.h — private to src/mpi: the MPI layer's object model, shared by its files.
 *
 * The MPI face sits on the native layer: MPI_Init runs fmpl_init (so boot, the vnic and
 * the collective area are up) and takes the vnic from fmpl_tool.h. Everything below
 * talks to the vnic, dt and coll interfaces only.
 *
 * Handles (include/mpi.h): an int with the kind in bits 30..26 and an index below.
 * Index 0 is the kind's *_NULL; indices 1..FMPL_MPI_PREDEF_MAX-1 are predefined objects;
 * objects the library creates get indices from FMPL_MPI_PREDEF_MAX up. Each kind has one
 * table (mpii_table_t) mapping index -> object pointer. Predefined datatypes are not in
 * the table: their handle encodes size, class and id (FMPL_MPI_DT_*), and
 * mpii_type_get() maps them to dt's predefined types.
 *
 * Every MPI function is defined as PMPI_x, and MPI_x is a weak alias of it
 * (MPII_WEAK(MPI_x, PMPI_x) next to the definition), so a profiling library can define
 * MPI_x and call PMPI_x. Internal calls use the PMPI_ names or the mpii_ functions.
 *
 * Errors: a function that fails returns mpii_err(obj_kind, handle, class, "MPI_X"),
 * which runs the error handler attached to the communicator (or window, file,
 * session; MPI_COMM_WORLD's for calls without an object; MPI_ERRORS_ARE_FATAL by
 * default) and returns the code the handler leaves.
 *
 * Threading: MPI_THREAD_SERIALIZED at most: one thread at a time inside the library.
 * Nothing here takes a lock. */
#ifndef FMPL_MPI_IMPL_H
#define FMPL_MPI_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "coll/coll.h"
#include "dt/dt.h"
#include "mpi.h"
#include "vnic/vnic.h"

#define MPII_WEAK(name, target) _Pragma(MPII_STR(weak name = target))
#define MPII_STR(x) #x

/* ---------------------------------------------------------------- handle tables */

typedef struct mpii_table {
    void **obj;    /* [cap]; NULL: free index */
    int cap;       /* entries allocated */
    int next_free; /* lowest index >= FMPL_MPI_PREDEF_MAX that may be free */
    int live;      /* objects in the table (predefined included) */
} mpii_table_t;

/* One table per handle kind (FMPL_MPI_KIND_*). */
extern mpii_table_t mpii_tables[16];

/* Stores obj at a predefined index (at init). */
void mpii_handle_set(int kind, int index, void *obj);
/* Stores obj under a fresh handle of kind; returns the handle, or the kind's NULL handle
 * when out of memory. O(1) amortised. */
int mpii_handle_new(int kind, void *obj);
/* The object behind h, or NULL when h is not a live handle of that kind (NULL handle,
 * other kind, freed, garbage). Never crashes on any int. */
static inline void *mpii_handle_get(int kind, int h)
{
    if (BASE_UNLIKELY(FMPL_MPI_HANDLE_KIND(h) != kind))
        return NULL;
    int i = FMPL_MPI_HANDLE_INDEX(h);
    const mpii_table_t *t = &mpii_tables[kind];
    return BASE_LIKELY(i > 0 && i < t->cap) ? t->obj[i] : NULL;
}
/* Forgets h (the object itself is the caller's to free). */
void mpii_handle_del(int kind, int h);
/* Calls fn for every live object of kind created by the library (index >=
 * FMPL_MPI_PREDEF_MAX), in index order. fn may delete the handle it is given. */
void mpii_handle_foreach(int kind, void (*fn)(int h, void *obj, void *arg), void *arg);

/* ---------------------------------------------------------------- errors */

/* Runs the error handler of the object (kind FMPL_MPI_KIND_COMM/WIN/FILE/SESSION and its
 * handle; kind 0 or an invalid handle: MPI_COMM_WORLD's, or MPI_ERRORS_ARE_FATAL before
 * init) for error class/code `code` raised by function `fname`, and returns the code.
 * With MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT it prints "fname: message" and ends the
 * job through the launcher. */
int mpii_err(int kind, int handle, int code, const char *fname);
/* Common shorthands. */
#define MPII_ERR_COMM(comm, code, fname) mpii_err(FMPL_MPI_KIND_COMM, (comm), (code), (fname))
#define MPII_ERR(code, fname) mpii_err(0, 0, (code), (fname))
/* Maps an FMPL_ERR_* code from a lower layer to an MPI error class. */
int mpii_err_from_fmpl(int fmpl_code);

/* Fails with MPI_ERR_OTHER-class code unless MPI is initialised and not finalised. */
#define MPII_CHECK_INIT(fname)                                                                     \
    do {                                                                                           \
        if (BASE_UNLIKELY(mpii.state != MPII_ACTIVE))                                              \
            return mpii_err(0, 0, MPI_ERR_OTHER, (fname));                                         \
    } while (0)

/* ---------------------------------------------------------------- objects */

typedef struct mpii_attr mpii_attr_t; /* attribute list node (attr.c) */

typedef struct mpii_group {
    int refs;
    int size;
    int rank;   /* this process's rank in the group, or MPI_UNDEFINED */
    int *world; /* [size]: world rank of each member */
} mpii_group_t;

typedef struct mpii_errhandler {
    int refs;
    int kind; /* FMPL_MPI_KIND_COMM / WIN / FILE / SESSION: what it may be attached to */
    int predefined; /* 1: ARE_FATAL, 2: RETURN, 3: ABORT; 0: user function */
    void (*fn)(void); /* the user function, cast to its kind's type when called */
} mpii_errhandler_t;

struct mpii_match; /* p2p matching state of a communicator (p2p files) */
struct mpii_topo;  /* topology (topo.c) */

typedef struct mpii_comm {
    int refs;
    int handle;
    int rank, size;         /* in the local group */
    mpii_group_t *group;    /* local group */
    mpii_group_t *rgroup;   /* remote group of an intercommunicator; NULL when intra */
    uint32_t ctx;           /* p2p context id, the same on every member (2 ids: ctx for
                             * user p2p, ctx + 1 for the library's own traffic on this comm:
                             * collectives, comm creation) */
    int errh;               /* MPI_Errhandler */
    int info;               /* MPI_Info or MPI_INFO_NULL */
    char name[MPI_MAX_OBJECT_NAME];
    mpii_attr_t *attrs;
    struct mpii_topo *topo; /* NULL: no topology */
    struct mpii_match *match;
    coll_group_t *coll;     /* created on first use by collectives; may stay NULL */
    uint32_t coll_seq;      /* tag sequence of the library's own collectives */
} mpii_comm_t;

typedef struct mpii_type {
    int refs;
    int handle;
    dt_t *dt;
    int committed;
    char name[MPI_MAX_OBJECT_NAME];
    mpii_attr_t *attrs;
} mpii_type_t;

typedef struct mpii_op {
    int refs;
    int commute;
    MPI_User_function *fn;        /* user op; NULL for predefined */
    MPI_User_function_c *fn_c;    /* large-count user op */
} mpii_op_t;

typedef struct mpii_keyval {
    int kind; /* FMPL_MPI_KIND_COMM / DATATYPE / WIN */
    void (*copy_fn)(void);
    void (*delete_fn)(void);
    void *extra_state;
    int refs; /* the keyval plus every attribute that uses it */
} mpii_keyval_t;

/* ---------------------------------------------------------------- process state */

enum { MPII_BEFORE = 0, MPII_ACTIVE, MPII_FINALIZED };

typedef struct mpii_state {
    int state;
    int thread_level;
    int world_rank, world_size;
    vnic_t *vnic;
    boot_t *boot;
    uint64_t main_thread; /* pthread_self() at init, for MPI_Is_thread_main */
} mpii_state_t;
extern mpii_state_t mpii;

/* Returns the communicator behind a handle, or NULL (caller raises MPI_ERR_COMM). */
static inline mpii_comm_t *mpii_comm_get(MPI_Comm h)
{
    return (mpii_comm_t *)mpii_handle_get(FMPL_MPI_KIND_COMM, h);
}
/* World rank of `rank` in comm's remote group (intercomm) or group (intracomm). */
static inline int mpii_comm_peer_world(const mpii_comm_t *c, int rank)
{
    return (c->rgroup ? c->rgroup : c->group)->world[rank];
}

/* ---------------------------------------------------------------- layer-internal calls
 * Each file that owns a part exports its init/finalize and the few calls others need.
 * Init order: env (handles, errhandlers, info) -> types -> ops -> comm (WORLD, SELF) ->
 * p2p. Finalize in reverse. */
int mpii_types_init(void);
void mpii_types_finalize(void);
/* The dt type of a datatype handle (predefined or derived), or NULL (invalid handle). */
dt_t *mpii_type_get(MPI_Datatype h);
/* The type object of a derived datatype handle, or NULL (predefined or invalid). */
mpii_type_t *mpii_type_obj(MPI_Datatype h);
/* MPI_SUCCESS when the type may be used for communication (valid and committed or
 * predefined), else MPI_ERR_TYPE. */
int mpii_type_check_comm(MPI_Datatype h);

int mpii_comm_init(void); /* MPI_COMM_WORLD, MPI_COMM_SELF, MPI_GROUP_EMPTY */
void mpii_comm_finalize(void);
/* Creates a communicator object with a fresh handle: refs 1, errhandler and info
 * inherited by the caller as it sees fit. On NULL the caller raises MPI_ERR_NO_MEM. */
mpii_comm_t *mpii_comm_new(mpii_group_t *group, mpii_group_t *rgroup, uint32_t ctx);
void mpii_comm_release(mpii_comm_t *c);
/* Agrees on a fresh pair of context ids over the members of parent (collective over
 * parent: an allreduce of the free-id bitmaps on parent's library context). */
int mpii_ctx_alloc(mpii_comm_t *parent, uint32_t *ctx);
void mpii_ctx_free(uint32_t ctx);

int mpii_p2p_init(void);
void mpii_p2p_finalize(void);
/* Progress: advances the vnic (and so every pending operation). Never blocks. */
int mpii_progress(void);

/* The library's own blocking point-to-point on a communicator's library context
 * (ctx + 1): used by comm creation and the simple collectives. Contiguous bytes. */
int mpii_lib_send(mpii_comm_t *c, const void *buf, size_t len, int dst, int tag);
int mpii_lib_recv(mpii_comm_t *c, void *buf, size_t len, int src, int tag);
/* Allgather / allreduce of bytes over an intracommunicator on its library context
 * (for comm creation: small data). op combines n bytes: inout op= in. */
int mpii_lib_allgather(mpii_comm_t *c, const void *send, void *recv, size_t len);
int mpii_lib_allreduce_band(mpii_comm_t *c, uint64_t *words, int n);

#endif
