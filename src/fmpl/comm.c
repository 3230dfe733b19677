/* comm.c — communicators: the handle table, matching areas, context ids, comm_create. */
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_impl.h"
#include "runtime/runtime.h"

/* ---- peer states and their tokens ---- */

/* A fresh pid (token prefix) for a peer state; UINT32_MAX when the token space is full. */
static uint32_t fmpli_pid_alloc(fmpli_peer_t *p)
{
    uint32_t pid;
    if (fmpli.pid_free != UINT32_MAX) {
        pid = fmpli.pid_free;
        fmpli.pid_free = fmpli.pid_next[pid];
    } else {
        uint64_t limit = 1ull << (32 - fmpli.slot_bits);
        if (fmpli.npid >= limit)
            return UINT32_MAX;
        if (fmpli.npid == fmpli.pid_cap) {
            uint32_t cap = fmpli.pid_cap ? fmpli.pid_cap * 2 : 64;
            fmpli_peer_t **t = realloc(fmpli.pid_table, cap * sizeof *t);
            if (!t)
                return UINT32_MAX;
            fmpli.pid_table = t;
            uint32_t *n = realloc(fmpli.pid_next, cap * sizeof *n);
            if (!n)
                return UINT32_MAX;
            fmpli.pid_next = n;
            fmpli.pid_cap = cap;
        }
        pid = fmpli.npid++;
    }
    fmpli.pid_table[pid] = p;
    return pid;
}

static void fmpli_pid_free(uint32_t pid)
{
    fmpli.pid_table[pid] = NULL;
    fmpli.pid_next[pid] = fmpli.pid_free;
    fmpli.pid_free = pid;
}

fmpli_peer_t *fmpli_peer_create(fmpli_comm_t *c, int rank)
{
    size_t n = fmpli.nslots;
    size_t bytes = sizeof(fmpli_peer_t) + n * sizeof(fmpli_sendent_t) + n * sizeof(fmpli_recvent_t);
    fmpli_peer_t *p = calloc(1, bytes);
    if (!p)
        return NULL;
    p->pid = fmpli_pid_alloc(p);
    if (p->pid == UINT32_MAX) {
        base_log("fmpl: too many peer states for the token space (lower FMPL_MAI_MAX)");
        free(p);
        return NULL;
    }
    p->comm = c;
    p->rank = rank;
    p->world = c->members[rank];
    p->remote_key = c->keys[rank];
    p->remote_off = (uint64_t)c->rank * fmpli.row_stride;
    p->row = (const fmpli_hdr_t *)((const char *)c->area + (size_t)rank * fmpli.row_stride);
    p->send = (fmpli_sendent_t *)(p + 1);
    p->recv = (fmpli_recvent_t *)(p->send + n);
    c->peers[rank] = p;
    return p;
}

/* ---- communicator objects ---- */

static int fmpli_handle_alloc(void)
{
    for (int h = 0; h < FMPLI_COMM_MAX; h++)
        if (!fmpli.comms[h].live)
            return h;
    return -1;
}

/* Frees what a communicator object holds locally (no communication). */
static void fmpli_comm_release(fmpli_comm_t *c)
{
    if (c->peers) {
        for (int r = 0; r < c->size; r++) {
            fmpli_peer_t *p = c->peers[r];
            if (!p)
                continue;
            fmpli_peer_release(p);
            fmpli_pid_free(p->pid);
            free(p);
        }
    }
    if (c->area_key != VNIC_KEY_INVALID)
        vnic_mr_dereg(fmpli.vnic, c->area_key);
    if (c->area)
        vnic_mem_free(fmpli.vnic, c->area);
    fmpli.ctx_used[c->ctx / 64] &= ~(1ull << (c->ctx % 64));
    fmpli.ctx_comm[c->ctx] = -1;
    free(c->peers);
    free(c->keys);
    free(c->members);
    memset(c, 0, sizeof *c);
}

/* Allocates and clears this rank's matching area for a communicator of `size` members.
 * FMPL_ERR_NOMEM when the shared heap has no room: the logged line names FMPL_SHM_HEAP and
 * FMPL_MAI_MAX with their values, the bytes the area needs, the bytes already in use and
 * the FMPL_SHM_HEAP that would hold both. */
static int fmpli_area_alloc(fmpli_comm_t *c)
{
    c->area_len = (size_t)c->size * fmpli.row_stride;
    c->area = vnic_mem_alloc(fmpli.vnic, c->area_len);
    if (!c->area) {
        size_t heap = vnic_info(fmpli.vnic)->heap_size, used = vnic_mem_heap_used(fmpli.vnic);
        size_t mib = (size_t)1 << 20, need_mib = (used + c->area_len + mib - 1) / mib;
        base_log("fmpl: the matching area of a communicator of %d ranks needs %zu bytes of "
                 "the shared heap (%d ranks x %zu bytes for FMPL_MAI_MAX=%d), and %zu of "
                 "FMPL_SHM_HEAP=%zu are in use: raise FMPL_SHM_HEAP to at least %zuM "
                 "(MPI_Alloc_mem and other communicators need room too), or lower "
                 "FMPL_MAI_MAX",
                 c->size, c->area_len, c->size, fmpli.row_stride, fmpli.mai_max, used, heap,
                 need_mib);
        return FMPL_ERR_NOMEM;
    }
    memset(c->area, 0, c->area_len);
    return FMPL_SUCCESS;
}

int fmpli_comm_world_init(void)
{
    fmpli_comm_t *c = &fmpli.comms[FMPL_COMM_WORLD];
    c->size = fmpli.size;
    c->rank = fmpli.rank;
    c->ctx = 0;
    c->members = malloc((size_t)c->size * sizeof *c->members);
    c->keys = malloc((size_t)c->size * sizeof *c->keys);
    c->peers = calloc((size_t)c->size, sizeof *c->peers);
    if (!c->members || !c->keys || !c->peers)
        goto nomem;
    for (int r = 0; r < c->size; r++) {
        c->members[r] = r;
        c->keys[r] = FMPLI_KEY_MATCH_WORLD;
    }
    int rc = fmpli_area_alloc(c);
    if (rc != FMPL_SUCCESS)
        goto fail;
    rc = vnic_mr_reg_key(fmpli.vnic, FMPLI_KEY_MATCH_WORLD, c->area, c->area_len,
                         VNIC_ACC_REMOTE_WRITE);
    if (rc != FMPL_SUCCESS)
        goto fail;
    c->area_key = FMPLI_KEY_MATCH_WORLD;
    c->group = runtime_world_group(); /* the runtime's: freed by runtime_close */
    fmpli.ctx_used[0] |= 1;
    fmpli.ctx_comm[0] = FMPL_COMM_WORLD;
    c->live = 1;
    return FMPL_SUCCESS;
nomem:
    rc = FMPL_ERR_NOMEM;
fail:
    fmpli_comm_release(c);
    return rc;
}

void fmpli_comm_all_free(void)
{
    /* Sub-communicators in ascending ctx: members of two groups free them in the same
     * order, so the collective frees cannot deadlock. WORLD's group (ctx 0) goes last, in
     * runtime_close. */
    for (int ctx = 1; ctx < FMPLI_COMM_MAX; ctx++) {
        int h = fmpli.ctx_comm[ctx];
        if (h < 0)
            continue;
        fmpli_comm_t *c = &fmpli.comms[h];
        coll_group_free(c->group);
        fmpli_comm_release(c);
    }
    fmpli_comm_t *w = &fmpli.comms[FMPL_COMM_WORLD];
    if (w->live)
        fmpli_comm_release(w); /* (its group is the runtime's) */
}

/* ---- public calls ---- */

int fmpl_comm_rank(fmpl_comm comm, int *rank)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (!c)
        return FMPL_ERR_COMM;
    if (!rank)
        return FMPL_ERR_ARG;
    *rank = c->rank;
    return FMPL_SUCCESS;
}

int fmpl_comm_size(fmpl_comm comm, int *size)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (!c)
        return FMPL_ERR_COMM;
    if (!size)
        return FMPL_ERR_ARG;
    *size = c->size;
    return FMPL_SUCCESS;
}

/* What each member of the parent contributes to fmpl_comm_create. */
typedef struct fmpli_split_info {
    int32_t key;
    uint32_t pad;
    uint64_t ctx_used[FMPLI_CTX_WORDS];
} fmpli_split_info_t;

int fmpl_comm_create(fmpl_comm parent, int key, fmpl_comm *newcomm)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *pc = fmpli_comm_get(parent);
    if (!pc)
        return FMPL_ERR_COMM;
    if (!newcomm)
        return FMPL_ERR_ARG;
    if (key < 0 && key != FMPL_UNDEFINED)
        return FMPL_ERR_ARG;

    /* Round 1, over the parent: everyone's key and the ctx ids it has in use. */
    fmpli_split_info_t *all = malloc((size_t)pc->size * sizeof *all);
    if (!all)
        return FMPL_ERR_NOMEM; /* collective left early: peers would hang, but so would we */
    fmpli_split_info_t mine = {.key = key};
    memcpy(mine.ctx_used, fmpli.ctx_used, sizeof mine.ctx_used);
    int rc = coll_allgather(pc->group, &mine, all, sizeof mine);
    if (rc != FMPL_SUCCESS) {
        free(all);
        return rc;
    }
    if (key == FMPL_UNDEFINED) {
        free(all);
        *newcomm = FMPL_COMM_NULL;
        return FMPL_SUCCESS;
    }

    /* Members: equal key, in parent rank order. ctx: lowest free at every member. */
    int n = 0, myrank = -1;
    uint64_t used[FMPLI_CTX_WORDS] = {0};
    for (int r = 0; r < pc->size; r++) {
        if (all[r].key != key)
            continue;
        if (r == pc->rank)
            myrank = n;
        n++;
        for (int w = 0; w < FMPLI_CTX_WORDS; w++)
            used[w] |= all[r].ctx_used[w];
    }
    /* A ctx is also the group's slot in the collective area (ctx % coll_max_groups()),
     * so ids stay below the slot count: then distinct live ids never share a slot. */
    int ctx = -1, nctx = BASE_MIN(FMPLI_COMM_MAX, coll_max_groups());
    for (int i = 0; i < nctx && ctx < 0; i++)
        if (!(used[i / 64] & (1ull << (i % 64))))
            ctx = i;
    if (ctx < 0) { /* every member sees the same data, so all fail alike */
        free(all);
        base_log("fmpl_comm_create: no free context id: %d communicators live at a member "
                 "(raise FMPL_COLL_GROUPS)",
                 nctx);
        return FMPL_ERR_NOMEM;
    }
    int h = fmpli_handle_alloc(); /* cannot fail: a free ctx means fewer than MAX comms */
    fmpli_comm_t *c = &fmpli.comms[h];
    memset(c, 0, sizeof *c);
    c->size = n;
    c->rank = myrank;
    c->ctx = (uint32_t)ctx;
    c->members = malloc((size_t)n * sizeof *c->members);
    c->keys = malloc((size_t)n * sizeof *c->keys);
    c->peers = calloc((size_t)n, sizeof *c->peers);
    int local_rc = (c->members && c->keys && c->peers) ? FMPL_SUCCESS : FMPL_ERR_NOMEM;
    if (c->members) {
        for (int r = 0, i = 0; r < pc->size; r++)
            if (all[r].key == key)
                c->members[i++] = pc->members[r];
    }
    free(all);
    fmpli.ctx_used[ctx / 64] |= 1ull << (ctx % 64);
    fmpli.ctx_comm[ctx] = (int16_t)h;
    if (local_rc != FMPL_SUCCESS) {
        /* Cannot take part in the group: the other members will wait; report loudly. */
        base_log("fmpl_comm_create: out of memory");
        fmpli_comm_release(c);
        return FMPL_ERR_NOMEM;
    }
    rc = coll_group_create(fmpli.vnic, n, myrank, c->members, c->ctx, &c->group);
    if (rc != FMPL_SUCCESS) {
        c->group = NULL;
        fmpli_comm_release(c);
        return rc;
    }

    /* Round 2, over the new group: the matching area keys. A member that could not
     * allocate its area sends VNIC_KEY_INVALID and every member fails alike. */
    vnic_key_t mykey = VNIC_KEY_INVALID;
    if (fmpli_area_alloc(c) == FMPL_SUCCESS &&
        vnic_mr_reg(fmpli.vnic, c->area, c->area_len, VNIC_ACC_REMOTE_WRITE, &mykey) !=
            FMPL_SUCCESS)
        mykey = VNIC_KEY_INVALID;
    c->area_key = mykey;
    rc = coll_allgather(c->group, &mykey, c->keys, sizeof mykey);
    if (rc == FMPL_SUCCESS) {
        for (int r = 0; r < n; r++)
            if (c->keys[r] == VNIC_KEY_INVALID)
                rc = FMPL_ERR_NOMEM;
    }
    if (rc != FMPL_SUCCESS) {
        coll_group_free(c->group);
        fmpli_comm_release(c);
        return rc;
    }
    c->live = 1;
    *newcomm = h;
    return FMPL_SUCCESS;
}

int fmpl_comm_free(fmpl_comm *comm)
{
    FMPLI_CHECK_INIT();
    if (!comm)
        return FMPL_ERR_ARG;
    if (*comm == FMPL_COMM_WORLD)
        return FMPL_ERR_COMM; /* COMM_WORLD lives until fmpl_finalize */
    fmpli_comm_t *c = fmpli_comm_get(*comm);
    if (!c)
        return FMPL_ERR_COMM;
    /* Its persistent requests end; our sends on it reach their receivers; then every
     * member stops using it. */
    int prc = fmpli_persist_free_comm(*comm);
    int rc = fmpli_flush_sends(c);
    if (rc == FMPL_SUCCESS)
        rc = prc;
    int brc = coll_barrier(c->group);
    if (rc == FMPL_SUCCESS)
        rc = brc;
    vnic_progress(fmpli.vnic); /* completions that raced the barrier */
    int frc = coll_group_free(c->group);
    if (rc == FMPL_SUCCESS)
        rc = frc;
    fmpli_comm_release(c);
    *comm = FMPL_COMM_NULL;
    return rc;
}
