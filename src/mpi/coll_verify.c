/* coll_verify.c — the checking mode of the collectives (FMPL_MPI_CHECK=1): before a
 * blocking collective on an intracommunicator runs, its members compare the arguments
 * that must agree across ranks, and all of them fail alike when some do not, so an
 * erroneous program gets an error on every rank instead of a hang or wrong data.
 *
 * What must agree is put one way for every collective: for each pair of ranks (i, j),
 * what i sends to j (a type signature: basic kinds, elements, bytes) equals what j
 * expects from i, and every rank names the same collective, root and predefined op.
 * The caller describes its side as two arrays over the members (send[j], recv[j]; an
 * empty signature for "nothing"); reductions, whose operands must match everywhere, say
 * "I send my operand to everyone and expect the same from everyone". One exchange of a
 * small record per pair (library point-to-point on the communicator's library context,
 * a fresh collective tag) gives each rank what the others claim to send it; then an
 * AND over the members tells everyone whether anyone objected.
 *
 * Cost: p messages per rank and a reduction, per call: a debugging mode, like the
 * checking builds of MPICH and Open MPI. A nonblocking or persistent collective must not
 * wait for the other members when it starts: its check is the same exchange built as a
 * point-to-point schedule (the check schedule), which the request runs before its own
 * schedule, at every start, and which completes the request with the error instead when
 * the members disagree (coll_sched.c, mpii_sched_start). Such calls then take
 * point-to-point schedules only (mpii_mailbox_fits), which start whenever their check ends,
 * whatever the other calls in flight. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

typedef struct verify_rec {
    int64_t kind, root, op;
    dt_sig_t sig; /* what the sender sends to the receiver */
} verify_rec_t;

/* The verdict on one pair: 0 or an MPI class; why gets the detail. */
static int verify_pair(const verify_rec_t *got, const verify_rec_t *mine, int from, char *why,
                       size_t n)
{
    if (got->kind != mine->kind) {
        snprintf(why, n, "FMPL_MPI_CHECK: rank %d called another collective", from);
        return MPI_ERR_NOT_SAME;
    }
    if (got->root != mine->root) {
        snprintf(why, n, "FMPL_MPI_CHECK: rank %d gives root %lld, this rank %lld", from,
                 (long long)got->root, (long long)mine->root);
        return MPI_ERR_ROOT;
    }
    if (got->op != mine->op) {
        snprintf(why, n, "FMPL_MPI_CHECK: rank %d gives another reduction operation", from);
        return MPI_ERR_OP;
    }
    if (dt_sig_equal(&got->sig, &mine->sig))
        return MPI_SUCCESS;
    if (got->sig.size != mine->sig.size) {
        snprintf(why, n, "FMPL_MPI_CHECK: rank %d sends %lld bytes where this rank expects %lld",
                 from, (long long)got->sig.size, (long long)mine->sig.size);
        return got->sig.size > mine->sig.size ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
    }
    snprintf(why, n,
             "FMPL_MPI_CHECK: rank %d sends %lld bytes of other basic types than this rank "
             "expects (type signatures differ)",
             from, (long long)got->sig.size);
    return MPI_ERR_TYPE;
}

/* One call's description: kind, root, op and per member what goes each way. */
typedef struct verify {
    mpii_comm_t *c;
    int64_t kind, root, op;
    dt_sig_t *send, *recv; /* [c->size]; zero: nothing */
} verify_t;

/* The mode of the call mpii_verify_on last agreed to check, and the check schedule built
 * for it when it does not block (taken by mpii_verify_take). */
static int verify_mode;
static coll_sched_t *verify_check;
static int verify_check_tag;
static const mpii_comm_t *verify_check_comm; /* and its collective count then: the check */
static uint32_t verify_check_seq;            /* is for the call that follows at once */

/* The checking setting, read once. */
static int verify_setting = -1;

/* Contract: coll_impl.h. */
int mpii_verify_setting(void)
{
    if (BASE_UNLIKELY(verify_setting < 0))
        verify_setting = base_env_bool(
            "FMPL_MPI_CHECK", 0,
            "check before every collective (blocking, nonblocking, each start of a persistent "
            "one) that its members agree on it (the collective, root, op, and the type "
            "signature of every pair's data): slow; for debugging");
    return verify_setting;
}

/* Contract: coll_impl.h. */
int mpii_verify_on(const mpii_comm_t *c, const mpii_cmode_t *m)
{
    if (!mpii_verify_setting() || c->rgroup || c->size < 2)
        return 0;
    verify_mode = m->kind;
    return 1;
}

/* Contract: coll_impl.h. */
coll_sched_t *mpii_verify_take(const mpii_comm_t *c, int *tag)
{
    coll_sched_t *s = verify_check;
    verify_check = NULL;
    *tag = verify_check_tag;
    if (s && (c != verify_check_comm || c->coll_seq != verify_check_seq)) {
        coll_sched_free(s); /* left by an entry that failed after its check was built */
        s = NULL;
    }
    return s;
}

static int verify_begin(verify_t *v, mpii_comm_t *c, int kind, int root, MPI_Op op)
{
    v->c = c;
    v->kind = kind;
    v->root = root;
    /* user op handles are local to a process: only predefined ones compare */
    v->op = op != MPI_OP_NULL && FMPL_MPI_HANDLE_INDEX(op) < FMPL_MPI_PREDEF_MAX ? op : -1;
    v->send = calloc(2 * (size_t)c->size, sizeof *v->send);
    v->recv = v->send ? v->send + c->size : NULL;
    return v->send ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void sig_of(dt_sig_t *sig, int64_t count, MPI_Datatype type)
{
    dt_t *t = mpii_type_get(type);
    if (t && count > 0)
        dt_signature(t, count, sig);
    else
        *sig = (dt_sig_t){0, 0, 0};
}

/* A check schedule's state, in the schedule's memory: the records each way, this rank's
 * own view of what it receives, and the verdicts. */
typedef struct verify_run {
    int p, me;
    verify_rec_t *out, *in, *mine; /* [p] each */
    uint64_t ok, all_ok;
    int verdict;
} verify_run_t;

static int verify_judge_step(const void *a)
{
    verify_run_t *vr = *(verify_run_t *const *)a;
    char why[200];
    vr->verdict = MPI_SUCCESS;
    for (int j = 0; j < vr->p && vr->verdict == MPI_SUCCESS; j++)
        vr->verdict = verify_pair(&vr->in[j], &vr->mine[j], j, why, sizeof why);
    vr->ok = vr->verdict == MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int verify_final_step(const void *a)
{
    const verify_run_t *vr = *(verify_run_t *const *)a;
    if (vr->verdict != MPI_SUCCESS)
        return vr->verdict;
    return vr->all_ok ? MPI_SUCCESS : MPI_ERR_NOT_SAME;
}

/* The check of a call that does not block: the exchange and the agreement of verify_end
 * as a point-to-point schedule on a tag of its own (left in verify_check); frees v. */
static int verify_build(verify_t *v, const char *fname)
{
    mpii_comm_t *c = v->c;
    int p = c->size, me = c->rank;
    coll_sched_t *s = mpii_sched_new(c);
    verify_run_t *vr = s ? coll_sched_mem(s, sizeof *vr) : NULL;
    verify_rec_t *recs = vr ? coll_sched_mem(s, 3 * (size_t)p * sizeof *recs) : NULL;
    if (!recs) {
        coll_sched_free(s);
        free(v->send);
        return MPII_ERR_COMM(c->handle, MPI_ERR_NO_MEM, fname);
    }
    *vr = (verify_run_t){.p = p, .me = me, .out = recs, .in = recs + p, .mine = recs + 2 * p};
    for (int j = 0; j < p; j++) {
        vr->out[j] = (verify_rec_t){v->kind, v->root, v->op, v->send[j]};
        vr->mine[j] = (verify_rec_t){v->kind, v->root, v->op, v->recv[j]};
        if (j == me) {
            vr->in[j] = vr->mine[j];
            continue;
        }
        mpii_sched_recv(s, &vr->in[j], sizeof vr->in[j], MPI_BYTE, j);
        mpii_sched_send(s, &vr->out[j], sizeof vr->out[j], MPI_BYTE, j);
    }
    free(v->send);
    mpii_sched_fence(s);
    coll_sched_call(s, verify_judge_step, &vr, sizeof vr);
    mpii_sched_and(s, c, &vr->ok, &vr->all_ok);
    coll_sched_call(s, verify_final_step, &vr, sizeof vr);
    coll_sched_free(verify_check); /* (an entry that failed after its check was built) */
    verify_check = s;
    verify_check_tag = mpii_coll_tag(c);
    verify_check_comm = c;
    verify_check_seq = c->coll_seq;
    return MPI_SUCCESS;
}

/* Exchanges, judges, agrees; frees v. A call that does not block gets its check
 * schedule instead (verify_build). */
static int verify_end(verify_t *v, const char *fname)
{
    if (verify_mode != MPII_CM_BLOCK)
        return verify_build(v, fname);
    mpii_comm_t *c = v->c;
    int p = c->size, me = c->rank, tag = mpii_coll_tag(c);
    verify_rec_t *out = malloc(2 * (size_t)p * sizeof *out);
    mpii_req_t *reqs = calloc(2 * (size_t)p, sizeof *reqs);
    int n = 0, rc = out && reqs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    verify_rec_t *in = out + p;
    for (int j = 0; j < p && rc == MPI_SUCCESS; j++) {
        out[j] = (verify_rec_t){v->kind, v->root, v->op, v->send[j]};
        if (j == me) { /* (a rank's data to itself is its own business) */
            in[j] = (verify_rec_t){v->kind, v->root, v->op, v->recv[j]};
            continue;
        }
        rc = mpii_lib_irecv(c, &in[j], sizeof in[j], MPI_BYTE, j, tag, &reqs[n++]);
        if (rc == MPI_SUCCESS)
            rc = mpii_lib_isend(c, &out[j], sizeof out[j], MPI_BYTE, j, tag, &reqs[n++]);
    }
    int wrc = reqs ? mpii_lib_waitall(reqs, n) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = wrc;
    int verdict = MPI_SUCCESS;
    char why[200] = "";
    for (int j = 0; j < p && rc == MPI_SUCCESS && verdict == MPI_SUCCESS; j++) {
        verify_rec_t mine = {v->kind, v->root, v->op, v->recv[j]};
        verdict = verify_pair(&in[j], &mine, j, why, sizeof why);
    }
    free(reqs);
    free(out);
    free(v->send);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(c->handle, rc, fname);
    uint64_t ok = verdict == MPI_SUCCESS;
    if ((rc = mpii_lib_allreduce_band(c, &ok, 1)) != MPI_SUCCESS)
        return MPII_ERR_COMM(c->handle, rc, fname);
    if (verdict != MPI_SUCCESS)
        return MPII_ERRF_COMM(c->handle, verdict, fname, "%s", why);
    if (!ok)
        return MPII_ERRF_COMM(c->handle, MPI_ERR_NOT_SAME, fname, "%s",
                              "FMPL_MPI_CHECK: another rank found the arguments of this call "
                              "inconsistent with its own");
    return MPI_SUCCESS;
}

#define AT(arr, one, j) ((arr) ? (arr)[j] : (one))
#define BEGIN(v, c, kind, root, op, fname)                                                         \
    verify_t v;                                                                                    \
    if (verify_begin(&v, c, kind, root, op) != MPI_SUCCESS)                                        \
    return MPII_ERR_COMM(c->handle, MPI_ERR_NO_MEM, fname)

/* Contract: coll_impl.h. */
int mpii_verify_barrier(mpii_comm_t *c, const char *fname)
{
    BEGIN(v, c, MPII_CK_BARRIER, -1, MPI_OP_NULL, fname);
    return verify_end(&v, fname);
}

/* Contract: coll_impl.h. */
int mpii_verify_bcast(mpii_comm_t *c, int64_t count, MPI_Datatype type, int root, const char *fname)
{
    BEGIN(v, c, MPII_CK_BCAST, root, MPI_OP_NULL, fname);
    for (int j = 0; j < c->size; j++)
        sig_of(c->rank == root ? &v.send[j] : &v.recv[j], j == root || c->rank == root ? count : 0,
               type);
    return verify_end(&v, fname);
}

/* Contract: coll_impl.h. */
int mpii_verify_rooted(mpii_comm_t *c, int kind, int root, int64_t count, MPI_Datatype type,
                       const int64_t *rcounts, int64_t rcount, MPI_Datatype rtype,
                       const char *fname)
{
    BEGIN(v, c, kind, root, MPI_OP_NULL, fname);
    int gather = kind == MPII_CK_GATHER;
    /* gather: every rank sends count x type to the root, which expects rcounts[i] x
     * rtype from rank i; scatter: the mirror image */
    dt_sig_t *one = gather ? v.send : v.recv, *many = gather ? v.recv : v.send;
    sig_of(&one[root], count, type);
    for (int j = 0; c->rank == root && j < c->size; j++)
        sig_of(&many[j], AT(rcounts, rcount, j), rtype);
    return verify_end(&v, fname);
}

/* Contract: coll_impl.h. */
int mpii_verify_alltoall(mpii_comm_t *c, int kind, const int64_t *scounts, int64_t scount,
                         const MPI_Datatype *stypes, MPI_Datatype stype, const int64_t *rcounts,
                         int64_t rcount, const MPI_Datatype *rtypes, MPI_Datatype rtype,
                         const char *fname)
{
    BEGIN(v, c, kind, -1, MPI_OP_NULL, fname);
    for (int j = 0; j < c->size; j++) {
        sig_of(&v.send[j], AT(scounts, scount, j), AT(stypes, stype, j));
        sig_of(&v.recv[j], AT(rcounts, rcount, j), AT(rtypes, rtype, j));
    }
    return verify_end(&v, fname);
}

/* Contract: coll_impl.h. */
int mpii_verify_reduce(mpii_comm_t *c, int kind, int root, const int64_t *counts, int64_t count,
                       MPI_Datatype type, MPI_Op op, const char *fname)
{
    BEGIN(v, c, kind, root, op, fname);
    /* operands match everywhere: each rank "sends" to j what j keeps (counts[j], or all
     * of count) and expects from everyone what it keeps itself */
    for (int j = 0; j < c->size; j++) {
        sig_of(&v.send[j], AT(counts, count, j), type);
        sig_of(&v.recv[j], AT(counts, count, c->rank), type);
    }
    return verify_end(&v, fname);
}
