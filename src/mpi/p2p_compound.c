/* p2p_compound.c — MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0 3.10.1/3.10.2) and
 * their large-count forms: one user request (MPII_REQ_COMPOUND) over two internal ones,
 * part[0] the send and part[1] the receive, started at once. Each part's completion
 * (mpii_req_done) counts down the parent's npending; the parent completes with the
 * receive's status (MPI_PROC_NULL as source: the status of a receive from MPI_PROC_NULL)
 * and the receive's error class, else the send's. The _replace form sends from a packed
 * copy of the buffer (the parent's tmp), so the receive may overwrite the buffer at any
 * time.
 *
 * MPI_Cancel of such a request cancels the receive part when it has not matched yet and,
 * only then, the send part (the send-cancel protocol of p2p.c): MPI_Test_cancelled on the
 * request's status tells about the receive (the status is the receive's); with a receive
 * from MPI_PROC_NULL it tells about the send. When the receive was cancelled but the
 * receiver had already matched the send, the send still took place: the request reports
 * the receive's cancellation. */
#include <stdlib.h>
#include <string.h>

#include "mpi/p2p_impl.h"

/* Contract: p2p_impl.h. */
void mpii_compound_part_done(mpii_req_t *p)
{
    if (--p->npending > 0)
        return;
    const mpii_req_t *s = p->part[0], *r = p->part[1];
    p->st = r->st;
    if (r->peer == MPI_PROC_NULL)
        p->st.fmpl_cancelled = s->st.fmpl_cancelled;
    p->err = r->err != MPI_SUCCESS ? r->err : s->err;
    mpii_req_done(p);
}

/* Contract: p2p_impl.h. */
void mpii_compound_cancel(mpii_req_t *p)
{
    mpii_req_t *s = p->part[0], *r = p->part[1];
    if (r->peer != MPI_PROC_NULL && r->done)
        return; /* the receive matched (or was cancelled already): nothing to cancel */
    /* Hold p (it may even be complete already: a receive from MPI_PROC_NULL and an eager
     * send; like an eager send's own request it is incomplete again until the answer). */
    p->npending++;
    p->done = 0;
    if (!r->done)
        mpii_p2p_cancel(r);
    if (r->st.fmpl_cancelled || r->peer == MPI_PROC_NULL) {
        int was_done = s->done;
        mpii_p2p_cancel(s);
        if (was_done && !s->done) /* an eager send waits for its answer again */
            p->npending++;
    }
    mpii_compound_part_done(p); /* the hold */
}

/* Contract: p2p_impl.h. */
void mpii_compound_free(mpii_req_t *p)
{
    for (int i = 0; i < 2; i++)
        if (p->part[i]) {
            mpii_req_free(p->part[i]);
            p->part[i] = NULL;
        }
    free(p->tmp);
    p->tmp = NULL;
}

/* Checks the arguments, builds the compound request and starts both parts. replace: buf is
 * sbuf = rbuf, with scount/stype = rcount/rtype. */
static int mpii_isendrecv(const void *sbuf, int64_t scount, MPI_Datatype stype, int dest, int stag,
                          void *rbuf, int64_t rcount, MPI_Datatype rtype, int source, int rtag,
                          MPI_Comm comm, MPI_Request *request, int replace, const char *fname)
{
    MPII_CHECK_INIT(fname);
    mpii_req_t chk;
    memset(&chk, 0, sizeof chk);
    int rc = mpii_p2p_args(&chk, rbuf, rcount, rtype, source, rtag, comm, 1);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, rbuf, rcount, rtype, source, rtag, comm, 1, fname);
    rc = mpii_p2p_args(&chk, sbuf, scount, stype, dest, stag, comm, 0);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, sbuf, scount, stype, dest, stag, comm, 0, fname);
    if (!request)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fname, "%s", "request is NULL");

    void *tmp = NULL;
    if (replace && dest != MPI_PROC_NULL) {
        uint64_t bytes = (uint64_t)scount * (uint64_t)dt_size(chk.dt);
        tmp = malloc(bytes ? bytes : 1);
        if (!tmp)
            return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
        if (bytes)
            dt_pack(chk.dt, scount, sbuf, 0, (int64_t)bytes, tmp);
        sbuf = tmp;
        scount = (int64_t)bytes;
        stype = MPI_BYTE;
    }
    mpii_req_t *p = mpii_req_alloc();
    mpii_req_t *s = p ? mpii_req_alloc() : NULL;
    mpii_req_t *r = s ? mpii_req_alloc() : NULL;
    if (!r) {
        if (s)
            mpii_req_free(s);
        if (p)
            mpii_req_free(p);
        free(tmp);
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    }
    mpii_p2p_args(s, sbuf, scount, stype, dest, stag, comm, 0);
    mpii_p2p_args(r, rbuf, rcount, rtype, source, rtag, comm, 1);
    for (int i = 0; i < 2; i++) {
        mpii_req_t *q = i ? r : s;
        q->internal = 1;
        q->active = 1;
        mpii_req_tail(q)->parent = p;
        dt_retain(q->dt);
        p->part[i] = q;
    }
    p->kind = MPII_REQ_COMPOUND;
    p->comm = comm;
    p->peer = source;
    p->tag = rtag;
    p->tmp = tmp;
    p->active = 1;
    p->npending = 2;
    rc = mpii_req_handle(p, request); /* on failure p, its parts and tmp are freed */
    if (rc)
        return MPII_ERR_COMM(comm, rc, fname);
    mpii_p2p_start(r); /* a receive cannot fail to start */
    rc = mpii_p2p_start(s);
    if (BASE_UNLIKELY(rc)) {
        /* take the receive back (or let it finish), then drop everything */
        mpii_p2p_cancel(r);
        mpii_req_wait(r);
        mpii_req_free(p);
        *request = MPI_REQUEST_NULL;
        return MPII_ERR_COMM(comm, rc, fname);
    }
    return MPI_SUCCESS;
}

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return mpii_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                          source, recvtag, comm, request, 0, "MPI_Isendrecv");
}
MPII_WEAK(MPI_Isendrecv_c, PMPI_Isendrecv_c)

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    return mpii_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                          source, recvtag, comm, request, 0, "MPI_Isendrecv");
}
MPII_WEAK(MPI_Isendrecv, PMPI_Isendrecv)

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    return mpii_isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source,
                          recvtag, comm, request, 1, "MPI_Isendrecv_replace");
}
MPII_WEAK(MPI_Isendrecv_replace_c, PMPI_Isendrecv_replace_c)

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return mpii_isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source,
                          recvtag, comm, request, 1, "MPI_Isendrecv_replace");
}
MPII_WEAK(MPI_Isendrecv_replace, PMPI_Isendrecv_replace)
