/* coll_basic.c — MPI collectives on intracommunicators, data movement part: Barrier,
 * Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w), each blocking, nonblocking
 * (MPI_I...) and persistent (..._init), built as schedules (coll_impl.h). Reductions
 * are in coll_reduce.c.
 *
 * Algorithms: dissemination barrier; binomial-tree bcast, and for large messages on 3 or
 * more ranks (FMPL_MPI_BCAST_LARGE) a binomial scatter of the packed bytes followed by a ring
 * allgather; linear gather(v) / scatter(v) (every message posted at once at the root); ring
 * allgather(v); pairwise-exchange alltoall(v,w) posting a window of exchanges at once, and for
 * MPI_IN_PLACE a globally ordered sequence of pair exchanges through a temporary.
 * On an intercommunicator each entry branches to coll_inter.c once the communicator is
 * known (the per-process arrays then have the remote group's size). */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

/* ------------------------------------------------------------------ helpers */

/* Contract: coll_impl.h. */
int mpii_coll_enter(MPI_Comm comm, const char *fname, mpii_comm_t **cp)
{
    MPII_CHECK_INIT(fname);
    mpii_comm_t *c = mpii_comm_get(comm);
    if (BASE_UNLIKELY(!c))
        return MPII_ERR(MPI_ERR_COMM, fname);
    *cp = c;
    return MPI_SUCCESS;
}

/* A v-form's count or displacement array of n entries as int64: int (wide 0), or the _c
 * calls' MPI_Count or MPI_Aint (wide 1: both 64-bit); NULL in, NULL out. On no memory
 * *err is set. */
static int64_t *widen(const void *a, int wide, int n, int *err)
{
    _Static_assert(sizeof(MPI_Count) == sizeof(int64_t) && sizeof(MPI_Aint) == sizeof(int64_t),
                   "the _c calls' arrays are 64-bit");
    if (!a)
        return NULL;
    int64_t *o = malloc((size_t)(n > 0 ? n : 1) * sizeof *o);
    if (!o) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    if (wide)
        memcpy(o, a, (size_t)(n > 0 ? n : 0) * sizeof *o);
    else
        for (int i = 0; i < n; i++)
            o[i] = ((const int *)a)[i];
    return o;
}

/* The counts and displacements of n blocks of count elements one after the other: an
 * array of 2n (counts, then displs); NULL: out of memory. */
static int64_t *uniform_blocks(int n, int64_t count)
{
    int64_t *cd = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *cd);
    for (int i = 0; cd && i < n; i++) {
        cd[i] = count;
        cd[n + i] = (int64_t)i * count;
    }
    return cd;
}

/* How many entries this process's root-only arrays of a rooted v-collective have: the
 * count-array size (mpii_coll_nproc) at the root (intercommunicator: root MPI_ROOT), 0
 * elsewhere or for an invalid comm. */
static int root_array_len(const mpii_comm_t *c, int root)
{
    if (!c)
        return 0;
    return (c->rgroup ? root == MPI_ROOT : c->rank == root) ? mpii_coll_nproc(c) : 0;
}

/* ------------------------------------------------------------------ barrier */

/* Contract: coll_impl.h. Dissemination (coll/algo). */
int mpii_build_barrier(coll_sched_t *s, mpii_comm_t *c)
{
    mpii_algo_t m;
    coll_algo_barrier_dissemination(
        mpii_sched_algo(&m, s, NULL, c->size, c->rank, MPI_BYTE, MPI_OP_NULL), 0);
    return MPI_SUCCESS;
}

static int barrier_entry(MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, m->fname, &c);
    if (rc)
        return rc;
    if (mpii_verify_on(c, m) && (rc = mpii_verify_barrier(c, m->fname)))
        return rc;
    if (m->kind == MPII_CM_BLOCK && !c->rgroup && !mpii_node_aware(c, MPI_OP_NULL, 1) &&
        mpii_mailbox_fits(c, m, MPI_BYTE, 0, 0)) { /* the mailbox barrier, without a schedule */
        mpii_coll_count(MPII_COLL_NOTE(MPII_TOOL_COLL(MPII_CK_BARRIER), MPII_ALG_MAILBOX));
        rc = coll_barrier(c->cgroup);
        return rc ? mpii_mailbox_fail(comm, rc, m->fname) : MPI_SUCCESS;
    }
    mpii_ckey_t kb = {.kind = MPII_CK_BARRIER};
    coll_sched_t *hit = mpii_sched_hit(c, m, &kb);
    if (hit)
        return mpii_sched_run_cached(c, comm, hit, m->fname);
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, MPI_OP_NULL, 1, mpii_node_barrier(s, c));
    int fit = mpii_mailbox_fits(c, m, MPI_BYTE, 0, 0);
    if (fit)
        MPII_BUILD_RUN_MAILBOX(c, comm, m, &kb, fit, mpii_mailbox_new_all(c), 1,
                               mpii_mailbox_err(coll_build_barrier(s, c->cgroup)),
                               mpii_build_barrier(s, c));
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, MPI_OP_NULL, 0, mpii_node_barrier(s, c));
    MPII_BUILD_RUN(c, comm, m, &kb,
                   c->rgroup ? mpii_build_inter_barrier(s, c) : mpii_build_barrier(s, c));
}

/* ------------------------------------------------------------------ bcast */

/* Contract: coll_impl.h. Binomial tree (coll/algo). */
void mpii_build_bcast_tree(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count,
                           MPI_Datatype type, int root)
{
    mpii_algo_t m;
    coll_algo_bcast_binomial(mpii_sched_algo(&m, s, NULL, c->size, c->rank, type, MPI_OP_NULL), buf,
                             count, root);
}

/* Scatter of n bytes (binomial, a chunk per rank) then ring allgather of the chunks. */
static int build_bcast_scatter_allgather(coll_sched_t *s, mpii_comm_t *c, char *b, int64_t n,
                                         int root)
{
    int p = c->size, vr = (c->rank - root + p) % p;
    int64_t chunk = (n + p - 1) / p;
#define LO(i) ((int64_t)(i)*chunk < n ? (int64_t)(i)*chunk : n)
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int64_t lo = LO(vr), hi = LO((int64_t)vr + mask);
            mpii_sched_recv(s, b + lo, hi - lo, MPI_BYTE, (vr - mask + root) % p);
            mpii_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            int64_t lo = LO(vr + mask), hi = LO((int64_t)vr + 2 * mask);
            mpii_sched_send(s, b + lo, hi - lo, MPI_BYTE, (vr + mask + root) % p);
        }
    mpii_sched_fence(s);
    /* the ring: rank j's chunk is that of its rank relative to the root */
    int64_t *cd = mpii_sched_bytes(s, 2 * (int64_t)p * (int64_t)sizeof *cd);
    if (!cd)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < p; j++) {
        int rel = (j - root + p) % p;
        cd[p + j] = LO(rel);
        cd[j] = LO(rel + 1) - LO(rel);
    }
    mpii_algo_t m;
    coll_algo_allgather_ring(mpii_sched_algo(&m, s, NULL, p, c->rank, MPI_BYTE, MPI_OP_NULL), b,
                             NULL, cd, cd + p, 0, 0);
    return MPI_SUCCESS;
#undef LO
}

/* Packing step of a non-contiguous large bcast: count x type at buf <-> n bytes at tmp. */
typedef struct pack_args {
    void *buf, *tmp;
    int64_t count, n;
    dt_t *t; /* held by the schedule (mpii_sched_type) */
    int unpack;
} pack_args_t;

/* Staging step of a send block whose size differs from the receive blocks' (an erroneous
 * call): the first min(have, n) bytes of the packed stream of count x t at buf, from byte
 * offset off, into the n bytes at tmp, zeros after them. Fails (FMPL_ERR_TRUNCATE: the
 * block is longer; FMPL_ERR_MISMATCH: shorter, MPI_ERR_COUNT) after staging, so the
 * collective still runs to its end on every rank. Mailbox schedules only. */
typedef struct stage_args {
    const void *buf;
    char *tmp;
    int64_t count, off, have, n;
    dt_t *t; /* held by the schedule (mpii_sched_type) */
} stage_args_t;

static int stage_step(const void *a)
{
    const stage_args_t *x = a;
    int64_t k = BASE_MIN(x->have, x->n);
    if (k > 0 && dt_pack(x->t, x->count, x->buf, x->off, k, x->tmp) < 0)
        return MPI_ERR_ARG;
    memset(x->tmp + k, 0, (size_t)(x->n - k));
    /* (a step of a group schedule: its errors are FMPL codes, as the transport's) */
    return x->have > x->n ? FMPL_ERR_TRUNCATE : FMPL_ERR_MISMATCH;
}

/* The n-byte blocks (nblocks of them) of a send whose blocks hold have = scount x stype
 * bytes each, staged for the mailboxes; NULL when out of memory. See stage_step. */
static char *stage_send_blocks(coll_sched_t *s, const void *sbuf, int64_t scount,
                               MPI_Datatype stype, int64_t n, int nblocks)
{
    char *tmp = mpii_sched_bytes(s, n * nblocks);
    if (!tmp)
        return NULL;
    dt_t *t = mpii_type_get(stype);
    mpii_sched_type(s, stype); /* holds t */
    int64_t have = scount * dt_size(t);
    for (int i = 0; i < nblocks; i++) {
        stage_args_t a = {sbuf, tmp + i * n, scount * nblocks, i * have, have, n, t};
        coll_sched_call(s, stage_step, &a, sizeof a);
    }
    return tmp;
}

static int pack_step(const void *a)
{
    const pack_args_t *x = a;
    dt_t *t = x->t;
    int rc = x->unpack ? dt_unpack(t, x->count, x->buf, 0, x->n, x->tmp)
                       : dt_pack(t, x->count, x->buf, 0, x->n, x->tmp);
    return rc < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_build_bcast(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type,
                     int root)
{
    dt_t *t = mpii_type_get(type);
    int64_t n = count * dt_size(t);
    int tree = n < mpii_coll_tune.bcast_large || c->size < 3;
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_BCAST),
                   tree ? MPII_ALG_TREE : MPII_ALG_SCATTER_ALLGATHER);
    if (c->size == 1 || count == 0)
        return MPI_SUCCESS;
    if (tree) {
        mpii_build_bcast_tree(s, c, buf, count, type, root);
        return MPI_SUCCESS;
    }
    if (dt_is_contig(t, count))
        return build_bcast_scatter_allgather(s, c, (char *)buf + dt_true_lb(t), n, root);
    char *tmp = mpii_sched_bytes(s, n);
    mpii_sched_type(s, type); /* holds t: a derived type is never predefined */
    pack_args_t a = {buf, tmp, count, n, t, 0};
    if (c->rank == root)
        coll_sched_call(s, pack_step, &a, sizeof a);
    int rc = build_bcast_scatter_allgather(s, c, tmp, n, root);
    if (c->rank != root) {
        mpii_sched_fence(s);
        a.unpack = 1;
        coll_sched_call(s, pack_step, &a, sizeof a);
    }
    return rc;
}

/* Bcast over c's group mailboxes, of count x type as bytes: in place when contiguous,
 * else packed into a temporary at the root and unpacked at the others. */
static int bcast_mailbox(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count,
                         MPI_Datatype type, int root)
{
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_BCAST), MPII_ALG_MAILBOX);
    dt_t *t = mpii_type_get(type);
    int64_t n = count * dt_size(t);
    if (dt_is_contig(t, count))
        return mpii_mailbox_err(
            coll_build_bcast(s, c->cgroup, (char *)buf + dt_true_lb(t), (size_t)n, root));
    char *tmp = mpii_sched_bytes(s, n); /* NULL: s is refused at start */
    mpii_sched_type(s, type);           /* holds t: a derived type is never predefined */
    pack_args_t a = {buf, tmp, count, n, t, 0};
    if (c->rank == root)
        coll_sched_call(s, pack_step, &a, sizeof a);
    int rc = coll_build_bcast(s, c->cgroup, tmp, (size_t)n, root);
    if (c->rank != root) {
        mpii_sched_fence(s);
        a.unpack = 1;
        coll_sched_call(s, pack_step, &a, sizeof a);
    }
    return mpii_mailbox_err(rc);
}

/* Bcast on c's offload board (mpii_offload_take gave entry, seq), of count x type as bytes:
 * in place when contiguous, else through a temporary as bcast_mailbox. */
static int bcast_offload(coll_sched_t *s, mpii_comm_t *c, const mpii_cmode_t *m, void *buf,
                         int64_t count, MPI_Datatype type, int root, int entry, uint64_t seq)
{
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_BCAST), MPII_ALG_OFFLOAD);
    dt_t *t = mpii_type_get(type);
    int64_t n = count * dt_size(t);
    unsigned flags = mpii_offload_flags(c, m);
    if (dt_is_contig(t, count))
        return mpii_offload_steps(s,
                                  coll_offload_bcast(s, c->cgroup, entry, seq, flags,
                                                     (char *)buf + dt_true_lb(t), (size_t)n, root));
    char *tmp = mpii_sched_bytes(s, n); /* NULL: s is refused at start */
    mpii_sched_type(s, type);           /* holds t: a derived type is never predefined */
    pack_args_t a = {buf, tmp, count, n, t, 0};
    if (c->rank == root)
        coll_sched_call(s, pack_step, &a, sizeof a);
    int rc = mpii_offload_steps(
        s, coll_offload_bcast(s, c->cgroup, entry, seq, flags, tmp, (size_t)n, root));
    if (c->rank != root) {
        mpii_sched_fence(s);
        a.unpack = 1;
        coll_sched_call(s, pack_step, &a, sizeof a);
    }
    return rc;
}

static int bcast_entry(void *buf, int64_t count, MPI_Datatype type, int root, MPI_Comm comm,
                       const mpii_cmode_t *m)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, m->fname, &c);
    if (rc)
        return rc;
    mpii_ckey_t kb = {
        .kind = MPII_CK_BCAST, .root = root, .stype = type, .scount = count, .sbuf = buf};
    coll_sched_t *hit = mpii_sched_hit(c, m, &kb);
    if (hit)
        return mpii_sched_run_cached(c, comm, hit, m->fname);
    if (c->rgroup)
        return mpii_inter_bcast(c, comm, buf, count, type, root, m);
    if ((rc = mpii_coll_check_buf(buf, count, type, 0)))
        return mpii_coll_fail(comm, rc, m->fname);
    if ((rc = mpii_coll_check_root(root, c->size)))
        return mpii_coll_fail(comm, rc, m->fname);
    if (mpii_verify_on(c, m) && (rc = mpii_verify_bcast(c, count, type, root, m->fname)))
        return rc;
    int entry;
    uint64_t seq;
    if (mpii_offload_take(c, m, count * dt_size(mpii_type_get(type)), &entry, &seq))
        MPII_BUILD_RUN(c, comm, m, &kb, bcast_offload(s, c, m, buf, count, type, root, entry, seq));
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, MPI_OP_NULL, 1,
                        mpii_node_bcast(s, c, buf, count, type, root));
    /* Any type takes the mailbox path when the communicator has a group: the choice must
     * be the same on every rank, and the ranks' types may differ (only the signatures must
     * match: MPICH's coll/bcast gives each rank its own derived type, and a rank choosing
     * point-to-point while the others used the mailboxes hung). */
    int64_t n = m->kind == MPII_CM_BLOCK ? 0 : count * dt_size(mpii_type_get(type));
    int fit = mpii_mailbox_fits(c, m, MPI_BYTE, n, SIZE_MAX);
    if (fit)
        MPII_BUILD_RUN_MAILBOX(c, comm, m, &kb, fit, mpii_mailbox_new(c), 0,
                               bcast_mailbox(s, c, buf, count, type, root),
                               mpii_build_bcast(s, c, buf, count, type, root));
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, MPI_OP_NULL, 0,
                        mpii_node_bcast(s, c, buf, count, type, root));
    MPII_BUILD_RUN(c, comm, m, &kb, mpii_build_bcast(s, c, buf, count, type, root));
}

/* ------------------------------------------------------------------ gather(v), scatter(v) */

/* Linear gatherv: the root posts every receive at once. counts/displs (root only) in
 * elements of rtype. sbuf MPI_IN_PLACE at the root: its block is already in place. */
static int build_gatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                         MPI_Datatype stype, void *rbuf, const int64_t *counts,
                         const int64_t *displs, MPI_Datatype rtype, int root)
{
    int p = c->size, r = c->rank;
    if (r != root) {
        mpii_sched_send(s, sbuf, scount, stype, root);
        return MPI_SUCCESS;
    }
    int64_t ext = mpii_coll_ext(rtype);
    if (sbuf != MPI_IN_PLACE)
        mpii_sched_copy(s, sbuf, scount, stype, (char *)rbuf + displs[r] * ext, counts[r], rtype);
    for (int i = 0; i < p; i++)
        if (i != r)
            mpii_sched_recv(s, (char *)rbuf + displs[i] * ext, counts[i], rtype, i);
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. Linear: the root posts every send at once. */
int mpii_build_scatterv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, const int64_t *counts,
                        const int64_t *displs, MPI_Datatype stype, void *rbuf, int64_t rcount,
                        MPI_Datatype rtype, int root)
{
    int p = c->size, r = c->rank;
    if (r != root) {
        mpii_sched_recv(s, rbuf, rcount, rtype, root);
        return MPI_SUCCESS;
    }
    int64_t ext = mpii_coll_ext(stype);
    for (int k = 1; k < p; k++) { /* start with the next rank: spreads the load of a chain */
        int i = (r + k) % p;
        mpii_sched_send(s, (const char *)sbuf + displs[i] * ext, counts[i], stype, i);
    }
    if (rbuf != MPI_IN_PLACE)
        mpii_sched_copy(s, (const char *)sbuf + displs[r] * ext, counts[r], stype, rbuf, rcount,
                        rtype);
    return MPI_SUCCESS;
}

/* Gather(v) and scatter(v) (scatter 1): every member's own block (own: a gather's send
 * buffer, a scatter's receive buffer; MPI_IN_PLACE at the root) and the root's blocks
 * (blocks: counts[i] elements of btype at displs[i]; counts NULL: bcount each, one after
 * the other). conv_err: the v-forms' arrays could not be widened. The uniform forms keep
 * their schedules in the communicator's cache. */
static int rooted_entry(int scatter, const void *own, int64_t ocount, MPI_Datatype otype,
                        const void *blocks, const int64_t *counts, const int64_t *displs,
                        int64_t bcount, MPI_Datatype btype, int root, MPI_Comm comm, int conv_err,
                        const mpii_cmode_t *m)
{
    const char *fname = m->fname;
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    int kind = scatter ? MPII_CK_SCATTER : MPII_CK_GATHER, uniform = !counts;
    mpii_ckey_t kb = {.kind = kind, .root = root};
    kb.stype = scatter ? btype : otype;
    kb.rtype = scatter ? otype : btype;
    kb.scount = scatter ? bcount : ocount;
    kb.rcount = scatter ? ocount : bcount;
    kb.sbuf = scatter ? blocks : own;
    kb.rbuf = scatter ? own : blocks;
    int64_t *cd = NULL; /* the uniform forms' counts and displacements, where needed */
    if (c->rgroup) {
        int n = uniform ? root_array_len(c, root) : 0;
        if (n && !(cd = uniform_blocks(n, bcount)))
            return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
        if (cd) {
            counts = cd;
            displs = cd + n;
        }
        const mpii_ckey_t *k = uniform ? &kb : NULL;
        rc = scatter ? mpii_inter_scatterv(c, comm, blocks, counts, displs, btype, (void *)own,
                                           ocount, otype, root, m, k)
                     : mpii_inter_gatherv(c, comm, own, ocount, otype, (void *)blocks, counts,
                                          displs, btype, root, m, k);
        free(cd);
        return rc;
    }
    if ((rc = mpii_coll_check_root(root, c->size)))
        return mpii_coll_fail(comm, rc, fname);
    int me_root = c->rank == root, p = c->size;
    if (!(me_root && own == MPI_IN_PLACE) && (rc = mpii_coll_check_buf(own, ocount, otype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if (!uniform && (rc = mpii_coll_check_counts(counts, displs, p)))
            return mpii_coll_fail(comm, rc, fname);
        if ((rc = mpii_coll_check_buf(blocks, uniform ? bcount : 0, btype, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (uniform ? mpii_coll_alias(own, ocount, otype, blocks, bcount * p, btype)
                    : mpii_coll_alias_blocks(own, ocount, otype, blocks, counts, displs, btype, p))
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    }
    if (mpii_verify_on(c, m) &&
        (rc = mpii_verify_rooted(c, kind, root, ocount, otype, counts, bcount, btype, fname)))
        return rc;
    const mpii_ckey_t *k = NULL;
    if (uniform) {
        if (me_root) {
            if (!(cd = uniform_blocks(p, bcount)))
                return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
            counts = cd;
            displs = cd + p;
        }
        k = mpii_sched_key(m, &kb);
        coll_sched_t *hit = mpii_sched_lookup(c, k);
        if (hit) {
            free(cd);
            return mpii_sched_run_cached(c, comm, hit, fname);
        }
    }
    coll_sched_t *s = mpii_sched_new(c);
    if (!s)
        rc = 0; /* (mpii_sched_run reports the missing schedule) */
    else if (scatter)
        rc = mpii_build_scatterv(s, c, blocks, counts, displs, btype, (void *)own, ocount, otype,
                                 root);
    else
        rc = build_gatherv(s, c, own, ocount, otype, (void *)blocks, counts, displs, btype, root);
    free(cd);
    return mpii_sched_run(c, comm, s, m, k, rc);
}

/* ------------------------------------------------------------------ allgather(v) */

/* Ring allgatherv: own block copied in (unless MPI_IN_PLACE), then p - 1 steps passing
 * blocks to the right. counts/displs in elements of rtype. */
static int build_allgatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                            MPI_Datatype stype, void *rbuf, const int64_t *counts,
                            const int64_t *displs, MPI_Datatype rtype)
{
    int p = c->size, r = c->rank;
    int64_t ext = mpii_coll_ext(rtype);
    char *b = rbuf;
    /* The own block leaves from sbuf when it has the receive layout (the ring copies it
     * while the first transfers move), else it is copied in first. */
    const void *own = sbuf != MPI_IN_PLACE && stype == rtype && scount == counts[r] ? sbuf : NULL;
    if (sbuf != MPI_IN_PLACE && !own)
        mpii_sched_copy(s, sbuf, scount, stype, b + displs[r] * ext, counts[r], rtype);
    mpii_algo_t m;
    coll_algo_allgather_ring(mpii_sched_algo(&m, s, NULL, p, r, rtype, MPI_OP_NULL), b, own, counts,
                             displs, 0, 0);
    return MPI_SUCCESS;
}

/* Checking mode of allgather(v): in place, this rank's block of rbuf is its send. */
static int verify_allgather(mpii_comm_t *c, const void *sbuf, int64_t scount, MPI_Datatype stype,
                            const int64_t *counts, int64_t rcount, MPI_Datatype rtype,
                            const char *fname)
{
    int in_place = sbuf == MPI_IN_PLACE;
    return mpii_verify_alltoall(c, MPII_CK_ALLGATHER, NULL,
                                in_place ? (counts ? counts[c->rank] : rcount) : scount, NULL,
                                in_place ? rtype : stype, counts, rcount, NULL, rtype, fname);
}

static int allgatherv_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                            const int64_t *counts, const int64_t *displs, MPI_Datatype rtype,
                            MPI_Comm comm, int conv_err, const mpii_cmode_t *m,
                            const mpii_ckey_t *kb)
{
    const char *fname = m->fname;
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    int inter = c->rgroup != NULL, n = mpii_coll_nproc(c);
    if ((inter || sbuf != MPI_IN_PLACE) && (rc = mpii_coll_check_buf(sbuf, scount, stype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_counts(counts, displs, n)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_buf(rbuf, 0, rtype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (mpii_coll_alias_blocks(sbuf, scount, stype, rbuf, counts, displs, rtype, n))
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (!kb && mpii_verify_on(c, m) &&
        (rc = verify_allgather(c, sbuf, scount, stype, counts, 0, rtype, fname)))
        return rc;
    MPII_BUILD_RUN_NODE(
        c, comm, m, kb, MPI_OP_NULL, 0,
        mpii_node_allgatherv(s, c, sbuf, scount, stype, rbuf, counts, displs, rtype));
    MPII_BUILD_RUN(
        c, comm, m, kb,
        inter ? mpii_build_inter_allgatherv(s, c, sbuf, scount, stype, rbuf, counts, displs, rtype)
              : build_allgatherv(s, c, sbuf, scount, stype, rbuf, counts, displs, rtype));
}

/* Allgather over c's group mailboxes of n = rcount x rtype bytes a rank: in place in rbuf
 * when its p blocks are contiguous, else through a temporary unpacked at the end; a send
 * block that is not contiguous is packed into this rank's block of the receive bytes. */
static int allgather_mailbox(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                             MPI_Datatype stype, void *rbuf, int64_t rcount, MPI_Datatype rtype,
                             int p)
{
    dt_t *rt = mpii_type_get(rtype);
    int64_t n = rcount * dt_size(rt);
    int direct = dt_is_contig(rt, rcount * p);
    char *recv = direct ? (char *)rbuf + dt_true_lb(rt) : mpii_sched_bytes(s, n * p);
    if (!recv)
        return MPI_ERR_NO_MEM;
    if (!direct)
        mpii_sched_type(s, rtype); /* holds rt */
    const void *in = NULL;         /* NULL: this rank's block is in place in recv */
    if (sbuf == MPI_IN_PLACE) {
        if (!direct) {
            pack_args_t a = {(char *)rbuf + c->rank * rcount * dt_extent(rt),
                             recv + c->rank * n,
                             rcount,
                             n,
                             rt,
                             0};
            coll_sched_call(s, pack_step, &a, sizeof a);
        }
    } else {
        dt_t *st = mpii_type_get(stype);
        if (scount * dt_size(st) != n) {
            if (!(in = stage_send_blocks(s, sbuf, scount, stype, n, 1)))
                return MPI_ERR_NO_MEM;
        } else if (dt_is_contig(st, scount)) {
            in = (const char *)sbuf + dt_true_lb(st);
        } else {
            mpii_sched_type(s, stype); /* holds st */
            pack_args_t a = {(void *)(uintptr_t)sbuf, recv + c->rank * n, scount, n, st, 0};
            coll_sched_call(s, pack_step, &a, sizeof a);
        }
    }
    int rc = coll_build_allgather(s, c->cgroup, in, recv, (size_t)n);
    if (!direct) {
        mpii_sched_fence(s);
        pack_args_t a = {rbuf, recv, rcount * p, n * p, rt, 1};
        coll_sched_call(s, pack_step, &a, sizeof a);
    }
    return mpii_mailbox_err(rc);
}

/* The bytes of a block of an allgather or alltoall that takes the mailbox path, or 0. The
 * choice rests on what every rank agrees on (the communicator, the mode, the bytes of a
 * block), not on the types, which may differ between ranks (only the signatures must
 * match): a rank with a derived type going point-to-point while the others use the
 * mailboxes would hang. Erroneous calls (a buffer aliased or missing) take the
 * point-to-point path, which reports them; a send block whose size differs from the
 * receive blocks' (which the other ranks see too) goes through the mailboxes all the
 * same, cut or padded to that size, and fails on this rank (stage_send_blocks): on another
 * path it would leave the others waiting. allgather: 1 (the send is one
 * block, MPI_IN_PLACE allowed), 0 for alltoall (p blocks; in place: point-to-point). */
static int64_t mailbox_block_bytes(mpii_comm_t *c, const mpii_cmode_t *m, const void *sbuf,
                                   int64_t scount, MPI_Datatype stype, void *rbuf, int64_t rcount,
                                   MPI_Datatype rtype, int p, int allgather)
{
    int64_t n = 0;
    if (!c || !mpii_comm_cgroup(c) || m->kind != MPII_CM_BLOCK || !rbuf ||
        mpii_coll_alias(sbuf, scount * (allgather ? 1 : p), stype, rbuf, rcount * p, rtype) ||
        (sbuf == rbuf && !allgather) || rcount < 0 || mpii_type_check_comm(rtype) != MPI_SUCCESS ||
        mpii_coll_check_buf(rbuf, rcount * p, rtype, 0) != MPI_SUCCESS)
        n = 0;
    else if (sbuf == MPI_IN_PLACE)
        n = allgather ? rcount * dt_size(mpii_type_get(rtype)) : 0;
    else if (scount >= 0 && mpii_type_check_comm(stype) == MPI_SUCCESS &&
             mpii_coll_check_buf(sbuf, scount * (allgather ? 1 : p), stype, 0) == MPI_SUCCESS)
        n = rcount * dt_size(mpii_type_get(rtype)); /* (another send size: stage_send_blocks) */
    mpii_coll_why_clear(); /* (the checks were tests here: the entry reports what fails) */
    return n;
}

static int allgather_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                           int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? mpii_coll_nproc(c) : 0, rc;
    if (c && mpii_verify_on(c, m) &&
        (rc = verify_allgather(c, sbuf, scount, stype, NULL, rcount, rtype, m->fname)))
        return rc;
    mpii_ckey_t kb = {.kind = MPII_CK_ALLGATHER,
                      .stype = stype,
                      .rtype = rtype,
                      .scount = scount,
                      .rcount = rcount,
                      .sbuf = sbuf,
                      .rbuf = rbuf};
    int64_t n = mailbox_block_bytes(c, m, sbuf, scount, stype, rbuf, rcount, rtype, p, 1);
    /* (FMPL_MPI_NODE_AWARE=2 takes the node-aware path of allgatherv_entry instead) */
    if (n > 0 && coll_allgather_bruck_fits(c->cgroup, (size_t)n) &&
        mpii_node_aware(c, MPI_OP_NULL, 1) == 0) {
        mpii_comm_t *cc;
        if ((rc = mpii_coll_enter(comm, m->fname, &cc)))
            return rc;
        mpii_coll_note_path(&kb, MPII_ALG_MAILBOX);
        MPII_BUILD_RUN_WITH(c, comm, m, &kb, mpii_mailbox_new_all(c),
                            allgather_mailbox(s, c, sbuf, scount, stype, rbuf, rcount, rtype, p));
    }
    int64_t *cd = uniform_blocks(p, rcount);
    rc = allgatherv_entry(sbuf, scount, stype, rbuf, cd, cd ? cd + p : NULL, rtype, comm,
                          cd ? 0 : MPI_ERR_NO_MEM, m, &kb);
    free(cd);
    return rc;
}

/* ------------------------------------------------------------------ alltoall(v,w) */

/* The general form: per-peer counts, byte displacements and types. sbuf MPI_IN_PLACE:
 * the data is taken from rbuf (receive layout). */
static int build_alltoallw(coll_sched_t *s, mpii_comm_t *c, const void *sbuf,
                           const int64_t *scounts, const int64_t *sdispls,
                           const MPI_Datatype *stypes, void *rbuf, const int64_t *rcounts,
                           const int64_t *rdispls, const MPI_Datatype *rtypes)
{
    int p = c->size, r = c->rank;
    char *rb = rbuf;
    if (sbuf == MPI_IN_PLACE) {
        /* Pairs (i, j), i < j, in one global order: no cycle of waits. */
        for (int i = 0; i < p; i++)
            for (int j = i + 1; j < p; j++) {
                int peer = r == i ? j : r == j ? i : -1;
                if (peer < 0)
                    continue;
                void *tmp = mpii_sched_tmp(s, rtypes[peer], rcounts[peer]);
                char *blk = rb + rdispls[peer];
                mpii_sched_copy(s, blk, rcounts[peer], rtypes[peer], tmp, rcounts[peer],
                                rtypes[peer]);
                mpii_sched_recv(s, blk, rcounts[peer], rtypes[peer], peer);
                mpii_sched_send(s, tmp, rcounts[peer], rtypes[peer], peer);
                mpii_sched_fence(s);
            }
        return MPI_SUCCESS;
    }
    const char *sb = sbuf;
    mpii_sched_copy(s, sb + sdispls[r], scounts[r], stypes[r], rb + rdispls[r], rcounts[r],
                    rtypes[r]);
    int win = mpii_coll_tune.a2a_window;
    for (int s0 = 1; s0 < p; s0 += win) {
        for (int k = s0; k < p && k < s0 + win; k++) {
            int src = (r - k + p) % p, dst = (r + k) % p;
            mpii_sched_recv(s, rb + rdispls[src], rcounts[src], rtypes[src], src);
            mpii_sched_send(s, sb + sdispls[dst], scounts[dst], stypes[dst], dst);
        }
        mpii_sched_fence(s);
    }
    return MPI_SUCCESS;
}

/* Entry of all three forms, counts/displs already as int64 (displs in bytes), types per
 * peer. */
static int alltoall_common(const void *sbuf, const int64_t *scounts, const int64_t *sdispls,
                           const MPI_Datatype *stypes, void *rbuf, const int64_t *rcounts,
                           const int64_t *rdispls, const MPI_Datatype *rtypes, mpii_comm_t *c,
                           MPI_Comm comm, const mpii_cmode_t *m, const mpii_ckey_t *kb)
{
    const char *fname = m->fname;
    int p = mpii_coll_nproc(c), rc;
    if (c->rgroup && sbuf == MPI_IN_PLACE)
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (!rcounts || !rdispls || !rtypes ||
        (sbuf != MPI_IN_PLACE && (!scounts || !sdispls || !stypes)))
        return mpii_coll_fail(comm, MPI_ERR_ARG, fname);
    int64_t sany = 0, rany = 0, alias = 0;
    for (int i = 0; i < p; i++) {
        if ((rc = mpii_coll_check_buf(rbuf, rcounts[i], rtypes[i], 0)))
            return mpii_coll_fail(comm, rc, fname);
        rany |= rcounts[i];
        if (sbuf != MPI_IN_PLACE) {
            if ((rc = mpii_coll_check_buf(sbuf, scounts[i], stypes[i], 0)))
                return mpii_coll_fail(comm, rc, fname);
            sany |= scounts[i];
            /* block i of each side (the common layout; other pairs would cost p^2) */
            alias |= rbuf && mpii_coll_alias((const char *)sbuf + sdispls[i], scounts[i], stypes[i],
                                             (char *)rbuf + rdispls[i], rcounts[i], rtypes[i]);
        }
    }
    if (alias || (sbuf == rbuf && sany && rany))
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    int in_place = sbuf == MPI_IN_PLACE;
    if (!kb && mpii_verify_on(c, m) &&
        (rc = mpii_verify_alltoall(c, MPII_CK_ALLTOALL, in_place ? rcounts : scounts, 0,
                                   in_place ? rtypes : stypes, 0, rcounts, 0, rtypes, 0, fname)))
        return rc;
    MPII_BUILD_RUN(c, comm, m, kb,
                   c->rgroup ? mpii_build_inter_alltoallw(s, c, sbuf, scounts, sdispls, stypes,
                                                          rbuf, rcounts, rdispls, rtypes)
                             : build_alltoallw(s, c, sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                                               rdispls, rtypes));
}

/* Alltoall and Alltoallv: counts and element displacements turned into the w form. */
static int alltoallv_entry(const void *sbuf, const int64_t *scounts, const int64_t *sdispls,
                           MPI_Datatype stype, void *rbuf, const int64_t *rcounts,
                           const int64_t *rdispls, MPI_Datatype rtype, MPI_Comm comm, int conv_err,
                           const mpii_cmode_t *m, const mpii_ckey_t *kb)
{
    const char *fname = m->fname;
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    int in_place = sbuf == MPI_IN_PLACE;
    if (!in_place && mpii_type_check_comm(stype) != MPI_SUCCESS)
        return mpii_coll_fail(comm, MPI_ERR_TYPE, fname);
    if (mpii_type_check_comm(rtype) != MPI_SUCCESS)
        return mpii_coll_fail(comm, MPI_ERR_TYPE, fname);
    if (!rcounts || !rdispls || (!in_place && (!scounts || !sdispls)))
        return mpii_coll_fail(comm, MPI_ERR_ARG, fname);
    int p = mpii_coll_nproc(c);
    int64_t *a = malloc(2 * (size_t)p * sizeof *a);
    MPI_Datatype *t = malloc(2 * (size_t)p * sizeof *t);
    if (!a || !t) {
        free(a);
        free(t);
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
    }
    int64_t se = in_place ? 0 : mpii_coll_ext(stype), re = mpii_coll_ext(rtype);
    for (int i = 0; i < p; i++) {
        a[i] = in_place ? 0 : sdispls[i] * se;
        a[p + i] = rdispls[i] * re;
        t[i] = stype;
        t[p + i] = rtype;
    }
    rc = alltoall_common(sbuf, scounts, a, t, rbuf, rcounts, a + p, t + p, c, comm, m, kb);
    free(a);
    free(t);
    return rc;
}

/* Alltoall over c's group mailboxes (Bruck) of n = rcount x rtype bytes a block: from
 * and into the user's buffers when they are contiguous, else through packed temporaries. */
static int alltoall_mailbox(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                            MPI_Datatype stype, void *rbuf, int64_t rcount, MPI_Datatype rtype,
                            int p)
{
    dt_t *st = mpii_type_get(stype), *rt = mpii_type_get(rtype);
    int64_t n = rcount * dt_size(rt);
    const char *in = (const char *)sbuf + dt_true_lb(st);
    if (scount * dt_size(st) != n) {
        if (!(in = stage_send_blocks(s, sbuf, scount, stype, n, p)))
            return MPI_ERR_NO_MEM;
    } else if (!dt_is_contig(st, scount * p)) {
        char *tmp = mpii_sched_bytes(s, n * p);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        mpii_sched_type(s, stype); /* holds st */
        pack_args_t a = {(void *)(uintptr_t)sbuf, tmp, scount * p, n * p, st, 0};
        coll_sched_call(s, pack_step, &a, sizeof a);
        in = tmp;
    }
    int direct = dt_is_contig(rt, rcount * p);
    char *out = direct ? (char *)rbuf + dt_true_lb(rt) : mpii_sched_bytes(s, n * p);
    if (!out)
        return MPI_ERR_NO_MEM;
    int rc = coll_build_alltoall(s, c->cgroup, in, out, (size_t)n);
    if (!direct) {
        mpii_sched_type(s, rtype); /* holds rt */
        mpii_sched_fence(s);
        pack_args_t a = {rbuf, out, rcount * p, n * p, rt, 1};
        coll_sched_call(s, pack_step, &a, sizeof a);
    }
    return mpii_mailbox_err(rc);
}

static int alltoall_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                          int64_t rcount, MPI_Datatype rtype, MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? mpii_coll_nproc(c) : 1, rc;
    int in_place = sbuf == MPI_IN_PLACE;
    if (c && mpii_verify_on(c, m) &&
        (rc = mpii_verify_alltoall(c, MPII_CK_ALLTOALL, NULL, in_place ? rcount : scount, NULL,
                                   in_place ? rtype : stype, NULL, rcount, NULL, rtype, m->fname)))
        return rc;
    mpii_ckey_t kb = {.kind = MPII_CK_ALLTOALL,
                      .stype = stype,
                      .rtype = rtype,
                      .scount = scount,
                      .rcount = rcount,
                      .sbuf = sbuf,
                      .rbuf = rbuf};
    int64_t n = mailbox_block_bytes(c, m, sbuf, scount, stype, rbuf, rcount, rtype, p, 0);
    if (n > 0 && coll_alltoall_fits(c->cgroup, (size_t)n)) {
        mpii_comm_t *cc;
        if ((rc = mpii_coll_enter(comm, m->fname, &cc)))
            return rc;
        mpii_coll_note_path(&kb, MPII_ALG_MAILBOX);
        MPII_BUILD_RUN_WITH(c, comm, m, &kb, mpii_mailbox_new_all(c),
                            alltoall_mailbox(s, c, sbuf, scount, stype, rbuf, rcount, rtype, p));
    }
    int64_t *a = malloc(4 * (size_t)p * sizeof *a);
    if (a)
        for (int i = 0; i < p; i++) {
            a[i] = scount;
            a[p + i] = (int64_t)i * scount;
            a[2 * p + i] = rcount;
            a[3 * p + i] = (int64_t)i * rcount;
        }
    rc = alltoallv_entry(sbuf, a, a ? a + p : NULL, stype, rbuf, a ? a + 2 * p : NULL,
                         a ? a + 3 * p : NULL, rtype, comm, a ? 0 : MPI_ERR_NO_MEM, m, &kb);
    free(a);
    return rc;
}

static int alltoallw_entry(const void *sbuf, const int64_t *sc, const int64_t *sd,
                           const MPI_Datatype *st, void *rbuf, const int64_t *rc_,
                           const int64_t *rd, const MPI_Datatype *rt, MPI_Comm comm, int conv_err,
                           const mpii_cmode_t *m)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, m->fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, m->fname);
    return alltoall_common(sbuf, sc, sd, st, rbuf, rc_, rd, rt, c, comm, m, NULL);
}

/* ------------------------------------------------------------------ v-forms' counts */

/* The v-forms' count and displacement arrays as the calls give them (wide: see widen),
 * widened to int64 for the entries above. */

static int gatherv_wide(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                        const void *counts, const void *displs, int wide, MPI_Datatype rtype,
                        int root, MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = root_array_len(c, root), err = 0;
    int64_t *cn = widen(counts, wide, p, &err), *dp = widen(displs, wide, p, &err);
    int rc = rooted_entry(0, sbuf, scount, stype, rbuf, cn, dp, 0, rtype, root, comm, err, m);
    free(cn);
    free(dp);
    return rc;
}

static int scatterv_wide(const void *sbuf, const void *counts, const void *displs, int wide,
                         MPI_Datatype stype, void *rbuf, int64_t rcount, MPI_Datatype rtype,
                         int root, MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = root_array_len(c, root), err = 0;
    int64_t *cn = widen(counts, wide, p, &err), *dp = widen(displs, wide, p, &err);
    int rc = rooted_entry(1, rbuf, rcount, rtype, sbuf, cn, dp, 0, stype, root, comm, err, m);
    free(cn);
    free(dp);
    return rc;
}

static int allgatherv_wide(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                           const void *counts, const void *displs, int wide, MPI_Datatype rtype,
                           MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? mpii_coll_nproc(c) : 0, err = 0;
    int64_t *cn = widen(counts, wide, p, &err), *dp = widen(displs, wide, p, &err);
    int rc = allgatherv_entry(sbuf, scount, stype, rbuf, cn, dp, rtype, comm, err, m, NULL);
    free(cn);
    free(dp);
    return rc;
}

/* Alltoallv (w 0: stype and rtype for every block) and alltoallw (w 1: the per-block types
 * stypes and rtypes). */
static int alltoallvw_wide(const void *sbuf, const void *scounts, const void *sdispls,
                           MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                           const void *rcounts, const void *rdispls, MPI_Datatype rtype,
                           const MPI_Datatype *rtypes, int w, int wide, MPI_Comm comm,
                           const mpii_cmode_t *m)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? mpii_coll_nproc(c) : 0, err = 0, ip = sbuf == MPI_IN_PLACE;
    int64_t *sc = ip ? NULL : widen(scounts, wide, p, &err);
    int64_t *sd = ip ? NULL : widen(sdispls, wide, p, &err);
    int64_t *rc_ = widen(rcounts, wide, p, &err), *rd = widen(rdispls, wide, p, &err);
    int rc =
        w ? alltoallw_entry(sbuf, sc, sd, ip ? NULL : stypes, rbuf, rc_, rd, rtypes, comm, err, m)
          : alltoallv_entry(sbuf, sc, sd, stype, rbuf, rc_, rd, rtype, comm, err, m, NULL);
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    return rc;
}

/* MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init: MPI_Barrier on an intracommunicator (contract:
 * MPI-4.0 6.3). */
MPII_COLL_ENTRIES(Barrier, Ibarrier, Barrier_init, barrier_entry, (MPI_Comm comm), (comm))

/* MPI_Bcast, MPI_Ibcast, MPI_Bcast_init: MPI_Bcast on an intracommunicator (contract: MPI-4.0 6.4).
 */
MPII_COLL_ENTRIES(Bcast, Ibcast, Bcast_init, bcast_entry,
                  (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
                  (buffer, count, datatype, root, comm))

/* MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c: large-count form of MPI_Bcast on an
 * intracommunicator (contract: MPI-4.0 6.4). */
MPII_COLL_ENTRIES(Bcast_c, Ibcast_c, Bcast_init_c, bcast_entry,
                  (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm),
                  (buffer, count, datatype, root, comm))

/* MPI_Gather, MPI_Igather, MPI_Gather_init: MPI_Gather on an intracommunicator (contract:
 * MPI-4.0 6.5). */
MPII_COLL_ENTRIES(Gather, Igather, Gather_init, rooted_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                  (0, sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype, root,
                   comm, 0))

/* MPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c: large-count form of MPI_Gather on an
 * intracommunicator (contract: MPI-4.0 6.5). */
MPII_COLL_ENTRIES(Gather_c, Igather_c, Gather_init_c, rooted_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                  (0, sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype, root,
                   comm, 0))

/* MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init: MPI_Gatherv on an intracommunicator (contract:
 * MPI-4.0 6.5). */
MPII_COLL_ENTRIES(Gatherv, Igatherv, Gatherv_init, gatherv_wide,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, root,
                   comm))

/* MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c: large-count form of MPI_Gatherv on an
 * intracommunicator (contract: MPI-4.0 6.5).
 */
MPII_COLL_ENTRIES(Gatherv_c, Igatherv_c, Gatherv_init_c, gatherv_wide,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 1, recvtype, root,
                   comm))

/* MPI_Scatter, MPI_Iscatter, MPI_Scatter_init: MPI_Scatter on an intracommunicator (contract:
 * MPI-4.0 6.6). */
MPII_COLL_ENTRIES(Scatter, Iscatter, Scatter_init, rooted_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                  (1, recvbuf, recvcount, recvtype, sendbuf, NULL, NULL, sendcount, sendtype, root,
                   comm, 0))

/* MPI_Scatter_c, MPI_Iscatter_c, MPI_Scatter_init_c: large-count form of MPI_Scatter on an
 * intracommunicator (contract: MPI-4.0 6.6).
 */
MPII_COLL_ENTRIES(Scatter_c, Iscatter_c, Scatter_init_c, rooted_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                  (1, recvbuf, recvcount, recvtype, sendbuf, NULL, NULL, sendcount, sendtype, root,
                   comm, 0))

/* MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init: MPI_Scatterv on an intracommunicator (contract:
 * MPI-4.0 6.6). */
MPII_COLL_ENTRIES(Scatterv, Iscatterv, Scatterv_init, scatterv_wide,
                  (const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm),
                  (sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype, root,
                   comm))

/* MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c: large-count form of MPI_Scatterv on an
 * intracommunicator (contract: MPI-4.0 6.6).
 */
MPII_COLL_ENTRIES(Scatterv_c, Iscatterv_c, Scatterv_init_c, scatterv_wide,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm),
                  (sendbuf, sendcounts, displs, 1, sendtype, recvbuf, recvcount, recvtype, root,
                   comm))

/* MPI_Allgather, MPI_Iallgather, MPI_Allgather_init: MPI_Allgather on an intracommunicator
 * (contract: MPI-4.0 6.7). */
MPII_COLL_ENTRIES(Allgather, Iallgather, Allgather_init, allgather_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

/* MPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c: large-count form of MPI_Allgather on an
 * intracommunicator (contract: MPI-4.0 6.7). */
MPII_COLL_ENTRIES(Allgather_c, Iallgather_c, Allgather_init_c, allgather_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

/* MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init: MPI_Allgatherv on an intracommunicator
 * (contract: MPI-4.0 6.7). */
MPII_COLL_ENTRIES(Allgatherv, Iallgatherv, Allgatherv_init, allgatherv_wide,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm))

/* MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c: large-count form of MPI_Allgatherv on
 * an intracommunicator (contract: MPI-4.0 6.7). */
MPII_COLL_ENTRIES(Allgatherv_c, Iallgatherv_c, Allgatherv_init_c, allgatherv_wide,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 1, recvtype, comm))

/* MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init: MPI_Alltoall on an intracommunicator (contract:
 * MPI-4.0 6.8). */
MPII_COLL_ENTRIES(Alltoall, Ialltoall, Alltoall_init, alltoall_entry,
                  (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

/* MPI_Alltoall_c, MPI_Ialltoall_c, MPI_Alltoall_init_c: large-count form of MPI_Alltoall on an
 * intracommunicator (contract: MPI-4.0 6.8).
 */
MPII_COLL_ENTRIES(Alltoall_c, Ialltoall_c, Alltoall_init_c, alltoall_entry,
                  (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

/* MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init: MPI_Alltoallv on an intracommunicator
 * (contract: MPI-4.0 6.8). */
MPII_COLL_ENTRIES(Alltoallv, Ialltoallv, Alltoallv_init, alltoallvw_wide,
                  (const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts, rdispls,
                   recvtype, NULL, 0, 0, comm))

/* MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c: large-count form of MPI_Alltoallv on an
 * intracommunicator (contract: MPI-4.0 6.8). */
MPII_COLL_ENTRIES(Alltoallv_c, Ialltoallv_c, Alltoallv_init_c, alltoallvw_wide,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                  (sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts, rdispls,
                   recvtype, NULL, 0, 1, comm))

/* MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init: MPI_Alltoallw on an intracommunicator
 * (contract: MPI-4.0 6.8). */
MPII_COLL_ENTRIES(Alltoallw, Ialltoallw, Alltoallw_init, alltoallvw_wide,
                  (const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                  (sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts,
                   rdispls, MPI_DATATYPE_NULL, recvtypes, 1, 0, comm))

/* MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c: large-count form of MPI_Alltoallw on an
 * intracommunicator (contract: MPI-4.0 6.8). */
MPII_COLL_ENTRIES(Alltoallw_c, Ialltoallw_c, Alltoallw_init_c, alltoallvw_wide,
                  (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
                  (sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts,
                   rdispls, MPI_DATATYPE_NULL, recvtypes, 1, 1, comm))
