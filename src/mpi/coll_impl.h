/* coll_impl.h — private to the MPI collectives (coll_sched.c, coll_basic.c,
 * coll_reduce.c, coll_inter.c).
 *
 * Every collective call is built as a schedule of the coll layer (coll.h) whose
 * transfers run over the point-to-point engine (p2p_impl.h: mpii_lib_isend /
 * mpii_lib_irecv on the communicator's library context ctx + 1). Each call (each
 * persistent request, at its init) takes a fresh tag from the communicator's sequence
 * (mpii_coll_tag), so collectives in flight at once never match each other's messages;
 * inside one call the messages between a pair of processes are told apart by
 * non-overtaking (builders add them in the same order on both sides). No process sends
 * to itself: its own part is a local typed copy (dt_copy). Every helper returns an MPI
 * error class without raising it; the MPI_X entry points raise through mpii_err. */
#ifndef FMPL_MPI_COLL_IMPL_H
#define FMPL_MPI_COLL_IMPL_H

#include "coll/algo/algo.h"
#include "mpi/p2p_impl.h"
#include "mpi/tool_impl.h"

/* A fresh tag for one collective call on c: 0..MPII_TAG_UB-1 (never MPII_TAG_LIBCOLL). */
static inline int mpii_coll_tag(mpii_comm_t *c)
{
    int t = (int)(c->coll_seq % (uint32_t)MPII_TAG_UB);
    c->coll_seq++;
    return t;
}

/* Common entry checks: MPI initialised, comm a valid communicator (intra or inter). On
 * success *cp is the communicator and MPI_SUCCESS is returned; otherwise the error has
 * been raised and its code is returned (invalid comm: MPI_ERR_COMM on MPI_COMM_WORLD's
 * handler). Entries of operations that intercommunicators do not have (scans) refuse
 * them themselves. */
int mpii_coll_enter(MPI_Comm comm, const char *fname, mpii_comm_t **cp);

/* How many entries the per-process arrays of a collective on c have (counts, displs,
 * types): c's size, or for an intercommunicator the size of the remote group (the
 * processes the data goes to / comes from). */
static inline int mpii_coll_nproc(const mpii_comm_t *c)
{
    return c->rgroup ? c->rgroup->size : c->size;
}

/* Checks of a v-collective's per-process counts (n entries; displs may be anything):
 * MPI_ERR_ARG for a NULL array, MPI_ERR_COUNT for a negative count. */
int mpii_coll_check_counts(const int64_t *counts, const int64_t *displs, int n);

/* Checks a (buffer, count, type) argument triple: MPI_ERR_COUNT for count < 0,
 * MPI_ERR_TYPE for an invalid or uncommitted type, MPI_ERR_BUFFER for a NULL buffer with
 * count > 0 of a predefined non-empty type, or for MPI_IN_PLACE when !in_place_ok. */
int mpii_coll_check_buf(const void *buf, int64_t count, MPI_Datatype type, int in_place_ok);

/* 1 when the data of (a, acount, atype) and (b, bcount, btype) share memory, which a
 * collective's send and receive buffers must not (MPI_ERR_BUFFER). MPI_IN_PLACE, NULL
 * and empty arguments share nothing. Exact for contiguous data; with holes on either side
 * only equal start addresses count (interleaved layouts are legal). */
int mpii_coll_alias(const void *a, int64_t acount, MPI_Datatype atype, const void *b,
                    int64_t bcount, MPI_Datatype btype);

/* mpii_coll_alias of (a, acount, atype) against each of the n blocks of a v-collective
 * (counts[i] elements of btype at base + displs[i] extents): 1 when any is shared. */
int mpii_coll_alias_blocks(const void *a, int64_t acount, MPI_Datatype atype, const void *base,
                           const int64_t *counts, const int64_t *displs, MPI_Datatype btype, int n);

/* The extent of a valid datatype handle. */
static inline int64_t mpii_coll_ext(MPI_Datatype t)
{
    return dt_extent(mpii_type_get(t));
}

/* The checks above, mpii_coll_alias and mpii_coll_check_root record, when they fail, what
 * they found wrong (the argument and its value: the thread's "why"); mpii_coll_fail hands
 * it to an error of the same class (MPI_Error_string then names the argument and its
 * value, as the fatal message does) and forgets it. A caller that uses a check as a mere
 * test forgets it itself (mpii_coll_why_clear), so nothing is left for a later call. */
void mpii_coll_why_clear(void);
/* MPI_ERR_ROOT (and the why) unless 0 <= root < size. */
int mpii_coll_check_root(int root, int size);
/* Checks count/type/op of a reduction: MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP (invalid
 * op, MPI_REPLACE / MPI_NO_OP, or a pair 6.9.2 forbids), with the why. */
int mpii_coll_check_op(int64_t count, MPI_Datatype type, MPI_Op op);

/* Raises rc on comm unless it is MPI_SUCCESS, with the failed check's detail (if any);
 * returns the code the handler leaves. */
int mpii_coll_fail(MPI_Comm comm, int rc, const char *fname);

/* ------------------------------------------------------------ schedules (coll_sched.c)
 * Every collective is built as a schedule (coll.h) whose transfers are mpii_lib_isend /
 * mpii_lib_irecv on the communicator's library context, and whose local steps are typed
 * copies and reductions; then run in one of three ways (mpii_cmode_t). */

/* How a call runs: blocking (MPI_X), nonblocking (MPI_IX: *req gets a request) or
 * persistent (MPI_X_init: *req gets an inactive persistent request). fname names the
 * call in errors. */
enum { MPII_CM_BLOCK = 0, MPII_CM_NB, MPII_CM_PERSIST };
typedef struct mpii_cmode {
    int kind;
    MPI_Request *req;
    const char *fname;
    /* persistent (mpii_lane_mode): lane_ok: the call agrees on a lane (every member alike);
     * lane: this member's lane schedule or NULL, handed over to the request (whose own
     * schedule, a group schedule or a point-to-point one, runs until a lane is agreed) */
    int lane_ok;
    coll_sched_t *lane;
} mpii_cmode_t;

/* The three MPI functions of one collective, each a mode over one entry function:
 * PMPI_<name>(params) blocking, PMPI_<iname>(params, request) nonblocking and
 * PMPI_<init>(params, info, request) persistent (MPI-4.0 6.12, 6.13; no info hint is
 * used), each calling entry(args, &mode) and exported under its MPI_ name too. params
 * and args are parenthesised lists; a large-count form is a second use, with its names. */
#define MPII_LIST(...) __VA_ARGS__
#define MPII_COLL_ENTRIES(name, iname, init, entry, params, args)                                  \
    int PMPI_##name(MPII_LIST params)                                                              \
    {                                                                                              \
        const mpii_cmode_t m = {.kind = MPII_CM_BLOCK, .req = NULL, .fname = "MPI_" #name};        \
        return entry(MPII_LIST args, &m);                                                          \
    }                                                                                              \
    MPII_WEAK(MPI_##name, PMPI_##name)                                                             \
    int PMPI_##iname(MPII_LIST params, MPI_Request *request)                                       \
    {                                                                                              \
        const mpii_cmode_t m = {.kind = MPII_CM_NB, .req = request, .fname = "MPI_" #iname};       \
        return entry(MPII_LIST args, &m);                                                          \
    }                                                                                              \
    MPII_WEAK(MPI_##iname, PMPI_##iname)                                                           \
    int PMPI_##init(MPII_LIST params, MPI_Info info, MPI_Request *request)                         \
    {                                                                                              \
        (void)info;                                                                                \
        const mpii_cmode_t m = {.kind = MPII_CM_PERSIST, .req = request, .fname = "MPI_" #init};   \
        return entry(MPII_LIST args, &m);                                                          \
    }                                                                                              \
    MPII_WEAK(MPI_##init, PMPI_##init)

/* ---- checking mode (coll_verify.c, FMPL_MPI_CHECK=1) ----
 * 1 when the call in mode m on c is to be checked (the setting is on, c is an
 * intracommunicator of 2 or more). The mpii_verify_* then compare this call's arguments
 * with the other members' and raise on every member alike when they disagree: the root,
 * the predefined op, and the type signature of the data each pair exchanges. A blocking
 * call is checked at once (blocking, collective); for a nonblocking or persistent one
 * they build the check schedule, which mpii_sched_run takes (mpii_verify_take) and the
 * request runs before its own at every start. 0, or the code the handler left. Counts
 * arrays may be NULL (then the single count holds for every member); types arrays
 * likewise. */
int mpii_verify_on(const mpii_comm_t *c, const mpii_cmode_t *m);
/* The check schedule built for the call on c being entered (NULL: none), with its tag;
 * the caller owns it. */
coll_sched_t *mpii_verify_take(const mpii_comm_t *c, int *tag);
/* FMPL_MPI_CHECK itself (then no schedule is cached: every call is built, so checked). */
int mpii_verify_setting(void);
int mpii_verify_barrier(mpii_comm_t *c, const char *fname);
int mpii_verify_bcast(mpii_comm_t *c, int64_t count, MPI_Datatype type, int root,
                      const char *fname);
/* Gather (kind MPII_CK_GATHER: count x type from every rank to the root, rcounts[i] x
 * rtype expected there) or scatter (MPII_CK_SCATTER: the mirror). */
int mpii_verify_rooted(mpii_comm_t *c, int kind, int root, int64_t count, MPI_Datatype type,
                       const int64_t *rcounts, int64_t rcount, MPI_Datatype rtype,
                       const char *fname);
/* Allgather(v) (MPII_CK_ALLGATHER) and alltoall(v,w) (MPII_CK_ALLTOALL): what goes to
 * and comes from each member. */
int mpii_verify_alltoall(mpii_comm_t *c, int kind, const int64_t *scounts, int64_t scount,
                         const MPI_Datatype *stypes, MPI_Datatype stype, const int64_t *rcounts,
                         int64_t rcount, const MPI_Datatype *rtypes, MPI_Datatype rtype,
                         const char *fname);
/* Reductions (root -1 unless MPII_CK_REDUCE): operands of counts[j] (or count) x type
 * that match on every member. */
int mpii_verify_reduce(mpii_comm_t *c, int kind, int root, const int64_t *counts, int64_t count,
                       MPI_Datatype type, MPI_Op op, const char *fname);

/* What identifies a blocking call for the schedule cache: two calls with equal keys on a
 * communicator build equal schedules. Only calls whose types and op are predefined (their
 * handles never change meaning) and that take no count arrays are cached
 * (mpii_sched_key). */
typedef struct mpii_ckey {
    int kind, root;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    int pad; /* 0: keys are compared bytewise */
    int64_t scount, rcount;
    const void *sbuf, *rbuf;
} mpii_ckey_t;
enum {
    MPII_CK_BARRIER = 1,
    MPII_CK_BCAST,
    MPII_CK_GATHER,
    MPII_CK_SCATTER,
    MPII_CK_ALLGATHER,
    MPII_CK_ALLTOALL,
    MPII_CK_REDUCE,
    MPII_CK_ALLREDUCE,
    MPII_CK_RSB,
    MPII_CK_SCAN,
    MPII_CK_EXSCAN,
    MPII_CK_NEIGHBOR_ALLGATHER, /* (coll_neighbor.c) */
    MPII_CK_NEIGHBOR_ALLTOALL
};

/* Notes the path (MPII_ALG_*, tool_impl.h) of a call whose cache key is kb (NULL: a call
 * with count arrays, not followed). */
static inline void mpii_coll_note_path(const mpii_ckey_t *kb, int alg)
{
    if (kb)
        mpii_coll_note(MPII_TOOL_COLL(kb->kind), alg);
}

/* The word by which schedule s names type in its steps: it holds a reference on a derived
 * type, so the handle may be freed while s lives. */
uintptr_t mpii_sched_type(coll_sched_t *s, MPI_Datatype type);
/* A new empty schedule of c's collective traffic; NULL: out of memory. Its transfers
 * address the ranks of c (for an intercommunicator: of the remote group) until
 * mpii_sched_comm switches. */
coll_sched_t *mpii_sched_new(mpii_comm_t *c);
/* The transfers added from now on address the ranks of c: the schedule's communicator, or
 * for an intercommunicator schedule its `local` (the intracommunicator over the local
 * group). This is how an intercommunicator schedule runs the intracommunicator builders
 * below over its local group: mpii_sched_comm(s, ic->local), build with ic->local as the
 * builder's communicator, mpii_sched_comm(s, ic). c must outlive the schedule (an
 * intercommunicator's local does). All transfers of a run use the run's tag, on their own
 * communicator's library context. */
void mpii_sched_comm(coll_sched_t *s, mpii_comm_t *c);
/* Steps (coll.h's building rules: sticky failure, fence between receive and use). */
void mpii_sched_send(coll_sched_t *s, const void *buf, int64_t count, MPI_Datatype type, int peer);
void mpii_sched_recv(coll_sched_t *s, void *buf, int64_t count, MPI_Datatype type, int peer);
/* Local typed copy of scount x stype at sbuf to rcount x rtype at rbuf when the run gets
 * there (the smaller of the two streams' byte sizes moves; MPI_ERR_TRUNCATE when the
 * send part is larger). */
void mpii_sched_copy(coll_sched_t *s, const void *sbuf, int64_t scount, MPI_Datatype stype,
                     void *rbuf, int64_t rcount, MPI_Datatype rtype);
/* inout = in op inout (count elements of type) when the run gets there. */
void mpii_sched_reduce(coll_sched_t *s, MPI_Op op, const void *in, void *inout, int64_t count,
                       MPI_Datatype type);
void mpii_sched_fence(coll_sched_t *s);
/* Appends an AND over the members of *in into *out on every member (a reduction to rank 0,
 * then a binomial bcast), fenced after: the agreements of lanes and of FMPL_MPI_CHECK.
 * Out of memory is remembered by s (coll_sched_start refuses it). */
void mpii_sched_and(coll_sched_t *s, mpii_comm_t *c, uint64_t *in, uint64_t *out);
/* A temporary of the schedule holding count elements of type in the type's own layout
 * (the address to use as buffer; it may differ from the memory by the type's lower
 * bound); NULL: out of memory (the
 * schedule is then refused at start, the builder need not check). */
void *mpii_sched_tmp(coll_sched_t *s, MPI_Datatype type, int64_t count);
/* n plain scratch bytes of the schedule (NULL as above). */
void *mpii_sched_bytes(coll_sched_t *s, int64_t n);

/* Returns k when the call it describes may use the cache, NULL when not (k NULL, not a
 * blocking call, or a type / op that is not predefined). */
const mpii_ckey_t *mpii_sched_key(const mpii_cmode_t *m, const mpii_ckey_t *k);
/* The cached schedule of key k on c, or NULL (k NULL: NULL). */
coll_sched_t *mpii_sched_lookup(mpii_comm_t *c, const mpii_ckey_t *k);
/* Runs s as m says and takes it over: blocking: start (after c's queued mailbox runs),
 * wait, then keep it in c's cache under k (k not NULL) or free it;
 * nonblocking: start it in the background behind a new request in *m->req (a group
 * schedule: queued on c's group, coll_group_enqueue); persistent: an inactive persistent request in
 * *m->req that MPI_Start runs (a group schedule: queued at every start, see
 * mpii_mailbox_fits). A failing build is passed as build_err (s is freed, the error
 * raised). Returns MPI_SUCCESS or the error raised on comm (m->fname). */
int mpii_sched_run(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const mpii_cmode_t *m,
                   const mpii_ckey_t *k, int build_err);
/* A nonblocking call whose group schedule a blocking call with the same key *k (the
 * blocking form of the call's key) left in c's cache may run that one: when it is there,
 * is a group schedule and no other nonblocking call is using it, marks it busy, sets *s
 * and returns its slot + 1, for mpii_sched_run_borrowed; else 0. */
int mpii_sched_borrow(mpii_comm_t *c, const mpii_ckey_t *k, coll_sched_t **s);
/* Queues borrowed schedule s (slot: mpii_sched_borrow's answer) behind a new request in
 * *m->req, as mpii_sched_run does with a built one; the slot is busy until the run ends. */
int mpii_sched_run_borrowed(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const mpii_cmode_t *m,
                            int slot);
/* mpii_sched_run of a nonblocking call's new group schedule s (build_err as there), which
 * also goes into c's cache under the blocking form *kb of its key (when it may: the
 * blocking rules of mpii_sched_key), borrowed by this call at once. */
int mpii_sched_run_nb(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const mpii_cmode_t *m,
                      const mpii_ckey_t *kb, int build_err);
/* A blocking run of s, which is in c's cache (found by mpii_sched_lookup /
 * mpii_sched_hit). */
int mpii_sched_run_cached(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const char *fname);
/* The fast path of a blocking call: the cached schedule of key *kb, or NULL. A schedule
 * is cached only after its call passed every argument check, and the key holds every
 * argument (predefined types and ops, whose handles never change meaning), so a hit
 * may skip the checks. */
static inline coll_sched_t *mpii_sched_hit(mpii_comm_t *c, const mpii_cmode_t *m,
                                           const mpii_ckey_t *kb)
{
    return c->ccache && m->kind == MPII_CM_BLOCK ? mpii_sched_lookup(c, mpii_sched_key(m, kb))
                                                 : NULL;
}
/* ---- offloaded runs (coll.h "offloaded runs") ----
 * Nonblocking and persistent MPI_Bcast and MPI_Allreduce on an intracommunicator whose
 * members share this host run on the communicator's offload board: the others finish
 * without a member that is busy elsewhere once it has started. mpii_offload_take decides
 * (the same on every member: the communicator, the mode, the byte count and, for a
 * persistent call, which board entries every member has freed: coll_offload.c "Persistent
 * entries") and takes the call's board entry (a persistent request gives it back when it is
 * freed, with its schedule); mpii_offload_steps adds the run's steps for the offload state
 * o (NULL: out of memory) to s and returns an MPI class. */
int mpii_offload_take(mpii_comm_t *c, const mpii_cmode_t *m, int64_t bytes, int *entry,
                      uint64_t *seq);
int mpii_offload_steps(coll_sched_t *s, coll_offload_t *o);
/* The COLL_OFFLOAD_* flags of a call in mode m on c. */
unsigned mpii_offload_flags(const mpii_comm_t *c, const mpii_cmode_t *m);

/* MPI_Start of a persistent collective request (request.c). */
int mpii_sched_start(mpii_req_t *r);
/* Frees what a collective request owns (its schedules), at its release (request.c). */
void mpii_sched_req_free(mpii_req_t *r);

/* The tail of an entry point: runs the cached schedule of key *kb (NULL: not cacheable)
 * or builds one with BUILD (an expression of the new schedule `s` giving an MPI error
 * class) and runs it. */
#define MPII_BUILD_RUN_WITH(c, comm, m, kb, NEW, BUILD)                                            \
    do {                                                                                           \
        const mpii_ckey_t *k_ = mpii_sched_key((m), (kb));                                         \
        coll_sched_t *s = mpii_sched_lookup((c), k_);                                              \
        if (s)                                                                                     \
            return mpii_sched_run_cached((c), (comm), s, (m)->fname);                              \
        s = (NEW);                                                                                 \
        return mpii_sched_run((c), (comm), s, (m), k_, s ? (BUILD) : 0);                           \
    } while (0)
#define MPII_BUILD_RUN(c, comm, m, kb, BUILD)                                                      \
    do {                                                                                           \
        mpii_coll_note_path(kb, MPII_ALG_POINT_TO_POINT);                                          \
        MPII_BUILD_RUN_WITH(c, comm, m, kb, mpii_sched_new(c), BUILD);                             \
    } while (0)

/* Mailbox (group) schedules: on a communicator with a coll group (c->cgroup), blocking
 * calls whose data is count contiguous elements of one predefined type of at most max
 * bytes (mpii_mailbox_fits) run as the group's own schedules (coll.h "group schedules"). The
 * choice must be the same on every rank of a call: where the ranks' types may differ
 * (bcast, allgather: only the signatures must match) it depends on the communicator and
 * the byte count alone, and other types are packed (coll_basic.c).
 * Nonblocking ones (any size the blocking call takes: bcast at every size, reduce and
 * allreduce up to FMPL_COLL_SMALL) are the same group schedules, queued on the group
 * (coll.h "queued runs": one mailbox run at a time per rank, in call order, advanced in
 * the background by the progress hook), and the communicator's blocking runs wait for
 * that queue first (run_block): a mailbox channel holds a bounded number of messages
 * and delivers them in start order, and the A cells assume a member finished the
 * previous all-call run, so unordered overlapping runs could wait on each other in a
 * cycle or overwrite cells.
 * Persistent ones: MPI-4.0 lets the members start persistent collectives in different
 * orders (and in a different order relative to the other collectives on the
 * communicator; MPICH's coll/p_order), so by default they must not share the queue:
 * those of at most a lane's room get a lane schedule (see "Lanes" below) and otherwise
 * run over point-to-point (their own tag). When the communicator asserts
 * mpi_assert_strict_persistent_collective_ordering = true (MPI-4.1 info key, set with
 * MPI_Comm_set_info or MPI_Comm_dup_with_info, the same on every member: the program
 * starts its persistent collectives in the order of all its collectives there), the
 * request owns a group schedule instead of the point-to-point one and queues a run of it
 * at every MPI_Start (behind the calls before it, like a nonblocking call): for the calls
 * too big for a lane, when there are no lanes (FMPL_COLL_LANES=0), and while / when no
 * lane is agreed.
 * mpii_mailbox_fits returns 0 (not on the mailboxes: point-to-point, or node-aware) or a
 * mask of the bits below: MPII_MAILBOX_RUN for a blocking or nonblocking call; for a
 * persistent one MPII_MAILBOX_LANE (a lane schedule too: the bytes fit coll_lane_room, or
 * with the assertion coll_lane_cell_room, as a queued run is faster than a lane's big
 * cells), MPII_MAILBOX_QUEUE (the request's schedule is a queued group schedule: ordering
 * asserted) or both; a persistent call with neither gets 0. It depends on the communicator
 * (its group, lanes and info), the mode and the byte count only, so every member answers
 * alike. */
enum {
    MPII_MAILBOX_RUN = 1,  /* blocking or nonblocking: the call runs on the mailboxes */
    MPII_MAILBOX_LANE = 2, /* persistent: a lane schedule too */
    MPII_MAILBOX_QUEUE = 4 /* persistent: its own schedule is queued on the group */
};
int mpii_mailbox_fits(mpii_comm_t *c, const mpii_cmode_t *m, MPI_Datatype type, int64_t count,
                      size_t max);
/* 1 when c's info asserts mpi_assert_strict_persistent_collective_ordering = "true". */
int mpii_coll_strict_order(const mpii_comm_t *c);
static inline coll_sched_t *mpii_mailbox_new(mpii_comm_t *c)
{
    return coll_group_sched(c->cgroup);
}
/* For barrier, allreduce, allgather (blocking): the all-call cells (coll.h). */
static inline coll_sched_t *mpii_mailbox_new_all(mpii_comm_t *c)
{
    return coll_group_sched_a(c->cgroup);
}
/* Lanes (coll.h "lanes"): a persistent call that mpii_mailbox_fits with MPII_MAILBOX_LANE
 * gets, besides its own schedule (point-to-point, or with MPII_MAILBOX_QUEUE a queued group
 * schedule), a lane schedule built by the same mailbox builders, and agrees on a lane with
 * the other members during its first start (an AND of offers over point-to-point with a tag
 * of its own, beside the first run of its own schedule); from the next start on it runs on
 * the lane (mailboxes private to it, so start order does not matter), or stays on its own
 * schedule when no lane was agreed (it tries again at the next two starts). The choice
 * depends only on what every member knows alike (the communicator, the byte count,
 * predefined op), so every member takes part in the agreement; a member without a lane
 * schedule (out of memory) offers nothing.
 * mpii_lane_mode: *ml becomes a copy of *m that agrees on a lane and carries s (a lane
 * schedule that a builder filled with result rc; NULL: none), for MPII_BUILD_RUN. */
void mpii_lane_mode(mpii_cmode_t *ml, const mpii_cmode_t *m, coll_sched_t *s, int rc);

/* The tail of an entry whose call mpii_mailbox_fits (fit: its answer): blocking and
 * nonblocking: built by MAILBOX_BUILD (an expression of the group schedule `s` that NEW
 * makes, giving an MPI class) and run on the mailboxes (nonblocking: queued, the cached
 * schedule of the same call borrowed when idle, else a new one cached: mpii_sched_borrow,
 * mpii_sched_run_nb); persistent: with MPII_MAILBOX_LANE a lane schedule (all-call when
 * ALL) built by MAILBOX_BUILD, and the request's own schedule: with MPII_MAILBOX_QUEUE a
 * group schedule made by NEW and built by MAILBOX_BUILD (queued at every start), else built
 * by BUILD over point-to-point. */
#define MPII_BUILD_RUN_MAILBOX(c, comm, m, kb, fit, NEW, ALL, MAILBOX_BUILD, BUILD)                \
    do {                                                                                           \
        if ((m)->kind != MPII_CM_PERSIST)                                                          \
            mpii_coll_note_path(kb, MPII_ALG_MAILBOX);                                             \
        if ((m)->kind == MPII_CM_BLOCK)                                                            \
            MPII_BUILD_RUN_WITH(c, comm, m, kb, NEW, MAILBOX_BUILD);                               \
        if ((m)->kind == MPII_CM_NB) {                                                             \
            coll_sched_t *s = NULL;                                                                \
            int slot_ = mpii_sched_borrow((c), (kb), &s);                                          \
            if (slot_)                                                                             \
                return mpii_sched_run_borrowed((c), (comm), s, (m), slot_);                        \
            s = (NEW);                                                                             \
            return mpii_sched_run_nb((c), (comm), s, (m), (kb), s ? (MAILBOX_BUILD) : 0);          \
        }                                                                                          \
        mpii_cmode_t ml_ = *(m);                                                                   \
        if ((fit)&MPII_MAILBOX_LANE) {                                                             \
            coll_sched_t *s = coll_lane_sched((c)->cgroup, ALL);                                   \
            mpii_lane_mode(&ml_, m, s, s ? (MAILBOX_BUILD) : 0);                                   \
        }                                                                                          \
        if ((fit)&MPII_MAILBOX_QUEUE)                                                              \
            MPII_BUILD_RUN_WITH(c, comm, &ml_, kb, NEW, MAILBOX_BUILD);                            \
        MPII_BUILD_RUN(c, comm, &ml_, kb, BUILD);                                                  \
    } while (0)
/* The MPI error of a mailbox collective on comm that failed with FMPL code fmpl_rc: a
 * length mark that differed (the ranks disagree on its size) says so. */
int mpii_mailbox_fail(MPI_Comm comm, int fmpl_rc, const char *fname);
static inline int mpii_mailbox_err(int fmpl_rc)
{
    return fmpl_rc ? mpii_err_from_fmpl(fmpl_rc) : MPI_SUCCESS;
}

/* The watch on a blocking run (coll_watch.c). Ranks whose sizes put a call on the
 * mailboxes on some and on point-to-point on others wait for ever: each carrier waits for
 * messages the other never sends (coll_impl.h in src/coll, "what is left"). So a blocking
 * run on a communicator with a mailbox group notes its carrier for its tag (coll.h, "Path
 * records") before it starts; its wait asks mpii_coll_watch_due at every poll, which
 * says so once the run has waited MPII_WATCH_NS (the clock is read from the 256th poll
 * on, at every 16th: a short wait never reads it, a sleeping one polls rarely); the
 * waiter then calls mpii_coll_watch_check, which compares the other members' records for the
 * tag with its own and ends the job when one took the other carrier (the ranks' mailbox
 * channels and sequence numbers are then out of step for good, so not even an error
 * returned under MPI_ERRORS_RETURN would leave the communicator usable), and otherwise
 * restarts the watch. A slow member has no record yet (or its own carrier): nothing
 * happens. A run that fails notes so in its record (mpii_coll_watch_failed): a member
 * still waiting in the same call then waits for a message the failed member did not
 * send (under MPI_ERRORS_RETURN the failed one has gone on; e.g. a bcast whose root
 * took a chain and whose other ranks a tree: the first child fails, the second waits for
 * the root), and its watch ends the job too, once it has seen the failure at
 * MPII_WATCH_FAILED_CHECKS checks (2 s: a member can wait 0.1 s and more for the
 * poison or given-up channel that a failure passes on, and then return). FMPL_MPI_CHECK=1
 * catches the same calls before they start, with an error on every member. */
#define MPII_WATCH_NS 100000000ull
#define MPII_WATCH_FAILED_CHECKS 20
typedef struct mpii_coll_watch {
    mpii_comm_t *c; /* NULL: not watched */
    int tag, path;
    unsigned polls;
    uint64_t since;  /* first look at the clock (0: none yet) */
    int failed_seen; /* checks that found a member's run failed */
} mpii_coll_watch_t;
void mpii_coll_watch_start(mpii_coll_watch_t *w, mpii_comm_t *c, int tag, int mailbox);
int mpii_coll_watch_late(mpii_coll_watch_t *w);
static inline int mpii_coll_watch_due(mpii_coll_watch_t *w)
{
    return BASE_UNLIKELY(++w->polls >= 256) && (w->polls & 15) == 0 && w->c &&
           mpii_coll_watch_late(w);
}
void mpii_coll_watch_check(mpii_coll_watch_t *w, const char *fname);
void mpii_coll_watch_failed(const mpii_coll_watch_t *w);
/* The coll form of a predefined op on a predefined type, its state kept in s. */
coll_reduce_op_t mpii_mailbox_op(coll_sched_t *s, MPI_Op op, MPI_Datatype type);

/* Algorithm thresholds (environment, read at the first collective; the algorithms:
 * coll_basic.c, coll_reduce.c): FMPL_MPI_BCAST_LARGE bytes from which Bcast on 3+ ranks is
 * scatter + ring allgather; FMPL_MPI_ALLREDUCE_LARGE bytes from which a commutative
 * Allreduce is reduce-scatter + allgather (Rabenseifner); FMPL_MPI_A2A_WINDOW exchanges
 * in flight per round of the pairwise Alltoall. */
typedef struct mpii_coll_tune {
    int64_t bcast_large, allreduce_large;
    int a2a_window;
    unsigned gen; /* changes when MPI_T writes a threshold: older cached schedules retire */
} mpii_coll_tune_t;
extern mpii_coll_tune_t mpii_coll_tune;

/* The MPI face as the carrier of the collective algorithms (coll/algo/algo.h): m becomes
 * the carrier of schedule s's transfers among the n ranks rk (NULL: 0 .. n-1) of the
 * schedule's communicator, me this process's index, in elements of type, reductions by
 * op (MPI_OP_NULL: none; both checked by the caller). Returns &m->a, valid while m is. */
typedef struct mpii_algo {
    coll_algo_t a; /* first: the carrier's ops find the rest from it */
    MPI_Datatype type;
    MPI_Op op;
} mpii_algo_t;
const coll_algo_t *mpii_sched_algo(mpii_algo_t *m, coll_sched_t *s, const int *rk, int n, int me,
                                   MPI_Datatype type, MPI_Op op);

/* Runs s to its end with tag, waiting (blocking), and frees it (s NULL: MPI_ERR_NO_MEM):
 * for the library's own collectives (libcoll.c). An MPI error class, not raised. */
int mpii_sched_run_tagged(coll_sched_t *s, int tag);

/* Builders shared between files (arguments checked; counts/displs in elements). The
 * mpii_build_ ones are for intracommunicators (c may be an intercommunicator's local, see
 * mpii_sched_comm), the mpii_build_inter_ ones below for intercommunicators; they return an
 * MPI error class. */
int mpii_build_barrier(coll_sched_t *s, mpii_comm_t *c);
int mpii_build_bcast(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type,
                     int root);
/* The binomial-tree bcast alone: also moves empty messages (count 0), so it releases every
 * rank only after the root reached it (a fan-out). */
void mpii_build_bcast_tree(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count,
                           MPI_Datatype type, int root);
int mpii_build_scatterv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, const int64_t *counts,
                        const int64_t *displs, MPI_Datatype stype, void *rbuf, int64_t rcount,
                        MPI_Datatype rtype, int root);
/* Binomial reduce (coll/algo) among the n ranks rk[0..n) of the schedule's communicator
 * (rk NULL: the ranks 0..n-1), me being this process's index: every index's operand `in`
 * into `out` at index ri (in == out allowed there; out unused elsewhere). Shared by the
 * flat reduce and the node-aware steps (coll_node.c). */
void mpii_build_reduce_list(coll_sched_t *s, const int *rk, int n, int me, int ri, const void *in,
                            void *out, int64_t count, MPI_Datatype type, MPI_Op op);
/* Allreduce in place in buf among the n ranks rk[0..n) (rk NULL: 0..n-1), me being this
 * process's index, tmp count elements of scratch (coll/algo): recursive doubling, or for a
 * commutative op from FMPL_MPI_ALLREDUCE_LARGE bytes Rabenseifner's reduce-scatter +
 * allgather. Shared by the flat allreduce and the node-aware leaders' step (coll_node.c). */
void mpii_build_allreduce_list(coll_sched_t *s, const int *rk, int n, int me, void *buf, void *tmp,
                               int64_t count, MPI_Datatype type, MPI_Op op);
/* Reduce of sbuf (this rank's operand; at the root it may be rbuf) into rbuf at root,
 * operands combined in rank order. rbuf is used at the root only. */
int mpii_build_reduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                      MPI_Datatype type, MPI_Op op, int root);

/* ------------------------------------------------------------ node-aware collectives
 * (coll_node.c) On an intracommunicator whose members are on several nodes (hosts:
 * vnic_nodes), Barrier, Bcast, Reduce, Allreduce and Allgather(v) (all three forms) run
 * intra-node steps between the members of each node and one leader per node (the lowest
 * rank; the root on the root's node), and the inter-node step among the leaders only:
 * see the comment at the top of coll_node.c for the shapes and their inter-node message
 * counts.
 * FMPL_MPI_NODE_AWARE chooses: 0 the flat algorithms everywhere (to compare); 1 (default)
 * node-aware for the calls that do not run on the communicator's mailboxes (a mailbox
 * message is cheaper than a point-to-point one, so the flat mailbox schedules stay
 * faster for the small blocking calls there, see docs/performance.md); 2 node-aware
 * for every call. */
typedef struct mpii_cnode mpii_cnode_t;
/* Whether a call on c (op: its reduction, valid; MPI_OP_NULL for the others) runs
 * node-aware, asked at two points of an entry: before_mailbox 1 before its mailbox
 * branch (yes only under FMPL_MPI_NODE_AWARE=2), 0 after it, before the flat
 * point-to-point builder (yes under 1 and 2). Returns 1 when c is an intracommunicator
 * over 2 or more nodes, the setting says yes, and the op is commutative or every node's
 * members are consecutive ranks (operands combined in rank order); 0 otherwise (the
 * flat algorithms); -1 out of memory (computing c's node map at its first call; the
 * caller raises MPI_ERR_NO_MEM). The same on every member of a call (it depends on c,
 * op and the setting only). On a single-node communicator, after its first call: one
 * pointer comparison (mpii_node_aware_map does the rest). */
int mpii_node_aware_map(mpii_comm_t *c, MPI_Op op, int before_mailbox);
extern mpii_cnode_t mpii_node_single; /* the map of every single-node communicator */
static inline int mpii_node_aware(mpii_comm_t *c, MPI_Op op, int before_mailbox)
{
    return c->cnode == &mpii_node_single ? 0 : mpii_node_aware_map(c, op, before_mailbox);
}
/* The entry hook: when the call runs node-aware (mpii_node_aware on c, op, before_mailbox),
 * builds it with BUILD (an expression of the new schedule `s`, like MPII_BUILD_RUN's) and
 * returns; falls through otherwise. */
#define MPII_BUILD_RUN_NODE(c, comm, m, kb, op, before_mailbox, BUILD)                             \
    do {                                                                                           \
        int aware_ = mpii_node_aware((c), (op), (before_mailbox));                                 \
        if (aware_ < 0)                                                                            \
            return mpii_coll_fail((comm), MPI_ERR_NO_MEM, (m)->fname);                             \
        if (aware_) {                                                                              \
            mpii_coll_note_path(kb, MPII_ALG_NODE_AWARE);                                          \
            MPII_BUILD_RUN_WITH(c, comm, m, kb, mpii_sched_new(c), BUILD);                         \
        }                                                                                          \
    } while (0)
/* Builders, for calls where mpii_node_aware gave 1, arguments checked (as mpii_build_*:
 * reduce's sbuf may be rbuf at the root, MPI_IN_PLACE already replaced; allreduce's sbuf
 * may be MPI_IN_PLACE). Each returns an MPI error class (MPI_ERR_NO_MEM). */
int mpii_node_barrier(coll_sched_t *s, mpii_comm_t *c);
int mpii_node_bcast(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type,
                    int root);
int mpii_node_reduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                     MPI_Datatype type, MPI_Op op, int root);
int mpii_node_allreduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                        int64_t count, MPI_Datatype type, MPI_Op op);
/* Allgatherv (allgather: uniform counts): counts / displs in elements of rtype, sbuf may
 * be MPI_IN_PLACE (this rank's block already in rbuf). Members send their blocks to the
 * leader, the leaders exchange their nodes' blocks packed, each leader bcasts the whole
 * packed stream inside its node, every member unpacks it (where rbuf's layout is the
 * packed stream, the stream moves in rbuf itself). */
int mpii_node_allgatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                         MPI_Datatype stype, void *rbuf, const int64_t *counts,
                         const int64_t *displs, MPI_Datatype rtype);

/* ------------------------------------------------------------ intercommunicators
 * (coll_inter.c) MPI-4.0 6.2.2: a rooted operation moves data between the root (root
 * MPI_ROOT) and every process of the other group (root: the root's rank in the remote
 * group); the other processes of the root's group pass MPI_PROC_NULL and take no part.
 * Every other operation moves data from each group to the other one. MPI_IN_PLACE is an
 * error (MPI_ERR_BUFFER). The entries of coll_basic.c / coll_reduce.c branch here once
 * comm is known to be an intercommunicator (after checks common to both kinds).
 *
 * Builders (mpii_build_inter_): count arrays have the remote group's size unless said
 * otherwise; the local phases run the intracommunicator builders over c->local
 * (mpii_sched_comm). Each returns an MPI error class. */
int mpii_build_inter_barrier(coll_sched_t *s, mpii_comm_t *c);
/* Every rank's block (scount x stype at sbuf) goes to every rank of the other group; the
 * blocks of the remote ranks land at rbuf + displs[i] (counts[i] x rtype, i a remote rank).
 */
int mpii_build_inter_allgatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                                MPI_Datatype stype, void *rbuf, const int64_t *counts,
                                const int64_t *displs, MPI_Datatype rtype);
/* Block j (sdispls in bytes) goes to remote rank j; block j of rbuf comes from it. */
int mpii_build_inter_alltoallw(coll_sched_t *s, mpii_comm_t *c, const void *sbuf,
                               const int64_t *scounts, const int64_t *sdispls,
                               const MPI_Datatype *stypes, void *rbuf, const int64_t *rcounts,
                               const int64_t *rdispls, const MPI_Datatype *rtypes);
/* rbuf gets the reduction (rank order) of the other group's operands. */
int mpii_build_inter_allreduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                               int64_t count, MPI_Datatype type, MPI_Op op);
/* counts has the LOCAL group's size: sbuf holds total = sum(counts) elements (the other
 * group's total must be the same); the reduction of the other group's operands is
 * scattered over this group, block i (counts[i] elements) to local rank i's rbuf. */
int mpii_build_inter_reduce_scatter(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                                    const int64_t *counts, MPI_Datatype type, MPI_Op op);

/* Entry tails of the rooted operations on an intercommunicator c (comm its handle): check
 * root and the arguments significant at this process, build, run as m says (like the
 * MPI_X entries: return MPI_SUCCESS or the error raised on comm). counts/displs (v forms):
 * significant at the root only, the remote group's size. Reduce: count, type and op
 * already checked. */
int mpii_inter_bcast(mpii_comm_t *c, MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type,
                     int root, const mpii_cmode_t *m);
int mpii_inter_gatherv(mpii_comm_t *c, MPI_Comm comm, const void *sbuf, int64_t scount,
                       MPI_Datatype stype, void *rbuf, const int64_t *counts, const int64_t *displs,
                       MPI_Datatype rtype, int root, const mpii_cmode_t *m, const mpii_ckey_t *kb);
int mpii_inter_scatterv(mpii_comm_t *c, MPI_Comm comm, const void *sbuf, const int64_t *counts,
                        const int64_t *displs, MPI_Datatype stype, void *rbuf, int64_t rcount,
                        MPI_Datatype rtype, int root, const mpii_cmode_t *m, const mpii_ckey_t *kb);
int mpii_inter_reduce(mpii_comm_t *c, MPI_Comm comm, const void *sbuf, void *rbuf, int64_t count,
                      MPI_Datatype type, MPI_Op op, int root, const mpii_cmode_t *m);

#endif
