/* coll.c — set-up of the collectives (the area, its settings, groups) and the
 * argument checks of the public calls; the algorithms live in coll_<op>.c. */
#include <stdlib.h>
#include <unistd.h>

#include "coll/coll_impl.h"

static coll_state_t *coll_st; /* this process's state, made by coll_init */

int coll_max_groups(void)
{
    return coll_st ? coll_st->ngroups : 0;
}

int coll_slot_in_use(uint32_t ctx)
{
    return coll_st && coll_st->slot_used[ctx % (uint32_t)coll_st->ngroups];
}

size_t coll_lane_cell_room(const coll_group_t *g)
{
    return g && g->st->lanes ? g->st->lane_room : 0;
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1LL << k) < (long long)n)
        k++;
    return k;
}

static void read_settings(coll_state_t *st)
{
    st->small = (size_t)base_env_int("FMPL_COLL_SMALL", 8192, 64, 1 << 20,
                                     "payload bytes of a collective mailbox: largest message "
                                     "of the log2(p)-round collective algorithms");
    st->small = BASE_ALIGN_UP(st->small, 8);
    st->seg = (size_t)base_env_int("FMPL_COLL_SEG", 65536, 4096, 64 << 20,
                                   "segment bytes of the pipelined collective algorithms");
    st->seg = BASE_ALIGN_UP(BASE_MAX(st->seg, st->small), 8);
    st->stream = base_env_bool("FMPL_COLL_STREAM", 1,
                               "write large mailbox segments of a rank's own data, which "
                               "the reader reads once, with non-temporal stores (0: cached "
                               "stores)");
    st->ngroups = (int)base_env_int("FMPL_COLL_GROUPS", 16, 1, 4096,
                                    "group slots of the collective area per process");
    st->depth = (int)base_env_int("FMPL_COLL_DEPTH", 16, 2, 1024,
                                  "mailboxes per small collective channel: how many messages "
                                  "a writer may run ahead of its reader");
    long long small = (long long)st->small;
    st->bcast_tree_max = (size_t)base_env_int(
        "FMPL_COLL_BCAST_TREE_MAX", small, 0, small,
        "largest broadcast (bytes) sent down a binomial tree rather than a pipelined chain");
    st->reduce_tree_max = (size_t)base_env_int(
        "FMPL_COLL_REDUCE_TREE_MAX", small, 0, small,
        "largest reduce/allreduce (bytes) done by tree/recursive doubling, not by chains");
    st->allgather_bruck_max = (size_t)base_env_int(
        "FMPL_COLL_ALLGATHER_BRUCK_MAX", 4 * small, 0, 64 * small,
        "largest message (bytes) of a Bruck allgather or alltoall round (split over several "
        "mailboxes of FMPL_COLL_SMALL); larger ones use a ring / pairwise exchanges");
    st->lanes = (int)base_env_int("FMPL_COLL_LANES", 8, 0, COLL_LANES_MAX,
                                  "lanes per group: mailboxes private to one persistent "
                                  "collective (MPI_X_init) each");
    st->lane_room = (size_t)base_env_int("FMPL_COLL_LANE_BYTES", 248, 8, small,
                                         "payload bytes of a lane mailbox: the largest message "
                                         "of a persistent collective that runs on a lane");
    st->lane_room = BASE_ALIGN_UP(st->lane_room, 8);
    st->seg_set = base_env_find("FMPL_COLL_SEG")->from_env;
    st->bcast_tree_set = base_env_find("FMPL_COLL_BCAST_TREE_MAX")->from_env;
    st->loggp_on = base_env_bool("FMPL_COLL_LOGGP", 1,
                                 "plan the broadcast (tree or chain, chain segment) with the "
                                 "LogGP model unless FMPL_COLL_BCAST_TREE_MAX / FMPL_COLL_SEG "
                                 "are set; 0: the fixed threshold and segment");
    static const struct {
        const char *name, *what;
        double unit; /* ns per unit of the setting */
    } param[COLL_LOGGP_SETTINGS] = {
        {"FMPL_COLL_LOGGP_L", "LogGP latency L of the bcast model (ns; 0: measured)", 1.0},
        {"FMPL_COLL_LOGGP_O", "LogGP overhead o of the bcast model (ns per message; 0: measured)",
         1.0},
        {"FMPL_COLL_LOGGP_GAP", "LogGP gap g of the bcast model (ns per message; 0: measured)",
         1.0},
        {"FMPL_COLL_LOGGP_G",
         "LogGP gap per byte G of the bcast model (picoseconds per byte; 0: measured)", 1e-3},
        {"FMPL_COLL_LOGGP_S",
         "CPU switch S of the bcast model: added to a hop when ranks outnumber CPUs (ns; 0: "
         "measured)",
         1.0},
        {"FMPL_COLL_LOGGP_GFAR",
         "LogGP gap per byte past the caches of the bcast model: bytes of a message beyond 1 "
         "MiB (picoseconds per byte; 0: measured)",
         1e-3},
    };
    for (int i = 0; i < COLL_LOGGP_SETTINGS; i++)
        st->loggp_set[i] =
            (double)base_env_int(param[i].name, 0, 0, 100000000, param[i].what) * param[i].unit;
}

/* The job's LogGP parameters (coll_loggp.c "Agreement"). Before coll_init's fence: rank 0
 * publishes its own (its cache file's, else the built-in ones) at the end of its area. */
static void loggp_publish(coll_state_t *st)
{
    if (st->world_rank != 0)
        return;
    coll_loggp_t m = *coll_loggp_builtin();
    if (!coll_loggp_cache_read(coll_loggp_transport(st->v), &m))
        m.cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    memcpy(st->area + coll_loggp_off(st), &m, sizeof m);
}

/* After the fence: every rank takes rank 0's, then applies the settings. */
static int loggp_agree(coll_state_t *st)
{
    if (st->world_rank == 0) {
        memcpy(&st->loggp, st->area + coll_loggp_off(st), sizeof st->loggp);
    } else {
        int rc = vnic_get(st->v, 0, &st->loggp, sizeof st->loggp, COLL_KEY, coll_loggp_off(st));
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    double *field[COLL_LOGGP_SETTINGS] = {&st->loggp.latency,     &st->loggp.overhead,
                                          &st->loggp.gap,         &st->loggp.per_byte,
                                          &st->loggp.switch_cost, &st->loggp.per_byte_far};
    for (int i = 0; i < COLL_LOGGP_SETTINGS; i++)
        if (st->loggp_set[i] > 0)
            *field[i] = st->loggp_set[i];
    return FMPL_SUCCESS;
}

const coll_loggp_t *coll_loggp_agreed(void)
{
    return coll_st ? &coll_st->loggp : NULL;
}

coll_bcast_plan_t coll_bcast_plan(size_t bytes, int ranks)
{
    coll_bcast_plan_t p = {0, 0, 0.0};
    return coll_st ? coll_loggp_group_plan(coll_st, bytes, ranks) : p;
}

int coll_init(vnic_t *v, size_t heap_after)
{
    if (!v)
        return FMPL_ERR_ARG;
    if (coll_st)
        return FMPL_ERR_INIT;
    coll_state_t *st = calloc(1, sizeof *st);
    if (!st)
        return FMPL_ERR_NOMEM;
    st->v = v;
    st->world_rank = vnic_rank(v);
    st->world_size = vnic_size(v);
    st->rounds = BASE_MAX(1, ceil_log2(st->world_size));
    read_settings(st);
    st->small_stride = BASE_ALIGN_UP(st->small + 8, BASE_CACHE_LINE);
    st->seg_stride = BASE_ALIGN_UP(st->seg + 8, BASE_CACHE_LINE);
    st->lane_stride = BASE_ALIGN_UP(st->lane_room + 8, BASE_CACHE_LINE);
    st->slot_size = BASE_ALIGN_UP(coll_slot_size(st), 4096);
    st->lanes_off = (size_t)st->ngroups * st->slot_size;
    /* deep big lane cells (a bcast chain on a lane runs 16 segments ahead) unless the
     * area and the caller's heap_after would then not fit the shared heap: every rank
     * decides alike, from the job's size and settings */
    st->lane_big_depth = COLL_LANE_BIG_DEPTH;
    st->area_size = BASE_ALIGN_UP(coll_loggp_off(st) + sizeof(coll_loggp_t), 4096);
    if (st->area_size > vnic_info(v)->heap_size ||
        heap_after > vnic_info(v)->heap_size - st->area_size) {
        st->lane_big_depth = COLL_LANE_BIG_DEPTH_MIN;
        st->area_size = BASE_ALIGN_UP(coll_loggp_off(st) + sizeof(coll_loggp_t), 4096);
    }

    int rc = FMPL_ERR_NOMEM;
    st->slot_used = calloc((size_t)st->ngroups, 1);
    st->lane_sent = calloc((size_t)st->lanes * 2 * (size_t)(st->rounds + 2) + 1, 8);
    st->outbox = aligned_alloc(BASE_CACHE_LINE, st->small_stride);
    st->area = vnic_mem_alloc(v, st->area_size);
    if (!st->slot_used || !st->lane_sent || !st->outbox || !st->area) {
        if (!st->area)
            base_log("coll: the collective mailboxes need %zu bytes of the shared heap "
                     "(FMPL_SHM_HEAP=%zu), and the world's matching area %zu after them: "
                     "raise FMPL_SHM_HEAP to at least %zuM (MPI_Alloc_mem and other "
                     "communicators need room too), or lower FMPL_COLL_GROUPS (now %d) or "
                     "FMPL_COLL_SEG",
                     st->area_size, vnic_info(v)->heap_size, heap_after,
                     ((st->area_size + heap_after) >> 20) + 2, st->ngroups);
        goto fail;
    }
    /* No clearing: coll_init is the first user of this process's shared heap (fmpl_init
     * calls it right after vnic_open), whose pages are fresh tmpfs pages and read as
     * zeros, so every flag and ack line starts at 0 without a page being touched (the
     * thousands of mailbox pages only count in a rank's RSS once used). */
    rc = vnic_cntr_open(v, COLL_ORDER_CNTR, &st->order_cntr);
    if (rc != FMPL_SUCCESS)
        goto fail;
    rc = vnic_mr_reg_key(v, COLL_KEY, st->area, st->area_size,
                         VNIC_ACC_REMOTE_READ | VNIC_ACC_REMOTE_WRITE);
    if (rc != FMPL_SUCCESS)
        goto fail_cntr;
    loggp_publish(st);
    rc = vnic_fence(v); /* every rank's area is registered before any peer uses it */
    if (rc == FMPL_SUCCESS)
        rc = loggp_agree(st);
    if (rc != FMPL_SUCCESS) {
        vnic_mr_dereg(v, COLL_KEY);
        goto fail_cntr;
    }
    coll_st = st;
    return FMPL_SUCCESS;

fail_cntr:
    vnic_cntr_close(v, st->order_cntr);
fail:
    if (st->area)
        vnic_mem_free(v, st->area);
    free(st->outbox);
    free(st->slot_used);
    free(st->lane_sent);
    free(st);
    return rc;
}

/* Groups being retired (see "retiring a group" below). */
enum { RT_QUEUE = 0, RT_EDGES, RT_LANES, RT_BARRIER, RT_DONE };

typedef struct coll_retire {
    struct coll_retire *next;
    coll_group_t *g;
    void (*done)(void *arg, int err);
    void *done_arg;
    int phase, bars; /* phase; A-cell barriers left (the final one on parity 0) */
    int k, sent;     /* current barrier: round, its flag sent */
    int err;
} coll_retire_t;

static struct {
    coll_retire_t *head;
    int hook_id, hooked;
} retiring;

void coll_finalize(vnic_t *v)
{
    coll_state_t *st = coll_st;
    if (!st || st->v != v)
        return;
    if (retiring.hooked)
        vnic_hook_remove(v, retiring.hook_id);
    memset(&retiring, 0, sizeof retiring);
    vnic_mr_dereg(v, COLL_KEY);
    vnic_cntr_close(v, st->order_cntr);
    vnic_mem_free(v, st->area);
    free(st->outbox);
    free(st->slot_used);
    free(st->lane_sent);
    free(st);
    coll_st = NULL;
}

/* ----------------------------------------------------------------- groups */

int coll_group_create(vnic_t *v, int size, int rank, const int *members, uint32_t ctx,
                      coll_group_t **out)
{
    coll_state_t *st = coll_st;
    if (!v || !members || !out || size < 1)
        return FMPL_ERR_ARG;
    if (!st || st->v != v)
        return FMPL_ERR_NOT_INIT;
    if (rank < 0 || rank >= size || members[rank] != st->world_rank)
        return FMPL_ERR_RANK;
    if (size > st->world_size)
        return FMPL_ERR_ARG;
    unsigned char *seen = calloc((size_t)st->world_size, 1);
    if (!seen)
        return FMPL_ERR_NOMEM;
    for (int i = 0; i < size; i++) {
        int m = members[i];
        if (m < 0 || m >= st->world_size || seen[m]) {
            free(seen);
            return FMPL_ERR_ARG;
        }
        seen[m] = 1;
    }
    free(seen);
    int slot = (int)(ctx % (uint32_t)st->ngroups);
    if (st->slot_used[slot])
        return FMPL_ERR_BUSY;
    coll_group_t *g = calloc(1, sizeof *g);
    int *mem = malloc((size_t)size * sizeof *mem);
    char **peer_slot = malloc((size_t)size * sizeof *peer_slot);
    size_t freed_words = COLL_FREED_WORDS(BASE_MAX(st->depth, COLL_TINY_DEPTH));
    uint64_t *freed = calloc(COLL_NDIR * (size_t)coll_nchan(st) * freed_words, sizeof *freed);
    if (!g || !mem || !peer_slot || !freed) {
        free(g);
        free(mem);
        free(peer_slot);
        free(freed);
        return FMPL_ERR_NOMEM;
    }
    g->freed = freed;
    g->freed_words = freed_words;
    for (int i = 0; i < size; i++)
        peer_slot[i] = COLL_PEER_UNKNOWN;
    g->peer_slot = peer_slot;
    memcpy(mem, members, (size_t)size * sizeof *mem);
    g->magic = COLL_GROUP_MAGIC;
    g->st = st;
    g->v = v;
    g->size = size;
    g->rank = rank;
    g->rounds = ceil_log2(size);
    g->ctx = ctx;
    g->slot = slot;
    g->members = mem;
    g->area_off = (uint64_t)slot * st->slot_size;
    g->area = st->area + g->area_off;
    g->board_ok = -1;
    st->slot_used[slot] = 1;
    *out = g;
    return FMPL_SUCCESS;
}

static int group_ok(const coll_group_t *g)
{
    return g && g->magic == COLL_GROUP_MAGIC;
}

/* ------------------------------------------------------------ retiring a group
 *
 * Freeing leaves the slot all zeros without a handshake with the next group that takes
 * it, even though that group's members may write to this rank before it has finished
 * here. (The offload board is cleared after the final barrier, once no member reads it:
 * a new group's members can only read it after this rank's retirement is over, because
 * the MPI face takes a slot only where it is free at every member.) Before the final barrier every
 * edge message has been consumed (cleared) and acknowledged (drained), and the ack lines are
 * cleared; the final barrier runs on A parity 0 and clears its flags as it consumes them. A new
 * group's member writes to this rank early only (a) its first A call, on parity 1, which the final
 * barrier does not use, and (b) the first `depth` uses of a channel, whose cells are already clean.
 * Any later write needs this rank to have entered the new group. The slot stays in use
 * (coll_slot_in_use) until then.
 *
 * A retirement is a state machine that never waits: coll_group_free polls it from its
 * wait; coll_group_retire puts it on a list that a vnic progress hook polls. */

static void retire_begin(coll_retire_t *r, coll_group_t *g)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    r->phase = RT_QUEUE;
}

/* Moves r as far as it goes; 1 once it is done (g freed, r->err set), also when asked
 * again after that (a wait may test its condition twice). */
static int retire_poll(coll_retire_t *r)
{
    coll_group_t *g = r->g;
    if (!g)
        return 1;
    if (r->phase == RT_QUEUE && !g->q_head && !g->offload_live) /* its runs are over */
        r->phase = g->size > 1 ? RT_EDGES : RT_DONE;
    if (r->phase == RT_EDGES && coll_edges_drained(g))
        r->phase = RT_LANES;
    if (r->phase == RT_LANES && coll_lanes_drained(g)) {
        r->phase = RT_BARRIER;
        r->bars = (g->seq_a + 1) & 1 ? 2 : 1; /* so that the final barrier uses parity 0 */
        g->seq_a++;
    }
    /* dissemination: in round k, raise the flag of A cell k at rank + 2^k, and wait for
     * the own one, raised by rank - 2^k */
    while (r->phase == RT_BARRIER) {
        uint64_t seq = g->seq_a;
        int par = (int)(seq & 1);
        if (r->k == g->rounds) {
            if (--r->bars == 0) {
                r->phase = RT_DONE;
                break;
            }
            g->seq_a++;
            r->k = 0;
            continue;
        }
        if (!r->sent) {
            int rc = coll_put_word(g, coll_mod(g->rank + (1 << r->k), g->size),
                                   coll_a_flag_off(g, r->k, par), seq);
            if (rc != FMPL_SUCCESS) {
                r->err = rc;
                r->phase = RT_DONE;
                break;
            }
            r->sent = 1;
        }
        uint64_t *flag = coll_a_flag(g, r->k, par);
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < seq)
            return 0;
        coll_cell_clear(flag);
        r->k++;
        r->sent = 0;
    }
    if (r->phase != RT_DONE)
        return 0;
    coll_board_clear(g);
    coll_path_clear(g);
    for (int i = 0; i < COLL_GCACHE; i++)
        coll_sched_free(g->gsched[i]);
    coll_lanes_orphan(g);
    g->st->slot_used[g->slot] = 0;
    g->magic = 0;
    free(g->peer_slot);
    free(g->members);
    free(g->freed);
    free(g);
    r->g = NULL;
    return 1;
}

static int retire_hook(void *arg)
{
    (void)arg;
    int n = 0;
    for (coll_retire_t **rp = &retiring.head; *rp;) {
        coll_retire_t *r = *rp;
        if (!retire_poll(r)) {
            rp = &r->next;
            continue;
        }
        *rp = r->next;
        n++;
        if (r->done)
            r->done(r->done_arg, r->err);
        free(r);
    }
    if (!retiring.head)
        vnic_hook_arm(coll_st->v, retiring.hook_id, 0);
    return n;
}

static int retire_ready(void *arg)
{
    return retire_poll(arg);
}

int coll_group_free(coll_group_t *g)
{
    if (!group_ok(g))
        return FMPL_ERR_COMM;
    vnic_t *v = g->v;
    coll_retire_t r;
    retire_begin(&r, g);
    if (!retire_poll(&r)) {
        int rc = vnic_wait(v, retire_ready, &r, -1);
        if (rc != FMPL_SUCCESS && r.g) { /* a peer died: free anyway */
            r.phase = RT_DONE;
            retire_poll(&r);
            return rc;
        }
    }
    return r.err;
}

void coll_group_drop(coll_group_t *g)
{
    if (!group_ok(g))
        return;
    coll_retire_t r;
    retire_begin(&r, g);
    r.phase = RT_DONE; /* no handshake: straight to the release */
    retire_poll(&r);
}

int coll_group_retire(coll_group_t *g, void (*done)(void *arg, int err), void *arg)
{
    if (!group_ok(g))
        return FMPL_ERR_COMM;
    coll_retire_t *r = malloc(sizeof *r);
    if (!r)
        return FMPL_ERR_NOMEM;
    if (!retiring.hooked) {
        if (vnic_hook_add(g->v, retire_hook, NULL, 0, &retiring.hook_id)) {
            free(r);
            return FMPL_ERR_NOMEM;
        }
        retiring.hooked = 1;
    }
    retire_begin(r, g);
    r->done = done;
    r->done_arg = arg;
    g->magic = 0; /* the caller's handle is gone */
    if (retire_poll(r)) {
        if (done)
            done(arg, r->err);
        free(r);
        return FMPL_SUCCESS;
    }
    r->next = retiring.head;
    retiring.head = r;
    vnic_hook_arm(g->v, retiring.hook_id, 1);
    return FMPL_SUCCESS;
}

int coll_groups_retiring(void)
{
    int n = 0;
    for (const coll_retire_t *r = retiring.head; r; r = r->next)
        n++;
    return n;
}

/* ------------------------------------------------------------ queued runs
 * (coll.h "queued runs"). One run of the group's mailboxes at a time on this member, in
 * call order: the head of the queue runs in the background (the engine's progress hook
 * advances it), the next one starts when it completes; blocking calls wait until the
 * queue is empty (coll_group_quiesce). */

typedef struct coll_qrun {
    struct coll_qrun *next;
    coll_sched_t *s;
    void (*done)(void *, int);
    void *arg;
} coll_qrun_t;

/* Takes the head off the queue and tells its owner (who may free the schedule). */
static void queue_pop(coll_group_t *g, int err)
{
    coll_qrun_t *q = g->q_head;
    g->q_head = q->next;
    if (!g->q_head)
        g->q_tail = NULL;
    g->q_started = 0;
    g->q_popped++;
    void (*done)(void *, int) = q->done;
    void *arg = q->arg;
    free(q);
    done(arg, err);
}

static void queue_next(coll_group_t *g);

/* The head run completed (the engine's done callback; arg: the group). */
static void queue_done(void *arg, int err)
{
    coll_group_t *g = arg;
    queue_pop(g, err);
    if (!g->q_starting)
        queue_next(g);
}

/* Starts the runs at the head of the queue until one keeps running or none is left
 * (a loop, not a recursion through queue_done: many queued runs may complete at once). */
static void queue_next(coll_group_t *g)
{
    g->q_starting = 1;
    while (g->q_head && !g->q_started) {
        uint64_t popped = g->q_popped;
        g->q_started = 1;
        if (coll_sched_start(g->q_head->s, 0, 1, queue_done, g) != 0)
            queue_pop(g, FMPL_ERR_NOMEM); /* broken schedule, or no progress hook */
        else if (g->q_popped == popped)
            break; /* still running */
    }
    g->q_starting = 0;
}

int coll_group_enqueue(coll_group_t *g, coll_sched_t *s, void (*done)(void *, int), void *arg)
{
    if (!group_ok(g) || !s || !done || !coll_sched_is_group(s))
        return FMPL_ERR_ARG;
    coll_qrun_t *q = malloc(sizeof *q);
    if (!q)
        return FMPL_ERR_NOMEM;
    q->next = NULL;
    q->s = s;
    q->done = done;
    q->arg = arg;
    if (g->q_tail)
        g->q_tail->next = q;
    else
        g->q_head = q;
    g->q_tail = q;
    if (!g->q_starting)
        queue_next(g);
    return FMPL_SUCCESS;
}

static int queue_idle(void *arg)
{
    const coll_group_t *g = arg;
    return g->q_head == NULL && g->offload_live == 0;
}

int coll_group_quiesce(coll_group_t *g)
{
    if (!group_ok(g))
        return FMPL_ERR_COMM;
    return g->q_head || g->offload_live ? vnic_wait(g->v, queue_idle, g, -1) : FMPL_SUCCESS;
}

/* Blocking calls first wait for the queued and offloaded runs (native calls on a group the
 * MPI layer also runs nonblocking collectives on). */
#define QUEUE_WAIT(g)                                                                              \
    do {                                                                                           \
        if (BASE_UNLIKELY((g)->q_head != NULL || (g)->offload_live)) {                             \
            int qrc_ = coll_group_quiesce(g);                                                      \
            if (qrc_ != FMPL_SUCCESS)                                                              \
                return qrc_;                                                                       \
        }                                                                                          \
    } while (0)

/* ------------------------------------------------------------ public calls */

/* Blocking runs of group schedules, cached by call (the builder runs on a miss). A run
 * waits in one vnic_wait, except a pipelined one (a fold schedule: many segments) when the
 * backoff has no spin phase (more ranks than cores, base_backoff_oversubscribed): then its
 * wait ends at every completed transfer and starts again, so the backoff stays in its yield
 * phase while segments keep moving instead of sleeping through the rest of a long run
 * (each segment would then cost a wake-up). With a spin phase, restarting would spin at
 * every segment, which measured slower than letting the wait turn to yielding. */
typedef struct call_wait {
    coll_sched_t *s;
    int err, done, paced;
    uint64_t progress; /* coll_sched_progress when the wait began */
} call_wait_t;

static int call_wait_ready(void *arg)
{
    call_wait_t *w = arg;
    if (coll_sched_advance(w->s, &w->err))
        return w->done = 1;
    return w->paced && coll_sched_progress(w->s) != w->progress;
}

static int call_run_sched(coll_group_t *g, coll_sched_t *s)
{
    if (coll_sched_start(s, 0, 0, NULL, NULL))
        return FMPL_ERR_NOMEM;
    call_wait_t w = {s, 0, 0, base_backoff_oversubscribed && coll_sched_is_fold(s), 0};
    while (!w.done) {
        w.progress = coll_sched_progress(s);
        int rc = vnic_wait(g->v, call_wait_ready, &w, -1);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return w.err;
}

enum { GK_BCAST = 1, GK_REDUCE, GK_ALLREDUCE, GK_ALLGATHER }; /* (a barrier runs unscheduled) */

/* 1 when *k is a large call: a reduction above FMPL_COLL_REDUCE_TREE_MAX bytes, an
 * allgather whose Bruck rounds do not fit the all-call cells (coll_impl.h "the
 * large-message builders", on a fold schedule). */
static int call_large(const coll_group_t *g, const coll_gkey_t *k)
{
    if (k->kind == GK_REDUCE || k->kind == GK_ALLREDUCE)
        return k->n * k->elem > g->st->reduce_tree_max;
    return k->kind == GK_ALLGATHER && !coll_allgather_bruck_fits(g, k->n);
}

/* A new schedule of the algorithm for *k; NULL: out of memory (*rc set) or the builder
 * failed (*rc its code). */
static coll_sched_t *call_build(coll_group_t *g, const coll_gkey_t *k, const coll_reduce_op_t *op,
                                int *rc)
{
    int large = call_large(g, k);
    int acall = k->kind == GK_ALLREDUCE || k->kind == GK_ALLGATHER;
    coll_sched_t *s = large   ? coll_group_sched_fold(g)
                      : acall ? coll_group_sched_a(g)
                              : coll_group_sched(g);
    if (!s) {
        *rc = FMPL_ERR_NOMEM;
        return NULL;
    }
    switch (k->kind) {
    case GK_BCAST: *rc = coll_build_bcast(s, g, k->out, k->n, k->root); break;
    case GK_REDUCE:
        *rc = large ? coll_build_reduce_chain(s, g, k->in, k->out, k->n, op, k->root)
                    : coll_build_reduce(s, g, k->in, k->out, k->n, op, k->root);
        break;
    case GK_ALLREDUCE:
        *rc = large ? coll_build_allreduce_chain(s, g, k->in, k->out, k->n, op)
                    : coll_build_allreduce(s, g, k->in, k->out, k->n, op);
        break;
    default:
        *rc = large ? coll_build_allgather_ring(s, g, k->in, k->out, k->n)
                    : coll_build_allgather(s, g, k->in, k->out, k->n);
        break;
    }
    if (*rc != FMPL_SUCCESS) {
        coll_sched_free(s);
        return NULL;
    }
    return s;
}

/* The cached schedule of *k, or a new one built (and cached) for it; NULL as call_build. */
static coll_sched_t *call_sched(coll_group_t *g, const coll_gkey_t *k, const coll_reduce_op_t *op,
                                int *rc)
{
    for (int i = 0; i < COLL_GCACHE; i++)
        if (g->gsched[i] && !memcmp(&g->gkey[i], k, sizeof *k))
            return g->gsched[i];
    coll_sched_t *s = call_build(g, k, op, rc);
    if (!s)
        return NULL;
    int i = g->gnext;
    g->gnext = (i + 1) % COLL_GCACHE;
    coll_sched_free(g->gsched[i]);
    g->gkey[i] = *k;
    g->gsched[i] = s;
    return s;
}

static int call_run(coll_group_t *g, const coll_gkey_t *k, const coll_reduce_op_t *op)
{
    int rc = FMPL_SUCCESS;
    coll_sched_t *s = call_sched(g, k, op, &rc);
    return s ? call_run_sched(g, s) : rc;
}

static coll_gkey_t call_key(int kind, int root, const void *in, void *out, size_t n,
                            const coll_reduce_op_t *op)
{
    coll_gkey_t k;
    memset(&k, 0, sizeof k);
    k.kind = kind;
    k.root = root;
    k.in = in;
    k.out = out;
    k.n = n;
    if (op) {
        k.fn = op->fn;
        k.arg = op->arg;
        k.elem = op->elem_size;
        k.commutative = op->commutative;
    }
    return k;
}

int coll_barrier(coll_group_t *g)
{
    if (BASE_UNLIKELY(!group_ok(g)))
        return FMPL_ERR_COMM;
    QUEUE_WAIT(g);
    return g->size == 1 ? FMPL_SUCCESS : coll_barrier_run(g);
}

int coll_bcast(coll_group_t *g, void *buf, size_t size, int root)
{
    if (BASE_UNLIKELY(!group_ok(g)))
        return FMPL_ERR_COMM;
    if (BASE_UNLIKELY(root < 0 || root >= g->size))
        return FMPL_ERR_ROOT;
    if (BASE_UNLIKELY(!buf && size))
        return FMPL_ERR_BUFFER;
    if (size == 0 || g->size == 1)
        return FMPL_SUCCESS;
    QUEUE_WAIT(g);
    coll_gkey_t k = call_key(GK_BCAST, root, NULL, buf, size, NULL);
    return call_run(g, &k, NULL);
}

static int check_reduce(coll_group_t *g, const void *buf, size_t count, const coll_reduce_op_t *op)
{
    if (BASE_UNLIKELY(!group_ok(g)))
        return FMPL_ERR_COMM;
    if (BASE_UNLIKELY(!op || !op->fn || op->elem_size == 0))
        return FMPL_ERR_OP;
    if (BASE_UNLIKELY(!buf && count))
        return FMPL_ERR_BUFFER;
    if (BASE_UNLIKELY(count > SIZE_MAX / op->elem_size))
        return FMPL_ERR_ARG;
    return FMPL_SUCCESS;
}

int coll_reduce(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op, int root,
                void *work)
{
    (void)work; /* never needed: see coll.h */
    int rc = check_reduce(g, buf, count, op);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (BASE_UNLIKELY(root < 0 || root >= g->size))
        return FMPL_ERR_ROOT;
    if (count == 0 || g->size == 1)
        return FMPL_SUCCESS;
    QUEUE_WAIT(g);
    coll_gkey_t k = call_key(GK_REDUCE, root, buf, buf, count, op);
    return call_run(g, &k, op);
}

int coll_allreduce(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op, void *work)
{
    (void)work;
    int rc = check_reduce(g, buf, count, op);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (count == 0 || g->size == 1)
        return FMPL_SUCCESS;
    QUEUE_WAIT(g);
    coll_gkey_t k = call_key(GK_ALLREDUCE, 0, buf, buf, count, op);
    return call_run(g, &k, op);
}

coll_sched_t *coll_sched_for_bcast(coll_group_t *g, void *buf, size_t size, int root, int *rc)
{
    coll_gkey_t k = call_key(GK_BCAST, root, NULL, buf, size, NULL);
    return call_build(g, &k, NULL, rc);
}

coll_sched_t *coll_sched_for_allreduce(coll_group_t *g, void *buf, size_t count,
                                       const coll_reduce_op_t *op, int *rc)
{
    coll_gkey_t k = call_key(GK_ALLREDUCE, 0, buf, buf, count, op);
    return call_build(g, &k, op, rc);
}

int coll_allgather(coll_group_t *g, const void *send, void *recv, size_t size)
{
    if (BASE_UNLIKELY(!group_ok(g)))
        return FMPL_ERR_COMM;
    if (BASE_UNLIKELY(!recv && size))
        return FMPL_ERR_BUFFER;
    if (BASE_UNLIKELY(size && (size_t)g->size > SIZE_MAX / size))
        return FMPL_ERR_ARG;
    if (size == 0)
        return FMPL_SUCCESS;
    char *mine = (char *)recv + (size_t)g->rank * size;
    if (send && send != mine)
        memmove(mine, send, size);
    if (g->size == 1)
        return FMPL_SUCCESS;
    QUEUE_WAIT(g);
    coll_gkey_t k = call_key(GK_ALLGATHER, 0, NULL, recv, size, NULL);
    return call_run(g, &k, NULL);
}
