/* mpi_p2p.c — MPI point-to-point: content checks at any rank count. Ping-pong 0..8 MiB
 * contiguous and with a vector type on either side; ANY_SOURCE/ANY_TAG; non-overtaking
 * order; unexpected storms and many posted receives; truncation without overrun;
 * PROC_NULL; wait/test variants; probe/mprobe/mrecv; cancel; persistent requests; Bsend;
 * Ssend semantics; generalized requests; error classes. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size;

/* A dissemination barrier made of point-to-point (collectives come in a later issue), on
 * its own communicator: wildcard receives the tests post on MPI_COMM_WORLD must not take
 * its messages. */
static MPI_Comm barrier_comm;
static void barrier(void)
{
    for (int d = 1; d < size; d *= 2) {
        char x = 0, y;
        CHECK_RC(MPI_Sendrecv(&x, 1, MPI_CHAR, (rank + d) % size, 32000, &y, 1, MPI_CHAR,
                              (rank - d + size) % size, 32000, barrier_comm, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
    }
}

static unsigned char pat(int src, int salt, size_t i)
{
    return (unsigned char)(i * 131u + (size_t)src * 17u + (size_t)salt * 7u + 1u);
}

static void fill(unsigned char *p, size_t n, int src, int salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pat(src, salt, i);
}

static void check(const unsigned char *p, size_t n, int src, int salt)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(src, salt, i)) {
            fprintf(stderr, "rank %d: byte %zu of %zu from %d (salt %d) wrong\n", rank, i, n, src,
                    salt);
            exit(1);
        }
}

/* Ping-pong between ranks 0 and size-1 (self when 1 rank), contiguous and vector. */
static void test_pingpong(void)
{
    int peer = rank == 0 ? size - 1 : 0;
    if (rank != 0 && rank != size - 1)
        return;
    size_t max = 8u << 20;
    unsigned char *a = malloc(2 * max + 16), *b = malloc(2 * max + 16);
    CHECK(a && b);
    MPI_Datatype vec; /* every other byte of 2*n: a vector of n 1-byte blocks, stride 2 */
    for (size_t n = 0; n <= max; n = n ? n * 4 : 1) {
        for (int mode = 0; mode < 3; mode++) { /* 0 contig, 1 vector send, 2 vector recv */
            MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &vec);
            MPI_Type_commit(&vec);
            MPI_Status st;
            MPI_Request sq = MPI_REQUEST_NULL; /* with one rank, 0 sends to itself */
            if (rank == 0) {
                if (mode == 1) {
                    memset(a, 0, 2 * n);
                    for (size_t i = 0; i < n; i++)
                        a[2 * i] = pat(0, (int)n, i);
                    CHECK_RC(MPI_Isend(a, 1, vec, peer, 5, MPI_COMM_WORLD, &sq), MPI_SUCCESS);
                } else {
                    fill(a, n, 0, (int)n);
                    CHECK_RC(MPI_Isend(a, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &sq),
                             MPI_SUCCESS);
                }
            }
            if (rank == size - 1) { /* the receiving side (rank 0 itself with 1 rank) */
                memset(b, 0xee, 2 * n + 16);
                if (mode == 2) {
                    CHECK_RC(MPI_Recv(b, 1, vec, 0, 5, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                    for (size_t i = 0; i < n; i++)
                        CHECK(b[2 * i] == pat(0, (int)n, i));
                    for (size_t i = 0; i + 1 < 2 * n; i += 2)
                        CHECK(b[i + 1] == 0xee);
                } else {
                    CHECK_RC(MPI_Recv(b, (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                    check(b, n, 0, (int)n);
                    CHECK(b[n] == 0xee);
                }
                int cnt;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 5);
                CHECK((size_t)cnt == (mode == 2 ? n : n));
                /* pong back */
                CHECK_RC(MPI_Send(b, 0, MPI_BYTE, 0, 6, MPI_COMM_WORLD), MPI_SUCCESS);
            }
            if (rank == 0) {
                CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPI_SUCCESS);
                CHECK_RC(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            }
            MPI_Type_free(&vec);
        }
    }
    free(a);
    free(b);
}

/* Every rank sends N messages to every rank; receivers use wildcards, check order. */
static void test_order_wild(int n, int prepost)
{
    int *next = calloc((size_t)size, sizeof *next);
    int(*bufs)[4] = malloc(sizeof(int[4]) * (size_t)n * (size_t)size);
    MPI_Request *rq = malloc(sizeof *rq * (size_t)n * (size_t)size);
    if (prepost)
        for (int i = 0; i < n * size; i++)
            MPI_Irecv(bufs[i], 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]);
    barrier();
    MPI_Request *sq = malloc(sizeof *sq * (size_t)n * (size_t)size);
    int(*sb)[4] = malloc(sizeof(int[4]) * (size_t)n * (size_t)size);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < size; d++) {
            int k = i * size + d;
            sb[k][0] = rank;
            sb[k][1] = i;
            sb[k][2] = d;
            sb[k][3] = 42;
            MPI_Isend(sb[k], 4, MPI_INT, d, i % 7, MPI_COMM_WORLD, &sq[k]);
        }
    if (!prepost) {
        barrier(); /* storms: everything unexpected first */
        int k = 0;
        MPI_Status st;
        /* per source: a quarter by exact (source, tag), a quarter by (source, ANY_TAG) */
        for (int src = 0; src < size; src++)
            for (int i = 0; i < n / 2; i++, k++) {
                int tag = i < n / 4 ? next[src] % 7 : MPI_ANY_TAG;
                CHECK_RC(MPI_Recv(bufs[k], 4, MPI_INT, src, tag, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                CHECK(bufs[k][0] == src && st.MPI_SOURCE == src && bufs[k][1] == next[src]);
                CHECK(st.MPI_TAG == next[src] % 7 && bufs[k][2] == rank);
                next[src]++;
            }
        for (; k < n * size; k++) { /* the rest by ANY_SOURCE, ANY_TAG */
            CHECK_RC(
                MPI_Recv(bufs[k], 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
                MPI_SUCCESS);
            int src = bufs[k][0];
            CHECK(st.MPI_SOURCE == src && bufs[k][1] == next[src] && st.MPI_TAG == next[src] % 7);
            next[src]++;
        }
    } else {
        MPI_Status *sts = malloc(sizeof *sts * (size_t)n * (size_t)size);
        CHECK_RC(MPI_Waitall(n * size, rq, sts), MPI_SUCCESS);
        for (int i = 0; i < n * size; i++) {
            int s = bufs[i][0];
            CHECK(sts[i].MPI_SOURCE == s && bufs[i][1] == next[s] && bufs[i][3] == 42);
            next[s]++;
        }
        free(sts);
    }
    for (int s = 0; s < size; s++)
        CHECK(next[s] == n);
    CHECK_RC(MPI_Waitall(n * size, sq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    free(sb);
    free(sq);
    free(rq);
    free(bufs);
    free(next);
    barrier();
}

static void test_truncate_procnull(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int big = 0; big < 2; big++) {
        size_t n = big ? 100000 : 100;
        unsigned char *s = malloc(n), *r = malloc(n);
        fill(s, n, rank, 3);
        memset(r, 0x55, n);
        MPI_Request q;
        MPI_Isend(s, (int)n, MPI_BYTE, right, 9, MPI_COMM_WORLD, &q);
        MPI_Status st;
        int rc = MPI_Recv(r, (int)n / 2, MPI_BYTE, left, 9, MPI_COMM_WORLD, &st);
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE);
        check(r, n / 2, left, 3);
        for (size_t i = n / 2; i < n; i++)
            CHECK(r[i] == 0x55);
        CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        free(s);
        free(r);
    }
    MPI_Status st;
    CHECK_RC(MPI_Send(NULL, 5, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_RC(MPI_Recv(NULL, 5, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0);
    MPI_Message m;
    CHECK_RC(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st), MPI_SUCCESS);
    CHECK(m == MPI_MESSAGE_NO_PROC);
    CHECK_RC(MPI_Mrecv(NULL, 0, MPI_INT, &m, &st), MPI_SUCCESS);
    CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL);
    /* errors */
    int x = 0, cl;
    MPI_Error_class(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), &cl);
    CHECK(cl == MPI_ERR_RANK);
    MPI_Error_class(MPI_Send(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD), &cl);
    CHECK(cl == MPI_ERR_TAG);
    MPI_Error_class(MPI_Send(&x, 1, MPI_INT, 0, (1 << 30), MPI_COMM_WORLD), &cl);
    CHECK(cl == MPI_ERR_TAG);
    MPI_Error_class(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), &cl);
    CHECK(cl == MPI_ERR_COUNT);
    MPI_Error_class(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), &cl);
    CHECK(cl == MPI_ERR_TYPE);
    MPI_Error_class(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), &cl);
    CHECK(cl == MPI_ERR_COMM);
    MPI_Error_class(MPI_Recv(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &st), &cl);
    CHECK(cl == MPI_ERR_RANK);
    MPI_Request bad = MPI_REQUEST_NULL + 12345;
    MPI_Error_class(MPI_Wait(&bad, &st), &cl);
    CHECK(cl == MPI_ERR_REQUEST);
    barrier();
}

static void test_waits(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    enum { N = 8 };
    int in[N], out[N];
    MPI_Request r[N], s[N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * 100 + i;
        MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &r[i]);
    }
    /* Test before anything was sent: nothing done (no rank sends before every rank has
     * entered the barrier below) */
    int flag = 1;
    CHECK_RC(MPI_Testall(N, r, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(!flag);
    barrier();
    for (int i = N - 1; i >= 0; i--)
        MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &s[i]);
    int done = 0, idx[N];
    MPI_Status sts[N];
    while (done < N) {
        int oc;
        CHECK_RC(MPI_Waitsome(N, r, &oc, idx, sts), MPI_SUCCESS);
        CHECK(oc >= 1);
        for (int k = 0; k < oc; k++) {
            CHECK(in[idx[k]] == left * 100 + idx[k] && sts[k].MPI_TAG == idx[k]);
            CHECK(r[idx[k]] == MPI_REQUEST_NULL);
        }
        done += oc;
    }
    int oc;
    CHECK_RC(MPI_Waitsome(N, r, &oc, idx, sts), MPI_SUCCESS);
    CHECK(oc == MPI_UNDEFINED);
    int index;
    for (int k = 0; k < N; k++) {
        CHECK_RC(MPI_Waitany(N, s, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(index >= 0 && s[index] == MPI_REQUEST_NULL);
    }
    CHECK_RC(MPI_Waitany(N, s, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(index == MPI_UNDEFINED);
    CHECK_RC(MPI_Testany(N, s, &index, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(flag && index == MPI_UNDEFINED);
    /* Test / Testsome / Request_get_status */
    MPI_Request q;
    int v = -1;
    MPI_Irecv(&v, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &q);
    CHECK_RC(MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(!flag || size > 1); /* with peers, the left one may have sent already */
    MPI_Send(&rank, 1, MPI_INT, right, 77, MPI_COMM_WORLD);
    do {
        MPI_Request_get_status(q, &flag, &sts[0]);
    } while (!flag);
    CHECK(q != MPI_REQUEST_NULL && sts[0].MPI_SOURCE == left);
    do {
        CHECK_RC(MPI_Testsome(1, &q, &oc, idx, sts), MPI_SUCCESS);
    } while (oc == 0);
    CHECK(oc == 1 && v == left && q == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Test(&q, &flag, &sts[0]), MPI_SUCCESS);
    CHECK(flag && sts[0].MPI_SOURCE == MPI_ANY_SOURCE);
    barrier();
}

static void test_probe_cancel_persistent(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int big = 50000;
    int *data = malloc(sizeof(int) * (size_t)big), *got = malloc(sizeof(int) * (size_t)big);
    for (int i = 0; i < big; i++)
        data[i] = i ^ rank;
    for (int len = 3; len <= big; len = len == 3 ? big : big + 1) {
        MPI_Request q;
        MPI_Isend(data, len, MPI_INT, right, 31, MPI_COMM_WORLD, &q);
        MPI_Status st;
        CHECK_RC(MPI_Probe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == len && st.MPI_TAG == 31 && st.MPI_SOURCE == left);
        int flag = 0;
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &flag, &st);
        MPI_Message m;
        CHECK_RC(MPI_Mprobe(left, 31, MPI_COMM_WORLD, &m, &st), MPI_SUCCESS);
        MPI_Status st2;
        CHECK_RC(MPI_Iprobe(left, 31, MPI_COMM_WORLD, &flag, &st2), MPI_SUCCESS);
        if (flag) { /* not this message, taken out by Mprobe: the left rank's next one */
            int cnt2;
            MPI_Get_count(&st2, MPI_INT, &cnt2);
            CHECK(cnt2 != len);
        }
        memset(got, 0, sizeof(int) * (size_t)len);
        if (len == 3) {
            CHECK_RC(MPI_Mrecv(got, len, MPI_INT, &m, &st), MPI_SUCCESS);
        } else {
            MPI_Request mq;
            CHECK_RC(MPI_Imrecv(got, len, MPI_INT, &m, &mq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&mq, &st), MPI_SUCCESS);
        }
        for (int i = 0; i < len; i++)
            CHECK(got[i] == (i ^ left));
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    /* cancel an unmatched receive */
    MPI_Request q;
    MPI_Status st;
    MPI_Irecv(got, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &q);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    int c;
    MPI_Test_cancelled(&st, &c);
    CHECK(c);
    /* persistent, restarted many times, both sizes */
    MPI_Request pr[2];
    for (int len = 1; len <= big; len = len == 1 ? big : big + 1) {
        MPI_Recv_init(got, len, MPI_INT, left, 40, MPI_COMM_WORLD, &pr[0]);
        MPI_Send_init(data, len, MPI_INT, right, 40, MPI_COMM_WORLD, &pr[1]);
        for (int it = 0; it < 50; it++) {
            data[0] = it;
            got[0] = -1;
            CHECK_RC(MPI_Startall(2, pr), MPI_SUCCESS);
            CHECK_RC(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            CHECK(got[0] == it && (len == 1 || got[len - 1] == ((len - 1) ^ left)));
            CHECK(pr[0] != MPI_REQUEST_NULL);
            barrier();
        }
        MPI_Request_free(&pr[0]);
        MPI_Request_free(&pr[1]);
    }
    free(data);
    free(got);
    barrier();
}

static void test_ssend_bsend(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int len = 1; len <= 100000; len *= 1000) {
        unsigned char *s = malloc((size_t)len), *r = malloc((size_t)len);
        fill(s, (size_t)len, rank, 8);
        MPI_Request q;
        MPI_Issend(s, len, MPI_BYTE, right, 50, MPI_COMM_WORLD, &q);
        int flag = 1;
        for (int i = 0; i < 100; i++)
            MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag); /* nobody posts the receive before every rank is in the barrier */
        barrier();
        MPI_Recv(r, len, MPI_BYTE, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(r, (size_t)len, left, 8);
        CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        free(s);
        free(r);
    }
    /* Bsend */
    int bsz = 3 * (100000 + MPI_BSEND_OVERHEAD);
    void *buf = malloc((size_t)bsz);
    CHECK_RC(MPI_Buffer_attach(buf, bsz), MPI_SUCCESS);
    unsigned char *s = malloc(100000), *r = malloc(100000);
    for (int k = 0; k < 3; k++) {
        int len = k == 1 ? 100000 : 10 + k;
        fill(s, (size_t)len, rank, 20 + k);
        CHECK_RC(MPI_Bsend(s, len, MPI_BYTE, right, 60 + k, MPI_COMM_WORLD), MPI_SUCCESS);
        memset(s, 0, (size_t)len); /* the buffered copy is what goes */
    }
    MPI_Request q;
    fill(s, 77, rank, 30);
    CHECK_RC(MPI_Ibsend(s, 77, MPI_BYTE, right, 63, MPI_COMM_WORLD, &q), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int k = 3; k >= 0; k--) {
        int len = k == 3 ? 77 : k == 1 ? 100000 : 10 + k;
        CHECK_RC(MPI_Recv(r, len, MPI_BYTE, left, 60 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        check(r, (size_t)len, left, k == 3 ? 30 : 20 + k);
    }
    void *ab;
    int asz;
    CHECK_RC(MPI_Buffer_detach(&ab, &asz), MPI_SUCCESS);
    CHECK(ab == buf && asz == bsz);
    free(buf);
    free(s);
    free(r);
    barrier();
}

static int g_freed, g_cancelled;
static int g_query(void *extra, MPI_Status *st)
{
    st->MPI_SOURCE = 123;
    st->MPI_TAG = *(int *)extra;
    st->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}
static int g_free(void *extra)
{
    (void)extra;
    g_freed++;
    return MPI_SUCCESS;
}
static int g_cancel(void *extra, int complete)
{
    (void)extra;
    g_cancelled += 1 + complete;
    return MPI_SUCCESS;
}

static void test_greq(void)
{
    int tag = 17;
    MPI_Request q;
    CHECK_RC(MPI_Grequest_start(g_query, g_free, g_cancel, &tag, &q), MPI_SUCCESS);
    int flag = 1;
    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag && g_freed == 0);
    MPI_Cancel(&q);
    CHECK(g_cancelled == 1);
    MPI_Grequest_complete(q);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    CHECK(q == MPI_REQUEST_NULL && st.MPI_SOURCE == 123 && st.MPI_TAG == 17 && g_freed == 1);
    /* freed before completion: free_fn at completion */
    CHECK_RC(MPI_Grequest_start(g_query, g_free, g_cancel, &tag, &q), MPI_SUCCESS);
    MPI_Request keep = q;
    MPI_Request_free(&q);
    CHECK(g_freed == 1);
    MPI_Grequest_complete(keep);
    CHECK(g_freed == 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &barrier_comm), MPI_SUCCESS);
    test_pingpong();
    if (getenv("MPI_P2P_TRACE"))
        fprintf(stderr, "%d: pingpong done\n", rank);
    barrier();
    test_order_wild(300, 0);
    test_order_wild(300, 1);
    test_truncate_procnull();
    test_waits();
    test_probe_cancel_persistent();
    test_ssend_bsend();
    test_greq();
    MPI_Comm_free(&barrier_comm);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_p2p: ok (%d ranks)\n", size);
    return 0;
}
