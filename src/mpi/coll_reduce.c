/* coll_reduce.c — MPI reductions: Reduce, Allreduce, Reduce_scatter_block,
 * Reduce_scatter, Scan, Exscan, each blocking, nonblocking and persistent, built as
 * schedules (coll_impl.h) whose local steps combine with mpii_op_apply (inout = in op
 * inout). On an intercommunicator the first four branch to coll_inter.c's builders once
 * the common checks are done; the scans refuse it (MPI_ERR_COMM: MPI defines them on
 * intracommunicators only).
 *
 * Operand order: MPI requires the result x0 op x1 op ... op x(p-1) (in rank order) for
 * non-commutative ops; every combine below puts the lower ranks' operand on the left.
 * Algorithms: binomial-tree reduce (rooted at the root for commutative ops; rooted at 0
 * then forwarded for non-commutative ones, so each subtree covers consecutive ranks);
 * allreduce by recursive doubling with the non-power-of-two fold (ranks < 2*rem pair up
 * first), and for large commutative ones (FMPL_MPI_ALLREDUCE_LARGE) Rabenseifner's reduce-scatter
 * (recursive halving) + allgather (recursive doubling); reduce_scatter by direct exchange of the
 * blocks for commutative ops, reduce + scatterv otherwise; scan / exscan by recursive
 * doubling. Temporaries have the datatype's own layout (mpii_sched_tmp), so derived
 * types with user ops are received and combined as they are. */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

static int op_commutes(MPI_Op op)
{
    return mpii_op_get(op)->commute;
}

/* One exchange with peer: send count of type at sb, receive into rb; ends the round. */
static void add_sendrecv(coll_sched_t *s, const void *sb, int64_t scount, void *rb, int64_t rcount,
                         MPI_Datatype type, int peer)
{
    mpii_sched_recv(s, rb, rcount, type, peer);
    mpii_sched_send(s, sb, scount, type, peer);
    mpii_sched_fence(s);
}

/* ------------------------------------------------------------------ mailbox path */

/* A reduction the communicator's mailbox group can do: small, contiguous predefined type,
 * predefined op. Returns mpii_mailbox_fits's answer (0: no). */
static int mailbox_fits(mpii_comm_t *c, const mpii_cmode_t *m, MPI_Datatype type, int64_t count,
                        MPI_Op op)
{
    if (!mpii_comm_cgroup(c) || count <= 0 || mpii_op_get(op)->fn || mpii_op_get(op)->fn_c)
        return 0;
    return mpii_mailbox_fits(c, m, type, count, coll_group_small(c->cgroup));
}

/* Builds the mailbox reduce (root >= 0) or allreduce (root < 0) of in into out. */
static int mailbox_reduce(coll_sched_t *s, mpii_comm_t *c, const void *in, void *out, int64_t count,
                          MPI_Datatype type, MPI_Op op, int root)
{
    coll_reduce_op_t o = mpii_mailbox_op(s, op, type);
    return mpii_mailbox_err(
        root < 0 ? coll_build_allreduce(s, c->cgroup, in, out, (size_t)count, &o)
                 : coll_build_reduce(s, c->cgroup, in, out, (size_t)count, &o, root));
}

/* ------------------------------------------------------------------ reduce */

/* Contract: coll_impl.h. */
void mpii_build_reduce_list(coll_sched_t *s, const int *rk, int n, int me, int ri, const void *in,
                            void *out, int64_t count, MPI_Datatype type, MPI_Op op)
{
    mpii_algo_t m;
    coll_algo_reduce_binomial(mpii_sched_algo(&m, s, rk, n, me, type, op), in, out, count, ri);
}

/* Contract: coll_impl.h. Binomial reduce over the communicator's ranks. */
int mpii_build_reduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                      MPI_Datatype type, MPI_Op op, int root)
{
    int p = c->size, r = c->rank;
    if (p == 1 || count == 0) {
        if (sbuf != rbuf && r == root)
            mpii_sched_copy(s, sbuf, count, type, rbuf, count, type);
        return MPI_SUCCESS;
    }
    mpii_build_reduce_list(s, NULL, p, r, root, sbuf, rbuf, count, type, op);
    return MPI_SUCCESS;
}

static int reduce_entry(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                        int root, MPI_Comm comm, const mpii_cmode_t *m)
{
    const char *fname = m->fname;
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    /* (MPI_IN_PLACE at the root is the operand in rbuf, as below) */
    mpii_ckey_t kb = {.kind = MPII_CK_REDUCE,
                      .root = root,
                      .stype = type,
                      .op = op,
                      .scount = count,
                      .sbuf = sbuf == MPI_IN_PLACE && c->rank == root ? rbuf : sbuf,
                      .rbuf = rbuf};
    coll_sched_t *hit = c->rgroup ? NULL : mpii_sched_hit(c, m, &kb); /* skips the checks */
    if (hit)
        return mpii_sched_run_cached(c, comm, hit, fname);
    if ((rc = mpii_coll_check_op(count, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    if (c->rgroup)
        return mpii_inter_reduce(c, comm, sbuf, rbuf, count, type, op, root, m);
    if ((rc = mpii_coll_check_root(root, c->size)))
        return mpii_coll_fail(comm, rc, fname);
    int me_root = c->rank == root;
    if ((rc = mpii_coll_check_buf(sbuf, count, type, me_root)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if ((rc = mpii_coll_check_buf(rbuf, count, type, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (mpii_coll_alias(sbuf, count, type, rbuf, count, type))
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
        if (sbuf == MPI_IN_PLACE)
            sbuf = rbuf;
    }
    if (mpii_verify_on(c, m) &&
        (rc = mpii_verify_reduce(c, MPII_CK_REDUCE, root, NULL, count, type, op, fname)))
        return rc;
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, op, 1,
                        mpii_node_reduce(s, c, sbuf, rbuf, count, type, op, root));
    int fit = mailbox_fits(c, m, type, count, op);
    if (fit)
        MPII_BUILD_RUN_MAILBOX(c, comm, m, &kb, fit, mpii_mailbox_new(c), 0,
                               mailbox_reduce(s, c, sbuf, rbuf, count, type, op, root),
                               mpii_build_reduce(s, c, sbuf, rbuf, count, type, op, root));
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, op, 0,
                        mpii_node_reduce(s, c, sbuf, rbuf, count, type, op, root));
    MPII_BUILD_RUN(c, comm, m, &kb, mpii_build_reduce(s, c, sbuf, rbuf, count, type, op, root));
}

/* ------------------------------------------------------------------ allreduce */

/* 1 when an allreduce of count x type by op among n takes Rabenseifner's algorithm: a
 * commutative op, FMPL_MPI_ALLREDUCE_LARGE bytes or more, an element per member. */
static int use_rabenseifner(int n, int64_t count, MPI_Datatype type, MPI_Op op)
{
    int p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    int64_t bytes = count * dt_size(mpii_type_get(type));
    return op_commutes(op) && bytes >= mpii_coll_tune.allreduce_large && count >= p2 && p2 > 1;
}

/* Contract: coll_impl.h. */
void mpii_build_allreduce_list(coll_sched_t *s, const int *rk, int n, int me, void *buf, void *tmp,
                               int64_t count, MPI_Datatype type, MPI_Op op)
{
    mpii_algo_t m;
    const coll_algo_t *a = mpii_sched_algo(&m, s, rk, n, me, type, op);
    if (use_rabenseifner(n, count, type, op))
        coll_algo_allreduce_rabenseifner(a, buf, tmp, count);
    else
        coll_algo_allreduce_recdbl(a, buf, tmp, count);
}

/* Allreduce into rbuf; sbuf is this rank's operand (MPI_IN_PLACE: already in rbuf). */
static int build_allreduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                           int64_t count, MPI_Datatype type, MPI_Op op)
{
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_ALLREDUCE), use_rabenseifner(c->size, count, type, op)
                                                          ? MPII_ALG_RABENSEIFNER
                                                          : MPII_ALG_RECURSIVE_DOUBLING);
    if (sbuf != MPI_IN_PLACE)
        mpii_sched_copy(s, sbuf, count, type, rbuf, count, type);
    if (c->size == 1 || count == 0)
        return MPI_SUCCESS;
    mpii_build_allreduce_list(s, NULL, c->size, c->rank, rbuf, mpii_sched_tmp(s, type, count),
                              count, type, op);
    return MPI_SUCCESS;
}

/* Allreduce on c's offload board (mpii_offload_take gave entry, seq); a predefined type and
 * op. */
static int allreduce_offload(coll_sched_t *s, mpii_comm_t *c, const mpii_cmode_t *m,
                             const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type,
                             MPI_Op op, int entry, uint64_t seq)
{
    mpii_coll_note(MPII_TOOL_COLL(MPII_CK_ALLREDUCE), MPII_ALG_OFFLOAD);
    coll_reduce_op_t o = mpii_mailbox_op(s, op, type);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* (predefined: lower bound 0) */
    return mpii_offload_steps(s, coll_offload_allreduce(s, c->cgroup, entry, seq,
                                                        mpii_offload_flags(c, m), in, rbuf,
                                                        (size_t)count, &o));
}

static int allreduce_entry(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type,
                           MPI_Op op, MPI_Comm comm, const mpii_cmode_t *m)
{
    const char *fname = m->fname;
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    mpii_ckey_t kb = {.kind = MPII_CK_ALLREDUCE,
                      .stype = type,
                      .op = op,
                      .scount = count,
                      .sbuf = sbuf,
                      .rbuf = rbuf};
    coll_sched_t *hit = mpii_sched_hit(c, m, &kb);
    if (hit)
        return mpii_sched_run_cached(c, comm, hit, fname);
    if ((rc = mpii_coll_check_op(count, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    int inter = c->rgroup != NULL;
    if ((rc = mpii_coll_check_buf(sbuf, count, type, !inter)) ||
        (rc = mpii_coll_check_buf(rbuf, count, type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (mpii_coll_alias(sbuf, count, type, rbuf, count, type))
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (mpii_verify_on(c, m) &&
        (rc = mpii_verify_reduce(c, MPII_CK_ALLREDUCE, -1, NULL, count, type, op, fname)))
        return rc;
    int entry;
    uint64_t seq;
    dt_t *t = mpii_type_get(type); /* (MINLOC's pair types have holes: not offloaded) */
    if (!inter && FMPL_MPI_DT_IS_PREDEF(type) && dt_is_contig(t, count) && !mpii_op_get(op)->fn &&
        !mpii_op_get(op)->fn_c && mpii_offload_take(c, m, count * dt_size(t), &entry, &seq))
        MPII_BUILD_RUN(c, comm, m, &kb,
                       allreduce_offload(s, c, m, sbuf, rbuf, count, type, op, entry, seq));
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, op, 1,
                        mpii_node_allreduce(s, c, sbuf, rbuf, count, type, op));
    int fit = mailbox_fits(c, m, type, count, op);
    if (fit)
        MPII_BUILD_RUN_MAILBOX(
            c, comm, m, &kb, fit, mpii_mailbox_new_all(c), 1,
            (mpii_coll_note(MPII_TOOL_COLL(MPII_CK_ALLREDUCE), MPII_ALG_MAILBOX),
             mailbox_reduce(s, c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, type, op, -1)),
            build_allreduce(s, c, sbuf, rbuf, count, type, op));
    MPII_BUILD_RUN_NODE(c, comm, m, &kb, op, 0,
                        mpii_node_allreduce(s, c, sbuf, rbuf, count, type, op));
    MPII_BUILD_RUN(c, comm, m, &kb,
                   inter ? mpii_build_inter_allreduce(s, c, sbuf, rbuf, count, type, op)
                         : build_allreduce(s, c, sbuf, rbuf, count, type, op));
}

/* ------------------------------------------------------------------ reduce_scatter */

/* in: this rank's full operand (sum of counts elements); block i (counts[i] elements)
 * of the result goes to rank i's rbuf. in may be rbuf (MPI_IN_PLACE). */
static int build_reduce_scatter(coll_sched_t *s, mpii_comm_t *c, const void *in, void *rbuf,
                                const int64_t *counts, MPI_Datatype type, MPI_Op op)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    int64_t ext = mpii_coll_ext(type), total = 0;
    int64_t *displs = malloc((size_t)p * sizeof *displs);
    if (!displs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++) {
        displs[i] = total;
        total += counts[i];
    }
    if (!op_commutes(op)) { /* in rank order: reduce to 0, then scatter */
        void *full = r == 0 ? mpii_sched_tmp(s, type, total) : NULL;
        rc = mpii_build_reduce(s, c, in, full, total, type, op, 0);
        mpii_sched_fence(s);
        if (!rc)
            rc = mpii_build_scatterv(s, c, full, counts, displs, type, rbuf, counts[r], type, 0);
        free(displs);
        return rc;
    }
    /* Commutative: every rank sends block i to rank i and combines what it receives. */
    int64_t mine = counts[r];
    void *acc = mpii_sched_tmp(s, type, mine);
    char *tmp = mpii_sched_tmp(s, type, mine * (p > 1 ? p - 1 : 1));
    const char *ib = in;
    mpii_sched_copy(s, ib + displs[r] * ext, mine, type, acc, mine, type);
    for (int k = 1; k < p; k++) {
        int src = (r - k + p) % p, dst = (r + k) % p;
        mpii_sched_recv(s, tmp + (k - 1) * mine * ext, mine, type, src);
        mpii_sched_send(s, ib + displs[dst] * ext, counts[dst], type, dst);
    }
    mpii_sched_fence(s);
    for (int k = 1; k < p; k++)
        mpii_sched_reduce(s, op, tmp + (k - 1) * mine * ext, acc, mine, type);
    mpii_sched_copy(s, acc, mine, type, rbuf, mine, type);
    free(displs);
    return MPI_SUCCESS;
}

static int reduce_scatter_entry(const void *sbuf, void *rbuf, const int64_t *counts,
                                MPI_Datatype type, MPI_Op op, mpii_comm_t *c, MPI_Comm comm,
                                const mpii_cmode_t *m, const mpii_ckey_t *kb)
{
    const char *fname = m->fname;
    int rc;
    if (!counts)
        return mpii_coll_fail(comm, MPI_ERR_ARG, fname);
    int64_t total = 0;
    for (int i = 0; i < c->size; i++) {
        if ((rc = mpii_coll_check_op(counts[i], type, op)))
            return mpii_coll_fail(comm, rc, fname);
        total += counts[i];
    }
    if ((rc = mpii_coll_check_op(0, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    int inter = c->rgroup != NULL;
    if ((rc = mpii_coll_check_buf(sbuf, total, type, !inter)) ||
        (rc = mpii_coll_check_buf(rbuf, counts[c->rank], type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (mpii_coll_alias(sbuf, total, type, rbuf, counts[c->rank], type))
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (mpii_verify_on(c, m) &&
        (rc = mpii_verify_reduce(c, MPII_CK_RSB, -1, counts, 0, type, op, fname)))
        return rc;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    MPII_BUILD_RUN(c, comm, m, kb,
                   inter ? mpii_build_inter_reduce_scatter(s, c, sbuf, rbuf, counts, type, op)
                         : build_reduce_scatter(s, c, sbuf, rbuf, counts, type, op));
}

static int reduce_scatter_block_entry(const void *sbuf, void *rbuf, int64_t rcount,
                                      MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                      const mpii_cmode_t *m)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, m->fname, &c);
    if (rc)
        return rc;
    int64_t *counts = malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, m->fname);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    mpii_ckey_t kb = {
        .kind = MPII_CK_RSB, .stype = type, .op = op, .scount = rcount, .sbuf = sbuf, .rbuf = rbuf};
    rc = reduce_scatter_entry(sbuf, rbuf, counts, type, op, c, comm, m, &kb);
    free(counts);
    return rc;
}

/* MPI_Reduce_scatter with its counts as the call gives them: int (icounts) or, for the
 * _c form, MPI_Count (ccounts); the other one NULL. */
static int reduce_scatter_counts_entry(const void *sbuf, void *rbuf, const int *icounts,
                                       const MPI_Count *ccounts, MPI_Datatype type, MPI_Op op,
                                       MPI_Comm comm, const mpii_cmode_t *m)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, m->fname, &c);
    if (rc)
        return rc;
    if (!icounts && !ccounts)
        return mpii_coll_fail(comm, MPI_ERR_ARG, m->fname);
    int64_t *counts = malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, m->fname);
    for (int i = 0; i < c->size; i++)
        counts[i] = icounts ? icounts[i] : (int64_t)ccounts[i];
    rc = reduce_scatter_entry(sbuf, rbuf, counts, type, op, c, comm, m, NULL);
    free(counts);
    return rc;
}

/* ------------------------------------------------------------------ scan, exscan */

/* Recursive-doubling (ex)scan; sbuf MPI_IN_PLACE: the operand is in rbuf. */
static int build_scan(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                      MPI_Datatype type, MPI_Op op, int ex)
{
    int p = c->size, r = c->rank;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0)
        return MPI_SUCCESS;
    if (!ex && in != rbuf)
        mpii_sched_copy(s, in, count, type, rbuf, count, type);
    if (p == 1)
        return MPI_SUCCESS;
    int commute = op_commutes(op);
    void *partial = mpii_sched_tmp(s, type, count), *tmp = mpii_sched_tmp(s, type, count);
    mpii_sched_copy(s, in, count, type, partial, count, type);
    int have = 0; /* exscan: rbuf holds something */
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        add_sendrecv(s, partial, count, tmp, count, type, dst);
        if (r > dst) {
            mpii_sched_reduce(s, op, tmp, partial, count, type);
            if (!ex || have)
                mpii_sched_reduce(s, op, tmp, rbuf, count, type);
            else
                mpii_sched_copy(s, tmp, count, type, rbuf, count, type);
            have = 1;
        } else if (commute) {
            mpii_sched_reduce(s, op, tmp, partial, count, type);
        } else {
            mpii_sched_reduce(s, op, partial, tmp, count, type);
            mpii_sched_copy(s, tmp, count, type, partial, count, type);
        }
    }
    return MPI_SUCCESS;
}

static int scan_entry(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm, int ex, const mpii_cmode_t *m)
{
    const char *fname = m->fname;
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (c->rgroup)
        return MPII_ERRF_COMM(comm, MPI_ERR_COMM, fname, "%s",
                              "scans are defined on intracommunicators only");
    if ((rc = mpii_coll_check_op(count, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_buf(sbuf, count, type, 1)) ||
        (rc = mpii_coll_check_buf(rbuf, count, type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (mpii_coll_alias(sbuf, count, type, rbuf, count, type))
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (mpii_verify_on(c, m) && (rc = mpii_verify_reduce(c, ex ? MPII_CK_EXSCAN : MPII_CK_SCAN, -1,
                                                         NULL, count, type, op, fname)))
        return rc;
    mpii_ckey_t kb = {.kind = ex ? MPII_CK_EXSCAN : MPII_CK_SCAN,
                      .stype = type,
                      .op = op,
                      .scount = count,
                      .sbuf = sbuf,
                      .rbuf = rbuf};
    MPII_BUILD_RUN(c, comm, m, &kb, build_scan(s, c, sbuf, rbuf, count, type, op, ex));
}

static int scan_inclusive(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm, const mpii_cmode_t *m)
{
    return scan_entry(sbuf, rbuf, count, type, op, comm, 0, m);
}

static int scan_exclusive(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm, const mpii_cmode_t *m)
{
    return scan_entry(sbuf, rbuf, count, type, op, comm, 1, m);
}

/* MPI_Reduce, MPI_Ireduce, MPI_Reduce_init: MPI_Reduce on an intracommunicator (contract:
 * MPI-4.0 6.9.1). */
MPII_COLL_ENTRIES(Reduce, Ireduce, Reduce_init, reduce_entry,
                  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   int root, MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, root, comm))

/* MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c: large-count form of MPI_Reduce on an
 * intracommunicator (contract: MPI-4.0 6.9.1).
 */
MPII_COLL_ENTRIES(Reduce_c, Ireduce_c, Reduce_init_c, reduce_entry,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, int root, MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, root, comm))

/* MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init: MPI_Allreduce on an intracommunicator
 * (contract: MPI-4.0 6.9.6). */
MPII_COLL_ENTRIES(Allreduce, Iallreduce, Allreduce_init, allreduce_entry,
                  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

/* MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c: large-count form of MPI_Allreduce on an
 * intracommunicator (contract: MPI-4.0 6.9.6). */
MPII_COLL_ENTRIES(Allreduce_c, Iallreduce_c, Allreduce_init_c, allreduce_entry,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

/* MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init:
 * MPI_Reduce_scatter_block on an intracommunicator (contract: MPI-4.0 6.10.1). */
MPII_COLL_ENTRIES(Reduce_scatter_block, Ireduce_scatter_block, Reduce_scatter_block_init,
                  reduce_scatter_block_entry,
                  (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, recvcount, datatype, op, comm))

/* MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c, MPI_Reduce_scatter_block_init_c:
 * large-count form of MPI_Reduce_scatter_block on an intracommunicator (contract: MPI-4.0 6.10.1).
 */
MPII_COLL_ENTRIES(Reduce_scatter_block_c, Ireduce_scatter_block_c, Reduce_scatter_block_init_c,
                  reduce_scatter_block_entry,
                  (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, recvcount, datatype, op, comm))

/* MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init: MPI_Reduce_scatter on an
 * intracommunicator (contract: MPI-4.0 6.10.2). */
MPII_COLL_ENTRIES(Reduce_scatter, Ireduce_scatter, Reduce_scatter_init, reduce_scatter_counts_entry,
                  (const void *sendbuf, void *recvbuf, const int recvcounts[],
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, recvcounts, NULL, datatype, op, comm))

/* MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c: large-count form of
 * MPI_Reduce_scatter on an intracommunicator (contract: MPI-4.0 6.10.2). */
MPII_COLL_ENTRIES(Reduce_scatter_c, Ireduce_scatter_c, Reduce_scatter_init_c,
                  reduce_scatter_counts_entry,
                  (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, NULL, recvcounts, datatype, op, comm))

/* MPI_Scan, MPI_Iscan, MPI_Scan_init: MPI_Scan on an intracommunicator (contract: MPI-4.0 6.11.1).
 */
MPII_COLL_ENTRIES(Scan, Iscan, Scan_init, scan_inclusive,
                  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

/* MPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c: large-count form of MPI_Scan on an intracommunicator
 * (contract: MPI-4.0 6.11.1). */
MPII_COLL_ENTRIES(Scan_c, Iscan_c, Scan_init_c, scan_inclusive,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

/* MPI_Exscan, MPI_Iexscan, MPI_Exscan_init: MPI_Exscan on an intracommunicator (contract:
 * MPI-4.0 6.11.2). */
MPII_COLL_ENTRIES(Exscan, Iexscan, Exscan_init, scan_exclusive,
                  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))

/* MPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c: large-count form of MPI_Exscan on an
 * intracommunicator (contract: MPI-4.0 6.11.2).
 */
MPII_COLL_ENTRIES(Exscan_c, Iexscan_c, Exscan_init_c, scan_exclusive,
                  (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm),
                  (sendbuf, recvbuf, count, datatype, op, comm))
