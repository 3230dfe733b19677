/* coll_inter.c — MPI collectives on intercommunicators (contract: coll_impl.h,
 * "intercommunicators"; MPI-4.0 6.2.2 and each function's text), built as schedules like
 * the intracommunicator ones. The transfers between the groups go over the
 * intercommunicator (peer: a rank of the remote group); the phases inside one group run
 * the intracommunicator builders over c->local in the same schedule (mpii_sched_comm).
 *
 * Algorithms: barrier = local barrier, empty exchange between the two local ranks 0
 * (the leaders), local fan-out; bcast = root to the remote leader, then a local bcast;
 * gather(v) / scatter(v) linear between the root and every remote rank; allgather(v) =
 * every rank sends its block to the remote leader, which receives the whole remote group,
 * then a local bcast (of the packed blocks when they are not one contiguous run);
 * alltoall(v,w) = pairwise exchange over max(local, remote size) steps, a window of them
 * per round; reduce = local reduce to the leader, which sends to the root; allreduce and
 * reduce_scatter(_block) = local reduce to the leader, exchange of the two groups'
 * results between the leaders, then a local bcast (scatterv). Local reductions combine
 * in rank order, so non-commutative ops get the other group's operands in its rank
 * order. */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

/* ------------------------------------------------------------------ builders */

/* Contract: coll_impl.h. Nobody leaves before every process of the other group entered:
 * a leader exchanges only once its whole group is in (local barrier), and the others
 * leave only after their leader's exchange (fan-out). */
int mpii_build_inter_barrier(coll_sched_t *s, mpii_comm_t *c)
{
    mpii_comm_t *l = c->local;
    mpii_sched_comm(s, l);
    mpii_build_barrier(s, l);
    mpii_sched_comm(s, c);
    mpii_sched_fence(s);
    if (l->rank == 0) {
        mpii_sched_recv(s, NULL, 0, MPI_BYTE, 0);
        mpii_sched_send(s, NULL, 0, MPI_BYTE, 0);
        mpii_sched_fence(s);
    }
    mpii_sched_comm(s, l);
    mpii_build_bcast_tree(s, l, NULL, 0, MPI_BYTE, 0);
    mpii_sched_comm(s, c);
    return MPI_SUCCESS;
}

/* Root: sends to the remote leader; the other group: its leader receives from the root,
 * then a local bcast from the leader. */
static int build_inter_bcast(coll_sched_t *s, mpii_comm_t *c, void *buf, int64_t count,
                             MPI_Datatype type, int root)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        mpii_sched_send(s, buf, count, type, 0);
        return MPI_SUCCESS;
    }
    mpii_comm_t *l = c->local;
    if (l->rank == 0) {
        mpii_sched_recv(s, buf, count, type, root);
        mpii_sched_fence(s);
    }
    mpii_sched_comm(s, l);
    int rc = mpii_build_bcast(s, l, buf, count, type, 0);
    mpii_sched_comm(s, c);
    return rc;
}

/* Linear: the root posts a receive from every remote rank at once. */
static int build_inter_gatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                               MPI_Datatype stype, void *rbuf, const int64_t *counts,
                               const int64_t *displs, MPI_Datatype rtype, int root)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root != MPI_ROOT) {
        mpii_sched_send(s, sbuf, scount, stype, root);
        return MPI_SUCCESS;
    }
    int64_t ext = mpii_coll_ext(rtype);
    for (int i = 0; i < c->rgroup->size; i++)
        mpii_sched_recv(s, (char *)rbuf + displs[i] * ext, counts[i], rtype, i);
    return MPI_SUCCESS;
}

/* Linear: the root posts a send to every remote rank at once. */
static int build_inter_scatterv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf,
                                const int64_t *counts, const int64_t *displs, MPI_Datatype stype,
                                void *rbuf, int64_t rcount, MPI_Datatype rtype, int root)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root != MPI_ROOT) {
        mpii_sched_recv(s, rbuf, rcount, rtype, root);
        return MPI_SUCCESS;
    }
    int64_t ext = mpii_coll_ext(stype);
    for (int i = 0; i < c->rgroup->size; i++)
        mpii_sched_send(s, (const char *)sbuf + displs[i] * ext, counts[i], stype, i);
    return MPI_SUCCESS;
}

/* Local bcast from the leader of the n blocks at rbuf (block i: counts[i] x type at
 * displs[i] elements): directly when they are one contiguous run in order, otherwise
 * packed into bytes by the leader and unpacked by the others. */
static int build_inter_bcast_blocks(coll_sched_t *s, mpii_comm_t *c, void *rbuf,
                                    const int64_t *counts, const int64_t *displs, MPI_Datatype type,
                                    int n)
{
    mpii_comm_t *l = c->local;
    if (l->size == 1)
        return MPI_SUCCESS;
    int64_t total = 0;
    int run = 1;
    for (int i = 0; i < n; i++) {
        run &= displs[i] == total;
        total += counts[i];
    }
    int rc;
    mpii_sched_comm(s, l);
    if (run) {
        rc = mpii_build_bcast(s, l, rbuf, total, type, 0);
    } else {
        int64_t ext = mpii_coll_ext(type), size = dt_size(mpii_type_get(type));
        char *rb = rbuf, *tmp = mpii_sched_bytes(s, total * size); /* NULL: s is refused */
        if (l->rank == 0 && tmp) /* pack, then send (one round: copies run first) */
            for (int64_t i = 0, off = 0; i < n; off += counts[i] * size, i++)
                mpii_sched_copy(s, rb + displs[i] * ext, counts[i], type, tmp + off,
                                counts[i] * size, MPI_BYTE);
        rc = mpii_build_bcast(s, l, tmp, total * size, MPI_BYTE, 0);
        if (l->rank != 0 && tmp) { /* received: unpack */
            mpii_sched_fence(s);
            for (int64_t i = 0, off = 0; i < n; off += counts[i] * size, i++)
                mpii_sched_copy(s, tmp + off, counts[i] * size, MPI_BYTE, rb + displs[i] * ext,
                                counts[i], type);
        }
    }
    mpii_sched_comm(s, c);
    return rc;
}

/* Contract: coll_impl.h. One round: every rank sends its block to the remote leader, and
 * the leader receives the remote group's blocks; then the local bcast. */
int mpii_build_inter_allgatherv(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, int64_t scount,
                                MPI_Datatype stype, void *rbuf, const int64_t *counts,
                                const int64_t *displs, MPI_Datatype rtype)
{
    int rn = c->rgroup->size;
    if (c->local->rank == 0) {
        int64_t ext = mpii_coll_ext(rtype);
        for (int i = 0; i < rn; i++)
            mpii_sched_recv(s, (char *)rbuf + displs[i] * ext, counts[i], rtype, i);
    }
    mpii_sched_send(s, sbuf, scount, stype, 0);
    mpii_sched_fence(s);
    return build_inter_bcast_blocks(s, c, rbuf, counts, displs, rtype, rn);
}

/* Contract: coll_impl.h. Step k (0 <= k < max(local, remote size)) sends to remote rank
 * r + k and receives from remote rank r - k (mod that maximum; ranks beyond the remote
 * size skipped): the remote rank r + k receives from this rank at its own step k, so the
 * window of steps a round holds pairs with the same round of every peer. */
int mpii_build_inter_alltoallw(coll_sched_t *s, mpii_comm_t *c, const void *sbuf,
                               const int64_t *scounts, const int64_t *sdispls,
                               const MPI_Datatype *stypes, void *rbuf, const int64_t *rcounts,
                               const int64_t *rdispls, const MPI_Datatype *rtypes)
{
    int rn = c->rgroup->size, r = c->rank, mx = c->size > rn ? c->size : rn;
    int win = mpii_coll_tune.a2a_window;
    const char *sb = sbuf;
    char *rb = rbuf;
    for (int s0 = 0; s0 < mx; s0 += win) {
        for (int k = s0; k < mx && k < s0 + win; k++) {
            int src = (r - k + mx) % mx, dst = (r + k) % mx;
            if (src < rn)
                mpii_sched_recv(s, rb + rdispls[src], rcounts[src], rtypes[src], src);
            if (dst < rn)
                mpii_sched_send(s, sb + sdispls[dst], scounts[dst], stypes[dst], dst);
        }
        mpii_sched_fence(s);
    }
    return MPI_SUCCESS;
}

/* Local reduce of sbuf (count x type) to the leader; returns the leader's temporary with
 * the result (NULL at the others), the schedule fenced after the reduce. */
static void *build_inter_local_reduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf,
                                      int64_t count, MPI_Datatype type, MPI_Op op, int *rc)
{
    mpii_comm_t *l = c->local;
    void *acc = l->rank == 0 ? mpii_sched_tmp(s, type, count) : NULL;
    mpii_sched_comm(s, l);
    *rc = mpii_build_reduce(s, l, sbuf, acc, count, type, op, 0);
    mpii_sched_comm(s, c);
    mpii_sched_fence(s);
    return acc;
}

/* The other group: local reduce to the leader, which sends the result to the root. */
static int build_inter_reduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                              int64_t count, MPI_Datatype type, MPI_Op op, int root)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        mpii_sched_recv(s, rbuf, count, type, 0);
        return MPI_SUCCESS;
    }
    int rc;
    void *acc = build_inter_local_reduce(s, c, sbuf, count, type, op, &rc);
    if (c->local->rank == 0)
        mpii_sched_send(s, acc, count, type, root);
    return rc;
}

/* Contract: coll_impl.h. */
int mpii_build_inter_allreduce(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                               int64_t count, MPI_Datatype type, MPI_Op op)
{
    int rc;
    void *acc = build_inter_local_reduce(s, c, sbuf, count, type, op, &rc);
    mpii_comm_t *l = c->local;
    if (l->rank == 0) {
        mpii_sched_recv(s, rbuf, count, type, 0);
        mpii_sched_send(s, acc, count, type, 0);
        mpii_sched_fence(s);
    }
    mpii_sched_comm(s, l);
    int rc2 = mpii_build_bcast(s, l, rbuf, count, type, 0);
    mpii_sched_comm(s, c);
    return rc ? rc : rc2;
}

/* Contract: coll_impl.h. */
int mpii_build_inter_reduce_scatter(coll_sched_t *s, mpii_comm_t *c, const void *sbuf, void *rbuf,
                                    const int64_t *counts, MPI_Datatype type, MPI_Op op)
{
    mpii_comm_t *l = c->local;
    int n = l->size, rc;
    int64_t *displs = malloc((size_t)n * sizeof *displs), total = 0;
    if (!displs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        displs[i] = total;
        total += counts[i];
    }
    void *acc = build_inter_local_reduce(s, c, sbuf, total, type, op, &rc);
    void *theirs = NULL;
    if (l->rank == 0) {
        theirs = mpii_sched_tmp(s, type, total);
        mpii_sched_recv(s, theirs, total, type, 0);
        mpii_sched_send(s, acc, total, type, 0);
        mpii_sched_fence(s);
    }
    mpii_sched_comm(s, l);
    int rc2 =
        mpii_build_scatterv(s, l, theirs, counts, displs, type, rbuf, counts[l->rank], type, 0);
    mpii_sched_comm(s, c);
    free(displs);
    return rc ? rc : rc2;
}

/* ------------------------------------------------------------------ rooted entries */

/* MPI_ERR_ROOT unless root is MPI_ROOT, MPI_PROC_NULL or a rank of the remote group. */
static int inter_check_root(const mpii_comm_t *c, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rgroup->size))
        return MPI_SUCCESS;
    return MPI_ERR_ROOT;
}

/* Contract: coll_impl.h. */
int mpii_inter_bcast(mpii_comm_t *c, MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type,
                     int root, const mpii_cmode_t *m)
{
    int rc = inter_check_root(c, root);
    if (!rc && root != MPI_PROC_NULL)
        rc = mpii_coll_check_buf(buf, count, type, 0);
    if (rc)
        return mpii_coll_fail(comm, rc, m->fname);
    mpii_ckey_t kb = {
        .kind = MPII_CK_BCAST, .root = root, .stype = type, .scount = count, .sbuf = buf};
    MPII_BUILD_RUN(c, comm, m, &kb, build_inter_bcast(s, c, buf, count, type, root));
}

/* Contract: coll_impl.h. */
int mpii_inter_gatherv(mpii_comm_t *c, MPI_Comm comm, const void *sbuf, int64_t scount,
                       MPI_Datatype stype, void *rbuf, const int64_t *counts, const int64_t *displs,
                       MPI_Datatype rtype, int root, const mpii_cmode_t *m, const mpii_ckey_t *kb)
{
    int rc = inter_check_root(c, root);
    if (!rc && root == MPI_ROOT) {
        rc = mpii_coll_check_counts(counts, displs, c->rgroup->size);
        if (!rc)
            rc = mpii_coll_check_buf(rbuf, 0, rtype, 0);
    } else if (!rc && root != MPI_PROC_NULL) {
        rc = mpii_coll_check_buf(sbuf, scount, stype, 0);
    }
    if (rc)
        return mpii_coll_fail(comm, rc, m->fname);
    MPII_BUILD_RUN(
        c, comm, m, kb,
        build_inter_gatherv(s, c, sbuf, scount, stype, rbuf, counts, displs, rtype, root));
}

/* Contract: coll_impl.h. */
int mpii_inter_scatterv(mpii_comm_t *c, MPI_Comm comm, const void *sbuf, const int64_t *counts,
                        const int64_t *displs, MPI_Datatype stype, void *rbuf, int64_t rcount,
                        MPI_Datatype rtype, int root, const mpii_cmode_t *m, const mpii_ckey_t *kb)
{
    int rc = inter_check_root(c, root);
    if (!rc && root == MPI_ROOT) {
        rc = mpii_coll_check_counts(counts, displs, c->rgroup->size);
        if (!rc)
            rc = mpii_coll_check_buf(sbuf, 0, stype, 0);
    } else if (!rc && root != MPI_PROC_NULL) {
        rc = mpii_coll_check_buf(rbuf, rcount, rtype, 0);
    }
    if (rc)
        return mpii_coll_fail(comm, rc, m->fname);
    MPII_BUILD_RUN(
        c, comm, m, kb,
        build_inter_scatterv(s, c, sbuf, counts, displs, stype, rbuf, rcount, rtype, root));
}

/* Contract: coll_impl.h. */
int mpii_inter_reduce(mpii_comm_t *c, MPI_Comm comm, const void *sbuf, void *rbuf, int64_t count,
                      MPI_Datatype type, MPI_Op op, int root, const mpii_cmode_t *m)
{
    int rc = inter_check_root(c, root);
    if (!rc && root == MPI_ROOT)
        rc = mpii_coll_check_buf(rbuf, count, type, 0);
    else if (!rc && root != MPI_PROC_NULL)
        rc = mpii_coll_check_buf(sbuf, count, type, 0);
    if (rc)
        return mpii_coll_fail(comm, rc, m->fname);
    mpii_ckey_t kb = {.kind = MPII_CK_REDUCE,
                      .root = root,
                      .stype = type,
                      .op = op,
                      .scount = count,
                      .sbuf = sbuf,
                      .rbuf = rbuf};
    MPII_BUILD_RUN(c, comm, m, &kb, build_inter_reduce(s, c, sbuf, rbuf, count, type, op, root));
}
