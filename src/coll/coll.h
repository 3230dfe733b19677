/* coll.h — collective operations over a group of ranks, built on the vnic only
 * (puts/gets/atomics/counters/notify), so they run over every transport.
 * Barrier, bcast, reduce, allreduce, allgather (fixed size) for any group size and
 * root, algorithm chosen by message size and group size; all of them run as cached
 * group schedules (the schedule engine and its group transport are below).
 *
 * All calls are collective over the group's members, block until this rank's part
 * is done, and are made by one thread. Groups with common members must call their
 * collectives in the same order on every member (as MPI requires). */
#ifndef FMPL_COLL_H
#define FMPL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "vnic/vnic.h"

/* Resources of the vnic the collectives claim on every rank:
 *   COLL_KEY         well-known region key of each rank's collective area;
 *   COLL_ORDER_CNTR  well-known counter id that large-segment puts name with
 *                    VNIC_F_RCNTR (only for the vnic's delivery order; never read).
 *
 * Settings (environment, read once by coll_init; every rank must see the same values,
 * as they fix the layout of the collective area):
 *   FMPL_COLL_SMALL   payload bytes of a small mailbox (default 8192): messages up to
 *                     this size use the log2(p)-round algorithms below;
 *   FMPL_COLL_SEG     pipeline segment bytes (default 65536) for larger messages;
 *   FMPL_COLL_GROUPS  group slots per process (default 16): live groups that share a
 *                     member must have distinct ctx % FMPL_COLL_GROUPS;
 *   FMPL_COLL_BCAST_TREE_MAX, FMPL_COLL_REDUCE_TREE_MAX (bytes, at most FMPL_COLL_SMALL,
 *                     default FMPL_COLL_SMALL): the largest message that takes the
 *                     tree/recursive algorithm (the bcast's when set, else the LogGP
 *                     model's choice: "the LogGP-planned bcast" below);
 *   FMPL_COLL_ALLGATHER_BRUCK_MAX (default 4 * FMPL_COLL_SMALL): the largest round of
 *                     Bruck's allgather and alltoall (split over up to K+2 all-call
 *                     mailboxes);
 *   FMPL_COLL_LANES, FMPL_COLL_LANE_BYTES  lanes per process and the payload room of
 *                     their small cells (default 8, 248; see "lanes" below).
 * Algorithms (all of them cached group schedules, see "group schedules" below; the
 * large reductions and allgather on fold schedules, coll_impl.h): barrier =
 * dissemination (ceil(log2 p) rounds of one flag put); bcast = binomial tree (small) or
 * a pipelined chain of segments (large); reduce = binomial tree to the root (small; for
 * non-commutative ops to rank 0, then forwarded to the root along power-of-two hops),
 * or two pipelined chains meeting at the root, from rank 0 up and from rank p-1 down,
 * which keeps rank order (large); allreduce = recursive doubling (small, p a power of
 * two), reduce + binomial bcast (small, other p) or chain reduce + chain bcast (large);
 * allgather = Bruck (small) or a pipelined ring (large).
 * Non-commutative reductions always combine in group-rank order. Memory: each rank's area is
 * FMPL_COLL_GROUPS * (about 4*SEG + (2*DEPTH*log2(world)+2*log2(world)+4)*SMALL +
 * 128*256*log2(world)) + LANES*(log2(world)+2)*(64*(LANE_BYTES+8)+4*SMALL) bytes of shared
 * heap (about 1.5 MiB per slot and 2 MiB of lanes at the defaults and 16 ranks), of which
 * only the pages of the flags and of the message sizes actually used are ever touched.
 *   FMPL_COLL_DEPTH   mailboxes of a small channel (default 16): how far a writer may run
 *                     ahead of its reader (a broadcast root of its children). */
#define COLL_KEY 4u
#define COLL_ORDER_CNTR 4u

typedef struct coll_group coll_group_t;

/* Sets up the collective state of this process: allocates and registers its area
 * (COLL_KEY), opens COLL_ORDER_CNTR, and waits until every rank of the job has done
 * the same (so peers may write to it as soon as a group exists). Called once after
 * vnic_open, on every rank, before any group exists. Collective over the job; blocks.
 * heap_after: bytes of the shared heap the caller will allocate next (its own areas);
 * the area takes its deep lane cells only when they leave that much room, and the same
 * on every rank when heap_after is. FMPL_ERR_ARG (v NULL), FMPL_ERR_INIT (already
 * initialised), FMPL_ERR_NOMEM (no room in the shared heap), or the vnic's error. */
int coll_init(vnic_t *v, size_t heap_after);
/* Releases the area. Call after every group has been freed and before vnic_close;
 * not collective (coll_group_free already synchronised the members). */
void coll_finalize(vnic_t *v);
/* Number of group slots (FMPL_COLL_GROUPS); 0 before coll_init. */
int coll_max_groups(void);
/* 1 when a live group of this process holds the slot of ctx (ctx % coll_max_groups()),
 * so that coll_group_create with ctx would fail with FMPL_ERR_BUSY; 0 otherwise (and
 * before coll_init). Never blocks. */
int coll_slot_in_use(uint32_t ctx);

/* Creates this rank's handle on a group: `size` members given by their world ranks
 * in group-rank order (members[rank] is this process). `ctx` identifies the group:
 * every member passes the same value, and two live groups that share a member never
 * share a ctx, nor ctx % coll_max_groups() (the group's slot in the area). Collective
 * over the members but exchanges no message (it never blocks): a member may start
 * its first collective before the others have created their handles. Copies
 * members. FMPL_ERR_NOT_INIT (no coll_init), FMPL_ERR_ARG (NULL pointer, size < 1,
 * member out of the job or repeated), FMPL_ERR_RANK (rank out of range or
 * members[rank] not this process), FMPL_ERR_BUSY (slot taken on this rank),
 * FMPL_ERR_NOMEM. */
int coll_group_create(vnic_t *v, int size, int rank, const int *members, uint32_t ctx,
                      coll_group_t **out);
/* Collective over the members; blocks until every member has finished with the
 * group (all acknowledgements in, one barrier), then frees the handle and leaves
 * the slot clean for the next group. FMPL_ERR_COMM when g is NULL or not a group. */
int coll_group_free(coll_group_t *g);
/* Frees this rank's handle at once, without the members' handshake, for a start-up that
 * failed on this rank (the other members learn of it when its area goes away, see
 * coll_finalize). Never blocks; nothing when g is not a group. */
void coll_group_drop(coll_group_t *g);
/* The same without waiting: g is gone for the caller at once; this member's part of the
 * handshake runs from the vnic progress hook (whoever progresses), and the slot stays in
 * use (coll_slot_in_use) until it is over; then done(arg, err) runs (may be NULL; err 0
 * or the vnic's error), possibly inside this call. Members may retire their groups in
 * any order. FMPL_ERR_COMM (g not a group), FMPL_ERR_NOMEM. */
int coll_group_retire(coll_group_t *g, void (*done)(void *arg, int err), void *arg);
/* Groups of this process whose retirement is not over. Never blocks. */
int coll_groups_retiring(void);

/* A reduction: combine count elements, inout[i] = inout[i] (op) in[i]. */
typedef void (*coll_reduce_fn)(void *inout, const void *in, size_t count, void *arg);
typedef struct coll_reduce_op {
    coll_reduce_fn fn;
    void *arg;
    size_t elem_size; /* bytes per element */
    int commutative;  /* 0: combine strictly in rank order */
} coll_reduce_op_t;

/* Common errors of the calls below: FMPL_ERR_COMM (g NULL or not a live group),
 * FMPL_ERR_BUFFER (NULL buffer with a nonzero size), FMPL_ERR_ROOT (root outside
 * [0, size)), FMPL_ERR_OP (op NULL, fn NULL or elem_size 0), FMPL_ERR_ARG (count *
 * elem_size overflows), FMPL_ERR_UNSUPPORTED (a reduction element larger than
 * FMPL_COLL_SEG), or the vnic's error (FMPL_ERR_PEER, ...). Every member must pass
 * the same root, size/count and op. None allocates memory; all block until this
 * rank's part is done, waiting with vnic_wait (spin, yield, sleep). */

/* Returns once every member has entered the barrier. */
int coll_barrier(coll_group_t *g);
/* Copies root's size bytes of buf into every member's buf. */
int coll_bcast(coll_group_t *g, void *buf, size_t size, int root);
/* Result in buf at root only (other ranks' buf unchanged). work: scratch of
 * count*elem_size bytes or NULL; this implementation needs none (it stages through
 * its own preallocated buffers), so it is never written. */
int coll_reduce(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op, int root,
                void *work);
/* Result in every member's buf; all members get bit-identical results. work as for
 * coll_reduce. */
int coll_allreduce(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op,
                   void *work);
/* recv gets size bytes from each member, in group-rank order; send may be NULL when
 * this rank's block is already in place at recv + rank*size. */
int coll_allgather(coll_group_t *g, const void *send, void *recv, size_t size);

/* ---------------------------------------------------------------- schedules
 * A schedule is one collective operation of one rank compiled into steps, built once
 * and run any number of times (blocking calls keep it in a cache, nonblocking calls run
 * it once, persistent requests re-arm it at every start). Its steps form a layered DAG:
 * the steps between two coll_sched_fence calls are one round; a round starts when the
 * previous one is complete, and is complete when all its transfers are. Inside a round
 * the steps start in the order they were added: a local step (coll_sched_call) runs
 * right then, a transfer (coll_sched_send / coll_sched_recv) is posted through the
 * owner's transport. So "copy into a temporary, then send it" may share a round, but
 * "receive, then combine" needs a fence between the two.
 *
 * The engine knows nothing about datatypes, matching or communicators: transfers go
 * through the coll_sched_ops_t table of the layer that built the schedule (the MPI layer
 * passes its point-to-point engine on the communicator's collective context), with the
 * layer's own opaque type and context words. All transfers of one run carry the tag given
 * to coll_sched_start; two transfers between the same pair of ranks in one run must be
 * added in the same order on both sides (they match in posting order).
 *
 * Progress: a blocking caller drives its schedule with coll_sched_advance (from its wait
 * loop); a schedule started with coll_sched_start(.., background = 1) is advanced by a
 * vnic progress hook, so it moves whenever anyone enters the library (any wait, any
 * progress call), not only when its owner tests it. One thread at a time. */

typedef struct coll_sched coll_sched_t;

/* The transport of a schedule's transfers (the owning layer's point-to-point, or the
 * group mailboxes of coll_group_sched).
 *   begin: (may be NULL) called once by coll_sched_start, before the reserves.
 *   end: (may be NULL) called once when a started run completes (not for a run that is
 *       never completed: a transport must take a missing call as "still under way").
 *   reserve: (may be NULL) called by coll_sched_start for every transfer of the run (its
 *       direction, peer, count, type word and request state), in the order they were added, before
 *       any is posted; its value is handed to that transfer's isend / irecv as `seq` (a
 *       transport that numbers the uses of a channel in call order, whatever order the
 *       rounds post them in).
 *   isend / irecv: start moving count elements of `type` (the owner's opaque word) from
 *       / to buf with rank `peer` of the owner's context `ctx`, tag `tag`; the request
 *       state lives in `req`: req_size bytes of the schedule's memory that belong to this
 *       transfer alone, zero before its first run, untouched by the engine between runs
 *       (so a transport may keep there what it worked out for the transfer once: the
 *       transfer's arguments never change). Must not block for the peer; return 0 or the
 *       owner's error code (the transfer then counts as complete with that error).
 *   test: nonzero once the transfer in req is complete; then *err is 0 or the owner's
 *       error code. Must not block; may move the transfer on (post what it deferred). */
/* Set in the `seq` a send's isend gets when an earlier step of the same run failed: a
 * transport that can tell the receiver so (the group mailboxes) makes that receive fail
 * too (FMPL_ERR_MISMATCH), so that a failure seen by one rank of a tree reaches the ranks
 * below it instead of leaving them with wrong data (the point-to-point transport of the
 * MPI face sends such a message empty). Other transports ignore it. */
#define COLL_SEQ_POISON (UINT64_C(1) << 63)

typedef struct coll_sched_ops {
    size_t req_size;
    void (*begin)(void *ctx);
    void (*end)(void *ctx);
    uint64_t (*reserve)(void *ctx, int send, int peer, int64_t count, uintptr_t type, void *req);
    int (*isend)(void *ctx, const void *buf, int64_t count, uintptr_t type, int peer, int tag,
                 uint64_t seq, void *req);
    int (*irecv)(void *ctx, void *buf, int64_t count, uintptr_t type, int peer, int tag,
                 uint64_t seq, void *req);
    int (*test)(void *req, int *err);
} coll_sched_ops_t;

/* A local step: runs fn(args) with a copy of the argument block given to coll_sched_call;
 * returns 0 or the owner's error code. */
typedef int (*coll_step_fn)(const void *args);
#define COLL_STEP_ARGS 56 /* bytes of a local step's argument block */

/* Makes an empty schedule whose transfers use ops on context ctx (both kept by pointer:
 * they must outlive the schedule; coll_sched_ctx may switch the context of the transfers
 * added later). NULL: out of memory. */
coll_sched_t *coll_sched_new(vnic_t *v, const coll_sched_ops_t *ops, void *ctx);
/* Frees s and everything it owns (its temporaries). s must not be running (its
 * transfers' request state is part of it). NULL: nothing. */
void coll_sched_free(coll_sched_t *s);

/* Building (only before the first start). Each returns 0, or -1 when out of memory or
 * when len > COLL_STEP_ARGS; the schedule remembers the failure and coll_sched_start
 * refuses it, so a builder may check once at the end. */
int coll_sched_send(coll_sched_t *s, const void *buf, int64_t count, uintptr_t type, int peer);
int coll_sched_recv(coll_sched_t *s, void *buf, int64_t count, uintptr_t type, int peer);
int coll_sched_call(coll_sched_t *s, coll_step_fn fn, const void *args, size_t len);
/* A local step that may take several calls: fn(args) returns COLL_STEP_AGAIN while what
 * it waits for (other processes' stores) has not happened, and must not block; then 0 or
 * the owner's error code. Its round is complete once it has returned something else: the
 * engine calls it again at every advance of the run (the progress hook's for a background
 * run, the owner's wait loop). Same argument rules as coll_sched_call. */
#define COLL_STEP_AGAIN 0x7fff5a5a /* never an error code of the layers above */
int coll_sched_until(coll_sched_t *s, coll_step_fn fn, const void *args, size_t len);
/* Adds a local step "copy n bytes from src to dst" to s (nothing when dst == src or n is
 * 0); the regions may overlap. A plain byte copy: far cheaper than a typed one for the
 * few bytes of a small block. */
void coll_sched_copy(coll_sched_t *s, void *dst, const void *src, size_t n);
/* The transfers added from now on use context ctx (kept by pointer like coll_sched_new's,
 * which the transfers added before the first switch use): one schedule may address the
 * ranks of several of the owner's contexts (the MPI layer: an intercommunicator and the
 * intracommunicator over its local group). Each transfer keeps the context it was added
 * with; the tag of a run is the same for all of them. */
void coll_sched_ctx(coll_sched_t *s, void *ctx);
/* Ends the current round (a no-op when it is empty). */
int coll_sched_fence(coll_sched_t *s);
/* Memory owned by the schedule (freed with it): n bytes aligned to 64, or NULL (out of
 * memory: remembered as above). */
void *coll_sched_mem(coll_sched_t *s, size_t n);
/* The transport s was made with. */
const coll_sched_ops_t *coll_sched_ops(const coll_sched_t *s);
/* The context of the transfers added next (coll_sched_new's, unless coll_sched_ctx
 * switched it); also the one ops->begin gets. */
void *coll_sched_ctx_of(const coll_sched_t *s);
/* Keeps obj alive for the schedule's lifetime: release(obj) runs when s is freed (the
 * owner's reference on a datatype or operation its steps use), before s's memory
 * (coll_sched_mem) goes, so obj may live there. Same failure rule as the building calls
 * (failed: release(obj) has run). */
int coll_sched_hold(coll_sched_t *s, void (*release)(void *), void *obj);

/* Starts a run of s with tag `tag`. background = 1: runs the first rounds as far as
 * they go without waiting, then the vnic progress hook advances s from now on and calls
 * done(done_arg, err) once it is complete (err: 0 or the first error code of the run);
 * done may free s, and may already run inside this call. background = 0: nothing moves
 * until the caller advances s with coll_sched_advance, and done is not called. s must
 * not be running. Returns 0, or -1: the schedule is broken (see building) or the
 * progress hook could not be installed. Steps that fail do not stop a run (transfers
 * are still posted, so peers do not hang); the first failure is reported at the end. */
int coll_sched_start(coll_sched_t *s, int tag, int background,
                     void (*done)(void *done_arg, int err), void *done_arg);
/* Advances s as far as it goes without waiting. Returns 1 once complete (then *err is 0
 * or the first error code of the run), 0 while running. Never blocks. */
int coll_sched_advance(coll_sched_t *s, int *err);
/* A count that grows whenever one of s's transfers completes (in coll_sched_advance), so
 * that a blocking waiter can tell progress from idling (and restart its backoff on
 * progress). Never blocks. */
uint64_t coll_sched_progress(const coll_sched_t *s);
/* For an owner waiting on one background run (it need not wait for the progress hook to
 * get there): advances s now, and when the run is complete takes it off the hook and
 * calls done, as the hook would. Returns 1 when s is not running (any more: done has been
 * called, and may have freed s), 0 while it runs. Never blocks. */
int coll_sched_poll(coll_sched_t *s);
/* For an owner that waits for background run s to end (MPI_Wait): takes s off the
 * progress hook and advances it from its own wait loop alone (vnic_wait: one advance per
 * poll, as a blocking run's), then calls done as the hook would (done may free s).
 * Returns 0 when s is not running (any more), or vnic_wait's error (s is then back on the
 * hook). Nothing (0) when s is not a running background run: a caller that waits for
 * something else first (a queued run not started yet) then waits on its own. */
int coll_sched_wait(coll_sched_t *s);
/* ---------------------------------------------------------------- group schedules
 * Schedules whose transfers go through a group's acknowledged mailbox edges
 * (coll_gsched.c): a transfer joins two members 2^k apart (either way round); its
 * count is in bytes, at most FMPL_COLL_SMALL, or FMPL_COLL_SEG between neighbours (the
 * type and tag words are unused). Runs are started in the same order on every member,
 * one at a time on each (blocking, or queued: see "queued runs" below); runs of different
 * members overlap. Local
 * steps and transfers report FMPL codes. The builders below add the group's collective
 * algorithms to s (every member must build the same call); they return FMPL_SUCCESS,
 * FMPL_ERR_NOMEM, or FMPL_ERR_UNSUPPORTED when a message would not fit the mailboxes. */

/* An empty schedule over g's mailboxes; NULL: g not a live group, or out of memory. */
coll_sched_t *coll_group_sched(coll_group_t *g);
/* An empty schedule over g's all-call mailboxes (the A cells): one line per message, no
 * acknowledgement; only for barrier, allreduce and allgather, run blocking (background 0)
 * or queued (coll_group_enqueue), never two at once on a member. NULL as above. */
coll_sched_t *coll_group_sched_a(coll_group_t *g);
/* 1 when s was made by coll_group_sched(_a) (its errors are FMPL codes). */
int coll_sched_is_group(const coll_sched_t *s);

/* Path records (coll_path.c). A face that runs some of a group's collectives on the
 * mailboxes and others on another carrier (the MPI face's point-to-point schedules)
 * notes, before a blocking call's run starts, which carrier it took for the call's tag;
 * a member whose run waits for long can then ask which one another member took for the
 * same tag. Members that took different carriers disagree on the call's size, and
 * neither carrier sees the other's messages: without this both would wait for ever.
 * The records are a ring of COLL_PATH_RING tags in the member's slot: a member more than
 * that many blocking calls ahead reads as unknown. Note: one store, never blocks, this
 * member's thread. Path of: reads the member's slot (mapped: a load; else a blocking
 * vnic_get), 0 when unknown (no record of tag, or the read failed). */
enum { COLL_PATH_MAILBOX = 1, COLL_PATH_OTHER = 2, COLL_PATH_FAILED = 3 /* its run failed */ };
void coll_path_note(coll_group_t *g, int tag, int path);
int coll_path_of(coll_group_t *g, int member, int tag);
/* FMPL_COLL_SMALL: what every edge carries. */
size_t coll_group_small(const coll_group_t *g);
/* FMPL_COLL_DEPTH: messages a writer may have on an edge's small channel ahead of its
 * reader before it waits for acknowledgements. */
size_t coll_group_depth(const coll_group_t *g);
/* Dissemination barrier. */
int coll_build_barrier(coll_sched_t *s, coll_group_t *g);
/* size bytes from root's buf to every member's buf: binomial tree or a chain of segments
 * as coll_bcast_plan(size, group size) says (the LogGP model, or FMPL_COLL_BCAST_TREE_MAX
 * and FMPL_COLL_SEG when set); on a lane schedule (any size) binomial up to
 * FMPL_COLL_SMALL, else a chain of FMPL_COLL_SMALL segments (a lane's big cells). */
int coll_build_bcast(coll_sched_t *s, coll_group_t *g, void *buf, size_t size, int root);
/* count elements: `in` of every member combined (in group-rank order when the op is not
 * commutative) into `out` at root (in == out allowed; out unused elsewhere); binomial
 * tree; count * elem_size <= FMPL_COLL_SMALL. */
int coll_build_reduce(coll_sched_t *s, coll_group_t *g, const void *in, void *out, size_t count,
                      const coll_reduce_op_t *op, int root);
/* The same result in every member's out (bit-identical): recursive doubling (on an
 * all-call schedule with the pairing fold for any p; on channels for powers of two,
 * else reduce to 0 + binomial bcast); count * elem_size <= FMPL_COLL_SMALL. */
int coll_build_allreduce(coll_sched_t *s, coll_group_t *g, const void *in, void *out, size_t count,
                         const coll_reduce_op_t *op);
/* size bytes of every member into recv in rank order (send NULL: already in place at
 * recv + rank * size): Bruck, on an all-call schedule, when coll_allgather_bruck_fits
 * (larger blocks: coll_allgather, which runs a pipelined ring schedule). */
int coll_build_allgather(coll_sched_t *s, coll_group_t *g, const void *send, void *recv,
                         size_t size);
/* 1 when Bruck's rounds of size-byte blocks fit the all-call cells (as for alltoall). */
int coll_allgather_bruck_fits(const coll_group_t *g, size_t size);

/* size bytes from every member to every member: recv's block i (of p) comes from member i,
 * send's block i goes to member i (send and recv distinct); on an all-call schedule, when
 * coll_alltoall_fits: one round of direct messages when the all-call cells have one for
 * each source (p - 1 <= K + 2), else Bruck. */
int coll_build_alltoall(coll_sched_t *s, coll_group_t *g, const void *send, void *recv,
                        size_t size);
/* 1 when coll_build_alltoall takes blocks of size bytes: the direct round (blocks of at
 * most COLL_SMALL), or Bruck's rounds (each at most FMPL_COLL_ALLGATHER_BRUCK_MAX bytes,
 * all rounds' pieces of COLL_SMALL at most K+2). */
int coll_alltoall_fits(const coll_group_t *g, size_t size);
/* 1 when a Bruck allgather of size-byte blocks fits a lane (coll_lane_room). */
int coll_allgather_lane_fits(const coll_group_t *g, size_t size);

/* ---------------------------------------------------------------- lanes
 * Mailboxes private to one schedule, for persistent collectives: runs of schedules on
 * different lanes never wait on each other, whatever order the members start them in
 * (MPI-4.0 lets them differ), while the shared channels deliver in start order. A process
 * has FMPL_COLL_LANES lanes (default 8), after the group slots of its area; a lane serves
 * one schedule of any group at a time. A lane is, for each of K+2 cell indices
 * (K = ceil(log2 world size)), 64 small cells of FMPL_COLL_LANE_BYTES of payload (default
 * 248) and 16 big ones of FMPL_COLL_SMALL, each kind ("tier") with its acknowledgement
 * line; a message takes the small cells when it fits them.
 * A lane schedule (coll_lane_sched) is built with the builders above (barrier, allreduce
 * and allgather on an all-call lane; bcast and reduce on an acknowledged one; every
 * message at most coll_lane_room bytes, a bcast of any size as a chain of such
 * segments; the builders give each transfer its cell index
 * as the type word) and runs only once bound to a lane that every member bound to it:
 * the owner agrees on one by an AND over the members of what coll_lanes_offer returned
 * at each of them, then passes the result to coll_lanes_settle everywhere. A run of an
 * unbound lane schedule fails (FMPL_ERR_RANK). An all-call lane numbers a run's messages
 * by the runs since binding (one message per cell index and reader in a run), in the cell
 * of the run's parity, and needs no acknowledgement (a writer in run n+2 knows every
 * member finished run n: the A cells' parity argument); an acknowledged lane numbers the
 * messages of each (tier, cell index) since binding in the order the transfers were added
 * (one writer per cell index and reader; a run may send several through one, as a
 * bcast chain's segments), message n in its cell n % depth (64 or 16), the reader acknowledges
 * every depth/4-th message once it has freed every one up to it (coll_impl.h, coll_freed)
 * and a writer waits until message n - depth is acknowledged
 * before it writes message n. The lane is
 * released when the schedule is freed, and offered again once every acknowledgement
 * of its last use is in. None of these block. */

/* An unbound lane schedule on g (all_call as above). NULL: g not a live group, g has no
 * lanes (FMPL_COLL_LANES=0), or out of memory. */
coll_sched_t *coll_lane_sched(coll_group_t *g, int all_call);
/* The largest message a lane carries (FMPL_COLL_SMALL); 0 when there are no lanes. */
size_t coll_lane_room(const coll_group_t *g);
/* The largest message a lane's small cells carry (FMPL_COLL_LANE_BYTES: 64 cells per
 * cell index, so a writer runs up to 64 messages ahead; larger ones take the 16 big cells,
 * acknowledged every 4th); 0 when there are no lanes (or g is NULL). */
size_t coll_lane_cell_room(const coll_group_t *g);
/* Reserves those of the n lanes first, first+1, ... (modulo the number of lanes) that
 * are free here and returns their mask; they stay reserved for this agreement (no other
 * offer gets them) until coll_lanes_settle. Agreements that run at once should look at
 * different lanes (a reserved lane is not offered, and members may reserve in different
 * orders): every member passes the same first, chosen per agreement. */
uint64_t coll_lanes_offer(coll_group_t *g, unsigned first, int n);
/* Ends an agreement: `offered` is what this member's coll_lanes_offer returned, `agreed`
 * the AND of all members' offers. Binds the lowest agreed lane to lane schedule s (its
 * runs from the next start on use it) and returns its index, or returns -1 (none agreed,
 * or s not a lane schedule); the other offered lanes are free again. */
int coll_lanes_settle(coll_group_t *g, uint64_t offered, uint64_t agreed, coll_sched_t *s);

/* ---------------------------------------------------------------- queued runs
 * Nonblocking collectives on a group's shared mailboxes (channels and A cells), and the
 * MPI layer's persistent ones where the program promises to start them in call order
 * (src/mpi/coll_impl.h: a run queued at every start). Those
 * cells are safe for runs that each member makes one at a time, in the group's call
 * order (the A cells' parity argument needs a member to have finished run n - 1 before
 * it writes run n's messages; a channel's bounded depth, that its reader has consumed
 * every earlier run's messages before a writer waits on it for this run's acknowledgement
 * room). So a member queues such runs: the head runs in the
 * background (the engine's progress hook advances it whenever anyone enters the library),
 * each next one starts when the one before it completed here, and every blocking call on
 * the group (the calls above, and an owner's own blocking runs of group schedules)
 * first waits until the queue is empty. Runs on different members still overlap, which
 * is all the mailboxes need; runs on lanes do not queue. */

/* Queues a run of group schedule s (coll_group_sched or coll_group_sched_a on g, built,
 * not running) after every run queued on g before it; done(arg, err) is called once it
 * is complete (err: 0 or the first FMPL code of the run, FMPL_ERR_NOMEM when it could not
 * start), possibly inside this call, and may free s; s must live until then. Collective
 * in the group's call order like the blocking calls. Returns FMPL_SUCCESS (done will be
 * called), FMPL_ERR_ARG (g not a group, s not a group schedule, done NULL) or
 * FMPL_ERR_NOMEM (nothing queued). Never blocks. */
int coll_group_enqueue(coll_group_t *g, coll_sched_t *s, void (*done)(void *, int), void *arg);
/* Waits (progressing, vnic_wait) until every run queued on g, and every ordered offloaded
 * run of this member on g, has completed here: what a blocking run of a group schedule on g must
 * call first. FMPL_SUCCESS, FMPL_ERR_COMM (g
 * not a group) or vnic_wait's error. */
int coll_group_quiesce(coll_group_t *g);

/* ---------------------------------------------------------------- offloaded runs
 * Broadcast and allreduce that the other members finish without a member that is busy
 * elsewhere once it has started its part (seed 003 on one host; coll_offload.c explains the
 * protocol). Every member publishes its buffers at the start in its record of the
 * group's offload board (shared memory); whatever work a busy member would do, the members
 * that wait do for it: copying into and out of its buffers with vnic_copy_alone (its
 * shared heap, or CMA), and reducing its operand. For the nonblocking and persistent
 * calls of one host's groups; a run is one coll_sched_until step of the owner's schedule.
 *
 * Which calls may take this path must be decided alike on every member: coll_offload_take
 * gives the same answer everywhere when the members call it for the same calls in the same
 * order (as collectives are made), with the same size. */

/* Whether the call being built on g (size bytes; persistent 1 for a persistent request)
 * runs offloaded: FMPL_COLL_OFFLOAD is on, g has 2 or more members whose slots are all
 * mapped here, and, above the board's inline room (FMPL_COLL_SMALL), every member's private
 * memory is reachable (CMA); a persistent call also needs a board entry of its own: one of
 * 8 that no earlier call holds, where an entry goes back when every member has freed the
 * schedule its call was built into (coll_offload.c "Persistent entries": every member
 * takes the same entry, or none, for the same call whatever the order of the frees). On
 * success takes the call's entry and returns 1 with *entry and *seq (the instance: for a
 * persistent call, that of its first start minus 1); else 0 with nothing taken. Never
 * blocks. */
int coll_offload_take(coll_group_t *g, size_t size, int persistent, int *entry, uint64_t *seq);

typedef struct coll_offload coll_offload_t;
/* flags of an offloaded call: PERSISTENT, its instance advances at every run; ORDERED, its runs are
 * started in the group's call order, like the blocking calls (nonblocking calls; persistent ones
 * where the program asserts that order), so a blocking call waits for them first
 * (coll_group_quiesce). */
enum { COLL_OFFLOAD_PERSISTENT = 1, COLL_OFFLOAD_ORDERED = 2 };
/* The state of an offloaded call, in schedule memory of s (NULL: out of memory, s is
 * refused at start). A persistent call's entry is released when s is freed, which must
 * not be before this member's last run is over. bcast: size bytes of buf from root's to
 * every member's buf.
 * allreduce: count elements of op (commutative, elem_size bytes each) of every member's
 * in (in may be out) into every member's out, in rank order, the same bits everywhere. */
coll_offload_t *coll_offload_bcast(coll_sched_t *s, coll_group_t *g, int entry, uint64_t seq,
                                   unsigned flags, void *buf, size_t size, int root);
coll_offload_t *coll_offload_allreduce(coll_sched_t *s, coll_group_t *g, int entry, uint64_t seq,
                                       unsigned flags, const void *in, void *out, size_t count,
                                       const coll_reduce_op_t *op);
/* Adds the steps of o's runs to s: a local step at the start (resets the run, moves a
 * persistent call to its next instance), then an until step that ends with FMPL_SUCCESS
 * or an FMPL error (a copy failed at some member: every member reports it), given to
 * map first when map is not NULL (an owner whose schedules report codes of its own).
 * Neither blocks. The buffers must stay valid and untouched by the caller between a start
 * and the end of its run. FMPL_SUCCESS, or FMPL_ERR_NOMEM for o NULL (s is refused at
 * start as for any failed building call). */
int coll_offload_steps(coll_sched_t *s, coll_offload_t *o, int (*map)(int fmpl_code));

/* ---------------------------------------------------------------- persistent calls
 * Bcast and allreduce made once and run at every start (the native API's persistent
 * collectives; coll_persist.c). A call is made alike on every member (same order, same
 * arguments) without communicating; starts are collective in the group's call order, with
 * the blocking calls (a blocking call waits for this member's runs started before it). On
 * one host a call takes the offload board when coll_offload_take gives it an entry: its
 * runs then finish on the other members without a member that is busy after its start.
 * One thread per group, like the rest of this layer. */
typedef struct coll_persist coll_persist_t;
/* A persistent bcast of size bytes of buf from root / allreduce of count elements of op in
 * buf, in place. NULL with *rc: FMPL_ERR_COMM (g not a group), FMPL_ERR_ROOT,
 * FMPL_ERR_BUFFER (NULL with bytes), FMPL_ERR_OP, FMPL_ERR_ARG (count overflows),
 * FMPL_ERR_NOMEM or a builder's code. Never blocks. */
coll_persist_t *coll_bcast_init(coll_group_t *g, void *buf, size_t size, int root, int *rc);
coll_persist_t *coll_allreduce_init(coll_group_t *g, void *buf, size_t count,
                                    const coll_reduce_op_t *op, int *rc);
/* Starts a run: FMPL_SUCCESS, FMPL_ERR_BUSY (the last run has not been reaped by test or
 * wait), FMPL_ERR_NOMEM. The buffer is the library's until the run is reaped. Never
 * blocks. */
int coll_persist_start(coll_persist_t *p);
/* 1 when p has a run started and not reaped. */
int coll_persist_active(const coll_persist_t *p);
/* Progresses; 1 and the run reaped (*err: its FMPL code) when it is complete, else 0.
 * Never blocks. For an active p. */
int coll_persist_test(coll_persist_t *p, int *err);
/* Waits (vnic_wait) until the run is complete and reaps it: its FMPL code, or vnic_wait's
 * error (the run is then still active). For an active p. */
int coll_persist_wait(coll_persist_t *p);
/* Frees p (NULL: nothing): FMPL_SUCCESS, or FMPL_ERR_BUSY while it is active. Before its
 * group is freed. */
int coll_persist_free(coll_persist_t *p);

/* ---------------------------------------------------------------- the LogGP-planned bcast
 * A LogGP model of coll_build_bcast's two algorithms (coll_loggp.c explains it: what L, o,
 * g, G and our S are, the formulas, how every member comes to plan alike). Times in ns. */
typedef struct coll_loggp {
    double latency;      /* L: flight time of a small message */
    double overhead;     /* o: sender's CPU time per message */
    double gap;          /* g: time between two messages of a stream */
    double per_byte;     /* G: time per byte of a large message */
    double per_byte_far; /* G past the caches: per byte of a message beyond COLL_LOGGP_NEAR
                          * bytes (0: G) */
    double switch_cost;  /* S: added to a hop whose receiver must first get a CPU */
    int cpus;            /* CPUs the ranks of a host share (more ranks: oversubscribed) */
} coll_loggp_t;
/* The smallest chain segment the model picks, and the largest bcast it always sends down
 * the tree (bytes; coll_loggp.c says why). */
#define COLL_LOGGP_SEG_MIN 1024
/* The largest message whose every byte costs G (what G is measured on); bytes beyond it
 * cost G far (coll_loggp.c). */
#define COLL_LOGGP_NEAR ((size_t)1 << 20)
#define COLL_LOGGP_TREE_MIN 8192
/* What the model predicts of a bcast of `bytes` among `ranks` members: the binomial tree's
 * time, the pipelined chain's in segments of seg bytes (0: one segment); 0 for fewer than
 * two ranks or no bytes. Pure. */
double coll_loggp_tree(const coll_loggp_t *m, size_t bytes, int ranks);
double coll_loggp_chain(const coll_loggp_t *m, size_t bytes, int ranks, size_t seg);
/* The chain segment (a multiple of 64, in [min(COLL_LOGGP_SEG_MIN, seg_max), seg_max], or
 * bytes rounded up to 64 when smaller) that minimises coll_loggp_chain. Pure. */
size_t coll_loggp_best_seg(const coll_loggp_t *m, size_t bytes, int ranks, size_t seg_max);
/* A plan: chain 0 = binomial tree, 1 = chain of seg-byte segments; its predicted time. */
typedef struct coll_bcast_plan {
    int chain;
    size_t seg;
    double predicted;
} coll_bcast_plan_t;
/* The model's plan: the tree when bytes <= tree_max and either bytes <= COLL_LOGGP_TREE_MIN
 * or the tree is not slower than the chain at its best segment (at most seg_max). Pure. */
coll_bcast_plan_t coll_loggp_plan(const coll_loggp_t *m, size_t bytes, int ranks, size_t tree_max,
                                  size_t seg_max);
/* The plan coll_build_bcast follows for a group of `ranks` members on a channel schedule:
 * the model's with the parameters the job agreed at coll_init, unless settings fix the
 * choice (FMPL_COLL_LOGGP=0, FMPL_COLL_BCAST_TREE_MAX or FMPL_COLL_SEG set). The same on
 * every rank of the job. Zeroes before coll_init. */
coll_bcast_plan_t coll_bcast_plan(size_t bytes, int ranks);
/* The parameters the job agreed at coll_init (rank 0's cache file or the built-in ones,
 * then the FMPL_COLL_LOGGP_* settings); NULL before coll_init. */
const coll_loggp_t *coll_loggp_agreed(void);
/* The built-in parameters. */
const coll_loggp_t *coll_loggp_builtin(void);
/* The transport whose parameters apply to v's peers: "udp" when FMPL_TRANSPORT=udp forces
 * it for every peer, else "shm" (the ranks of a host). */
const char *coll_loggp_transport(vnic_t *v);
/* The cache file of measured parameters (FMPL_COLL_LOGGP_CACHE): its path into buf (1), or
 * 0 when there is none. Read: 1 and *m when the file has a line of `transport` ("shm",
 * "udp") for this host (CPU model and count), else 0. Write: replaces that line (other
 * lines stay); path gets the file's name; FMPL_SUCCESS, FMPL_ERR_ARG (no cache file) or
 * FMPL_ERR_SYS. */
int coll_loggp_cache_path(char *buf, size_t len);
int coll_loggp_cache_read(const char *transport, coll_loggp_t *m);
int coll_loggp_cache_write(const char *transport, const coll_loggp_t *m, char *path, size_t len);

/* Removes the engine's progress hook from v (at finalize, when nothing runs). */
void coll_sched_shutdown(vnic_t *v);

#endif
