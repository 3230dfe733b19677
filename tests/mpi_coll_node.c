/* mpi_coll_node.c — node-aware MPI collectives (src/mpi/coll_node.c) on jobs that span
 * several nodes (fmplrun --hosts with a local launcher: ranks with different FMPL_NODE
 * talk udp, ranks of one node shared memory).
 *
 * On MPI_COMM_WORLD, a duplicate of it (mailboxes of its own, or none with
 * FMPL_COLL_GROUPS=1: every call over point-to-point) and
 * on communicators whose node layout differs (reversed rank order, every other rank,
 * perhaps on fewer nodes), for Barrier, Bcast, Reduce, Allreduce, Allgather and
 * Allgatherv (uneven counts, blocks in reverse rank order) in their blocking, nonblocking
 * and persistent forms: every root, in place and not, counts 1 / 7 / 1000 / 100000 (the
 * last through rendezvous), MPI_INT with MPI_SUM and a resized type with a gap after every int with
 * a commutative user sum (gaps must stay untouched), and a non-commutative user op (affine maps mod
 * a prime, composed in rank order). Every result is compared bit for bit with the expected image of
 * the whole buffer, guard ints included.
 *
 * Cross-node messages: wherever a call runs node-aware (FMPL_MPI_NODE_AWARE=2: every
 * call; 1, the default: all but the calls that a communicator's mailboxes serve), the number of udp
 * messages the communicator's ranks post (vnic_udp_stats data_posted, summed: counted when
 * queued, so a message that the congestion window holds past the end of the calls before
 * is not counted in them, as data_sent did under load) during 5 calls of 8-byte
 * collectives (one eager message each) must be exactly what the node-aware shapes
 * predict for the communicator's node count L (and the root's node): barrier L ceil(log2 L); bcast
 * L - 1; reduce L - 1 (+1 for a non-commutative op whose root is not on the node of
 * rank 0); allreduce 2 (L - p2) + p2 log2 p2; allgather(v) L (L - 1). Elsewhere (and
 * with 0: flat) the counts are printed only. Argument errors on a multi-node communicator come back
 * as on a single node.
 *
 *   fmplrun -n N --hosts a:2,b:2 --launcher "sh fake_launcher.sh" --pmi-addr 127.0.0.1
 *           mpi_coll_node */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "test_util.h"

#define GAP (-7)
#define GUARD 4 /* ints after every buffer that must stay untouched */
#define PRIME 1000003

static int wrank, wsize;
static int mode; /* FMPL_MPI_NODE_AWARE: 0 flat, 1 (default) unless on the mailboxes, 2 always */

/* Whether comm has a mailbox group: MPI_COMM_WORLD always; the few others made here while
 * slots last (FMPL_COLL_GROUPS > 1, the default 16), unless a single process. */
static int has_mailboxes(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 1;
    const char *g = getenv("FMPL_COLL_GROUPS");
    int sz;
    MPI_Comm_size(comm, &sz);
    return sz > 1 && (!g || atoi(g) > 1);
}
static const int *wnode; /* node of each world rank */
static MPI_Datatype gap_t, pair_t;
static MPI_Op affine_op, gapsum_op;

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_ALLGATHERV, C_KINDS };
static const char *cname[] = {"barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv"};
enum { F_BLOCK, F_NB, F_PERSIST };
static const char *fname_[] = {"blocking", "nonblocking", "persistent"};

/* (a, b) stands for x -> a x + b mod PRIME; inout = in then inout (in: lower ranks). */
static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *x = in;
    int *y = inout;
    for (int i = 0; i < *len; i++) {
        long long a = (long long)x[2 * i] * y[2 * i] % PRIME;
        long long b = ((long long)y[2 * i] * x[2 * i + 1] + y[2 * i + 1]) % PRIME;
        y[2 * i] = (int)a;
        y[2 * i + 1] = (int)b;
    }
}

/* Commutative sum of the ints of gap_t elements (predefined ops take predefined types
 * only); the gaps are not touched. */
static void gapsum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == gap_t);
    const int *x = in;
    int *y = inout;
    for (int i = 0; i < *len; i++)
        y[2 * i] += x[2 * i];
}

/* Operand element i of rank r (element: 1 int, or 2 for the pair type). */
static int val(int r, int64_t i, int salt)
{
    return (int)((r + 1) * 1009 + i * 31 + salt * 7) % 100000;
}
static void pair_val(int r, int64_t i, int salt, int *out)
{
    out[0] = 1 + (int)((r * 13 + i * 7 + salt) % (PRIME - 1));
    out[1] = (int)((r * 101 + i * 3 + salt * 5) % PRIME);
}

/* One collective call: kind, form, count, root, in place, layout (0 MPI_INT with MPI_SUM,
 * 1 gap_t with gapsum_op), nc (1: affine_op on pair_t). */
typedef struct ccase {
    int kind, form;
    int64_t count;
    int root, inplace, layout, nc;
} ccase_t;

static int ints_per_elem(const ccase_t *k)
{
    return k->nc ? 2 : k->layout ? 2 : 1; /* gap_t: an int and a gap */
}
static MPI_Datatype ctype(const ccase_t *k)
{
    return k->nc ? pair_t : k->layout ? gap_t : MPI_INT;
}

/* Writes the operand of rank r (n elements) into buf (gaps GAP). */
static void fill_n(const ccase_t *k, int r, int salt, int *buf, int64_t n)
{
    int w = ints_per_elem(k);
    for (int64_t i = 0; i < n; i++) {
        if (k->nc)
            pair_val(r, i, salt, buf + 2 * i);
        else {
            buf[w * i] = val(r, i, salt);
            if (k->layout)
                buf[w * i + 1] = GAP;
        }
    }
}

static void fill(const ccase_t *k, int r, int salt, int *buf)
{
    fill_n(k, r, salt, buf, k->count);
}

/* Allgatherv's counts and displacements on p ranks (elements): rank q contributes
 * count + q % 3 elements (allgather: count), stored in reverse rank order. Returns the
 * total. */
static int64_t v_layout(const ccase_t *k, int p, int *counts, int *displs)
{
    int64_t total = 0;
    for (int q = p - 1; q >= 0; q--) {
        counts[q] = (int)k->count + (k->kind == C_ALLGATHERV ? q % 3 : 0);
        displs[q] = (int)total;
        total += counts[q];
    }
    if (k->kind == C_ALLGATHER) /* rank order */
        for (int q = 0; q < p; q++)
            displs[q] = q * (int)k->count;
    return total;
}

/* The reduction of ranks 0..p-1 (world ranks of comm given by wr) into out. */
static void expect_reduce(const ccase_t *k, int p, int salt, int *out)
{
    int w = ints_per_elem(k);
    for (int64_t i = 0; i < k->count; i++) {
        if (k->nc) {
            int acc[2], x[2];
            pair_val(0, i, salt, acc);
            for (int r = 1; r < p; r++) {
                pair_val(r, i, salt, x);
                int len = 1;
                affine_fn(acc, x, &len, NULL);
                acc[0] = x[0];
                acc[1] = x[1];
            }
            out[2 * i] = acc[0];
            out[2 * i + 1] = acc[1];
        } else {
            int s = 0;
            for (int r = 0; r < p; r++)
                s += val(r, i, salt);
            out[w * i] = s;
            if (k->layout)
                out[w * i + 1] = GAP;
        }
    }
}

static void check_buf(const ccase_t *k, const int *got, const int *want, int64_t n,
                      const char *what, int crank)
{
    for (int64_t i = 0; i < n + GUARD; i++) {
        int w = i < n ? want[i] : GAP;
        if (got[i] != w) {
            fprintf(stderr,
                    "mpi_coll_node: rank %d (comm rank %d): %s %s count %lld root %d inplace %d "
                    "layout %d nc %d: %s int %lld is %d, expected %d\n",
                    wrank, crank, fname_[k->form], cname[k->kind], (long long)k->count, k->root,
                    k->inplace, k->layout, k->nc, what, (long long)i, got[i], w);
            exit(1);
        }
    }
}

/* Starts the call in its form and completes it (cnts, displs: allgather(v)'s). */
static void run(const ccase_t *k, MPI_Comm comm, void *sb, void *rb, const int *cnts,
                const int *displs, int mycount)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype t = ctype(k);
    MPI_Op op = k->nc ? affine_op : k->layout ? gapsum_op : MPI_SUM;
    int cnt = (int)k->count, rc = MPI_SUCCESS;
    switch (k->kind * 3 + k->form) {
    case C_BARRIER * 3 + F_BLOCK: rc = MPI_Barrier(comm); break;
    case C_BARRIER * 3 + F_NB: rc = MPI_Ibarrier(comm, &req); break;
    case C_BARRIER * 3 + F_PERSIST: rc = MPI_Barrier_init(comm, MPI_INFO_NULL, &req); break;
    case C_BCAST * 3 + F_BLOCK: rc = MPI_Bcast(rb, cnt, t, k->root, comm); break;
    case C_BCAST * 3 + F_NB: rc = MPI_Ibcast(rb, cnt, t, k->root, comm, &req); break;
    case C_BCAST * 3 + F_PERSIST:
        rc = MPI_Bcast_init(rb, cnt, t, k->root, comm, MPI_INFO_NULL, &req);
        break;
    case C_REDUCE * 3 + F_BLOCK: rc = MPI_Reduce(sb, rb, cnt, t, op, k->root, comm); break;
    case C_REDUCE * 3 + F_NB: rc = MPI_Ireduce(sb, rb, cnt, t, op, k->root, comm, &req); break;
    case C_REDUCE * 3 + F_PERSIST:
        rc = MPI_Reduce_init(sb, rb, cnt, t, op, k->root, comm, MPI_INFO_NULL, &req);
        break;
    case C_ALLREDUCE * 3 + F_BLOCK: rc = MPI_Allreduce(sb, rb, cnt, t, op, comm); break;
    case C_ALLREDUCE * 3 + F_NB: rc = MPI_Iallreduce(sb, rb, cnt, t, op, comm, &req); break;
    case C_ALLREDUCE * 3 + F_PERSIST:
        rc = MPI_Allreduce_init(sb, rb, cnt, t, op, comm, MPI_INFO_NULL, &req);
        break;
    case C_ALLGATHER * 3 + F_BLOCK: rc = MPI_Allgather(sb, cnt, t, rb, cnt, t, comm); break;
    case C_ALLGATHER * 3 + F_NB: rc = MPI_Iallgather(sb, cnt, t, rb, cnt, t, comm, &req); break;
    case C_ALLGATHER * 3 + F_PERSIST:
        rc = MPI_Allgather_init(sb, cnt, t, rb, cnt, t, comm, MPI_INFO_NULL, &req);
        break;
    case C_ALLGATHERV * 3 + F_BLOCK:
        rc = MPI_Allgatherv(sb, mycount, t, rb, cnts, displs, t, comm);
        break;
    case C_ALLGATHERV * 3 + F_NB:
        rc = MPI_Iallgatherv(sb, mycount, t, rb, cnts, displs, t, comm, &req);
        break;
    case C_ALLGATHERV * 3 + F_PERSIST:
        rc = MPI_Allgatherv_init(sb, mycount, t, rb, cnts, displs, t, comm, MPI_INFO_NULL, &req);
        break;
    }
    CHECK_RC(rc, MPI_SUCCESS);
    if (k->form == F_PERSIST) {
        CHECK_RC(MPI_Start(&req), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_RC(MPI_Request_free(&req), MPI_SUCCESS);
    } else if (k->form == F_NB) {
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
}

/* An allgather(v) case: every rank's block lands at its displacement everywhere. */
static void gather_case(const ccase_t *k, MPI_Comm comm, int crank, int p, int salt)
{
    int w = ints_per_elem(k);
    int *cnts = malloc((size_t)p * sizeof *cnts), *displs = malloc((size_t)p * sizeof *displs);
    CHECK(cnts && displs);
    int64_t total = v_layout(k, p, cnts, displs), n = total * w;
    int *sb = malloc((size_t)(cnts[crank] * w + GUARD) * sizeof(int));
    int *rb = malloc((size_t)(n + GUARD) * sizeof(int));
    int *want = malloc((size_t)(n + GUARD) * sizeof(int));
    CHECK(sb && rb && want);
    for (int64_t i = 0; i < n + GUARD; i++)
        rb[i] = want[i] = GAP;
    for (int64_t i = 0; i < cnts[crank] * w + GUARD; i++)
        sb[i] = GAP;
    for (int q = 0; q < p; q++)
        fill_n(k, q, salt, want + (int64_t)displs[q] * w, cnts[q]);
    if (k->inplace)
        fill_n(k, crank, salt, rb + (int64_t)displs[crank] * w, cnts[crank]);
    else
        fill_n(k, crank, salt, sb, cnts[crank]);
    run(k, comm, k->inplace ? MPI_IN_PLACE : sb, rb, cnts, displs, cnts[crank]);
    check_buf(k, rb, want, n, "receive buffer", crank);
    if (!k->inplace) { /* the send buffer is untouched */
        for (int64_t i = 0; i < n + GUARD; i++)
            want[i] = GAP;
        fill_n(k, crank, salt, want, cnts[crank]);
        check_buf(k, sb, want, cnts[crank] * w, "send buffer", crank);
    }
    free(sb);
    free(rb);
    free(want);
    free(cnts);
    free(displs);
}

/* One case on comm (rank crank of p): fill, run, check. */
static void one(const ccase_t *k, MPI_Comm comm, int crank, int p, int salt)
{
    int w = ints_per_elem(k);
    int64_t n = k->count * w;
    if (k->kind == C_ALLGATHER || k->kind == C_ALLGATHERV) {
        gather_case(k, comm, crank, p, salt);
        return;
    }
    int *sb = malloc((size_t)(n + GUARD) * sizeof(int));
    int *rb = malloc((size_t)(n + GUARD) * sizeof(int));
    int *want = malloc((size_t)(n + GUARD) * sizeof(int));
    CHECK(sb && rb && want);
    for (int64_t i = 0; i < n + GUARD; i++)
        sb[i] = rb[i] = want[i] = GAP;
    int me_root = crank == k->root;
    switch (k->kind) {
    case C_BARRIER: run(k, comm, NULL, NULL, NULL, NULL, 0); break;
    case C_BCAST:
        if (me_root)
            fill(k, crank, salt, rb);
        run(k, comm, NULL, rb, NULL, NULL, 0);
        fill(k, k->root, salt, want);
        check_buf(k, rb, want, n, "bcast buffer", crank);
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        int gets = k->kind == C_ALLREDUCE || me_root;
        int inplace = k->inplace && gets;
        fill(k, crank, salt, inplace ? rb : sb);
        run(k, comm, inplace ? MPI_IN_PLACE : sb, rb, NULL, NULL, 0);
        if (gets) {
            expect_reduce(k, p, salt, want);
            check_buf(k, rb, want, n, "result", crank);
        } else {
            check_buf(k, rb, want, n, "untouched receive buffer", crank);
        }
        if (!inplace) { /* the operand is untouched */
            fill(k, crank, salt, want);
            check_buf(k, sb, want, n, "send buffer", crank);
        }
        break;
    }
    }
    free(sb);
    free(rb);
    free(want);
}

/* Nodes among comm's members, and the comm node (numbered by lowest rank) of rank r. */
static int comm_nodes(MPI_Comm comm, int r_of_interest, int *node_idx)
{
    MPI_Group wg, cg;
    int p;
    MPI_Comm_size(comm, &p);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(comm, &cg);
    int *cr = malloc((size_t)p * sizeof *cr), *wr = malloc((size_t)p * sizeof *wr);
    int *seen = malloc((size_t)wsize * sizeof *seen);
    CHECK(cr && wr && seen);
    for (int i = 0; i < p; i++)
        cr[i] = i;
    MPI_Group_translate_ranks(cg, p, cr, wg, wr);
    for (int i = 0; i < wsize; i++)
        seen[i] = -1;
    int nn = 0;
    for (int i = 0; i < p; i++) {
        int w = wnode[wr[i]];
        if (seen[w] < 0)
            seen[w] = nn++;
        if (i == r_of_interest && node_idx)
            *node_idx = seen[w];
    }
    free(cr);
    free(wr);
    free(seen);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    return nn;
}

static int contiguous_nodes(MPI_Comm comm)
{
    int p, prev = -1, changes = 0, nn;
    MPI_Comm_size(comm, &p);
    nn = comm_nodes(comm, -1, NULL);
    for (int r = 0; r < p; r++) {
        int k;
        comm_nodes(comm, r, &k);
        if (r > 0 && k != prev)
            changes++;
        prev = k;
    }
    return changes == nn - 1;
}

static uint64_t data_posted(void)
{
    vnic_udp_stats_t st;
    memset(&st, 0, sizeof st);
    int rc = vnic_udp_stats(runtime_vnic(), &st);
    CHECK(rc == FMPL_SUCCESS || rc == FMPL_ERR_UNSUPPORTED);
    return st.data_posted;
}

/* Predicted cross-node messages of one node-aware call. */
static long predict(const ccase_t *k, int L, int root_node)
{
    int lg = 0, p2 = 1;
    while ((1 << lg) < L)
        lg++;
    int lg2 = 0;
    while (p2 * 2 <= L) {
        p2 *= 2;
        lg2++;
    }
    switch (k->kind) {
    case C_BARRIER: return (long)L * lg;
    case C_BCAST: return L - 1;
    case C_REDUCE: return L - 1 + (k->nc && root_node != 0);
    case C_ALLREDUCE: return 2L * (L - p2) + (long)p2 * lg2;
    default: return (long)L * (L - 1);
    }
}

/* 5 calls of 8-byte (2-int) k on comm: the udp messages its ranks post must match predict(). */
static void count_case(ccase_t k, MPI_Comm comm, const char *cn, int crank, int p)
{
    enum { REPS = 5 };
    k.count = k.nc ? 1 : 2;
    k.layout = 0;
    int L = comm_nodes(comm, -1, NULL), rn = 0;
    if (k.kind == C_BCAST || k.kind == C_REDUCE)
        comm_nodes(comm, k.root, &rn);
    if (k.nc && !contiguous_nodes(comm))
        return; /* the flat algorithm: nothing to predict */
    /* FMPL_MPI_NODE_AWARE=1: the calls with a predefined op that the communicator's
     * mailboxes serve (blocking, persistent, and nonblocking but allgather) stay flat */
    int na = mode == 2 || (mode == 1 && (!has_mailboxes(comm) || k.nc || k.kind == C_ALLGATHERV ||
                                         (k.kind == C_ALLGATHER && k.form != F_BLOCK)));
    /* A communicator freed just before (MPI_Comm_free retires its group in the background,
     * coll.h) may still be posting the words of its retirement's barrier: let that end, so
     * that only this case's messages are counted. */
    while (coll_groups_retiring() > 0)
        vnic_progress(runtime_vnic());
    CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
    uint64_t before = data_posted(); /* this process's own messages */
    for (int i = 0; i < REPS; i++)
        one(&k, comm, crank, p, i);
    uint64_t mine = data_posted() - before, total = 0;
    CHECK_RC(MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm), MPI_SUCCESS);
    long want = REPS * predict(&k, L, rn);
    if (crank == 0 && k.root == 0 && k.form == F_BLOCK)
        printf("mpi_coll_node: %s %s %s%s root %d: %llu cross-node messages per call "
               "(node-aware shape: %ld) on %d nodes\n",
               cn, fname_[k.form], cname[k.kind], k.nc ? " (non-commutative)" : "", k.root,
               (unsigned long long)(total / REPS), want / REPS, L);
    if (na && (long)total != want) {
        fprintf(stderr,
                "mpi_coll_node: rank %d: %s %s %s%s root %d on %d nodes: %llu cross-node "
                "messages in %d calls (this rank's: %llu), expected %ld\n",
                crank, cn, fname_[k.form], cname[k.kind], k.nc ? " (non-commutative)" : "", k.root,
                L, (unsigned long long)total, REPS, (unsigned long long)mine, want);
        MPI_Barrier(comm); /* every rank's line before the first exit ends the job */
        exit(1);
    }
}

static void suite(MPI_Comm comm, const char *cn, int quick)
{
    int crank, p;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &p);
    static const int64_t counts[] = {1, 7, 1000, 100000};
    int salt = 0;
    for (int form = 0; form < 3; form++)
        for (int kind = 0; kind < C_KINDS; kind++) {
            int nroots = kind == C_BCAST || kind == C_REDUCE ? p : 1;
            for (int root = 0; root < nroots; root++) {
                ccase_t k = {kind, form, 0, root, 0, 0, 0};
                for (int nc = 0; nc < 2; nc++) {
                    if (nc && kind != C_REDUCE && kind != C_ALLREDUCE)
                        continue;
                    k.nc = nc;
                    count_case(k, comm, cn, crank, p);
                }
                if (kind == C_BARRIER) {
                    one(&k, comm, crank, p, 0);
                    continue;
                }
                for (int ci = 0; ci < 4; ci++)
                    for (int layout = 0; layout < 2; layout++)
                        for (int inplace = 0; inplace < 2; inplace++)
                            for (int nc = 0; nc < 2; nc++) {
                                if ((inplace && kind == C_BCAST) || (nc && layout) ||
                                    (nc && kind != C_REDUCE && kind != C_ALLREDUCE))
                                    continue;
                                /* the largest count: every root once, other forms once */
                                if (ci == 3 && (quick || root > 1 || form != F_BLOCK) &&
                                    (layout || inplace || nc))
                                    continue;
                                k.count = counts[ci];
                                k.layout = layout;
                                k.inplace = inplace;
                                k.nc = nc;
                                one(&k, comm, crank, p, ++salt);
                            }
            }
        }
    if (crank == 0)
        printf("mpi_coll_node: %s (%d ranks on %d nodes) ok\n", cn, p, comm_nodes(comm, -1, NULL));
}

/* Argument errors on a multi-node communicator: as on one node. */
static void errors(void)
{
    int x[4] = {0}, y[4] = {0}, cls;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#define EXPECT_CLASS(call, want)                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        MPI_Error_class(rc_, &cls);                                                                \
        if (cls != (want)) {                                                                       \
            fprintf(stderr, "mpi_coll_node: %s gave class %d, expected %s\n", #call, cls, #want);  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
    EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, wsize, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, wsize, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allreduce(x, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Reduce(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    MPI_Request r;
    EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, wsize, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
#undef EXPECT_CLASS
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *na = getenv("FMPL_MPI_NODE_AWARE");
    mode = na ? atoi(na) : 1;
    const boot_nodes_t *nodes = vnic_nodes(runtime_vnic());
    CHECK(nodes);
    wnode = nodes->node_of;
    if (nodes->nnodes < 2) {
        fprintf(stderr, "mpi_coll_node: needs ranks on 2 or more nodes (fmplrun --hosts)\n");
        return 1;
    }
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &gap_t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&gap_t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &pair_t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&pair_t), MPI_SUCCESS);
    CHECK_RC(MPI_Op_create(affine_fn, 0, &affine_op), MPI_SUCCESS);
    CHECK_RC(MPI_Op_create(gapsum_fn, 1, &gapsum_op), MPI_SUCCESS);

    errors();
    suite(MPI_COMM_WORLD, "MPI_COMM_WORLD", quick);
    /* the same members: mailboxes of its own, or none (FMPL_COLL_GROUPS=1) */
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    suite(dup, "dup of MPI_COMM_WORLD", quick);
    MPI_Comm_free(&dup);
    /* reversed ranks: the nodes' order and leaders change */
    MPI_Comm rev, odd;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev), MPI_SUCCESS);
    suite(rev, "reversed", 1);
    /* every other rank: another layout, perhaps one node only (then flat) */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &odd), MPI_SUCCESS);
    suite(odd, wrank % 2 ? "odd ranks" : "even ranks", 1);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&odd);
    MPI_Op_free(&affine_op);
    MPI_Op_free(&gapsum_op);
    MPI_Type_free(&gap_t);
    MPI_Type_free(&pair_t);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
