/* mpi_impl.h — private to src/mpi: the MPI layer's object model, shared by its files.
 *
 * The MPI face sits on the runtime (runtime.h): MPI_Init runs fmpl_init, which opens it
 * (boot, the vnic, the collective area and the world group) and brings up the native
 * layer beside it, and takes the runtime's handles. Everything below talks to the vnic,
 * dt and coll interfaces only.
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

/* MPI_X as a weak alias of PMPI_X (the profiling interface), exported: the library is
 * built with hidden visibility, and clang would leave a `#pragma weak` alias local. */
#define MPII_WEAK(name, target)                                                                    \
    extern __typeof__(target) name __attribute__((weak, alias(#target), visibility("default")));

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
 * when out of memory. O(1) amortised. Inline when the index next_free is free (a request
 * freed and another created); mpii_handle_new_scan searches and grows the table. */
int mpii_handle_new_scan(int kind, void *obj);
static inline int mpii_handle_new(int kind, void *obj)
{
    mpii_table_t *t = &mpii_tables[kind];
    int i = t->next_free;
    if (BASE_LIKELY(i >= FMPL_MPI_PREDEF_MAX && i < t->cap && !t->obj[i])) {
        t->obj[i] = obj;
        t->live++;
        t->next_free = i + 1;
        return FMPL_MPI_HANDLE(kind, i);
    }
    return mpii_handle_new_scan(kind, obj);
}
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
/* Forgets h (the object itself is the caller's to free). Inline for a live handle the
 * library created; mpii_handle_del_slow takes the rest (predefined, invalid). */
void mpii_handle_del_slow(int kind, int h);
static inline void mpii_handle_del(int kind, int h)
{
    mpii_table_t *t = &mpii_tables[kind];
    int i = FMPL_MPI_HANDLE_INDEX(h);
    if (BASE_UNLIKELY(FMPL_MPI_HANDLE_KIND(h) != kind || i < FMPL_MPI_PREDEF_MAX || i >= t->cap ||
                      !t->obj[i])) {
        mpii_handle_del_slow(kind, h);
        return;
    }
    t->obj[i] = NULL;
    t->live--;
    if (i < t->next_free)
        t->next_free = i;
}
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
/* Runs the handler of the object like mpii_err, for the program's own code (MPI_*_call_
 * errhandler): the code reaches the handler as it is, where mpii_err hands a detailed
 * code (errors.c) for a class the library raises. */
int mpii_err_call(int kind, int handle, int code, const char *fname);
/* Explains an error of class code that a caller further up will raise without detail
 * text (a helper deep in a call that returns only a class): the next raise of that class
 * by this thread takes the text as its detail. */
void mpii_err_note(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
    int kind;         /* FMPL_MPI_KIND_COMM / WIN / FILE / SESSION: what it may be attached to */
    int predefined;   /* 1: ARE_FATAL, 2: RETURN, 3: ABORT; 0: user function */
    void (*fn)(void); /* the user function, cast to its kind's type when called */
} mpii_errhandler_t;

struct mpii_match; /* p2p matching state of a communicator (p2p files) */
struct mpii_topo;  /* topology (topo.c) */

typedef struct mpii_comm {
    int refs;
    int handle;
    int rank, size;       /* in the local group */
    mpii_group_t *group;  /* local group */
    mpii_group_t *rgroup; /* remote group of an intercommunicator; NULL when intra */
    uint32_t ctx;         /* p2p context id, the same on every member (2 ids: ctx for
                           * user p2p, ctx + 1 for the library's own traffic on this comm:
                           * collectives, comm creation) */
    int errh;             /* MPI_Errhandler */
    int info;             /* MPI_Info or MPI_INFO_NULL */
    char name[MPI_MAX_OBJECT_NAME];
    mpii_attr_t *attrs;
    struct mpii_topo *topo; /* NULL: no topology */
    struct mpii_match *match;
    struct mpii_comm *local;    /* (comm.c) intercommunicator: an internal intracommunicator
                                 * over the local group with its own context pair, no handle,
                                 * for the library's local traffic; NULL when intra */
    struct mpii_ccache *ccache; /* (coll_sched.c) schedules of recent blocking collectives */
    coll_group_t *cgroup;       /* mailbox group for small collectives (coll.h), or NULL:
                                 * MPI_COMM_WORLD shares the native world's; others get
                                 * theirs at first use (mpii_comm_cgroup) */
    int slotted;                /* (comm.c) its pair came with a mailbox slot: it has a
                                 * group (made at first use, retired by MPI_Comm_free) */
    uint32_t coll_seq;          /* tag sequence of the library's own collectives */
    uint32_t lane_seq;          /* persistent collectives that agreed on a lane (coll_sched.c) */
    struct mpii_cnode *cnode;   /* (coll_node.c) node map for node-aware collectives; NULL
                                 * until the first collective that asks */
} mpii_comm_t;

/* (comm.c) c's mailbox group, made here at the first call on a communicator whose pair
 * came with a slot (the members need not make theirs at the same time: coll.h); NULL
 * when c has none (its collectives then run over point-to-point). Never blocks. */
coll_group_t *mpii_comm_cgroup_make(mpii_comm_t *c);
static inline coll_group_t *mpii_comm_cgroup(mpii_comm_t *c)
{
    return c->cgroup || !c->slotted ? c->cgroup : mpii_comm_cgroup_make(c);
}
/* (comm.c) At MPI_Finalize, before the point-to-point engine stops: retires the mailbox
 * groups of the communicators the program did not free and waits until every retirement
 * of this process is over. Collective over the job; blocks. */
int mpii_comm_groups_finalize(void);

/* (coll_sched.c) Frees c's cached collective schedules (at the communicator's release). */
void mpii_sched_cache_free(mpii_comm_t *c);
/* (coll_node.c) Frees c's node map (at the communicator's release). */
void mpii_node_free(mpii_comm_t *c);

typedef struct mpii_type {
    int refs;
    int handle;
    dt_t *dt;
    int committed;
    char name[MPI_MAX_OBJECT_NAME];
    mpii_attr_t *attrs;
    int large; /* (types.c) 1: built by a large-count (_c) constructor, so
                * MPI_Type_get_envelope_c/get_contents_c report its counts as large counts */
} mpii_type_t;

typedef struct mpii_op {
    int refs;
    int commute;
    MPI_User_function *fn;     /* user op; NULL for predefined */
    MPI_User_function_c *fn_c; /* large-count user op */
} mpii_op_t;

typedef struct mpii_keyval {
    int kind; /* FMPL_MPI_KIND_COMM / DATATYPE / WIN */
    void (*copy_fn)(void);
    void (*delete_fn)(void);
    void *extra_state;
    int refs;  /* the keyval plus every attribute that uses it */
    int freed; /* (env) 1 after MPI_*_free_keyval: the handle no longer names it for users,
                * but attributes still using it keep it (and its handle) alive */
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

/* A session (session.c, MPI-4.0 11.3). */
typedef struct mpii_session {
    int handle;
    int errh;         /* MPI_Errhandler (a reference) */
    MPI_Info info;    /* MPI_Session_get_info's hints: the init info's, thread_level as given */
    int thread_level; /* provided */
} mpii_session_t;
static inline mpii_session_t *mpii_session_get(MPI_Session h)
{
    return (mpii_session_t *)mpii_handle_get(FMPL_MPI_KIND_SESSION, h);
}

/* (env.c) The runtime under the world model and the sessions: acquire starts it for its
 * first user (MPI_Init or MPI_Session_init; collective over the job), release ends it
 * with the last (collective over the job). Acquire returns MPI_ERR_OTHER, not raised,
 * once the runtime has ended (it cannot start again). */
int mpii_runtime_acquire(int *argc, char ***argv, int required, const char *fname);
int mpii_runtime_release(const char *fname);

/* Returns the communicator behind a handle, or NULL (caller raises MPI_ERR_COMM). */
static inline mpii_comm_t *mpii_comm_get(MPI_Comm h)
{
    return (mpii_comm_t *)mpii_handle_get(FMPL_MPI_KIND_COMM, h);
}
/* Checks communicator argument arg = h of fname: MPI_SUCCESS and *cp, or MPI_ERR_COMM
 * raised (its code returned, *cp NULL) when h is not a communicator or not of the kind
 * wanted. */
enum { MPII_COMM_ANY, MPII_COMM_INTRA, MPII_COMM_INTER };
int mpii_comm_arg(MPI_Comm h, const char *arg, int want, const char *fname, mpii_comm_t **cp);
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
/* (types_f90.c) Whether h is a type of MPI_Type_create_f90_*: then *combiner, and its
 * *ni integers ({r} or {p, r}); mpii_type_f90_reset forgets them all (finalize). */
int mpii_type_f90_contents(MPI_Datatype h, int *combiner, int *ni, int ints[2]);
void mpii_type_f90_reset(void);
/* The dt type of a datatype handle (predefined or derived), or NULL (invalid handle). */
dt_t *mpii_type_get(MPI_Datatype h);
/* The dt type of a datatype usable for communication (predefined, or derived and
 * committed), or NULL: the inline fast form of mpii_type_check_comm + mpii_type_get.
 * mpii_type_fast (filled by mpii_types_init) maps predefined ids to their handle and dt. */
typedef struct mpii_type_fast {
    MPI_Datatype h;
    dt_t *dt;
} mpii_type_fast_t;
extern mpii_type_fast_t mpii_type_fast[FMPL_MPI_DTID_MAX + 1];
dt_t *mpii_type_comm_derived(MPI_Datatype h);
static inline dt_t *mpii_type_comm_dt(MPI_Datatype h)
{
    if (BASE_LIKELY(FMPL_MPI_DT_IS_PREDEF(h))) {
        unsigned id = (unsigned)FMPL_MPI_DT_ID(h);
        return id <= FMPL_MPI_DTID_MAX && mpii_type_fast[id].h == h ? mpii_type_fast[id].dt : NULL;
    }
    return mpii_type_comm_derived(h);
}
/* (types.c) A handle for t: the predefined one, or a new handle with a new reference. */
int mpii_type_handle_for(dt_t *t, MPI_Datatype *out);
/* The type object of a derived datatype handle, or NULL (predefined or invalid). */
mpii_type_t *mpii_type_obj(MPI_Datatype h);
/* MPI_SUCCESS when the type may be used for communication (valid and committed or
 * predefined), else MPI_ERR_TYPE. */
int mpii_type_check_comm(MPI_Datatype h);
/* (types.c) The attribute list of any valid datatype handle, predefined ones included
 * (for attr.c's MPI_Type_set/get/delete_attr), or NULL for an invalid handle.
 * Operations in flight keep a datatype alive with dt_retain(mpii_type_get(h)) and
 * dt_release() at completion: MPI_Type_free drops only the handle's reference. */
mpii_attr_t **mpii_type_attrs(MPI_Datatype h);

/* (op.c) Reduction operations. Predefined ops need no init (mpii_ops_init only resets
 * state; mpii_ops_finalize frees user ops still alive). */
int mpii_ops_init(void);
void mpii_ops_finalize(void);
/* The op object behind a handle (predefined or user), or NULL (invalid, MPI_OP_NULL). */
mpii_op_t *mpii_op_get(MPI_Op h);
/* An operation in flight that must survive MPI_Op_free takes o->refs++ and calls
 * mpii_op_release at completion; the last reference frees a user op (no-op on
 * predefined ops). */
void mpii_op_release(mpii_op_t *o);
/* The reduction kernel: inout[i] = in[i] op inout[i] for count elements of type (a user
 * op's function is called with the handle `type`, in chunks of INT_MAX elements for an
 * MPI_User_function). Returns MPI_SUCCESS, MPI_ERR_OP for an invalid op or an op/type
 * pair MPI-4.0 section 6.9.2 forbids (a predefined op on a derived type included),
 * MPI_ERR_TYPE for an invalid type. count 0 only checks the pair (buffers may be NULL).
 * MPI_REPLACE copies in to inout and MPI_NO_OP does nothing, on any valid type (for
 * accumulate); reductions (MPI_Reduce_local, collectives) must reject these two. Raises
 * no error handler. */
int mpii_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype type);
/* The same with op and type already resolved (o of handle op, t of type; kept alive by the
 * caller, so the handles may have been freed): user ops get `type` as their datatype. */
int mpii_op_apply_obj(mpii_op_t *o, MPI_Op op, const void *in, void *inout, MPI_Count count,
                      MPI_Datatype type, dt_t *t);
/* The kernel of a predefined reduction op on a predefined type, for a caller that applies
 * the pair many times (a cached or persistent schedule): k(*id, in, inout, n) does what
 * mpii_op_apply(op, in, inout, n, type) does, without resolving the handles again.
 * NULL (use mpii_op_apply) when op is not a predefined reduction (a user op, MPI_REPLACE,
 * MPI_NO_OP, an invalid handle) or type is not predefined. */
typedef int (*mpii_kernel_t)(int id, const void *in, void *inout, int64_t n);
mpii_kernel_t mpii_op_kernel(MPI_Op op, MPI_Datatype type, int *id);

int mpii_comm_init(void); /* MPI_COMM_WORLD, MPI_COMM_SELF, MPI_GROUP_EMPTY */
void mpii_comm_finalize(void);
/* Creates a communicator object with a fresh handle: refs 1, errhandler and info
 * inherited by the caller as it sees fit. On NULL the caller raises MPI_ERR_NO_MEM.
 * (comm.c) On success it takes over the caller's references to group and rgroup (on
 * NULL they stay the caller's); errh starts as MPI_ERRORS_ARE_FATAL (no reference
 * taken), info as MPI_INFO_NULL. mpii_comm_release drops a reference: at the last one
 * the groups, topology, context pair, errhandler reference and info go. */
mpii_comm_t *mpii_comm_new(mpii_group_t *group, mpii_group_t *rgroup, uint32_t ctx);
void mpii_comm_release(mpii_comm_t *c);
/* Agrees on a fresh pair of context ids over the members of parent (collective over
 * parent: rounds of AND-allreduces of the free-id bitmaps on parent's library context,
 * see comm.c "context ids"; it never waits for a pending MPI_Comm_idup). */
int mpii_ctx_alloc(mpii_comm_t *parent, uint32_t *ctx);
void mpii_ctx_free(uint32_t ctx);

int mpii_p2p_init(void);
/* (coll_sched.c) Reads the MPI collective thresholds (FMPL_MPI_BCAST_LARGE...). */
int mpii_coll_tune_init(void);
void mpii_p2p_finalize(void);
/* Progress: advances the vnic (and so every pending operation). Never blocks. */
int mpii_progress(void);

/* The library's own blocking point-to-point on a communicator's library context
 * (ctx + 1): used by comm creation and the simple collectives. Contiguous bytes. */
/* (dpm.c) Connecting jobs. Ids in groups (world[]) are vnic peer ids: world ranks, and
 * ids >= world size for processes of other jobs; arrays indexed by them have
 * mpii_peer_bound() entries. mpii_fd_exchange: writes len bytes of mine to the stream
 * socket fd and reads len bytes of the other side's into theirs (MPI_ERR_PORT when the
 * connection fails). mpii_intercomm_sock (comm.c): the intercommunicator of local group
 * l with the remote processes rpeer[rsize] (registered peer ids), its context pair agreed
 * over l and, by root, through sock with the other side's root. Collective over l. */
int mpii_peer_bound(void);
/* The checks that accept, connect and spawn share: l (the handle comm's) is an
 * intracommunicator, root a rank of it, the output handle not NULL. MPI_SUCCESS or the
 * class, raised on comm. */
int mpii_dpm_root_args(mpii_comm_t *l, int root, const MPI_Comm *newcomm, const char *fn,
                       MPI_Comm comm);
/* (spawn.c) At the end of MPI_Init: a spawned job's MPI_COMM_WORLD connects to its
 * parents (MPI_Comm_get_parent); nothing for other jobs. Collective over the job. */
int mpii_spawn_parent_connect(void);
int mpii_fd_exchange(int fd, const void *mine, void *theirs, size_t len);
int mpii_intercomm_sock(mpii_comm_t *l, int root, int sock, int rsize, const int *rpeer,
                        mpii_comm_t **out);

int mpii_lib_send(mpii_comm_t *c, const void *buf, size_t len, int dst, int tag);
int mpii_lib_recv(mpii_comm_t *c, void *buf, size_t len, int src, int tag);
/* Allgather / allreduce of bytes over an intracommunicator on its library context
 * (for comm creation: small data). op combines n bytes: inout op= in. */
int mpii_lib_allgather(mpii_comm_t *c, const void *send, void *recv, size_t len);
int mpii_lib_allreduce_band(mpii_comm_t *c, uint64_t *words, int n);

/* ---------------------------------------------------------------- mpicomm part
 * (group.c, comm.c, topo.c, libcoll.c) */

/* Groups (group.c). mpii_group_new(size): refs 1, world[] to be filled by the caller,
 * then mpii_group_finish computes rank; size 0 gives the static empty group
 * (MPI_GROUP_EMPTY, never freed). mpii_group_get: the group of a handle (MPI_GROUP_EMPTY
 * included) or NULL. mpii_group_handle gives g's reference (the caller's) to a new handle
 * in *out (MPI_GROUP_EMPTY for the empty group); on MPI_ERR_NO_MEM the reference is
 * dropped. mpii_group_compare: MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL, -1 out of memory. */
extern mpii_group_t mpii_group_empty;
mpii_group_t *mpii_group_new(int size);
void mpii_group_finish(mpii_group_t *g);
void mpii_group_release(mpii_group_t *g);
mpii_group_t *mpii_group_get(MPI_Group h);
int mpii_group_handle(mpii_group_t *g, MPI_Group *out);
int mpii_group_compare(const mpii_group_t *g1, const mpii_group_t *g2);

/* The tag of the library collectives below (on the library context ctx + 1, where user
 * tags appear only through MPI_Intercomm_create / MPI_Comm_create_group, as
 * MPII_TAG_USERLIB(tag): bit 30 set keeps them apart from the tags of the collectives'
 * schedules, 0..MPII_TAG_UB - 1, e.g. an MPI_Comm_idup pending on the same communicator,
 * which Comm_create_group is not ordered with). */
#define MPII_TAG_LIBCOLL MPII_TAG_UB
#define MPII_TAG_USERLIB(tag) ((int)((unsigned)(tag) | 0x40000000u))
/* Partitioned communication (p2p_part.c) on the library context: negative tags, the
 * matching HELLO of a user tag (0..MPII_TAG_UB) and the data of a send partition id
 * (0..MPII_TAG_UB - 1, so never MPI_ANY_TAG). */
#define MPII_TAG_PART_HELLO(tag) ((int)((unsigned)(tag) | 0x80000000u))
#define MPII_TAG_PART_DATA(id) ((int)((unsigned)(id) | 0xC0000000u))
/* Tagged forms of the library collectives (libcoll.c) over a subset of an
 * intracommunicator: member i is rank map[i] of c (map NULL: every rank of c, p = c->size,
 * me = c->rank), p members, this process is member me; root is a member index. Return an
 * MPI error class without raising it. mpii_lib_send/recv must accept any tag in
 * 0..MPII_TAG_UB or MPII_TAG_USERLIB(0..MPII_TAG_UB) and any mpii_comm_t whose
 * group/rgroup/rank/size/ctx are set, including the internal ones without a handle (an
 * intercommunicator's `local`). */
int mpii_lib_bcast_tag(mpii_comm_t *c, const int *map, int p, int me, void *buf, size_t len,
                       int root, int tag);
int mpii_lib_allgather_tag(mpii_comm_t *c, const int *map, int p, int me, const void *send,
                           void *recv, size_t len, int tag);
int mpii_lib_allreduce_band_tag(mpii_comm_t *c, const int *map, int p, int me, uint64_t *words,
                                int n, int tag);

/* (comm.c) Comm_split over intracommunicator p (collective over p): *out is the new
 * communicator (with a handle, p's errhandler) or NULL for color MPI_UNDEFINED. Returns
 * the class without raising it. For topo.c's constructors. */
int mpii_comm_split_intra(mpii_comm_t *p, int color, int key, mpii_comm_t **out);

/* Topologies (topo.c): a copy for MPI_Comm_dup (NULL in, NULL out; NULL on no memory
 * for non-NULL t is reported as MPI_ERR_NO_MEM by the caller) and the free at release. */
struct mpii_topo *mpii_topo_dup(const struct mpii_topo *t);
void mpii_topo_free(struct mpii_topo *t);

/* ---------------------------------------------------------------- env part
 * (env.c, errors.c, info.c, attr.c). MPI_Init runs mpii_errors_init, mpii_info_init,
 * mpii_attr_init before mpii_types_init; MPI_Finalize runs their finalize after
 * mpii_types_finalize. */

/* The largest tag MPI accepts (the MPI_TAG_UB attribute): p2p rejects tags above it
 * with MPI_ERR_TAG and may use the bits above it (bit 30) for its own purposes. */
#define MPII_TAG_UB 0x3FFFFFFF

/* Like mpii_err, with a detail appended to the class's message when the handler prints
 * it (MPI_ERRORS_ARE_FATAL / ABORT), e.g. "unsupported: ...". fmt may be NULL. */
int mpii_errf(int kind, int handle, int code, const char *fname, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define MPII_ERRF(code, fname, ...) mpii_errf(0, 0, (code), (fname), __VA_ARGS__)
/* Ends the job as MPI_ERRORS_ARE_FATAL would on code, whatever the handlers: for errors
 * after which this process cannot go on (the detail says why). */
_Noreturn void mpii_err_abort(int code, const char *fname, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define MPII_ERRF_COMM(comm, code, fname, ...)                                                     \
    mpii_errf(FMPL_MPI_KIND_COMM, (comm), (code), (fname), __VA_ARGS__)
/* What is wrong with handle h, passed as argument arg, for error class code
 * (MPI_ERR_COMM, _GROUP, _INFO or _TYPE: the kind of object arg must be): "comm is
 * MPI_COMM_NULL", "group 0x.. is not a group". */
void mpii_bad_handle_text(char *buf, size_t len, int code, const char *arg, int h);
/* Raises code like mpii_errf on object (kind, obj) with mpii_bad_handle_text's text. */
int mpii_err_handle(int kind, int obj, int code, const char *fname, const char *arg, int h);
/* Raises MPI_ERR_ARG on comm (MPI_COMM_NULL: the default handler) for pointer argument
 * arg of fname, which is NULL: "newcomm NULL". */
#define MPII_ERR_NULL(comm, arg, fname)                                                            \
    mpii_errf(FMPL_MPI_KIND_COMM, (comm), MPI_ERR_ARG, (fname), "%s NULL", (arg))
/* Error handler references for objects that store one (comm.c: a new communicator takes a
 * reference on the errhandler it inherits, Comm_free releases it). Predefined handlers
 * are never freed; a user handler is freed when MPI_Errhandler_free was called and the
 * last reference goes. Invalid handles are ignored. */
void mpii_errh_ref(MPI_Errhandler h);
void mpii_errh_release(MPI_Errhandler h);
/* MPI_SUCCESS when h is a predefined handler or a user one created for objects of kind
 * (FMPL_MPI_KIND_COMM / SESSION ...), else MPI_ERR_ARG. */
int mpii_errh_check(MPI_Errhandler h, int kind);
/* Runs handler eh (not attached to anything yet, e.g. MPI_Session_init's argument) for an
 * error on object (kind, handle); returns the code it leaves. detail may be NULL. */
int mpii_err_with(MPI_Errhandler eh, int kind, int handle, int code, const char *fname,
                  const char *detail);
/* (file.c) The handler of file h: its own, or MPI_FILE_NULL's for no file. */
int mpii_file_errh(MPI_File h);
int mpii_errors_init(void); /* predefined errhandlers */
void mpii_errors_finalize(void);
/* The last error code in use (MPI_LASTUSEDCODE attribute): MPI_ERR_LASTCODE until
 * MPI_Add_error_class/code add more. */
extern int mpii_lastusedcode;

/* Info objects (info.c), without raising errors (return an MPI error class): for
 * communicators' Comm_set_info / Comm_get_info / Comm_dup. mpii_info_dup copies a
 * valid info (MPI_INFO_NULL gives an empty new info); mpii_info_free frees *info (not
 * MPI_INFO_NULL, not MPI_INFO_ENV) and sets it to MPI_INFO_NULL. */
int mpii_info_dup(MPI_Info info, MPI_Info *newinfo);
int mpii_info_free(MPI_Info *info);
int mpii_info_init(int *argc, char ***argv); /* MPI_INFO_ENV */
void mpii_info_finalize(void);
/* Windows (win.c): forgets the window the inlined MPI_Win_lock looked up last. */
void mpii_win_finalize(void);

/* Attributes (attr.c). kind: FMPL_MPI_KIND_COMM / DATATYPE / WIN.
 * mpii_attr_copy runs the copy callback of every attribute of oldlist (oldhandle's
 * list) in order and builds *newlist for newhandle from those whose callback set the
 * flag (Comm_dup / Type_dup call it). A callback returning an error stops the copy:
 * *newlist is then empty (no delete callbacks run) and that error is returned.
 * mpii_attr_delete_all runs the delete callback of every attribute of *list (newest
 * first) and empties it (Comm_free / Type_free; MPI_Finalize for COMM_SELF first and
 * COMM_WORLD). A callback returning an error stops it: that attribute and the ones
 * after it stay in *list and the error is returned (the free then fails). */
int mpii_attr_copy(int kind, int oldhandle, mpii_attr_t *oldlist, int newhandle,
                   mpii_attr_t **newlist);
int mpii_attr_delete_all(int kind, int handle, mpii_attr_t **list);
int mpii_attr_init(void); /* predefined keyvals */
/* (win.c) For attr.c and errors.c: a window's attribute list, its error handler
 * (MPI_ERRHANDLER_NULL: no such window), and its predefined attribute keyval (1 and *val
 * set, or 0). */
mpii_attr_t **mpii_win_attrs(MPI_Win h);
int mpii_win_errhandler(MPI_Win h);
int mpii_win_predef_attr(MPI_Win h, int keyval, void **val);
void mpii_attr_finalize(void);

#endif
