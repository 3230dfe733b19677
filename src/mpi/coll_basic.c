/* coll_basic.c — blocking MPI collectives on intracommunicators, data movement part:
 * Barrier, Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w), over the
 * point-to-point engine (coll_impl.h). Reductions are in coll_reduce.c.
 *
 * Algorithms: dissemination barrier; binomial-tree bcast, and for large messages on 3 or
 * more ranks a binomial scatter of the packed bytes followed by a ring allgather; linear
 * gather(v) / scatter(v) (every message posted at once at the root); ring allgather(v);
 * pairwise-exchange alltoall(v,w) posting a window of exchanges at once, and for
 * MPI_IN_PLACE a globally ordered sequence of pair exchanges through a temporary.
 * Intercommunicators are refused with MPI_ERR_COMM (not implemented yet). */
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

/* Bytes above which Bcast switches to scatter + ring allgather (3 ranks or more). */
#define MC_BCAST_LARGE (64 * 1024)
/* Exchanges in flight at once in the pairwise alltoall. */
#define MC_A2A_WINDOW 32

/* ------------------------------------------------------------------ helpers */

/* Contract: coll_impl.h. */
int mpii_coll_enter(MPI_Comm comm, const char *fname, mpii_comm_t **cp)
{
    MPII_CHECK_INIT(fname);
    mpii_comm_t *c = mpii_comm_get(comm);
    if (BASE_UNLIKELY(!c))
        return MPII_ERR(MPI_ERR_COMM, fname);
    if (BASE_UNLIKELY(c->rgroup))
        return MPII_ERRF_COMM(comm, MPI_ERR_COMM, fname, "%s",
                              "intercommunicator collectives are not implemented yet");
    *cp = c;
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_coll_check_buf(const void *buf, int64_t count, MPI_Datatype type, int in_place_ok)
{
    if (BASE_UNLIKELY(count < 0))
        return MPI_ERR_COUNT;
    if (BASE_UNLIKELY(mpii_type_check_comm(type) != MPI_SUCCESS))
        return MPI_ERR_TYPE;
    if (buf == MPI_IN_PLACE)
        return in_place_ok ? MPI_SUCCESS : MPI_ERR_BUFFER;
    dt_t *dt = mpii_type_get(type);
    if (BASE_UNLIKELY(!buf && count > 0 && FMPL_MPI_DT_IS_PREDEF(type) && dt_size(dt) > 0))
        return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_coll_copy(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf, int64_t rcount,
                   MPI_Datatype rtype)
{
    dt_t *st = mpii_type_get(stype), *rt = mpii_type_get(rtype);
    if (!st || !rt)
        return MPI_ERR_TYPE;
    int64_t sn = scount * dt_size(st), rn = rcount * dt_size(rt);
    int64_t n = sn < rn ? sn : rn;
    if (n > 0 && dt_copy(st, scount, sbuf, rt, rcount, rbuf, 0, n) != 0)
        return MPI_ERR_ARG;
    return sn > rn ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
void *mpii_coll_tmp(MPI_Datatype type, int64_t count, void **mem)
{
    dt_t *t = mpii_type_get(type);
    int64_t lo = 0, hi = 1;
    if (t && count > 0) {
        int64_t ext = dt_extent(t), last = (count - 1) * ext;
        /* the whole extent too: kernels may touch a pair type's trailing padding */
        int64_t tlo = dt_true_lb(t), thi = tlo + dt_true_extent(t);
        lo = (dt_lb(t) < tlo ? dt_lb(t) : tlo) + (last < 0 ? last : 0);
        hi = (dt_ub(t) > thi ? dt_ub(t) : thi) + (last > 0 ? last : 0);
        if (hi <= lo)
            hi = lo + 1;
    }
    *mem = malloc((size_t)(hi - lo));
    if (!*mem)
        return NULL;
    return (char *)*mem - lo;
}

/* Request arrays: the small stack array when n fits, else the heap. */
#define MC_NREQ_STACK 16
static mpii_req_t *mc_reqs(int n, mpii_req_t *stack)
{
    if (n <= MC_NREQ_STACK)
        return stack;
    return malloc((size_t)n * sizeof(mpii_req_t));
}
static void mc_reqs_free(mpii_req_t *r, mpii_req_t *stack)
{
    if (r != stack)
        free(r);
}

/* An int array of n as int64 (for the int-count entry points); NULL in, NULL out. On no
 * memory *err is set. */
static int64_t *mc_i64(const int *a, int n, int *err)
{
    if (!a)
        return NULL;
    int64_t *o = malloc((size_t)(n > 0 ? n : 1) * sizeof *o);
    if (!o) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        o[i] = a[i];
    return o;
}
static int64_t *mc_c64(const MPI_Count *a, int n, int *err)
{
    if (!a)
        return NULL;
    int64_t *o = malloc((size_t)(n > 0 ? n : 1) * sizeof *o);
    if (!o) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        o[i] = (int64_t)a[i];
    return o;
}
static int64_t *mc_a64(const MPI_Aint *a, int n, int *err)
{
    return mc_c64((const MPI_Count *)(const void *)a, n, err);
}

/* ------------------------------------------------------------------ barrier */

static int mc_barrier(mpii_comm_t *c, int tag)
{
    int p = c->size, r = c->rank;
    for (int d = 1; d < p; d *= 2) {
        mpii_req_t rq[2];
        mpii_lib_irecv(c, NULL, 0, MPI_BYTE, (r - d + p) % p, tag, &rq[0]);
        mpii_lib_isend(c, NULL, 0, MPI_BYTE, (r + d) % p, tag, &rq[1]);
        int rc = mpii_lib_waitall(rq, 2);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

/* MPI_Barrier: MPI_Barrier on an intracommunicator (contract: MPI-4.0 6.3);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Barrier(MPI_Comm comm)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, "MPI_Barrier", &c);
    if (rc)
        return rc;
    return mpii_coll_fail(comm, mc_barrier(c, mpii_coll_tag(c)), "MPI_Barrier");
}
MPII_WEAK(MPI_Barrier, PMPI_Barrier)

/* ------------------------------------------------------------------ bcast */

/* Binomial tree rooted at root: receive from the parent, then send to the children. */
static int mc_bcast_binomial(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, int root,
                             int tag)
{
    int p = c->size, vr = (c->rank - root + p) % p;
    int mask = 1, rc;
    while (mask < p) {
        if (vr & mask) {
            mpii_req_t rq;
            mpii_lib_irecv(c, buf, count, type, (vr - mask + root) % p, tag, &rq);
            if ((rc = mpii_lib_waitall(&rq, 1)))
                return rc;
            break;
        }
        mask <<= 1;
    }
    mpii_req_t st[MC_NREQ_STACK];
    int n = 0;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            mpii_lib_isend(c, buf, count, type, (vr + mask + root) % p, tag, &st[n++]);
    return mpii_lib_waitall(st, n);
}

/* Scatter of n bytes (binomial, chunk per rank) then ring allgather of the chunks. */
static int mc_bcast_scag(mpii_comm_t *c, char *b, int64_t n, int root, int tag)
{
    int p = c->size, vr = (c->rank - root + p) % p, rc;
    int64_t chunk = (n + p - 1) / p;
#define LO(i) ((int64_t)(i)*chunk < n ? (int64_t)(i)*chunk : n)
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int64_t lo = LO(vr), hi = LO((int64_t)vr + mask);
            mpii_req_t rq;
            mpii_lib_irecv(c, b + lo, hi - lo, MPI_BYTE, (vr - mask + root) % p, tag, &rq);
            if ((rc = mpii_lib_waitall(&rq, 1)))
                return rc;
            break;
        }
        mask <<= 1;
    }
    mpii_req_t st[MC_NREQ_STACK];
    int k = 0;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            int64_t lo = LO(vr + mask), hi = LO((int64_t)vr + 2 * mask);
            mpii_lib_isend(c, b + lo, hi - lo, MPI_BYTE, (vr + mask + root) % p, tag, &st[k++]);
        }
    if ((rc = mpii_lib_waitall(st, k)))
        return rc;
    int right = (c->rank + 1) % p, left = (c->rank - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sb = (vr - s + p) % p, rb = (vr - s - 1 + 2 * p) % p;
        mpii_req_t rq[2];
        mpii_lib_irecv(c, b + LO(rb), LO(rb + 1) - LO(rb), MPI_BYTE, left, tag, &rq[0]);
        mpii_lib_isend(c, b + LO(sb), LO(sb + 1) - LO(sb), MPI_BYTE, right, tag, &rq[1]);
        if ((rc = mpii_lib_waitall(rq, 2)))
            return rc;
    }
#undef LO
    return MPI_SUCCESS;
}

/* Contract: coll_impl.h. */
int mpii_coll_bcast(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, int root, int tag)
{
    if (c->size == 1 || count == 0)
        return MPI_SUCCESS;
    dt_t *t = mpii_type_get(type);
    int64_t n = count * dt_size(t);
    if (n < MC_BCAST_LARGE || c->size < 3)
        return mc_bcast_binomial(c, buf, count, type, root, tag);
    if (dt_is_contig(t, count))
        return mc_bcast_scag(c, (char *)buf + dt_true_lb(t), n, root, tag);
    char *tmp = malloc((size_t)n);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (c->rank == root)
        dt_pack(t, count, buf, 0, n, tmp);
    int rc = mc_bcast_scag(c, tmp, n, root, tag);
    if (rc == MPI_SUCCESS && c->rank != root)
        dt_unpack(t, count, buf, 0, n, tmp);
    free(tmp);
    return rc;
}

static int mc_bcast_entry(void *buf, int64_t count, MPI_Datatype type, int root, MPI_Comm comm)
{
    const char *fname = "MPI_Bcast";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if ((rc = mpii_coll_check_buf(buf, count, type, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (root < 0 || root >= c->size)
        return mpii_coll_fail(comm, MPI_ERR_ROOT, fname);
    return mpii_coll_fail(comm, mpii_coll_bcast(c, buf, count, type, root, mpii_coll_tag(c)),
                          fname);
}

/* MPI_Bcast: MPI_Bcast on an intracommunicator (contract: MPI-4.0 6.4);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return mc_bcast_entry(buffer, count, datatype, root, comm);
}
MPII_WEAK(MPI_Bcast, PMPI_Bcast)

/* MPI_Bcast_c: large-count form of MPI_Bcast on an intracommunicator (contract: MPI-4.0 6.4);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return mc_bcast_entry(buffer, count, datatype, root, comm);
}
MPII_WEAK(MPI_Bcast_c, PMPI_Bcast_c)

/* ------------------------------------------------------------------ gather(v) */

/* Linear gatherv: the root posts every receive at once. counts/displs (root only) in
 * elements of rtype. sbuf MPI_IN_PLACE at the root: its block is already in place. */
static int mc_gatherv(mpii_comm_t *c, const void *sbuf, int64_t scount, MPI_Datatype stype,
                      void *rbuf, const int64_t *counts, const int64_t *displs, MPI_Datatype rtype,
                      int root, int tag)
{
    int p = c->size, r = c->rank;
    if (r != root) {
        mpii_req_t rq;
        mpii_lib_isend(c, sbuf, scount, stype, root, tag, &rq);
        return mpii_lib_waitall(&rq, 1);
    }
    int64_t ext = mpii_coll_ext(rtype);
    mpii_req_t st[MC_NREQ_STACK], *rq = mc_reqs(p, st);
    if (!rq)
        return MPI_ERR_NO_MEM;
    int n = 0;
    for (int i = 0; i < p; i++)
        if (i != r)
            mpii_lib_irecv(c, (char *)rbuf + displs[i] * ext, counts[i], rtype, i, tag, &rq[n++]);
    int rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = mpii_coll_copy(sbuf, scount, stype, (char *)rbuf + displs[r] * ext, counts[r], rtype);
    int rc2 = mpii_lib_waitall(rq, n);
    mc_reqs_free(rq, st);
    return rc ? rc : rc2;
}

static int mc_gather_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                           int64_t rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    const char *fname = "MPI_Gather";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (root < 0 || root >= c->size)
        return mpii_coll_fail(comm, MPI_ERR_ROOT, fname);
    int me_root = c->rank == root;
    if (!(me_root && sbuf == MPI_IN_PLACE) && (rc = mpii_coll_check_buf(sbuf, scount, stype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if ((rc = mpii_coll_check_buf(rbuf, rcount, rtype, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (sbuf == rbuf && scount > 0 && rcount > 0)
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    }
    int p = c->size;
    int64_t *cd = NULL;
    if (me_root) {
        cd = malloc(2 * (size_t)p * sizeof *cd);
        if (!cd)
            return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
        for (int i = 0; i < p; i++) {
            cd[i] = rcount;
            cd[p + i] = (int64_t)i * rcount;
        }
    }
    rc = mc_gatherv(c, sbuf, scount, stype, rbuf, cd, cd ? cd + p : NULL, rtype, root,
                    mpii_coll_tag(c));
    free(cd);
    return mpii_coll_fail(comm, rc, fname);
}

/* MPI_Gather: MPI_Gather on an intracommunicator (contract: MPI-4.0 6.5);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return mc_gather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
MPII_WEAK(MPI_Gather, PMPI_Gather)

/* MPI_Gather_c: large-count form of MPI_Gather on an intracommunicator (contract: MPI-4.0 6.5);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return mc_gather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
MPII_WEAK(MPI_Gather_c, PMPI_Gather_c)

/* Checks of a v-collective's per-rank counts (displs may be anything). */
static int mc_check_counts(const int64_t *counts, const int64_t *displs, int p)
{
    if (!counts || !displs)
        return MPI_ERR_ARG;
    for (int i = 0; i < p; i++)
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

static int mc_gatherv_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                            const int64_t *counts, const int64_t *displs, MPI_Datatype rtype,
                            int root, MPI_Comm comm, int conv_err)
{
    const char *fname = "MPI_Gatherv";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    if (root < 0 || root >= c->size)
        return mpii_coll_fail(comm, MPI_ERR_ROOT, fname);
    int me_root = c->rank == root;
    if (!(me_root && sbuf == MPI_IN_PLACE) && (rc = mpii_coll_check_buf(sbuf, scount, stype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if ((rc = mc_check_counts(counts, displs, c->size)))
            return mpii_coll_fail(comm, rc, fname);
        if ((rc = mpii_coll_check_buf(rbuf, 0, rtype, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (sbuf == rbuf && scount > 0 && counts[c->rank] > 0)
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    }
    rc = mc_gatherv(c, sbuf, scount, stype, rbuf, counts, displs, rtype, root, mpii_coll_tag(c));
    return mpii_coll_fail(comm, rc, fname);
}

/* MPI_Gatherv: MPI_Gatherv on an intracommunicator (contract: MPI-4.0 6.5);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c && c->rank == root ? c->size : 0, err = 0;
    int64_t *cn = mc_i64(recvcounts, p, &err), *dp = mc_i64(displs, p, &err);
    int rc =
        mc_gatherv_entry(sendbuf, sendcount, sendtype, recvbuf, cn, dp, recvtype, root, comm, err);
    free(cn);
    free(dp);
    return rc;
}
MPII_WEAK(MPI_Gatherv, PMPI_Gatherv)

/* MPI_Gatherv_c: large-count form of MPI_Gatherv on an intracommunicator (contract: MPI-4.0 6.5);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c && c->rank == root ? c->size : 0, err = 0;
    int64_t *cn = mc_c64(recvcounts, p, &err), *dp = mc_a64(displs, p, &err);
    int rc =
        mc_gatherv_entry(sendbuf, sendcount, sendtype, recvbuf, cn, dp, recvtype, root, comm, err);
    free(cn);
    free(dp);
    return rc;
}
MPII_WEAK(MPI_Gatherv_c, PMPI_Gatherv_c)

/* ------------------------------------------------------------------ scatter(v) */

/* Contract: coll_impl.h. */
int mpii_coll_scatterv(mpii_comm_t *c, const void *sbuf, const int64_t *counts,
                       const int64_t *displs, MPI_Datatype stype, void *rbuf, int64_t rcount,
                       MPI_Datatype rtype, int root, int tag)
{
    int p = c->size, r = c->rank;
    if (r != root) {
        mpii_req_t rq;
        mpii_lib_irecv(c, rbuf, rcount, rtype, root, tag, &rq);
        return mpii_lib_waitall(&rq, 1);
    }
    int64_t ext = mpii_coll_ext(stype);
    mpii_req_t st[MC_NREQ_STACK], *rq = mc_reqs(p, st);
    if (!rq)
        return MPI_ERR_NO_MEM;
    int n = 0;
    for (int k = 1; k < p; k++) { /* start with the next rank: spreads the load of a chain */
        int i = (r + k) % p;
        mpii_lib_isend(c, (const char *)sbuf + displs[i] * ext, counts[i], stype, i, tag, &rq[n++]);
    }
    int rc = MPI_SUCCESS;
    if (rbuf != MPI_IN_PLACE)
        rc = mpii_coll_copy((const char *)sbuf + displs[r] * ext, counts[r], stype, rbuf, rcount,
                            rtype);
    int rc2 = mpii_lib_waitall(rq, n);
    mc_reqs_free(rq, st);
    return rc ? rc : rc2;
}

static int mc_scatter_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                            int64_t rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    const char *fname = "MPI_Scatter";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (root < 0 || root >= c->size)
        return mpii_coll_fail(comm, MPI_ERR_ROOT, fname);
    int me_root = c->rank == root;
    if (!(me_root && rbuf == MPI_IN_PLACE) && (rc = mpii_coll_check_buf(rbuf, rcount, rtype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if ((rc = mpii_coll_check_buf(sbuf, scount, stype, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (sbuf == rbuf && scount > 0 && rcount > 0)
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    }
    int p = c->size;
    int64_t *cd = NULL;
    if (me_root) {
        cd = malloc(2 * (size_t)p * sizeof *cd);
        if (!cd)
            return mpii_coll_fail(comm, MPI_ERR_NO_MEM, fname);
        for (int i = 0; i < p; i++) {
            cd[i] = scount;
            cd[p + i] = (int64_t)i * scount;
        }
    }
    rc = mpii_coll_scatterv(c, sbuf, cd, cd ? cd + p : NULL, stype, rbuf, rcount, rtype, root,
                            mpii_coll_tag(c));
    free(cd);
    return mpii_coll_fail(comm, rc, fname);
}

/* MPI_Scatter: MPI_Scatter on an intracommunicator (contract: MPI-4.0 6.6);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return mc_scatter_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
MPII_WEAK(MPI_Scatter, PMPI_Scatter)

/* MPI_Scatter_c: large-count form of MPI_Scatter on an intracommunicator (contract: MPI-4.0 6.6);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return mc_scatter_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
MPII_WEAK(MPI_Scatter_c, PMPI_Scatter_c)

static int mc_scatterv_entry(const void *sbuf, const int64_t *counts, const int64_t *displs,
                             MPI_Datatype stype, void *rbuf, int64_t rcount, MPI_Datatype rtype,
                             int root, MPI_Comm comm, int conv_err)
{
    const char *fname = "MPI_Scatterv";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    if (root < 0 || root >= c->size)
        return mpii_coll_fail(comm, MPI_ERR_ROOT, fname);
    int me_root = c->rank == root;
    if (!(me_root && rbuf == MPI_IN_PLACE) && (rc = mpii_coll_check_buf(rbuf, rcount, rtype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (me_root) {
        if ((rc = mc_check_counts(counts, displs, c->size)))
            return mpii_coll_fail(comm, rc, fname);
        if ((rc = mpii_coll_check_buf(sbuf, 0, stype, 0)))
            return mpii_coll_fail(comm, rc, fname);
        if (sbuf == rbuf && rcount > 0 && counts[c->rank] > 0)
            return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    }
    rc = mpii_coll_scatterv(c, sbuf, counts, displs, stype, rbuf, rcount, rtype, root,
                            mpii_coll_tag(c));
    return mpii_coll_fail(comm, rc, fname);
}

/* MPI_Scatterv: MPI_Scatterv on an intracommunicator (contract: MPI-4.0 6.6);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c && c->rank == root ? c->size : 0, err = 0;
    int64_t *cn = mc_i64(sendcounts, p, &err), *dp = mc_i64(displs, p, &err);
    int rc =
        mc_scatterv_entry(sendbuf, cn, dp, sendtype, recvbuf, recvcount, recvtype, root, comm, err);
    free(cn);
    free(dp);
    return rc;
}
MPII_WEAK(MPI_Scatterv, PMPI_Scatterv)

/* MPI_Scatterv_c: large-count form of MPI_Scatterv on an intracommunicator (contract: MPI-4.0 6.6);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c && c->rank == root ? c->size : 0, err = 0;
    int64_t *cn = mc_c64(sendcounts, p, &err), *dp = mc_a64(displs, p, &err);
    int rc =
        mc_scatterv_entry(sendbuf, cn, dp, sendtype, recvbuf, recvcount, recvtype, root, comm, err);
    free(cn);
    free(dp);
    return rc;
}
MPII_WEAK(MPI_Scatterv_c, PMPI_Scatterv_c)

/* ------------------------------------------------------------------ allgather(v) */

/* Ring allgatherv: own block copied in (unless MPI_IN_PLACE), then p - 1 steps passing
 * blocks to the right. counts/displs in elements of rtype. */
static int mc_allgatherv(mpii_comm_t *c, const void *sbuf, int64_t scount, MPI_Datatype stype,
                         void *rbuf, const int64_t *counts, const int64_t *displs,
                         MPI_Datatype rtype, int tag)
{
    int p = c->size, r = c->rank, rc;
    int64_t ext = mpii_coll_ext(rtype);
    char *b = rbuf;
    if (sbuf != MPI_IN_PLACE &&
        (rc = mpii_coll_copy(sbuf, scount, stype, b + displs[r] * ext, counts[r], rtype)))
        return rc;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + 2 * p) % p;
        mpii_req_t rq[2];
        mpii_lib_irecv(c, b + displs[rb] * ext, counts[rb], rtype, left, tag, &rq[0]);
        mpii_lib_isend(c, b + displs[sb] * ext, counts[sb], rtype, right, tag, &rq[1]);
        if ((rc = mpii_lib_waitall(rq, 2)))
            return rc;
    }
    return MPI_SUCCESS;
}

static int mc_allgatherv_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                               const int64_t *counts, const int64_t *displs, MPI_Datatype rtype,
                               MPI_Comm comm, int conv_err, const char *fname)
{
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    if (sbuf != MPI_IN_PLACE && (rc = mpii_coll_check_buf(sbuf, scount, stype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mc_check_counts(counts, displs, c->size)))
        return mpii_coll_fail(comm, rc, fname);
    if ((rc = mpii_coll_check_buf(rbuf, 0, rtype, 0)))
        return mpii_coll_fail(comm, rc, fname);
    if (sbuf == rbuf && scount > 0 && counts[c->rank] > 0)
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    rc = mc_allgatherv(c, sbuf, scount, stype, rbuf, counts, displs, rtype, mpii_coll_tag(c));
    return mpii_coll_fail(comm, rc, fname);
}

static int mc_allgather_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                              int64_t rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    const char *fname = "MPI_Allgather";
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0;
    int64_t *cd = malloc(2 * (size_t)(p > 0 ? p : 1) * sizeof *cd);
    if (cd)
        for (int i = 0; i < p; i++) {
            cd[i] = rcount;
            cd[p + i] = (int64_t)i * rcount;
        }
    int rc = mc_allgatherv_entry(sbuf, scount, stype, rbuf, cd, cd ? cd + p : NULL, rtype, comm,
                                 cd ? 0 : MPI_ERR_NO_MEM, fname);
    free(cd);
    return rc;
}

/* MPI_Allgather: MPI_Allgather on an intracommunicator (contract: MPI-4.0 6.7);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return mc_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
MPII_WEAK(MPI_Allgather, PMPI_Allgather)

/* MPI_Allgather_c: large-count form of MPI_Allgather on an intracommunicator (contract:
 * MPI-4.0 6.7); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return mc_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
MPII_WEAK(MPI_Allgather_c, PMPI_Allgather_c)

/* MPI_Allgatherv: MPI_Allgatherv on an intracommunicator (contract: MPI-4.0 6.7);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0, err = 0;
    int64_t *cn = mc_i64(recvcounts, p, &err), *dp = mc_i64(displs, p, &err);
    int rc = mc_allgatherv_entry(sendbuf, sendcount, sendtype, recvbuf, cn, dp, recvtype, comm, err,
                                 "MPI_Allgatherv");
    free(cn);
    free(dp);
    return rc;
}
MPII_WEAK(MPI_Allgatherv, PMPI_Allgatherv)

/* MPI_Allgatherv_c: large-count form of MPI_Allgatherv on an intracommunicator (contract:
 * MPI-4.0 6.7); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0, err = 0;
    int64_t *cn = mc_c64(recvcounts, p, &err), *dp = mc_a64(displs, p, &err);
    int rc = mc_allgatherv_entry(sendbuf, sendcount, sendtype, recvbuf, cn, dp, recvtype, comm, err,
                                 "MPI_Allgatherv");
    free(cn);
    free(dp);
    return rc;
}
MPII_WEAK(MPI_Allgatherv_c, PMPI_Allgatherv_c)

/* ------------------------------------------------------------------ alltoall(v,w) */

/* The general form: per-peer counts, byte displacements and types. sbuf MPI_IN_PLACE:
 * the data is taken from rbuf (receive layout). */
static int mc_alltoallw(mpii_comm_t *c, const void *sbuf, const int64_t *scounts,
                        const int64_t *sdispls, const MPI_Datatype *stypes, void *rbuf,
                        const int64_t *rcounts, const int64_t *rdispls, const MPI_Datatype *rtypes,
                        int tag)
{
    int p = c->size, r = c->rank, rc = MPI_SUCCESS;
    char *rb = rbuf;
    if (sbuf == MPI_IN_PLACE) {
        /* Pairs (i, j), i < j, in one global order: no cycle of waits. */
        for (int i = 0; i < p && !rc; i++)
            for (int j = i + 1; j < p && !rc; j++) {
                int peer = r == i ? j : r == j ? i : -1;
                if (peer < 0)
                    continue;
                void *mem;
                void *tmp = mpii_coll_tmp(rtypes[peer], rcounts[peer], &mem);
                if (!tmp)
                    return MPI_ERR_NO_MEM;
                char *blk = rb + rdispls[peer];
                rc = mpii_coll_copy(blk, rcounts[peer], rtypes[peer], tmp, rcounts[peer],
                                    rtypes[peer]);
                mpii_req_t rq[2];
                mpii_lib_irecv(c, blk, rcounts[peer], rtypes[peer], peer, tag, &rq[0]);
                mpii_lib_isend(c, tmp, rcounts[peer], rtypes[peer], peer, tag, &rq[1]);
                int rc2 = mpii_lib_waitall(rq, 2);
                free(mem);
                if (!rc)
                    rc = rc2;
            }
        return rc;
    }
    const char *sb = sbuf;
    rc = mpii_coll_copy(sb + sdispls[r], scounts[r], stypes[r], rb + rdispls[r], rcounts[r],
                        rtypes[r]);
    mpii_req_t rq[2 * MC_A2A_WINDOW];
    for (int s0 = 1; s0 < p; s0 += MC_A2A_WINDOW) {
        int n = 0;
        for (int s = s0; s < p && s < s0 + MC_A2A_WINDOW; s++) {
            int src = (r - s + p) % p, dst = (r + s) % p;
            mpii_lib_irecv(c, rb + rdispls[src], rcounts[src], rtypes[src], src, tag, &rq[n++]);
            mpii_lib_isend(c, sb + sdispls[dst], scounts[dst], stypes[dst], dst, tag, &rq[n++]);
        }
        int rc2 = mpii_lib_waitall(rq, n);
        if (!rc)
            rc = rc2;
    }
    return rc;
}

/* Entry of all three forms, counts/displs already as int64 (displs in bytes), types per
 * peer. */
static int mc_alltoall_common(const void *sbuf, const int64_t *scounts, const int64_t *sdispls,
                              const MPI_Datatype *stypes, void *rbuf, const int64_t *rcounts,
                              const int64_t *rdispls, const MPI_Datatype *rtypes, mpii_comm_t *c,
                              MPI_Comm comm, const char *fname)
{
    int p = c->size, rc;
    if (!rcounts || !rdispls || !rtypes ||
        (sbuf != MPI_IN_PLACE && (!scounts || !sdispls || !stypes)))
        return mpii_coll_fail(comm, MPI_ERR_ARG, fname);
    int64_t sany = 0, rany = 0;
    for (int i = 0; i < p; i++) {
        if ((rc = mpii_coll_check_buf(rbuf, rcounts[i], rtypes[i], 0)))
            return mpii_coll_fail(comm, rc, fname);
        rany |= rcounts[i];
        if (sbuf != MPI_IN_PLACE) {
            if ((rc = mpii_coll_check_buf(sbuf, scounts[i], stypes[i], 0)))
                return mpii_coll_fail(comm, rc, fname);
            sany |= scounts[i];
        }
    }
    if (sbuf == rbuf && sany && rany)
        return mpii_coll_fail(comm, MPI_ERR_BUFFER, fname);
    rc = mc_alltoallw(c, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                      mpii_coll_tag(c));
    return mpii_coll_fail(comm, rc, fname);
}

/* Alltoall and Alltoallv: counts and element displacements (NULL displs: i * count[i]...
 * given by the caller) turned into the w form. */
static int mc_alltoallv_entry(const void *sbuf, const int64_t *scounts, const int64_t *sdispls,
                              MPI_Datatype stype, void *rbuf, const int64_t *rcounts,
                              const int64_t *rdispls, MPI_Datatype rtype, MPI_Comm comm,
                              int conv_err, const char *fname)
{
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
    int p = c->size;
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
    rc = mc_alltoall_common(sbuf, scounts, a, t, rbuf, rcounts, a + p, t + p, c, comm, fname);
    free(a);
    free(t);
    return rc;
}

static int mc_alltoall_entry(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf,
                             int64_t rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    const char *fname = "MPI_Alltoall";
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 1;
    int64_t *a = malloc(4 * (size_t)p * sizeof *a);
    if (a)
        for (int i = 0; i < p; i++) {
            a[i] = scount;
            a[p + i] = (int64_t)i * scount;
            a[2 * p + i] = rcount;
            a[3 * p + i] = (int64_t)i * rcount;
        }
    int rc = mc_alltoallv_entry(sbuf, a, a ? a + p : NULL, stype, rbuf, a ? a + 2 * p : NULL,
                                a ? a + 3 * p : NULL, rtype, comm, a ? 0 : MPI_ERR_NO_MEM, fname);
    free(a);
    return rc;
}

/* MPI_Alltoall: MPI_Alltoall on an intracommunicator (contract: MPI-4.0 6.8);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return mc_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
MPII_WEAK(MPI_Alltoall, PMPI_Alltoall)

/* MPI_Alltoall_c: large-count form of MPI_Alltoall on an intracommunicator (contract: MPI-4.0 6.8);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return mc_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
MPII_WEAK(MPI_Alltoall_c, PMPI_Alltoall_c)

/* MPI_Alltoallv: MPI_Alltoallv on an intracommunicator (contract: MPI-4.0 6.8);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0, err = 0, ip = sendbuf == MPI_IN_PLACE;
    int64_t *sc = ip ? NULL : mc_i64(sendcounts, p, &err);
    int64_t *sd = ip ? NULL : mc_i64(sdispls, p, &err);
    int64_t *rc_ = mc_i64(recvcounts, p, &err), *rd = mc_i64(rdispls, p, &err);
    int rc = mc_alltoallv_entry(sendbuf, sc, sd, sendtype, recvbuf, rc_, rd, recvtype, comm, err,
                                "MPI_Alltoallv");
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    return rc;
}
MPII_WEAK(MPI_Alltoallv, PMPI_Alltoallv)

/* MPI_Alltoallv_c: large-count form of MPI_Alltoallv on an intracommunicator (contract:
 * MPI-4.0 6.8); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0, err = 0, ip = sendbuf == MPI_IN_PLACE;
    int64_t *sc = ip ? NULL : mc_c64(sendcounts, p, &err);
    int64_t *sd = ip ? NULL : mc_a64(sdispls, p, &err);
    int64_t *rc_ = mc_c64(recvcounts, p, &err), *rd = mc_a64(rdispls, p, &err);
    int rc = mc_alltoallv_entry(sendbuf, sc, sd, sendtype, recvbuf, rc_, rd, recvtype, comm, err,
                                "MPI_Alltoallv");
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    return rc;
}
MPII_WEAK(MPI_Alltoallv_c, PMPI_Alltoallv_c)

static int mc_alltoallw_entry(const void *sbuf, const int64_t *sc, const int64_t *sd,
                              const MPI_Datatype *st, void *rbuf, const int64_t *rc_,
                              const int64_t *rd, const MPI_Datatype *rt, MPI_Comm comm,
                              int conv_err)
{
    const char *fname = "MPI_Alltoallw";
    mpii_comm_t *c;
    int rc = mpii_coll_enter(comm, fname, &c);
    if (rc)
        return rc;
    if (conv_err)
        return mpii_coll_fail(comm, conv_err, fname);
    return mc_alltoall_common(sbuf, sc, sd, st, rbuf, rc_, rd, rt, c, comm, fname);
}

/* MPI_Alltoallw: MPI_Alltoallw on an intracommunicator (contract: MPI-4.0 6.8);
 * MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0, err = 0, ip = sendbuf == MPI_IN_PLACE;
    int64_t *sc = ip ? NULL : mc_i64(sendcounts, p, &err);
    int64_t *sd = ip ? NULL : mc_i64(sdispls, p, &err);
    int64_t *rc_ = mc_i64(recvcounts, p, &err), *rd = mc_i64(rdispls, p, &err);
    int rc = mc_alltoallw_entry(sendbuf, sc, sd, ip ? NULL : sendtypes, recvbuf, rc_, rd, recvtypes,
                                comm, err);
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    return rc;
}
MPII_WEAK(MPI_Alltoallw, PMPI_Alltoallw)

/* MPI_Alltoallw_c: large-count form of MPI_Alltoallw on an intracommunicator (contract:
 * MPI-4.0 6.8); MPI_ERR_COMM on an intercommunicator (not implemented yet). */
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    int p = c ? c->size : 0, err = 0, ip = sendbuf == MPI_IN_PLACE;
    int64_t *sc = ip ? NULL : mc_c64(sendcounts, p, &err);
    int64_t *sd = ip ? NULL : mc_a64(sdispls, p, &err);
    int64_t *rc_ = mc_c64(recvcounts, p, &err), *rd = mc_a64(rdispls, p, &err);
    int rc = mc_alltoallw_entry(sendbuf, sc, sd, ip ? NULL : sendtypes, recvbuf, rc_, rd, recvtypes,
                                comm, err);
    free(sc);
    free(sd);
    free(rc_);
    free(rd);
    return rc;
}
MPII_WEAK(MPI_Alltoallw_c, PMPI_Alltoallw_c)
