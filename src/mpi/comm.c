/* comm.c — MPI communicators (MPI-4.0 chapter 7): the predefined communicators, the
 * object lifetime, context ids, and every constructor, accessor and destructor.
 *
 * Context ids: 4096 ids in pairs (ctx for user point-to-point, ctx + 1 for the
 * library's own traffic); a bitmap of free pairs per process. A new communicator's
 * pair is agreed over the members in rounds of AND-allreduces of the bitmaps over the
 * parent (for an intercommunicator parent: over each local group, then the two
 * leaders exchange and combine, then each leader broadcasts), with reservations that
 * keep concurrent allocations (a pending MPI_Comm_idup) apart: see "context ids" below.
 * Usually the result is the lowest pair free at every member, in one round.
 * MPI_COMM_WORLD has pair 0 (ctx 0), MPI_COMM_SELF pair 1 (ctx 2). Disjoint
 * communicators made by one call (Comm_split colours) share a pair: their members
 * never overlap.
 *
 * Communicators from groups (MPI-4.0 11.3: MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups) have no parent: the members agree over `boot_comm`,
 * an internal communicator over every process with pair 2 (ctx 4) and no handle, with
 * the tag a hash of the string tag (so concurrent calls with distinct tags do not mix;
 * two distinct tags of concurrent calls over overlapping groups that hash alike, a
 * 1-in-2^30 chance, would, undetected).
 *
 * An intercommunicator has group (local), rgroup (remote), a pair agreed by both groups
 * for the traffic between them, and `local`: an internal intracommunicator over the
 * local group (a second pair, no handle) for the library's local collectives.
 *
 * Mailbox groups: an intracommunicator of two or more processes gets a group of the coll
 * layer (its blocking and persistent collectives then run on the mailboxes, as
 * MPI_COMM_WORLD's do) when its pair p came with slot p % G (G = coll_max_groups()) free
 * at every member: see "mailbox slots" below.
 *
 * Lifetime: a communicator has refs (its handle, plus any pending operation that takes
 * one). MPI_Comm_free runs the attribute delete callbacks, drops the error handler and
 * info, forgets the handle and releases the handle's reference; the object goes with
 * the last reference. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

#define CTX_PAIRS 2048
#define CTX_WORDS (CTX_PAIRS / 64)

static uint64_t ctx_free_map[CTX_WORDS]; /* bit set: pair free at this process */
static struct mpii_comm *boot_comm;      /* every process, pair 2: see above */

/* ---------------------------------------------------------------- objects */

static mpii_comm_t *comm_alloc(mpii_group_t *group, mpii_group_t *rgroup, uint32_t ctx)
{
    mpii_comm_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    c->handle = MPI_COMM_NULL;
    c->group = group;
    c->rgroup = rgroup;
    c->rank = group->rank;
    c->size = group->size;
    c->ctx = ctx;
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->info = MPI_INFO_NULL;
    return c;
}

mpii_comm_t *mpii_comm_new(mpii_group_t *group, mpii_group_t *rgroup, uint32_t ctx)
{
    mpii_comm_t *c = comm_alloc(group, rgroup, ctx);
    if (!c)
        return NULL;
    c->handle = mpii_handle_new(FMPL_MPI_KIND_COMM, c);
    if (c->handle == MPI_COMM_NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void mpii_comm_release(mpii_comm_t *c)
{
    if (!c || --c->refs > 0)
        return;
    if (c->local)
        mpii_comm_release(c->local);
    mpii_sched_cache_free(c);
    mpii_node_free(c);
    mpii_group_release(c->group);
    mpii_group_release(c->rgroup);
    mpii_topo_free(c->topo);
    if (c->handle != MPI_COMM_WORLD && c->handle != MPI_COMM_SELF && c != boot_comm)
        mpii_ctx_free(c->ctx);
    mpii_errh_release(c->errh);
    if (c->info != MPI_INFO_NULL)
        mpii_info_free(&c->info);
    free(c);
}

/* ---------------------------------------------------------------- context ids
 *
 * Allocation. Every new pair is agreed by one allocation: an object (ctx_alloc_t) on
 * the list of this process's pending allocations while it runs, blocking (Comm_dup,
 * Comm_split, Comm_create, Intercomm_create ...: the caller's stack) or nonblocking
 * (Comm_idup: moved by the progress hook, see "nonblocking duplication" below). It
 * proceeds in rounds of AND-reductions over its members (its "domain": the parent, or
 * both groups of an intercommunicator, or a subset):
 *   (1) propose (local): avail = the pairs >= floor that are free here and not reserved
 *       by another pending allocation of this process; reserve p = the lowest of them
 *       (each allocation holds at most one reservation); send avail and below = the
 *       pairs < p. AND over the domain: c = the lowest pair available at every member,
 *       minp = the lowest p of any member.
 *   (2) minp == c: every member proposed c, so every member has held c reserved since
 *       its proposal: take c, done (one reduction: the usual case).
 *       No c: retry from pair 0 (once; then fail: no free context id).
 *   (3) else check (local): ok = c is free here and not reserved by another allocation;
 *       reserve c when ok (else nothing). AND of ok over the domain: all ok: take c,
 *       done; else release and retry with floor = c + 1 + a small offset (below).
 * Safety: a pair is reserved by at most one allocation of a process, only while free,
 * and reservations are made and checked inside one local step (one thread, no progress
 * inside a step), so at each member nothing else can reserve or take a pair between the
 * moment an allocation reserved it and the moment that allocation takes or releases it.
 * A take of c happens only when every member held c reserved for this allocation at
 * that point (2: since its proposal; 3: since its ok), and every member decides alike
 * from the same reduced words. So c was free at every member, and no other allocation
 * at any member can obtain c until the new communicator frees it: no two communicators
 * that share a process share a pair (except the disjoint parts of one Comm_split).
 * No deadlock: a step never waits for another allocation; a pending allocation stuck
 * on members that are busy elsewhere only keeps its one reserved pair out of others'
 * reach, so a blocking Comm_dup on B never waits for a Comm_idup on A.
 * Termination: a failed round raises the floor strictly above c (or wraps to 0 once),
 * so an allocation ends after at most 2 * CTX_PAIRS + 2 rounds. It needs a retry only
 * when a concurrent allocation at some member took or reserved c after that member's
 * proposal. Two allocations with overlapping members that each reserved c first at a
 * different member (e.g. idups on two communicators issued in opposite orders on two
 * processes) both fail that round, and with floor = c + 1 they could repeat the crossing
 * in lockstep; the retry floor therefore adds an offset 0..7 hashed from the
 * allocation's identity (parent context, tag) and c: two distinct allocations almost
 * always restart at different pairs, so each one proposes a pair of its own and the
 * next round succeeds at once. In practice allocations end in 1 round (2 when free sets
 * differ, 3-4 after a collision). */

#define CTX_NONE 0xFFFFFFF0u /* ctx of a communicator whose pair is not agreed yet */

enum { CA_PROPOSE = 0, CA_CHECK };      /* what the reduced words are */
enum { CA_DONE = 0, CA_MORE, CA_FAIL }; /* result of a step */

typedef struct ctx_alloc {
    struct ctx_alloc *prev, *next; /* pending list */
    uint32_t id;                   /* identity hash, for the retry offset */
    int floor, wrapped, phase;
    int resv;      /* pair reserved here, or -1 */
    int cand;      /* the agreed candidate (CA_CHECK), the pair taken (CA_DONE) */
    int nwords;    /* words of msg to AND-reduce next */
    int want_slot; /* offer only pairs whose mailbox slot is free (see mailbox slots) */
    uint64_t msg[2 * CTX_WORDS];
} ctx_alloc_t;

static ctx_alloc_t *ctx_pending; /* this process's pending allocations */

/* Mailbox slots. An allocation of one intracommunicator pair (blocking, or the pair of
 * an MPI_Comm_idup of an intracommunicator of two or more processes) first offers only
 * the pairs p whose slot p % G is free here (want_slot): not held by a pair of this
 * process (slot_claim), nor by a group of the coll layer (a native communicator's, or
 * one still retiring), nor by the reservation of another pending want_slot allocation
 * (blocking or nonblocking). The AND over the domain then gives a pair whose slot is
 * free at every member; the protocol's argument carries over (a reservation holds the
 * slot as it holds the pair: while an allocation holds pair p reserved at a member, no
 * other allocation there can reserve or take a pair of slot p % G, and no group can be
 * made in it, since groups are made only for taken slotted pairs). When the members
 * have no such pair in common (more than G live communicators, free slots held by
 * concurrent allocations, or a slot whose group's retirement is not over at some member
 * after two rounds: right after a free with few slots), the allocation ends with CA_FAIL
 * at every member alike (the decision comes from the reduced words) and a plain one
 * follows: that communicator has no group. Every member took the pair with its slot or every member
 * took it plain, so the members agree on `slotted`. The slot stays claimed from the take until the
 * group is freed (MPI_Comm_free, or MPI_Finalize) or the pair goes unused (mpii_ctx_free).
 * Intercommunicators take plain pairs. */
static uint8_t *slot_claim;             /* [slots]: the slot is held by a pair here */
static uint8_t pair_slotted[CTX_PAIRS]; /* the pair was taken with its slot */
static int slots;                       /* G; 0: no mailbox groups for new communicators */

static void slot_release(int pair)
{
    if (pair_slotted[pair]) {
        pair_slotted[pair] = 0;
        slot_claim[pair % slots] = 0;
    }
}

void mpii_ctx_free(uint32_t ctx)
{
    uint32_t pair = ctx / 2;
    if (pair < CTX_PAIRS) {
        ctx_free_map[pair / 64] |= 1ull << (pair % 64);
        slot_release((int)pair);
    }
}

/* 1 when the slot of pair p is not free for want_slot allocation a. */
static int slot_taken(const ctx_alloc_t *a, int p)
{
    int sl = p % slots;
    if (slot_claim[sl] || coll_slot_in_use((uint32_t)p))
        return 1;
    for (const ctx_alloc_t *x = ctx_pending; x; x = x->next)
        if (x != a && x->want_slot && x->resv >= 0 && x->resv % slots == sl)
            return 1;
    return 0;
}

static int pair_free(int p)
{
    return (int)(ctx_free_map[p / 64] >> (p % 64) & 1);
}

static int reserved_by_other(const ctx_alloc_t *a, int p)
{
    for (const ctx_alloc_t *x = ctx_pending; x; x = x->next)
        if (x != a && x->resv == p)
            return 1;
    return 0;
}

/* Lowest set (want 1) or clear (want 0) bit of words[0..CTX_WORDS), or CTX_PAIRS. */
static int lowest_bit(const uint64_t *w, int want)
{
    for (int i = 0; i < CTX_WORDS; i++) {
        uint64_t x = want ? w[i] : ~w[i];
        if (x)
            return i * 64 + __builtin_ctzll(x);
    }
    return CTX_PAIRS;
}

/* Step (1): fills msg with avail and below, reserves the lowest available pair. */
static void ca_propose(ctx_alloc_t *a)
{
    uint64_t *avail = a->msg, *below = a->msg + CTX_WORDS;
    a->resv = -1;
    memcpy(avail, ctx_free_map, sizeof ctx_free_map);
    for (const ctx_alloc_t *x = ctx_pending; x; x = x->next)
        if (x != a && x->resv >= 0)
            avail[x->resv / 64] &= ~(1ull << (x->resv % 64));
    for (int i = 0; i < a->floor; i++)
        avail[i / 64] &= ~(1ull << (i % 64));
    if (a->want_slot)
        for (int i = a->floor; i < CTX_PAIRS; i++)
            if ((avail[i / 64] >> (i % 64) & 1) && slot_taken(a, i))
                avail[i / 64] &= ~(1ull << (i % 64));
    int p = lowest_bit(avail, 1);
    memset(below, 0, CTX_WORDS * sizeof *below);
    for (int i = 0; i < p; i++)
        below[i / 64] |= 1ull << (i % 64);
    if (p < CTX_PAIRS)
        a->resv = p;
    a->phase = CA_PROPOSE;
    a->nwords = 2 * CTX_WORDS;
}

/* Starts allocation a (identity id): on the pending list, first proposal in msg. */
static void ca_begin(ctx_alloc_t *a, uint32_t id, int want_slot)
{
    memset(a, 0, sizeof *a);
    a->id = id;
    a->want_slot = want_slot && slots > 0;
    a->next = ctx_pending;
    if (ctx_pending)
        ctx_pending->prev = a;
    ctx_pending = a;
    ca_propose(a);
}

/* Takes a off the pending list (its reservation goes). */
static void ca_end(ctx_alloc_t *a)
{
    if (a->prev)
        a->prev->next = a->next;
    else
        ctx_pending = a->next;
    if (a->next)
        a->next->prev = a->prev;
    a->prev = a->next = NULL;
    a->resv = -1;
}

/* A new round from above pair c (c < 0: no common pair, restart from 0). */
static int ca_retry(ctx_alloc_t *a, int c)
{
    a->resv = -1;
    uint32_t h = (a->id ^ (uint32_t)c * 0x9E3779B9u) * 0x85EBCA6Bu;
    int floor = c < 0 ? CTX_PAIRS : c + 1 + (int)(h >> 29);
    if (floor >= CTX_PAIRS) {
        if (a->wrapped)
            return CA_FAIL;
        a->wrapped = 1;
        floor = 0;
    }
    a->floor = floor;
    ca_propose(a);
    return CA_MORE;
}

static int ca_take(ctx_alloc_t *a, int c)
{
    ctx_free_map[c / 64] &= ~(1ull << (c % 64));
    if (a->want_slot) {
        pair_slotted[c] = 1;
        slot_claim[c % slots] = 1;
    }
    a->resv = -1;
    a->cand = c;
    return CA_DONE;
}

/* Steps (2) and (3): msg holds the AND over the domain of the words the last step
 * sent. CA_DONE: pair a->cand is taken here; CA_MORE: AND-reduce msg[0..nwords) again
 * and call this again; CA_FAIL: no free context id (nothing taken). */
static int ca_step(ctx_alloc_t *a)
{
    if (a->phase == CA_CHECK) {
        if (a->msg[0] == ~0ull)
            return ca_take(a, a->cand);
        return ca_retry(a, a->cand);
    }
    int c = lowest_bit(a->msg, 1), minp = lowest_bit(a->msg + CTX_WORDS, 0);
    if (c == CTX_PAIRS)
        return ca_retry(a, -1);
    if (minp == c)
        return ca_take(a, c); /* reserved here since the proposal (a->resv == c) */
    int ok = pair_free(c) && !reserved_by_other(a, c) && !(a->want_slot && slot_taken(a, c));
    a->resv = ok ? c : -1;
    a->cand = c;
    a->phase = CA_CHECK;
    a->msg[0] = ok ? ~0ull : 0;
    a->nwords = 1;
    return CA_MORE;
}

/* The domain of a blocking allocation and its AND-reduction: the members of c (map, p,
 * me as for mpii_lib_allreduce_band_tag) with tag; with xch set, member `leader` then
 * exchanges the result with rank xpeer of x (tag xtag; only the leader's x is used) and
 * broadcasts the combination: both groups of a (future) intercommunicator. */
typedef struct ctx_dom {
    mpii_comm_t *c;
    const int *map;
    int p, me, tag;
    int xch;
    mpii_comm_t *x;
    int xpeer, xtag, leader;
    int sock_on, sock; /* xch through a stream socket instead of x (dpm.c) */
} ctx_dom_t;

static int dom_band(const ctx_dom_t *d, uint64_t *w, int n)
{
    int rc = mpii_lib_allreduce_band_tag(d->c, d->map, d->p, d->me, w, n, d->tag);
    if (rc != MPI_SUCCESS || !d->xch)
        return rc;
    size_t len = (size_t)n * sizeof *w;
    if (d->me == d->leader) {
        uint64_t other[2 * CTX_WORDS];
        int first = d->sock_on ? 0 : mpii.world_rank < mpii_comm_peer_world(d->x, d->xpeer);
        if (d->sock_on)
            rc = mpii_fd_exchange(d->sock, w, other, len);
        for (int step = 0; step < 2 && rc == MPI_SUCCESS && !d->sock_on; step++)
            rc = step == first ? mpii_lib_recv(d->x, other, len, d->xpeer, d->xtag)
                               : mpii_lib_send(d->x, w, len, d->xpeer, d->xtag);
        if (rc != MPI_SUCCESS)
            return rc;
        for (int i = 0; i < n; i++)
            w[i] &= other[i];
    }
    return mpii_lib_bcast_tag(d->c, d->map, d->p, d->me, w, len, d->leader, d->tag);
}

static uint32_t ca_id(uint32_t ctx, int tag)
{
    return (ctx * 2654435761u) ^ ((uint32_t)tag * 0x27D4EB2Fu);
}

/* The class of a failed allocation (no pair free at every member), explained. */
static int ctx_exhausted(void)
{
    int used = 0;
    for (int i = 0; i < CTX_WORDS; i++)
        used += __builtin_popcountll(~ctx_free_map[i]);
    mpii_err_note(MPI_ERR_OTHER,
                  "no context id is free at every member: this process holds %d of its %d "
                  "(one per live communicator, two per intercommunicator; MPI_Comm_free "
                  "gives them back)",
                  used, CTX_PAIRS);
    return MPI_ERR_OTHER;
}

/* Whether g holds processes of other jobs (dpm.c: peer ids >= the world size). */
static int group_has_other_jobs(const mpii_group_t *g)
{
    for (int i = 0; g && i < g->size; i++)
        if (g->world[i] >= mpii.world_size)
            return 1;
    return 0;
}

/* Agrees on n fresh pairs (ctx[0..n), one allocation each) over domain d; blocking. One
 * pair (an intracommunicator's) comes with a mailbox slot when the members have one in
 * common (mailbox slots). Returns an MPI error class (MPI_ERR_OTHER: no free context
 * id, explained by ctx_exhausted), nothing taken then. */

static int ctx_dom_alloc(const ctx_dom_t *d, int n, uint32_t *ctx)
{
    int rc = MPI_SUCCESS, k = 0;
    /* mailbox groups live in this job's memory: a communicator with processes of another
     * job (dpm.c) takes a plain pair (every member sees the same group, so all agree) */
    int slot_ok = n == 1 && !group_has_other_jobs(d->c->group) &&
                  !(d->x && group_has_other_jobs(d->x->rgroup)) && !d->sock_on;
    for (; k < n && rc == MPI_SUCCESS; k++) {
        ctx_alloc_t a;
        int st = CA_FAIL;
        for (int want = slot_ok; st == CA_FAIL && want >= 0 && rc == MPI_SUCCESS; want--) {
            ca_begin(&a, ca_id(d->c->ctx, d->tag), want);
            st = CA_MORE;
            while (st == CA_MORE && (rc = dom_band(d, a.msg, a.nwords)) == MPI_SUCCESS)
                st = ca_step(&a);
            ca_end(&a);
        }
        if (rc == MPI_SUCCESS && st == CA_FAIL)
            rc = ctx_exhausted();
        ctx[k] = 2 * (uint32_t)a.cand;
    }
    if (rc != MPI_SUCCESS)
        for (int i = 0; i < k - 1; i++)
            mpii_ctx_free(ctx[i]);
    return rc;
}

/* The domain of every member of parent (both groups when inter). */
static void parent_dom(mpii_comm_t *parent, ctx_dom_t *d)
{
    memset(d, 0, sizeof *d);
    d->tag = MPII_TAG_LIBCOLL;
    if (parent->rgroup) {
        d->c = parent->local;
        d->xch = 1;
        d->x = parent;
        d->xtag = MPII_TAG_LIBCOLL;
    } else {
        d->c = parent;
    }
    d->p = d->c->size;
    d->me = d->c->rank;
}

/* Agrees on n fresh pairs over every member of parent (both groups when inter). */
static int ctx_agree(mpii_comm_t *parent, int n, uint32_t *ctx)
{
    ctx_dom_t d;
    parent_dom(parent, &d);
    return ctx_dom_alloc(&d, n, ctx);
}

int mpii_ctx_alloc(mpii_comm_t *parent, uint32_t *ctx)
{
    return ctx_agree(parent, 1, ctx);
}

/* Leaders (local rank 0 on both sides) of intercommunicator ic exchange `len` bytes:
 * mine out, theirs in. The side whose leader has the lower world rank sends first. */
static int leader_exchange(mpii_comm_t *ic, const void *mine, void *theirs, size_t len, int tag)
{
    int first = ic->group->world[0] < ic->rgroup->world[0];
    int rc;
    if (first) {
        rc = mpii_lib_send(ic, mine, len, 0, tag);
        if (rc == MPI_SUCCESS)
            rc = mpii_lib_recv(ic, theirs, len, 0, tag);
    } else {
        rc = mpii_lib_recv(ic, theirs, len, 0, tag);
        if (rc == MPI_SUCCESS)
            rc = mpii_lib_send(ic, mine, len, 0, tag);
    }
    return rc;
}

/* ---------------------------------------------------------------- init / finalize */

static mpii_comm_t *predef_comm(int index, mpii_group_t *g, uint32_t ctx, const char *name)
{
    mpii_group_finish(g);
    mpii_comm_t *c = comm_alloc(g, NULL, ctx);
    if (!c)
        base_fatal("mpi: out of memory at init");
    c->handle = FMPL_MPI_HANDLE(FMPL_MPI_KIND_COMM, index);
    snprintf(c->name, sizeof c->name, "%s", name);
    mpii_handle_set(FMPL_MPI_KIND_COMM, index, c);
    return c;
}

coll_group_t *mpii_comm_cgroup_make(mpii_comm_t *c)
{
    int rc =
        coll_group_create(mpii.vnic, c->size, c->rank, c->group->world, c->ctx / 2, &c->cgroup);
    if (rc != FMPL_SUCCESS) /* the members agreed on the slot: only memory can fail */
        base_fatal("mpi: no mailbox group for a communicator: %s", base_strerror(rc));
    return c->cgroup;
}

/* Retires c's mailbox group (made here first if this member never used it): the members'
 * handshake runs in the background (coll_group_retire), so members may free their
 * communicators in any order; the slot stays in use until it is over. The pair stays
 * c's. Blocks only while nonblocking collectives of this member are queued on it. */
static int comm_group_free(mpii_comm_t *c)
{
    coll_group_t *g = mpii_comm_cgroup(c);
    /* nonblocking calls still queued on the group finish first (their requests hold
     * schedules of the cache): they need the other members only to have started them */
    int rc = coll_group_quiesce(g);
    if (rc != FMPL_SUCCESS)
        return mpii_err_from_fmpl(rc);
    mpii_sched_cache_free(c); /* its schedules run on the group */
    rc = coll_group_retire(g, NULL, NULL);
    c->cgroup = NULL;
    c->slotted = 0;
    slot_release((int)(c->ctx / 2));
    return rc == FMPL_SUCCESS ? MPI_SUCCESS : mpii_err_from_fmpl(rc);
}

static void slotted_cb(int h, void *obj, void *arg)
{
    (void)h;
    mpii_comm_t *c = obj;
    int *rc = arg;
    if (c->slotted) {
        int r = comm_group_free(c);
        if (*rc == MPI_SUCCESS)
            *rc = r;
    }
}

static int none_retiring(void *arg)
{
    (void)arg;
    return coll_groups_retiring() == 0;
}

int mpii_comm_groups_finalize(void)
{
    int rc = MPI_SUCCESS;
    mpii_handle_foreach(FMPL_MPI_KIND_COMM, slotted_cb, &rc);
    int wrc = vnic_wait(mpii.vnic, none_retiring, NULL, -1);
    if (rc == MPI_SUCCESS && wrc != FMPL_SUCCESS)
        rc = mpii_err_from_fmpl(wrc);
    return rc;
}

int mpii_comm_init(void)
{
    slots = coll_max_groups();
    if (slots > 0 && !slot_claim && !(slot_claim = calloc((size_t)slots, 1)))
        return MPI_ERR_NO_MEM;
    memset(ctx_free_map, 0xff, sizeof ctx_free_map);
    ctx_free_map[0] &= ~7ull; /* pairs 0 (WORLD), 1 (SELF) and 2 (boot_comm) */
    mpii_group_empty.refs = 1;
    mpii_handle_set(FMPL_MPI_KIND_GROUP, 1, &mpii_group_empty);
    mpii_group_t *gw = mpii_group_new(mpii.world_size), *gs = mpii_group_new(1);
    if (!gw || !gs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < mpii.world_size; i++)
        gw->world[i] = i;
    gs->world[0] = mpii.world_rank;
    predef_comm(1, gw, 0, "MPI_COMM_WORLD");
    predef_comm(2, gs, 2, "MPI_COMM_SELF");
    gw->refs++;
    boot_comm = comm_alloc(gw, NULL, 4);
    if (!boot_comm)
        return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

static void free_comm_cb(int h, void *obj, void *arg)
{
    (void)arg;
    mpii_comm_t *c = obj;
    mpii_handle_del(FMPL_MPI_KIND_COMM, h);
    c->refs = 1; /* pending operations are gone by now */
    mpii_comm_release(c);
}

static void free_group_cb(int h, void *obj, void *arg)
{
    (void)arg;
    mpii_handle_del(FMPL_MPI_KIND_GROUP, h);
    mpii_group_release(obj);
}

void mpii_comm_finalize(void)
{
    mpii_handle_foreach(FMPL_MPI_KIND_COMM, free_comm_cb, NULL);
    mpii_handle_foreach(FMPL_MPI_KIND_GROUP, free_group_cb, NULL);
    for (int i = 1; i <= 2; i++) {
        mpii_comm_t *c =
            mpii_handle_get(FMPL_MPI_KIND_COMM, FMPL_MPI_HANDLE(FMPL_MPI_KIND_COMM, i));
        mpii_handle_set(FMPL_MPI_KIND_COMM, i, NULL);
        if (c) {
            c->refs = 1;
            mpii_comm_release(c);
        }
    }
    mpii_handle_set(FMPL_MPI_KIND_GROUP, 1, NULL);
    mpii_comm_release(boot_comm);
    boot_comm = NULL;
    free(slot_claim);
    slot_claim = NULL;
    slots = 0;
    memset(pair_slotted, 0, sizeof pair_slotted);
}

/* ---------------------------------------------------------------- accessors */

/* Contract: mpi_impl.h. */
int mpii_comm_arg(MPI_Comm h, const char *arg, int want, const char *fname, mpii_comm_t **cp)
{
    mpii_comm_t *c = mpii_comm_get(h);
    *cp = NULL;
    if (!c)
        return mpii_err_handle(0, 0, MPI_ERR_COMM, fname, arg, h);
    if (want != MPII_COMM_ANY && (c->rgroup != NULL) != (want == MPII_COMM_INTER))
        return MPII_ERRF_COMM(h, MPI_ERR_COMM, fname, "%s %#x is %s intercommunicator", arg,
                              (unsigned)h, c->rgroup ? "an" : "not an");
    *cp = c;
    return MPI_SUCCESS;
}

/* c: communicator argument comm of fn (of kind want), or return the error. */
#define GET_COMM_OF(c, comm, arg, want, fn)                                                        \
    MPII_CHECK_INIT(fn);                                                                           \
    mpii_comm_t *c;                                                                                \
    do {                                                                                           \
        int rc_ = mpii_comm_arg(comm, arg, want, fn, &c);                                          \
        if (!c)                                                                                    \
            return rc_;                                                                            \
    } while (0)
#define GET_COMM(c, comm, fn) GET_COMM_OF(c, comm, "comm", MPII_COMM_ANY, fn)

/* Checks an info argument that may be MPI_INFO_NULL: MPI_SUCCESS or the error raised. */
static int info_arg(MPI_Comm comm, MPI_Info info, const char *fn)
{
    if (info == MPI_INFO_NULL || mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return MPI_SUCCESS;
    return mpii_err_handle(FMPL_MPI_KIND_COMM, comm, MPI_ERR_INFO, fn, "info", info);
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM(c, comm, "MPI_Comm_size");
    if (!size)
        return MPII_ERR_NULL(comm, "size", "MPI_Comm_size");
    *size = c->size;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_size, PMPI_Comm_size)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM(c, comm, "MPI_Comm_rank");
    if (!rank)
        return MPII_ERR_NULL(comm, "rank", "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_rank, PMPI_Comm_rank)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    GET_COMM(c, comm, "MPI_Comm_test_inter");
    if (!flag)
        return MPII_ERR_NULL(comm, "flag", "MPI_Comm_test_inter");
    *flag = c->rgroup != NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_test_inter, PMPI_Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    GET_COMM_OF(c, comm, "comm", MPII_COMM_INTER, "MPI_Comm_remote_size");
    if (!size)
        return MPII_ERR_NULL(comm, "size", "MPI_Comm_remote_size");
    *size = c->rgroup->size;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_remote_size, PMPI_Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    GET_COMM_OF(c, comm, "comm", MPII_COMM_INTER, "MPI_Comm_remote_group");
    if (!group)
        return MPII_ERR_NULL(comm, "group", "MPI_Comm_remote_group");
    c->rgroup->refs++;
    int rc = mpii_group_handle(c->rgroup, group);
    return rc == MPI_SUCCESS ? rc : MPII_ERR_COMM(comm, rc, "MPI_Comm_remote_group");
}
MPII_WEAK(MPI_Comm_remote_group, PMPI_Comm_remote_group)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    GET_COMM_OF(a, comm1, "comm1", MPII_COMM_ANY, "MPI_Comm_compare");
    GET_COMM_OF(b, comm2, "comm2", MPII_COMM_ANY, "MPI_Comm_compare");
    if (!result)
        return MPII_ERR_NULL(comm1, "result", "MPI_Comm_compare");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if ((a->rgroup == NULL) != (b->rgroup == NULL)) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int r = mpii_group_compare(a->group, b->group);
    if (r >= 0 && a->rgroup) {
        int r2 = mpii_group_compare(a->rgroup, b->rgroup);
        r = r2 < 0 ? r2 : BASE_MAX(r, r2);
    }
    if (r < 0)
        return MPII_ERR_COMM(comm1, MPI_ERR_NO_MEM, "MPI_Comm_compare");
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_compare, PMPI_Comm_compare)

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    GET_COMM(c, comm, "MPI_Comm_set_name");
    if (!comm_name)
        return MPII_ERR_NULL(comm, "comm_name", "MPI_Comm_set_name");
    snprintf(c->name, sizeof c->name, "%s", comm_name);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_set_name, PMPI_Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    GET_COMM(c, comm, "MPI_Comm_get_name");
    if (!comm_name || !resultlen)
        return MPII_ERR_NULL(comm, comm_name ? "resultlen" : "comm_name", "MPI_Comm_get_name");
    size_t n = strlen(c->name);
    memcpy(comm_name, c->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_get_name, PMPI_Comm_get_name)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    GET_COMM(c, comm, "MPI_Comm_set_info");
    if (!mpii_handle_get(FMPL_MPI_KIND_INFO, info)) /* MPI_INFO_NULL too */
        return mpii_err_handle(FMPL_MPI_KIND_COMM, comm, MPI_ERR_INFO, "MPI_Comm_set_info", "info",
                               info);
    MPI_Info dup;
    int rc = mpii_info_dup(info, &dup);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, "MPI_Comm_set_info");
    if (c->info != MPI_INFO_NULL)
        mpii_info_free(&c->info);
    c->info = dup;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_set_info, PMPI_Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    GET_COMM(c, comm, "MPI_Comm_get_info");
    if (!info_used)
        return MPII_ERR_NULL(comm, "info_used", "MPI_Comm_get_info");
    int rc = mpii_info_dup(c->info, info_used);
    return rc == MPI_SUCCESS ? rc : MPII_ERR_COMM(comm, rc, "MPI_Comm_get_info");
}
MPII_WEAK(MPI_Comm_get_info, PMPI_Comm_get_info)

/* ---------------------------------------------------------------- constructors */

/* A new communicator from the agreed pairs: group and rgroup references are taken over
 * (released on failure); errhandler inherited from parent. ctx[1] is the local pair of
 * an intercommunicator. Returns the class. */
static int comm_make_errh(int errh, mpii_group_t *g, mpii_group_t *rg, const uint32_t *ctx,
                          mpii_comm_t **out);
static int comm_make(mpii_comm_t *parent, mpii_group_t *g, mpii_group_t *rg, const uint32_t *ctx,
                     mpii_comm_t **out)
{
    return comm_make_errh(parent->errh, g, rg, ctx, out);
}

/* A new communicator over g (and rg: inter) with pair(s) ctx and error handler errh;
 * takes the caller's references to g and rg. */
static int comm_make_errh(int errh, mpii_group_t *g, mpii_group_t *rg, const uint32_t *ctx,
                          mpii_comm_t **out)
{
    mpii_comm_t *c = mpii_comm_new(g, rg, ctx[0]);
    if (!c) {
        mpii_group_release(g);
        mpii_group_release(rg);
        mpii_ctx_free(ctx[0]);
        if (rg)
            mpii_ctx_free(ctx[1]);
        return MPI_ERR_NO_MEM;
    }
    c->errh = errh;
    mpii_errh_ref(c->errh);
    if (!rg && ctx[0] != CTX_NONE && pair_slotted[ctx[0] / 2]) {
        if (g->size > 1)
            c->slotted = 1;
        else
            slot_release((int)(ctx[0] / 2));
    }
    if (rg) {
        g->refs++;
        c->local = comm_alloc(g, NULL, ctx[1]);
        if (!c->local) {
            mpii_group_release(g);
            mpii_ctx_free(ctx[1]);
            mpii_handle_del(FMPL_MPI_KIND_COMM, c->handle);
            mpii_comm_release(c);
            return MPI_ERR_NO_MEM;
        }
    }
    *out = c;
    return MPI_SUCCESS;
}

/* Frees a communicator the user never saw (a failed constructor's). */
static void comm_discard(mpii_comm_t *c)
{
    mpii_handle_del(FMPL_MPI_KIND_COMM, c->handle);
    mpii_attr_delete_all(FMPL_MPI_KIND_COMM, c->handle, &c->attrs);
    mpii_comm_release(c);
}

/* A duplicate of p with pair(s) ctx (CTX_NONE: agreed later): the same groups, error
 * handler and topology, info (use_info ? info : p's), and p's attributes as the copy
 * callbacks decide. Returns an MPI error class (nothing made then; the pairs are
 * freed). */
static int dup_make(mpii_comm_t *p, const uint32_t *ctx, MPI_Info info, int use_info,
                    mpii_comm_t **out)
{
    p->group->refs++;
    if (p->rgroup)
        p->rgroup->refs++;
    mpii_comm_t *c;
    int rc = comm_make(p, p->group, p->rgroup, ctx, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (p->topo) {
        c->topo = mpii_topo_dup(p->topo);
        if (!c->topo) {
            comm_discard(c);
            return MPI_ERR_NO_MEM;
        }
    }
    MPI_Info src = use_info ? info : p->info;
    if (src != MPI_INFO_NULL && (rc = mpii_info_dup(src, &c->info)) != MPI_SUCCESS) {
        c->info = MPI_INFO_NULL;
        comm_discard(c);
        return rc;
    }
    rc = mpii_attr_copy(FMPL_MPI_KIND_COMM, p->handle, p->attrs, c->handle, &c->attrs);
    if (rc != MPI_SUCCESS) {
        comm_discard(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

static int comm_dup(mpii_comm_t *p, MPI_Info info, int use_info, MPI_Comm *newcomm, const char *fn)
{
    uint32_t ctx[2];
    int rc = ctx_agree(p, p->rgroup ? 2 : 1, ctx);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(p->handle, rc, fn);
    mpii_comm_t *c;
    rc = dup_make(p, ctx, info, use_info, &c);
    if (rc != MPI_SUCCESS) {
        *newcomm = MPI_COMM_NULL;
        return MPII_ERR_COMM(p->handle, rc, fn);
    }
    *newcomm = c->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM(c, comm, "MPI_Comm_dup");
    if (!newcomm)
        return MPII_ERR_NULL(comm, "newcomm", "MPI_Comm_dup");
    return comm_dup(c, MPI_INFO_NULL, 0, newcomm, "MPI_Comm_dup");
}
MPII_WEAK(MPI_Comm_dup, PMPI_Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    GET_COMM(c, comm, "MPI_Comm_dup_with_info");
    if (!newcomm)
        return MPII_ERR_NULL(comm, "newcomm", "MPI_Comm_dup_with_info");
    int rc = info_arg(comm, info, "MPI_Comm_dup_with_info");
    if (rc)
        return rc;
    return comm_dup(c, info, 1, newcomm, "MPI_Comm_dup_with_info");
}
MPII_WEAK(MPI_Comm_dup_with_info, PMPI_Comm_dup_with_info)

/* ---------------------------------------------------------------- nonblocking duplication
 * MPI_Comm_idup(_with_info) (MPI-4.0 7.4.2): "as if MPI_COMM_DUP was executed at the time
 * MPI_COMM_IDUP is called", so the new communicator is made at the call (handle in
 * *newcomm, groups, error handler, topology, info, attributes copied by their
 * callbacks then, in the caller's thread) with no pair yet (CTX_NONE); using it before
 * the request completes is erroneous. Its pair (and the local pair of an
 * intercommunicator, a second allocation) is agreed by a ctx_alloc_t driven by
 * schedules: each AND-reduction of the allocation's words is one schedule (intra: a
 * binomial reduce to rank 0 and a binomial broadcast over the parent; inter: the
 * reduce over the local group, the leaders' exchange over the parent, the broadcast
 * over the local group, three schedules in turn), run in the background; its
 * completion callback runs the next allocation step (ca_step) and starts the next
 * reduction, or ends the operation: the pairs go to the new communicator and the
 * request completes. Every schedule of one idup carries the tag the call took from the
 * parent's collective sequence (the same on every member, as MPI orders collectives on
 * a communicator); the local-group schedules of an intercommunicator use it too on the
 * internal local communicator, which runs nothing of its own. Successive reductions
 * between two processes match in posting order (non-overtaking).
 * The idups of one parent run one after the other (a later one waits in its
 * predecessor's `queued` until that one ends; all members issue them in the same
 * order): started together, each would find the pairs the others reserved at members
 * whose free pairs differ and retry round after round. Nothing else waits for them.
 * The pair of an intracommunicator of two or more processes is first sought with its
 * mailbox slot (want_slot, see "mailbox slots"); when that allocation fails (alike at
 * every member) a plain one follows, as for a blocking dup. The new communicator is
 * `slotted` from the completion on (its group is made at its first collective): the
 * slot was free and reserved at every member when the pair was taken, so it is clean
 * there whatever blocking dups, frees or other idups ran before, meanwhile or after. */

typedef struct idup_op {
    ctx_alloc_t a;
    mpii_comm_t *p;  /* parent (a reference) */
    mpii_comm_t *nc; /* the new communicator (its handle is the user's) */
    mpii_req_t *r;
    int tag;
    int need, got; /* pairs to agree on (1, or 2 for an intercommunicator), agreed */
    uint32_t ctx[2];
    int stage;                   /* inter: 0 local reduce, 1 leaders, 2 local bcast */
    coll_sched_t *s;             /* the running schedule */
    struct idup_op *next;        /* list of unfinished idups */
    struct idup_op *queued;      /* the next idup on the same parent, started at our end */
    uint64_t tmp[2 * CTX_WORDS]; /* received words */
} idup_op_t;

typedef struct band_args {
    uint64_t *w;
    const uint64_t *in;
    int n;
} band_args_t;

static int band_step(const void *args)
{
    const band_args_t *x = args;
    for (int i = 0; i < x->n; i++)
        x->w[i] &= x->in[i];
    return 0;
}

/* Adds to s (over p members, this one me) a binomial AND-reduction of w[0..n) to member
 * 0 through tmp (reduce) and a binomial broadcast of w from member 0 (bcast). */
static void sched_band(coll_sched_t *s, int p, int me, uint64_t *w, uint64_t *tmp, int n,
                       int reduce, int bcast)
{
    int64_t len = (int64_t)n * (int64_t)sizeof *w;
    band_args_t a = {w, tmp, n};
    int mask;
    if (reduce)
        for (mask = 1; mask < p; mask <<= 1) {
            if (me & mask) {
                mpii_sched_send(s, w, len, MPI_BYTE, me - mask);
                mpii_sched_fence(s);
                break;
            }
            if (me + mask < p) {
                mpii_sched_recv(s, tmp, len, MPI_BYTE, me + mask);
                mpii_sched_fence(s);
                coll_sched_call(s, band_step, &a, sizeof a);
            }
        }
    if (!bcast)
        return;
    mpii_sched_fence(s);
    for (mask = 1; mask < p; mask <<= 1)
        if (me & mask) {
            mpii_sched_recv(s, w, len, MPI_BYTE, me - mask);
            mpii_sched_fence(s);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (me + mask < p)
            mpii_sched_send(s, w, len, MPI_BYTE, me + mask);
}

static void idup_stage(idup_op_t *op);

static idup_op_t *idup_ops; /* unfinished idups (running or queued) */

/* The first allocation of op seeks a pair with its mailbox slot: intracommunicators of
 * two or more processes (the same value at every member). */
static int idup_want_slot(const idup_op_t *op)
{
    return !op->p->rgroup && op->p->size > 1;
}

/* Ends op with MPI error class err: the pairs go to the new communicator (on error the
 * agreed ones are freed and it keeps CTX_NONE), the request completes. */
static void idup_finish(idup_op_t *op, int err)
{
    ca_end(&op->a);
    for (idup_op_t **pp = &idup_ops; *pp; pp = &(*pp)->next)
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    idup_op_t *queued = op->queued;
    if (err == MPI_SUCCESS) {
        op->nc->ctx = op->ctx[0];
        if (op->nc->local)
            op->nc->local->ctx = op->ctx[1];
        else if (pair_slotted[op->ctx[0] / 2])
            op->nc->slotted = 1; /* want_slot only when the size is 2 or more */
    } else {
        for (int i = 0; i < op->got; i++)
            mpii_ctx_free(op->ctx[i]);
    }
    mpii_comm_release(op->p);
    mpii_req_t *r = op->r;
    free(op);
    r->err = err;
    mpii_status_empty(&r->st);
    r->st.MPI_ERROR = err;
    mpii_req_done(r);
    if (queued) {
        ca_begin(&queued->a, queued->a.id, idup_want_slot(queued));
        idup_stage(queued);
    }
}

/* One reduction (all its stages) is complete: the next allocation step. */
static void idup_reduced(idup_op_t *op)
{
    int st = ca_step(&op->a);
    if (st == CA_MORE) {
        op->stage = 0;
        idup_stage(op);
        return;
    }
    if (st == CA_FAIL && op->a.want_slot) { /* no slot in common: a plain pair */
        ca_end(&op->a);
        ca_begin(&op->a, op->a.id, 0);
        op->stage = 0;
        idup_stage(op);
        return;
    }
    if (st == CA_FAIL) {
        idup_finish(op, ctx_exhausted());
        return;
    }
    op->ctx[op->got++] = 2 * (uint32_t)op->a.cand;
    if (op->got == op->need) {
        idup_finish(op, MPI_SUCCESS);
        return;
    }
    ca_end(&op->a);
    ca_begin(&op->a, op->a.id, 0);
    op->stage = 0;
    idup_stage(op);
}

static void idup_stage_done(void *arg, int err)
{
    idup_op_t *op = arg;
    coll_sched_free(op->s);
    op->s = NULL;
    if (err) {
        idup_finish(op, err);
        return;
    }
    if (op->p->rgroup && op->stage < 2) {
        op->stage++;
        idup_stage(op);
        return;
    }
    idup_reduced(op);
}

/* Builds and starts the schedule of op's current stage (op may be gone on return: the
 * completion may run inside). */
static void idup_stage(idup_op_t *op)
{
    mpii_comm_t *p = op->p, *l = p->rgroup ? p->local : p;
    int n = op->a.nwords;
    coll_sched_t *s = mpii_sched_new(op->stage == 1 ? p : l);
    if (!s) {
        idup_finish(op, MPI_ERR_NO_MEM);
        return;
    }
    if (!p->rgroup) {
        sched_band(s, l->size, l->rank, op->a.msg, op->tmp, n, 1, 1);
    } else if (op->stage == 0) {
        sched_band(s, l->size, l->rank, op->a.msg, op->tmp, n, 1, 0);
    } else if (op->stage == 2) {
        sched_band(s, l->size, l->rank, op->a.msg, op->tmp, n, 0, 1);
    } else if (l->rank == 0) {
        band_args_t a = {op->a.msg, op->tmp, n};
        int64_t len = (int64_t)n * (int64_t)sizeof(uint64_t);
        mpii_sched_send(s, op->a.msg, len, MPI_BYTE, 0);
        mpii_sched_recv(s, op->tmp, len, MPI_BYTE, 0);
        mpii_sched_fence(s);
        coll_sched_call(s, band_step, &a, sizeof a);
    }
    op->s = s;
    if (coll_sched_start(s, op->tag, 1, idup_stage_done, op)) {
        coll_sched_free(s);
        op->s = NULL;
        idup_finish(op, MPI_ERR_NO_MEM);
    }
}

static int comm_idup(mpii_comm_t *p, MPI_Info info, int use_info, MPI_Comm *newcomm,
                     MPI_Request *request, const char *fn)
{
    const uint32_t none[2] = {CTX_NONE, CTX_NONE};
    mpii_comm_t *c;
    int rc = dup_make(p, none, info, use_info, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(p->handle, rc, fn);
    idup_op_t *op = calloc(1, sizeof *op);
    mpii_req_t *r = op ? mpii_req_alloc() : NULL;
    if (!r) {
        free(op);
        comm_discard(c);
        return MPII_ERR_COMM(p->handle, MPI_ERR_NO_MEM, fn);
    }
    r->kind = MPII_REQ_COLL; /* no schedule of its own (r->sched NULL): op runs them */
    r->comm = p->handle;
    p->refs++;
    r->cref = p;
    mpii_status_empty(&r->st);
    rc = mpii_req_handle(r, request);
    if (rc != MPI_SUCCESS) {
        free(op);
        comm_discard(c);
        return MPII_ERR_COMM(p->handle, rc, fn);
    }
    p->refs++;
    op->p = p;
    op->nc = c;
    op->r = r;
    op->tag = mpii_coll_tag(p);
    op->need = p->rgroup ? 2 : 1;
    op->a.id = ca_id(p->ctx, op->tag);
    *newcomm = c->handle;
    idup_op_t *last = NULL;
    for (idup_op_t *x = idup_ops; x; x = x->next)
        if (x->p == p && !x->queued)
            last = x;
    op->next = idup_ops;
    idup_ops = op;
    if (last) {
        last->queued = op; /* started when last ends */
        return MPI_SUCCESS;
    }
    ca_begin(&op->a, op->a.id, idup_want_slot(op));
    idup_stage(op);
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    GET_COMM(c, comm, "MPI_Comm_idup");
    if (!newcomm || !request)
        return MPII_ERR_NULL(comm, newcomm ? "request" : "newcomm", "MPI_Comm_idup");
    return comm_idup(c, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup");
}
MPII_WEAK(MPI_Comm_idup, PMPI_Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    GET_COMM(c, comm, "MPI_Comm_idup_with_info");
    if (!newcomm || !request)
        return MPII_ERR_NULL(comm, newcomm ? "request" : "newcomm", "MPI_Comm_idup_with_info");
    int rc = info_arg(comm, info, "MPI_Comm_idup_with_info");
    if (rc)
        return rc;
    return comm_idup(c, info, 1, newcomm, request, "MPI_Comm_idup_with_info");
}
MPII_WEAK(MPI_Comm_idup_with_info, PMPI_Comm_idup_with_info)

typedef struct split_ent {
    int color, key, rank;
} split_ent_t;

static int split_cmp(const void *a, const void *b)
{
    const split_ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The members of `color` in ents[0..n) ordered by (key, rank), as world ranks of src. */
static mpii_group_t *split_group(split_ent_t *ents, int n, int color, const mpii_group_t *src)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (ents[i].color == color)
            ents[k++] = ents[i];
    qsort(ents, (size_t)k, sizeof *ents, split_cmp);
    mpii_group_t *g = mpii_group_new(k);
    if (!g)
        return NULL;
    for (int i = 0; i < k; i++)
        g->world[i] = src->world[ents[i].rank];
    mpii_group_finish(g);
    return g;
}

int mpii_comm_split_intra(mpii_comm_t *p, int color, int key, mpii_comm_t **out)
{
    *out = NULL;
    split_ent_t me = {color, key, p->rank};
    split_ent_t *all = malloc((size_t)p->size * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    int rc = mpii_lib_allgather(p, &me, all, sizeof me);
    uint32_t ctx;
    if (rc == MPI_SUCCESS)
        rc = mpii_ctx_alloc(p, &ctx);
    if (rc != MPI_SUCCESS || color == MPI_UNDEFINED) {
        if (rc == MPI_SUCCESS) /* not a member of any part: the pair stays free here */
            mpii_ctx_free(ctx);
        free(all);
        return rc;
    }
    mpii_group_t *g = split_group(all, p->size, color, p->group);
    free(all);
    if (!g) {
        mpii_ctx_free(ctx);
        return MPI_ERR_NO_MEM;
    }
    return comm_make(p, g, NULL, &ctx, out);
}

/* Comm_split of an intercommunicator: each side splits its local group; a new
 * intercommunicator joins the local and remote members of one colour (MPI_COMM_NULL
 * when either side of the colour is empty). */
static int comm_split_inter(mpii_comm_t *ic, int color, int key, MPI_Comm *newcomm)
{
    mpii_comm_t *l = ic->local;
    int ln = l->size, rn = ic->rgroup->size;
    split_ent_t me = {color, key, l->rank};
    split_ent_t *loc = malloc((size_t)ln * sizeof *loc), *rem = malloc((size_t)rn * sizeof *rem);
    int rc = (loc && rem) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = mpii_lib_allgather(l, &me, loc, sizeof me);
    if (rc == MPI_SUCCESS && l->rank == 0) {
        if (ic->group->world[0] < ic->rgroup->world[0]) {
            rc = mpii_lib_send(ic, loc, ln * sizeof *loc, 0, MPII_TAG_LIBCOLL);
            if (rc == MPI_SUCCESS)
                rc = mpii_lib_recv(ic, rem, rn * sizeof *rem, 0, MPII_TAG_LIBCOLL);
        } else {
            rc = mpii_lib_recv(ic, rem, rn * sizeof *rem, 0, MPII_TAG_LIBCOLL);
            if (rc == MPI_SUCCESS)
                rc = mpii_lib_send(ic, loc, ln * sizeof *loc, 0, MPII_TAG_LIBCOLL);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = mpii_lib_bcast_tag(l, NULL, ln, l->rank, rem, rn * sizeof *rem, 0, MPII_TAG_LIBCOLL);
    uint32_t ctx[2];
    if (rc == MPI_SUCCESS)
        rc = ctx_agree(ic, 2, ctx);
    *newcomm = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS && color != MPI_UNDEFINED) {
        mpii_group_t *g = split_group(loc, ln, color, ic->group);
        mpii_group_t *rg = split_group(rem, rn, color, ic->rgroup);
        if (!g || !rg || rg->size == 0) {
            mpii_group_release(g);
            mpii_group_release(rg);
            mpii_ctx_free(ctx[0]);
            mpii_ctx_free(ctx[1]);
            rc = (!g || !rg) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        } else {
            mpii_comm_t *c;
            rc = comm_make(ic, g, rg, ctx, &c);
            if (rc == MPI_SUCCESS)
                *newcomm = c->handle;
        }
    } else if (rc == MPI_SUCCESS) {
        mpii_ctx_free(ctx[0]);
        mpii_ctx_free(ctx[1]);
    }
    free(loc);
    free(rem);
    return rc;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM(p, comm, "MPI_Comm_split");
    if (!newcomm)
        return MPII_ERR_NULL(comm, "newcomm", "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Comm_split",
                              "color %d < 0 and not MPI_UNDEFINED", color);
    int rc;
    if (p->rgroup) {
        rc = comm_split_inter(p, color, key, newcomm);
    } else {
        mpii_comm_t *c;
        rc = mpii_comm_split_intra(p, color, key, &c);
        *newcomm = rc == MPI_SUCCESS && c ? c->handle : MPI_COMM_NULL;
    }
    return rc == MPI_SUCCESS ? rc : MPII_ERR_COMM(comm, rc, "MPI_Comm_split");
}
MPII_WEAK(MPI_Comm_split, PMPI_Comm_split)

/* 1 when the info has mpi_hw_resource_type = mpi_shared_memory. */
static int info_wants_shared(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return 0;
    char val[64];
    int len = sizeof val, flag = 0;
    if (PMPI_Info_get_string(info, "mpi_hw_resource_type", &len, val, &flag) != MPI_SUCCESS)
        return 0;
    return flag && strcmp(val, "mpi_shared_memory") == 0;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    GET_COMM_OF(p, comm, "comm", MPII_COMM_INTRA, fn);
    if (!newcomm)
        return MPII_ERR_NULL(comm, "newcomm", fn);
    int rc = info_arg(comm, info, fn);
    if (rc)
        return rc;
    const boot_nodes_t *nodes = vnic_nodes(mpii.vnic);
    int node = nodes ? nodes->node_of[mpii.world_rank] : 0;
    int color;
    switch (split_type) {
    case MPI_UNDEFINED: color = MPI_UNDEFINED; break;
    case MPI_COMM_TYPE_SHARED: color = node; break;
    case MPI_COMM_TYPE_HW_GUIDED:
        /* the only hardware resource we know: the host's shared memory */
        color = info_wants_shared(info) ? node : MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED: color = node; break;
    default:
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn,
                              "split_type %d is not MPI_COMM_TYPE_SHARED, _HW_GUIDED, "
                              "_HW_UNGUIDED or MPI_UNDEFINED",
                              split_type);
    }
    mpii_comm_t *c;
    rc = mpii_comm_split_intra(p, color, key, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    if (c && split_type == MPI_COMM_TYPE_HW_UNGUIDED && c->size == p->size) {
        /* each result must be a strict subset of the parent: none here */
        comm_discard(c);
        c = NULL;
    }
    if (c && (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED)) {
        MPI_Info hi;
        if (mpii_info_dup(MPI_INFO_NULL, &hi) == MPI_SUCCESS) {
            PMPI_Info_set(hi, "mpi_hw_resource_type", "mpi_shared_memory");
            c->info = hi;
        }
    }
    *newcomm = c ? c->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_split_type, PMPI_Comm_split_type)

/* The group argument of MPI_Comm_create(_group) on p (handle comm): MPI_SUCCESS and *gp
 * when it is a group whose members are all in p's (local) group, else the error raised. */
static int subgroup_arg(mpii_comm_t *p, MPI_Comm comm, MPI_Group group, const char *fn,
                        mpii_group_t **gp)
{
    mpii_group_t *g = mpii_group_get(group);
    if (!g)
        return mpii_err_handle(FMPL_MPI_KIND_COMM, comm, MPI_ERR_GROUP, fn, "group", group);
    char *in = calloc((size_t)mpii_peer_bound(), 1);
    if (!in)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < p->size; i++)
        in[p->group->world[i]] = 1;
    int i = 0;
    while (i < g->size && in[g->world[i]])
        i++;
    free(in);
    if (i < g->size)
        return MPII_ERRF_COMM(comm, MPI_ERR_GROUP, fn,
                              "rank %d of group (world rank %d) is not in the group of comm", i,
                              g->world[i]);
    *gp = g;
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    GET_COMM(p, comm, fn);
    mpii_group_t *g;
    int rc = subgroup_arg(p, comm, group, fn, &g);
    if (rc)
        return rc;
    if (!newcomm)
        return MPII_ERR_NULL(comm, "newcomm", fn);
    *newcomm = MPI_COMM_NULL;
    if (p->rgroup) {
        /* each side names a subgroup of its local group; the result joins the two
         * (MPI_COMM_NULL where either is empty or this process is not in its own) */
        mpii_comm_t *l = p->local;
        int ln = g->size, rn = 0;
        uint32_t ctx[2];
        if (l->rank == 0) {
            rc = leader_exchange(p, &ln, &rn, sizeof ln, MPII_TAG_LIBCOLL);
            if (rc != MPI_SUCCESS)
                return MPII_ERR_COMM(comm, rc, fn);
        }
        rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, &rn, sizeof rn, 0, MPII_TAG_LIBCOLL);
        mpii_group_t *rg = rc == MPI_SUCCESS ? mpii_group_new(rn) : NULL;
        if (rc == MPI_SUCCESS && !rg)
            rc = MPI_ERR_NO_MEM; /* (a real failure here would leave the peers waiting) */
        if (rc == MPI_SUCCESS && l->rank == 0) {
            /* sizes may differ: send mine, then receive theirs, ordered by leader */
            if (p->group->world[0] < p->rgroup->world[0]) {
                rc = mpii_lib_send(p, g->world, (size_t)ln * sizeof(int), 0, MPII_TAG_LIBCOLL);
                if (rc == MPI_SUCCESS)
                    rc = mpii_lib_recv(p, rg->world, (size_t)rn * sizeof(int), 0, MPII_TAG_LIBCOLL);
            } else {
                rc = mpii_lib_recv(p, rg->world, (size_t)rn * sizeof(int), 0, MPII_TAG_LIBCOLL);
                if (rc == MPI_SUCCESS)
                    rc = mpii_lib_send(p, g->world, (size_t)ln * sizeof(int), 0, MPII_TAG_LIBCOLL);
            }
        }
        if (rc == MPI_SUCCESS && rn)
            rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, rg->world, (size_t)rn * sizeof(int),
                                    0, MPII_TAG_LIBCOLL);
        if (rc == MPI_SUCCESS)
            rc = ctx_agree(p, 2, ctx);
        if (rc != MPI_SUCCESS) {
            mpii_group_release(rg);
            return MPII_ERR_COMM(comm, rc, fn);
        }
        mpii_group_finish(rg);
        if (g->rank == MPI_UNDEFINED || rn == 0) {
            mpii_group_release(rg);
            mpii_ctx_free(ctx[0]);
            mpii_ctx_free(ctx[1]);
            return MPI_SUCCESS;
        }
        g->refs++;
        mpii_comm_t *c;
        rc = comm_make(p, g, rg, ctx, &c);
        if (rc != MPI_SUCCESS)
            return MPII_ERR_COMM(comm, rc, fn);
        *newcomm = c->handle;
        return MPI_SUCCESS;
    }
    uint32_t ctx;
    rc = mpii_ctx_alloc(p, &ctx);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    if (g->rank == MPI_UNDEFINED) {
        mpii_ctx_free(ctx);
        return MPI_SUCCESS;
    }
    g->refs++;
    mpii_comm_t *c;
    rc = comm_make(p, g, NULL, &ctx, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    *newcomm = c->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_create, PMPI_Comm_create)

/* The tag of a communicator constructor that exchanges messages on the parent: 0..MPII_TAG_UB,
 * else the error raised on comm. */
static int tag_arg(MPI_Comm comm, int tag, const char *fn)
{
    if (tag < 0 || tag > MPII_TAG_UB)
        return MPII_ERRF_COMM(comm, MPI_ERR_TAG, fn, "tag %d is not in 0..%d", tag, MPII_TAG_UB);
    return MPI_SUCCESS;
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    GET_COMM_OF(p, comm, "comm", MPII_COMM_INTRA, fn);
    mpii_group_t *g;
    int rc = subgroup_arg(p, comm, group, fn, &g);
    if (rc)
        return rc;
    if (!newcomm)
        return MPII_ERR_NULL(comm, "newcomm", fn);
    if ((rc = tag_arg(comm, tag, fn)))
        return rc;
    *newcomm = MPI_COMM_NULL;
    if (g->rank == MPI_UNDEFINED)
        return MPI_SUCCESS; /* not a member: nothing to take part in */
    /* the members' ranks in p */
    int *map = malloc((size_t)g->size * sizeof *map);
    int *inv = calloc((size_t)mpii_peer_bound(), sizeof *inv);
    if (!map || !inv) {
        free(map);
        free(inv);
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fn);
    }
    for (int i = 0; i < p->size; i++)
        inv[p->group->world[i]] = i;
    for (int i = 0; i < g->size; i++)
        map[i] = inv[g->world[i]];
    free(inv);
    ctx_dom_t d = {.c = p, .map = map, .p = g->size, .me = g->rank, .tag = MPII_TAG_USERLIB(tag)};
    uint32_t ctx;
    rc = ctx_dom_alloc(&d, 1, &ctx);
    free(map);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    g->refs++;
    mpii_comm_t *c;
    rc = comm_make(p, g, NULL, &ctx, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    *newcomm = c->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_create_group, PMPI_Comm_create_group)

int PMPI_Comm_free(MPI_Comm *comm)
{
    MPII_CHECK_INIT("MPI_Comm_free");
    if (!comm)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Comm_free", "comm NULL");
    mpii_comm_t *c;
    int rc = mpii_comm_arg(*comm, "*comm", MPII_COMM_ANY, "MPI_Comm_free", &c);
    if (!c)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return MPII_ERRF_COMM(*comm, MPI_ERR_COMM, "MPI_Comm_free", "*comm is %s, a predefined one",
                              *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    rc = mpii_attr_delete_all(FMPL_MPI_KIND_COMM, *comm, &c->attrs);
    if (rc == MPI_SUCCESS && c->slotted)
        rc = comm_group_free(c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(*comm, rc, "MPI_Comm_free");
    mpii_handle_del(FMPL_MPI_KIND_COMM, *comm);
    mpii_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_free, PMPI_Comm_free)

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    GET_COMM_OF(l, local_comm, "local_comm", MPII_COMM_INTRA, fn);
    if (local_leader < 0 || local_leader >= l->size)
        return MPII_ERRF_COMM(local_comm, MPI_ERR_RANK, fn, "local_leader %d is not in 0..%d",
                              local_leader, l->size - 1);
    if (!newintercomm)
        return MPII_ERR_NULL(local_comm, "newintercomm", fn);
    mpii_comm_t *peer = NULL;
    int leader = l->rank == local_leader;
    if (leader) {
        peer = mpii_comm_get(peer_comm);
        if (!peer)
            return mpii_err_handle(FMPL_MPI_KIND_COMM, local_comm, MPI_ERR_COMM, fn, "peer_comm",
                                   peer_comm);
        int psize = peer->rgroup ? peer->rgroup->size : peer->size;
        if (remote_leader < 0 || remote_leader >= psize)
            return MPII_ERRF_COMM(local_comm, MPI_ERR_RANK, fn,
                                  "remote_leader %d is not in 0..%d (ranks of peer_comm)",
                                  remote_leader, psize - 1);
        if (!peer->rgroup && remote_leader == peer->rank)
            return MPII_ERRF_COMM(local_comm, MPI_ERR_RANK, fn,
                                  "remote_leader %d is the local leader itself in peer_comm",
                                  remote_leader);
        int rc = tag_arg(local_comm, tag, fn);
        if (rc)
            return rc;
    }
    struct {
        int size;
    } mine = {l->size}, theirs = {0};
    int rc = MPI_SUCCESS, utag = MPII_TAG_USERLIB(tag);
    int *rworld = NULL;
    if (leader) {
        int first = mpii.world_rank < mpii_comm_peer_world(peer, remote_leader);
        for (int step = 0; step < 2 && rc == MPI_SUCCESS; step++) {
            if (step == first)
                rc = mpii_lib_recv(peer, &theirs, sizeof theirs, remote_leader, utag);
            else
                rc = mpii_lib_send(peer, &mine, sizeof mine, remote_leader, utag);
        }
        if (rc == MPI_SUCCESS) {
            rworld = malloc((size_t)BASE_MAX(theirs.size, 1) * sizeof *rworld);
            if (!rworld)
                rc = MPI_ERR_NO_MEM;
        }
        for (int step = 0; step < 2 && rc == MPI_SUCCESS; step++) {
            if (step == first)
                rc = mpii_lib_recv(peer, rworld, (size_t)theirs.size * sizeof *rworld,
                                   remote_leader, utag);
            else
                rc = mpii_lib_send(peer, l->group->world, (size_t)l->size * sizeof(int),
                                   remote_leader, utag);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, &theirs, sizeof theirs, local_leader,
                                MPII_TAG_LIBCOLL);
    if (rc == MPI_SUCCESS && !leader) {
        rworld = malloc((size_t)BASE_MAX(theirs.size, 1) * sizeof *rworld);
        if (!rworld)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, rworld,
                                (size_t)theirs.size * sizeof *rworld, local_leader,
                                MPII_TAG_LIBCOLL);
    /* the pairs: over the local group, the leaders combine through peer_comm */
    ctx_dom_t d = {.c = l,
                   .p = l->size,
                   .me = l->rank,
                   .tag = MPII_TAG_LIBCOLL,
                   .xch = 1,
                   .x = peer,
                   .xpeer = remote_leader,
                   .xtag = utag,
                   .leader = local_leader};
    uint32_t ctx[2];
    if (rc == MPI_SUCCESS)
        rc = ctx_dom_alloc(&d, 2, ctx);
    mpii_group_t *rg = rc == MPI_SUCCESS ? mpii_group_new(theirs.size) : NULL;
    if (rc == MPI_SUCCESS && !rg)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(rworld);
        return MPII_ERR_COMM(local_comm, rc, fn);
    }
    if (theirs.size)
        memcpy(rg->world, rworld, (size_t)theirs.size * sizeof *rworld);
    free(rworld);
    mpii_group_finish(rg);
    l->group->refs++;
    mpii_comm_t *c;
    rc = comm_make(l, l->group, rg, ctx, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(local_comm, rc, fn);
    *newintercomm = c->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Intercomm_create, PMPI_Intercomm_create)

int mpii_intercomm_sock(mpii_comm_t *l, int root, int sock, int rsize, const int *rpeer,
                        mpii_comm_t **out)
{
    ctx_dom_t d = {.c = l,
                   .p = l->size,
                   .me = l->rank,
                   .tag = MPII_TAG_LIBCOLL,
                   .xch = 1,
                   .leader = root,
                   .sock_on = 1,
                   .sock = sock};
    uint32_t ctx[2];
    int rc = ctx_dom_alloc(&d, 2, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group_t *rg = mpii_group_new(rsize);
    if (!rg) {
        mpii_ctx_free(ctx[0]);
        mpii_ctx_free(ctx[1]);
        return MPI_ERR_NO_MEM;
    }
    memcpy(rg->world, rpeer, (size_t)rsize * sizeof *rpeer);
    mpii_group_finish(rg);
    l->group->refs++;
    return comm_make(l, l->group, rg, ctx, out);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    GET_COMM_OF(ic, intercomm, "intercomm", MPII_COMM_INTER, fn);
    if (!newintracomm)
        return MPII_ERR_NULL(intercomm, "newintracomm", fn);
    mpii_comm_t *l = ic->local;
    int mine = high != 0, theirs = 0;
    int rc = MPI_SUCCESS;
    if (l->rank == 0)
        rc = leader_exchange(ic, &mine, &theirs, sizeof mine, MPII_TAG_LIBCOLL);
    if (rc == MPI_SUCCESS)
        rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, &theirs, sizeof theirs, 0,
                                MPII_TAG_LIBCOLL);
    uint32_t ctx;
    if (rc == MPI_SUCCESS)
        rc = ctx_agree(ic, 1, &ctx);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(intercomm, rc, fn);
    /* the group with high = false first; equal: the side of the lower leader first */
    int me_first = mine != theirs ? mine < theirs : ic->group->world[0] < ic->rgroup->world[0];
    const mpii_group_t *a = me_first ? ic->group : ic->rgroup;
    const mpii_group_t *b = me_first ? ic->rgroup : ic->group;
    mpii_group_t *g = mpii_group_new(a->size + b->size);
    if (!g) {
        mpii_ctx_free(ctx);
        return MPII_ERR_COMM(intercomm, MPI_ERR_NO_MEM, fn);
    }
    memcpy(g->world, a->world, (size_t)a->size * sizeof(int));
    memcpy(g->world + a->size, b->world, (size_t)b->size * sizeof(int));
    mpii_group_finish(g);
    mpii_comm_t *c;
    rc = comm_make(ic, g, NULL, &ctx, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(intercomm, rc, fn);
    *newintracomm = c->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Intercomm_merge, PMPI_Intercomm_merge)

/* ---------------------------------------------------------------- from groups (sessions) */

/* The library tag of a string tag (FNV-1a), below MPII_TAG_LIBCOLL. */
static int stringtag_tag(const char *t)
{
    uint32_t h = 2166136261u;
    for (; *t; t++)
        h = (h ^ (uint8_t)*t) * 16777619u;
    return (int)(h % (uint32_t)MPII_TAG_LIBCOLL);
}

/* Raises code for a call without a communicator yet: on errhandler when it is a valid
 * communicator handler, else on the default; fmt (may be NULL) says what was wrong. */
static int from_group_err(MPI_Errhandler errhandler, int code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int from_group_err(MPI_Errhandler errhandler, int code, const char *fn, const char *fmt, ...)
{
    char detail[256] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    if (mpii_errh_check(errhandler, FMPL_MPI_KIND_COMM) == MPI_SUCCESS)
        return mpii_err_with(errhandler, FMPL_MPI_KIND_COMM, MPI_COMM_NULL, code, fn,
                             fmt ? detail : NULL);
    return MPII_ERRF(code, fn, "%s", detail);
}

/* Group argument arg = h of the two calls below: the group, or NULL with the error raised
 * (*rc its code). */
static mpii_group_t *from_group_group(MPI_Group h, const char *arg, MPI_Errhandler errhandler,
                                      const char *fn, int *rc)
{
    mpii_group_t *g = mpii_group_get(h);
    if (!g) {
        char d[128];
        mpii_bad_handle_text(d, sizeof d, MPI_ERR_GROUP, arg, h);
        *rc = from_group_err(errhandler, MPI_ERR_GROUP, fn, "%s", d);
    }
    return g;
}

/* Checks the common arguments of the two calls below (out: the output argument, named
 * out_name): MPI_SUCCESS or the error raised. */
static int from_group_args(const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                           const void *out, const char *out_name, const char *fn)
{
    if (!out)
        return from_group_err(errhandler, MPI_ERR_ARG, fn, "%s NULL", out_name);
    if (!stringtag)
        return from_group_err(errhandler, MPI_ERR_ARG, fn, "stringtag NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return from_group_err(errhandler, MPI_ERR_ARG, fn,
                              "stringtag of %zu characters, MPI_MAX_STRINGTAG_LEN is %d",
                              strlen(stringtag), MPI_MAX_STRINGTAG_LEN);
    if (mpii_errh_check(errhandler, FMPL_MPI_KIND_COMM) != MPI_SUCCESS)
        return from_group_err(errhandler, MPI_ERR_ARG, fn,
                              "errhandler %#x is not a communicator error handler",
                              (unsigned)errhandler);
    if (info != MPI_INFO_NULL) {
        MPI_Info copy;
        int rc = mpii_info_dup(info, &copy);
        if (rc == MPI_ERR_NO_MEM)
            return from_group_err(errhandler, rc, fn, NULL);
        if (rc != MPI_SUCCESS) {
            char d[128];
            mpii_bad_handle_text(d, sizeof d, MPI_ERR_INFO, "info", info);
            return from_group_err(errhandler, MPI_ERR_INFO, fn, "%s", d);
        }
        mpii_info_free(&copy);
    }
    return MPI_SUCCESS;
}

/* Gives new communicator c the info hints (a copy) and returns its handle in *out. */
static int from_group_finish(mpii_comm_t *c, MPI_Info info, MPI_Comm *out)
{
    if (info != MPI_INFO_NULL) {
        int rc = mpii_info_dup(info, &c->info);
        if (rc != MPI_SUCCESS) {
            c->info = MPI_INFO_NULL;
            comm_discard(c);
            return rc;
        }
    }
    *out = c->handle;
    return MPI_SUCCESS;
}

/* MPI_Comm_create_from_group (MPI-4.0 11.3.4... 7.4.2): collective over the members of
 * group; a process outside it gets MPI_COMM_NULL. */
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_group_t *g = from_group_group(group, "group", errhandler, fn, &rc);
    if (!g)
        return rc;
    if ((rc = from_group_args(stringtag, info, errhandler, newcomm, "newcomm", fn)))
        return rc;
    *newcomm = MPI_COMM_NULL;
    if (g->rank == MPI_UNDEFINED)
        return MPI_SUCCESS;
    ctx_dom_t d = {.c = boot_comm,
                   .map = g->world,
                   .p = g->size,
                   .me = g->rank,
                   .tag = stringtag_tag(stringtag)};
    uint32_t ctx;
    rc = ctx_dom_alloc(&d, 1, &ctx);
    if (rc != MPI_SUCCESS)
        return from_group_err(errhandler, rc, fn, NULL);
    g->refs++;
    mpii_comm_t *c;
    rc = comm_make_errh(errhandler, g, NULL, &ctx, &c);
    if (rc == MPI_SUCCESS)
        rc = from_group_finish(c, info, newcomm);
    return rc != MPI_SUCCESS ? from_group_err(errhandler, rc, fn, NULL) : MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_create_from_group, PMPI_Comm_create_from_group)

/* MPI_Intercomm_create_from_groups (MPI-4.0 7.6.2): collective over both groups, which
 * must be disjoint; this process is in local_group. The pair of context ids (and the
 * local pair) are agreed like MPI_Intercomm_create's: an AND over each group, the leaders
 * exchange and combine, each broadcasts to its group. */
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_group_t *lg, *rg;
    if (!(lg = from_group_group(local_group, "local_group", errhandler, fn, &rc)) ||
        !(rg = from_group_group(remote_group, "remote_group", errhandler, fn, &rc)))
        return rc;
    if (lg->size == 0 || rg->size == 0)
        return from_group_err(errhandler, MPI_ERR_GROUP, fn, "%s is empty",
                              lg->size ? "remote_group" : "local_group");
    if (lg->rank == MPI_UNDEFINED)
        return from_group_err(errhandler, MPI_ERR_GROUP, fn,
                              "this process (world rank %d) is not in local_group",
                              mpii.world_rank);
    if (local_leader < 0 || local_leader >= lg->size)
        return from_group_err(errhandler, MPI_ERR_RANK, fn, "local_leader %d is not in 0..%d",
                              local_leader, lg->size - 1);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return from_group_err(errhandler, MPI_ERR_RANK, fn, "remote_leader %d is not in 0..%d",
                              remote_leader, rg->size - 1);
    if ((rc = from_group_args(stringtag, info, errhandler, newintercomm, "newintercomm", fn)))
        return rc;
    if (rg->rank != MPI_UNDEFINED) /* in both: they overlap */
        return from_group_err(errhandler, MPI_ERR_GROUP, fn,
                              "this process (world rank %d) is in both local_group and "
                              "remote_group",
                              mpii.world_rank);
    int tag = stringtag_tag(stringtag);
    ctx_dom_t d = {.c = boot_comm,
                   .map = lg->world,
                   .p = lg->size,
                   .me = lg->rank,
                   .tag = tag,
                   .xch = 1,
                   .x = boot_comm,
                   .xpeer = rg->world[remote_leader],
                   .xtag = tag,
                   .leader = local_leader};
    uint32_t ctx[2];
    rc = ctx_dom_alloc(&d, 2, ctx);
    if (rc != MPI_SUCCESS)
        return from_group_err(errhandler, rc, fn, NULL);
    lg->refs++;
    rg->refs++;
    mpii_comm_t *c;
    rc = comm_make_errh(errhandler, lg, rg, ctx, &c);
    if (rc == MPI_SUCCESS)
        rc = from_group_finish(c, info, newintercomm);
    return rc != MPI_SUCCESS ? from_group_err(errhandler, rc, fn, NULL) : MPI_SUCCESS;
}
MPII_WEAK(MPI_Intercomm_create_from_groups, PMPI_Intercomm_create_from_groups)
