/* coll_reduce.c — blocking MPI reductions on intracommunicators: Reduce, Allreduce,
 * Reduce_scatter_block, Reduce_scatter, Scan, Exscan, over the point-to-point engine
 * (coll_impl.h), combining with mpii_op_apply (inout = in op inout).
 *
 * Operand order: MPI requires the result x0 op x1 op ... op x(p-1) (in rank order) for
 * non-commutative ops; every combine below puts the lower ranks' operand on the left.
 * Algorithms: binomial-tree reduce (rooted at the root for commutative ops; rooted at 0
 * then forwarded for non-commutative ones, so each subtree covers consecutive ranks);
 * allreduce by recursive doubling with the non-power-of-two fold (ranks < 2*rem pair up
 * first), and for large commutative ones Rabenseifner's reduce-scatter (recursive
 * halving) + allgather (recursive doubling); reduce_scatter by direct exchange of the
 * blocks for commutative ops, reduce + scatterv otherwise; scan / exscan by recursive
 * doubling. Temporaries have the datatype's own layout (mpii_coll_tmp), so derived
 * types with user ops are received and combined as they are. */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

/* Bytes from which a commutative allreduce uses reduce-scatter + allgather. */
#define MC_ALLREDUCE_LARGE (32 * 1024)

/* Checks count/type/op of a reduction: MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP (invalid
 * op, MPI_REPLACE / MPI_NO_OP, or a pair 6.9.2 forbids). */
static int mc_check_op(int64_t count, MPI_Datatype type, MPI_Op op)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (mpii_type_check_comm(type) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (!mpii_op_get(op) || op == MPI_REPLACE || op == MPI_NO_OP)
        return MPI_ERR_OP;
    return mpii_op_apply(op, NULL, NULL, 0, type);
}

static int mc_commute(MPI_Op op)
{
    return mpii_op_get(op)->commute;
}

/* One exchange with peer: send count of type at sb, receive into rb. */
static int mc_sendrecv(mpii_comm_t *c, const void *sb, int64_t scount, void *rb, int64_t rcount,
                       MPI_Datatype type, int peer, int tag)
{
    mpii_req_t rq[2];
    mpii_lib_irecv(c, rb, rcount, type, peer, tag, &rq[0]);
    mpii_lib_isend(c, sb, scount, type, peer, tag, &rq[1]);
    return mpii_lib_waitall(rq, 2);
}

static int mc_send(mpii_comm_t *c, const void *b, int64_t n, MPI_Datatype t, int peer, int tag)
{
    mpii_req_t rq;
    mpii_lib_isend(c, b, n, t, peer, tag, &rq);
    return mpii_lib_waitall(&rq, 1);
}

static int mc_recv(mpii_comm_t *c, void *b, int64_t n, MPI_Datatype t, int peer, int tag)
{
    mpii_req_t rq;
    mpii_lib_irecv(c, b, n, t, peer, tag, &rq);
    return mpii_lib_waitall(&rq, 1);
}

/* ------------------------------------------------------------------ reduce */

/* Binomial reduce of sbuf (this rank's operand; at the root it may be rbuf) into rbuf at
 * root. */
static int mc_reduce(mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type,
                     MPI_Op op, int root, int tag)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    if (p == 1 || count == 0)
        return sbuf == rbuf || r != root ? MPI_SUCCESS
                                         : mpii_coll_copy(sbuf, count, type, rbuf, count, type);
    int commute = mc_commute(op);
    int vroot = commute ? root : 0, vr = (r - vroot + p) % p;
    const void *acc = sbuf;
    void *accw = NULL, *tmp = NULL, *m1 = NULL, *m2 = NULL;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            rc = mc_send(c, acc, count, type, (vr - mask + vroot) % p, tag);
            break;
        }
        if (vr + mask >= p)
            continue;
        if (!tmp) {
            tmp = mpii_coll_tmp(type, count, &m1);
            if (r == root && commute) {
                accw = rbuf;
            } else {
                accw = mpii_coll_tmp(type, count, &m2);
            }
            if (!tmp || !accw) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            if (accw != sbuf && (rc = mpii_coll_copy(sbuf, count, type, accw, count, type)))
                break;
            acc = accw;
        }
        if ((rc = mc_recv(c, tmp, count, type, (vr + mask + vroot) % p, tag)))
            break;
        if (commute) {
            rc = mpii_op_apply(op, tmp, accw, count, type);
        } else { /* acc covers the lower ranks: acc op tmp, then swap */
            rc = mpii_op_apply(op, accw, tmp, count, type);
            void *x = accw;
            accw = tmp;
            tmp = x;
            acc = accw;
        }
        if (rc)
            break;
    }
    if (rc == MPI_SUCCESS) {
        if (r == vroot && r == root) {
            if (acc != rbuf)
                rc = mpii_coll_copy(acc, count, type, rbuf, count, type);
        } else if (r == vroot) { /* non-commutative, root != 0: forward the result */
            rc = mc_send(c, acc, count, type, root, tag);
        } else if (r == root) {
            rc = mc_recv(c, rbuf, count, type, vroot, tag);
        }
    }
    free(m1);
    free(m2);
    return rc;
}

static int mc_reduce_entry(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type,
                           MPI_Op op, int root, MPI_Comm comm)
{
    const char *fname = "MPI_Reduce";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if ((rc = mc_check_op(count, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    if (root < 0 || root >= c->size)
        return mpii_coll_fail(comm, MPI_ERR_ROOT, fname);
    int me_root = c->rank == root;
    if ((rc = mpii_coll_check_buf(sbuf, count, type, me_root)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if ((rc = mpii_coll_check_buf(rbuf, count, type, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (sbuf == rbuf && count > 0)
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
        if (sbuf == MPI_IN_PLACE)
            sbuf = rbuf;
    }
    rc = mc_reduce(c, sbuf, rbuf, count, type, op, root, mpii_coll_tag(c));
    return mpii_coll_fail(comm, rc, fname);
}

/* MPI_Reduce: MPI_Reduce on an intracommunicator (contract: MPI-4.0 6.9.1);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    return mc_reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm);
}
MPII_WEAK(MPI_Reduce, PMPI_Reduce)

/* MPI_Reduce_c: large-count form of MPI_Reduce on an intracommunicator (contract: MPI-4.0 6.9.1);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm)
{
    return mc_reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm);
}
MPII_WEAK(MPI_Reduce_c, PMPI_Reduce_c)

/* ------------------------------------------------------------------ allreduce */

/* Rabenseifner on the p2 members (newrank), commutative op, count >= p2: recursive
 * halving reduce-scatter then recursive doubling allgather, in place in rbuf. */
static int mc_allreduce_rsag(mpii_comm_t *c, void *rbuf, void *tmp, int64_t count,
                             MPI_Datatype type, MPI_Op op, int p2, int rem, int newrank, int tag)
{
    int64_t ext = mpii_coll_ext(type);
    int64_t *cnts = malloc(2 * (size_t)p2 * sizeof *cnts);
    if (!cnts)
        return MPI_ERR_NO_MEM;
    int64_t *disps = cnts + p2;
    for (int i = 0; i < p2; i++) {
        cnts[i] = count / p2 + (i < count % p2);
        disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
    }
    char *rb = rbuf, *tb = tmp;
    int rc = MPI_SUCCESS, mask = 1, send_idx = 0, recv_idx = 0, last_idx = p2;
#define REAL(nr) ((nr) < rem ? (nr)*2 + 1 : (nr) + rem)
    while (mask < p2) {
        int nd = newrank ^ mask, dst = REAL(nd);
        int64_t scnt = 0, rcnt = 0;
        if (newrank < nd) {
            send_idx = recv_idx + p2 / (mask * 2);
            for (int i = send_idx; i < last_idx; i++)
                scnt += cnts[i];
            for (int i = recv_idx; i < send_idx; i++)
                rcnt += cnts[i];
        } else {
            recv_idx = send_idx + p2 / (mask * 2);
            for (int i = send_idx; i < recv_idx; i++)
                scnt += cnts[i];
            for (int i = recv_idx; i < last_idx; i++)
                rcnt += cnts[i];
        }
        rc = mc_sendrecv(c, rb + disps[send_idx] * ext, scnt, tb + disps[recv_idx] * ext, rcnt,
                         type, dst, tag);
        if (rc)
            break;
        rc = mpii_op_apply(op, tb + disps[recv_idx] * ext, rb + disps[recv_idx] * ext, rcnt, type);
        if (rc)
            break;
        send_idx = recv_idx;
        mask <<= 1;
        if (mask < p2)
            last_idx = recv_idx + p2 / mask;
    }
    if (rc == MPI_SUCCESS) {
        mask >>= 1;
        while (mask > 0) {
            int nd = newrank ^ mask, dst = REAL(nd);
            int64_t scnt = 0, rcnt = 0;
            if (newrank < nd) {
                if (mask != p2 / 2)
                    last_idx = last_idx + p2 / (mask * 2);
                recv_idx = send_idx + p2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++)
                    scnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++)
                    rcnt += cnts[i];
            } else {
                recv_idx = send_idx - p2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++)
                    scnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++)
                    rcnt += cnts[i];
            }
            rc = mc_sendrecv(c, rb + disps[send_idx] * ext, scnt, rb + disps[recv_idx] * ext, rcnt,
                             type, dst, tag);
            if (rc)
                break;
            if (newrank > nd)
                send_idx = recv_idx;
            mask >>= 1;
        }
    }
#undef REAL
    free(cnts);
    return rc;
}

/* Allreduce in place in rbuf (which already holds this rank's operand). */
static int mc_allreduce(mpii_comm_t *c, void *rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                        int tag)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    if (p == 1 || count == 0)
        return MPI_SUCCESS;
    int commute = mc_commute(op);
    void *m1 = NULL, *m2 = NULL;
    void *tmp = mpii_coll_tmp(type, count, &m1);
    void *tmp2 = commute ? NULL : mpii_coll_tmp(type, count, &m2);
    if (!tmp || (!commute && !tmp2)) {
        free(m1);
        free(m2);
        return MPI_ERR_NO_MEM;
    }
    int p2 = 1;
    while (p2 * 2 <= p)
        p2 *= 2;
    int rem = p - p2, newrank;
    /* Fold: among ranks < 2*rem, even ones hand their operand to the next odd one. */
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = mc_send(c, rbuf, count, type, r + 1, tag);
            newrank = -1;
        } else {
            rc = mc_recv(c, tmp, count, type, r - 1, tag);
            if (!rc)
                rc = mpii_op_apply(op, tmp, rbuf, count, type);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    int64_t bytes = count * dt_size(mpii_type_get(type));
    if (rc == MPI_SUCCESS && newrank >= 0) {
        if (commute && bytes >= MC_ALLREDUCE_LARGE && count >= p2 && p2 > 1) {
            rc = mc_allreduce_rsag(c, rbuf, tmp, count, type, op, p2, rem, newrank, tag);
        } else {
            for (int mask = 1; mask < p2 && !rc; mask <<= 1) {
                int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
                rc = mc_sendrecv(c, rbuf, count, tmp, count, type, dst, tag);
                if (rc)
                    break;
                if (commute || dst < r) {
                    rc = mpii_op_apply(op, tmp, rbuf, count, type);
                } else { /* rbuf covers the lower ranks: rbuf op tmp */
                    rc = mpii_op_apply(op, rbuf, tmp, count, type);
                    if (!rc)
                        rc = mpii_coll_copy(tmp, count, type, rbuf, count, type);
                }
            }
        }
    }
    if (rc == MPI_SUCCESS && r < 2 * rem) {
        if (r % 2)
            rc = mc_send(c, rbuf, count, type, r - 1, tag);
        else
            rc = mc_recv(c, rbuf, count, type, r + 1, tag);
    }
    free(m1);
    free(m2);
    return rc;
}

static int mc_allreduce_entry(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    const char *fname = "MPI_Allreduce";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if ((rc = mc_check_op(count, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_buf(sbuf, count, type, 1)) ||
        (rc = mpii_coll_check_buf(rbuf, count, type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (sbuf == rbuf && count > 0)
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (sbuf != MPI_IN_PLACE && (rc = mpii_coll_copy(sbuf, count, type, rbuf, count, type)))
        return mpii_coll_fail(comm, rc, fname);
    return mpii_coll_fail(comm, mc_allreduce(c, rbuf, count, type, op, mpii_coll_tag(c)), fname);
}

/* MPI_Allreduce: MPI_Allreduce on an intracommunicator (contract: MPI-4.0 6.9.6);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    return mc_allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm);
}
MPII_WEAK(MPI_Allreduce, PMPI_Allreduce)

/* MPI_Allreduce_c: large-count form of MPI_Allreduce on an intracommunicator (contract:
 * MPI-4.0 6.9.6); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    return mc_allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm);
}
MPII_WEAK(MPI_Allreduce_c, PMPI_Allreduce_c)

/* ------------------------------------------------------------------ reduce_scatter */

/* in: this rank's full operand (sum of counts elements); block i (counts[i] elements)
 * of the result goes to rank i's rbuf. in may be rbuf (MPI_IN_PLACE). */
static int mc_reduce_scatter(mpii_comm_t *c, const void *in, void *rbuf, const int64_t *counts,
                             MPI_Datatype type, MPI_Op op, int tag)
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
    void *m1 = NULL, *m2 = NULL;
    if (!mc_commute(op)) { /* in rank order: reduce to 0, then scatter */
        void *full = r == 0 ? mpii_coll_tmp(type, total, &m1) : NULL;
        if (r == 0 && !full) {
            free(displs);
            return MPI_ERR_NO_MEM;
        }
        rc = mc_reduce(c, in, full, total, type, op, 0, tag);
        int rc2 = mpii_coll_scatterv(c, full, counts, displs, type, rbuf, counts[r], type, 0, tag);
        free(m1);
        free(displs);
        return rc ? rc : rc2;
    }
    /* Commutative: every rank sends block i to rank i and combines what it receives. */
    int64_t mine = counts[r];
    void *acc = mpii_coll_tmp(type, mine, &m1);
    char *tmp = mpii_coll_tmp(type, mine * (p > 1 ? p - 1 : 1), &m2);
    mpii_req_t st[16], *rq = p * 2 <= 16 ? st : malloc(2 * (size_t)p * sizeof *rq);
    if (!acc || !tmp || !rq) {
        free(m1);
        free(m2);
        free(displs);
        if (rq != st)
            free(rq);
        return MPI_ERR_NO_MEM;
    }
    const char *ib = in;
    rc = mpii_coll_copy(ib + displs[r] * ext, mine, type, acc, mine, type);
    int n = 0;
    for (int s = 1; s < p; s++) {
        int src = (r - s + p) % p, dst = (r + s) % p;
        mpii_lib_irecv(c, tmp + (s - 1) * mine * ext, mine, type, src, tag, &rq[n++]);
        mpii_lib_isend(c, ib + displs[dst] * ext, counts[dst], type, dst, tag, &rq[n++]);
    }
    int rc2 = mpii_lib_waitall(rq, n);
    if (!rc)
        rc = rc2;
    for (int s = 1; s < p && !rc; s++)
        rc = mpii_op_apply(op, tmp + (s - 1) * mine * ext, acc, mine, type);
    if (!rc)
        rc = mpii_coll_copy(acc, mine, type, rbuf, mine, type);
    if (rq != st)
        free(rq);
    free(m1);
    free(m2);
    free(displs);
    return rc;
}

static int mc_reduce_scatter_entry(const void *sbuf, void *rbuf, const int64_t *counts,
                                   MPI_Datatype type, MPI_Op op, mpii_comm_t *c, MPI_Comm comm,
                                   const char *fname)
{
    int rc;
    if (!counts)
        return mpii_coll_fail(comm, MPI_ERR_ARG, fname);
    int64_t total = 0;
    for (int i = 0; i < c->size; i++) {
        if ((rc = mc_check_op(counts[i], type, op)))
            return mpii_coll_fail(comm, rc, fname);
        total += counts[i];
    }
    if ((rc = mc_check_op(0, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_buf(sbuf, total, type, 1)) ||
        (rc = mpii_coll_check_buf(rbuf, counts[c->rank], type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (sbuf == rbuf && total > 0)
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    rc = mc_reduce_scatter(c, sbuf, rbuf, counts, type, op, mpii_coll_tag(c));
    return mpii_coll_fail(comm, rc, fname);
}

static int mc_rsb_entry(const void *sbuf, void *rbuf, int64_t rcount, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm)
{
    const char *fname = "MPI_Reduce_scatter_block";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    int64_t *counts = malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    rc = mc_reduce_scatter_entry(sbuf, rbuf, counts, type, op, c, comm, fname);
    free(counts);
    return rc;
}

/* MPI_Reduce_scatter_block: MPI_Reduce_scatter_block on an intracommunicator (contract:
 * MPI-4.0 6.10.1); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return mc_rsb_entry(sendbuf, recvbuf, recvcount, datatype, op, comm);
}
MPII_WEAK(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block)

/* MPI_Reduce_scatter_block_c: large-count form of MPI_Reduce_scatter_block on an intracommunicator
 * (contract: MPI-4.0 6.10.1); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return mc_rsb_entry(sendbuf, recvbuf, recvcount, datatype, op, comm);
}
MPII_WEAK(MPI_Reduce_scatter_block_c, PMPI_Reduce_scatter_block_c)

static int mc_rs_entry(const void *sbuf, void *rbuf, const int *icounts, const MPI_Count *ccounts,
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    const char *fname = "MPI_Reduce_scatter";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (!icounts && !ccounts)
        return mpii_coll_fail(comm, MPI_ERR_ARG, fname);
    int64_t *counts = malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
    for (int i = 0; i < c->size; i++)
        counts[i] = icounts ? icounts[i] : (int64_t)ccounts[i];
    rc = mc_reduce_scatter_entry(sbuf, rbuf, counts, type, op, c, comm, fname);
    free(counts);
    return rc;
}

/* MPI_Reduce_scatter: MPI_Reduce_scatter on an intracommunicator (contract: MPI-4.0 6.10.2);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return mc_rs_entry(sendbuf, recvbuf, recvcounts, NULL, datatype, op, comm);
}
MPII_WEAK(MPI_Reduce_scatter, PMPI_Reduce_scatter)

/* MPI_Reduce_scatter_c: large-count form of MPI_Reduce_scatter on an intracommunicator (contract:
 * MPI-4.0 6.10.2); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return mc_rs_entry(sendbuf, recvbuf, NULL, recvcounts, datatype, op, comm);
}
MPII_WEAK(MPI_Reduce_scatter_c, PMPI_Reduce_scatter_c)

/* ------------------------------------------------------------------ scan, exscan */

/* Recursive-doubling (ex)scan; sbuf MPI_IN_PLACE: the operand is in rbuf. */
static int mc_scan(mpii_comm_t *c, const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type,
                   MPI_Op op, int ex, int tag)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0)
        return MPI_SUCCESS;
    if (!ex && in != rbuf && (rc = mpii_coll_copy(in, count, type, rbuf, count, type)))
        return rc;
    if (p == 1)
        return MPI_SUCCESS;
    int commute = mc_commute(op);
    void *m1 = NULL, *m2 = NULL;
    void *partial = mpii_coll_tmp(type, count, &m1), *tmp = mpii_coll_tmp(type, count, &m2);
    if (!partial || !tmp) {
        free(m1);
        free(m2);
        return MPI_ERR_NO_MEM;
    }
    rc = mpii_coll_copy(in, count, type, partial, count, type);
    int have = 0; /* exscan: rbuf holds something */
    for (int mask = 1; mask < p && !rc; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        if ((rc = mc_sendrecv(c, partial, count, tmp, count, type, dst, tag)))
            break;
        if (r > dst) {
            rc = mpii_op_apply(op, tmp, partial, count, type);
            if (!rc) {
                if (!ex || have)
                    rc = mpii_op_apply(op, tmp, rbuf, count, type);
                else
                    rc = mpii_coll_copy(tmp, count, type, rbuf, count, type);
                have = 1;
            }
        } else if (commute) {
            rc = mpii_op_apply(op, tmp, partial, count, type);
        } else {
            rc = mpii_op_apply(op, partial, tmp, count, type);
            if (!rc)
                rc = mpii_coll_copy(tmp, count, type, partial, count, type);
        }
    }
    free(m1);
    free(m2);
    return rc;
}

static int mc_scan_entry(const void *sbuf, void *rbuf, int64_t count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, int ex)
{
    const char *fname = ex ? "MPI_Exscan" : "MPI_Scan";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if ((rc = mc_check_op(count, type, op)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_buf(sbuf, count, type, 1)) ||
        (rc = mpii_coll_check_buf(rbuf, count, type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (sbuf == rbuf && count > 0)
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    return mpii_coll_fail(comm, mc_scan(c, sbuf, rbuf, count, type, op, ex, mpii_coll_tag(c)),
                          fname);
}

/* MPI_Scan: MPI_Scan on an intracommunicator (contract: MPI-4.0 6.11.1);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return mc_scan_entry(sendbuf, recvbuf, count, datatype, op, comm, 0);
}
MPII_WEAK(MPI_Scan, PMPI_Scan)

/* MPI_Scan_c: large-count form of MPI_Scan on an intracommunicator (contract: MPI-4.0 6.11.1);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm)
{
    return mc_scan_entry(sendbuf, recvbuf, count, datatype, op, comm, 0);
}
MPII_WEAK(MPI_Scan_c, PMPI_Scan_c)

/* MPI_Exscan: MPI_Exscan on an intracommunicator (contract: MPI-4.0 6.11.2);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return mc_scan_entry(sendbuf, recvbuf, count, datatype, op, comm, 1);
}
MPII_WEAK(MPI_Exscan, PMPI_Exscan)

/* MPI_Exscan_c: large-count form of MPI_Exscan on an intracommunicator (contract: MPI-4.0 6.11.2);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    return mc_scan_entry(sendbuf, recvbuf, count, datatype, op, comm, 1);
}
MPII_WEAK(MPI_Exscan_c, PMPI_Exscan_c)
