/* fmpl_spool.c — buffered mode by timeout (seed 000, 3.2.1): bad arguments; the switch
 * to buffered mode after timeout_ms and the flush by fmpl_sendbuf_check with its counts;
 * the spool's overflow error with nothing sent; a pairwise exchange of blocking sends
 * that completes in buffered mode; isend_wait spooling; flush on removing the spool and
 * at fmpl_finalize. Ranks pair up (r, r^1); an unpaired rank is its own partner.
 * No check depends on timing: receives are only posted after a barrier that the
 * senders reach once their sends have returned. */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31 + (int)(i * 13 % 251));
}

static void check_fill(const unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 31 + (int)(i * 13 % 251))) {
            fprintf(stderr, "content mismatch at %zu (seed %d)\n", i, seed);
            exit(1);
        }
}

/* Calls fmpl_sendbuf_check until nothing is pending; returns the sum of nsent. */
static int drain(void)
{
    int total = 0, nsent, npending;
    do {
        CHECK_RC(fmpl_sendbuf_check(&nsent, &npending), FMPL_SUCCESS);
        CHECK(nsent >= 0 && npending >= 0);
        total += nsent;
    } while (npending > 0);
    return total;
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    int partner = (rank ^ 1) < size ? rank ^ 1 : rank;
    const fmpl_comm W = FMPL_COMM_WORLD;
    fmpl_status st;
    int nsent, npending;

    /* ---- bad arguments ---- */
    char small[64];
    CHECK_RC(fmpl_sendbuf_set(small, sizeof small, -2), FMPL_ERR_ARG);
    CHECK_RC(fmpl_sendbuf_set(NULL, 100, 0), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_sendbuf_set(small, sizeof small, 0), FMPL_ERR_BUFFER); /* too small */
    CHECK_RC(fmpl_sendbuf_check(NULL, NULL), FMPL_SUCCESS);
    CHECK_RC(fmpl_sendbuf_check(&nsent, &npending), FMPL_SUCCESS);
    CHECK(nsent == 0 && npending == 0);

    size_t spool_size = 1 << 20;
    void *spool = malloc(spool_size);
    CHECK(spool);

    /* ---- timeout switch: each send waits 20 ms, then goes to the spool ---- */
    {
        static const size_t sz[3] = {10, 5000, 200000};
        unsigned char *sb = malloc(200000), *rb = malloc(200000);
        CHECK(sb && rb);
        CHECK_RC(fmpl_sendbuf_set(spool, spool_size, 20), FMPL_SUCCESS);
        for (int k = 0; k < 3; k++) {
            fill(sb, sz[k], rank * 10 + k);
            CHECK_RC(fmpl_send(sb, sz[k], partner, 20 + k, W), FMPL_SUCCESS);
            memset(sb, 0xFF, sz[k]); /* the spool has its own copy */
        }
        CHECK_RC(fmpl_sendbuf_check(&nsent, &npending), FMPL_SUCCESS);
        CHECK(nsent == 0 && npending == 3);
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        for (int k = 0; k < 3; k++) {
            CHECK_RC(fmpl_recv(rb, sz[k], partner, 20 + k, W, &st), FMPL_SUCCESS);
            CHECK(st.size == sz[k] && st.mai == 20 + k && st.source == partner);
            check_fill(rb, sz[k], partner * 10 + k);
        }
        CHECK(drain() == 3);
        free(sb);
        free(rb);
    }

    /* ---- overflow: a 4 KiB spool holds one 3000-byte message, not two ---- */
    {
        void *tiny = malloc(4096 + 128);
        unsigned char m[3000], r[3000];
        CHECK(tiny);
        CHECK_RC(fmpl_sendbuf_set(tiny, 4096 + 128, 0), FMPL_SUCCESS);
        fill(m, sizeof m, 100 + rank);
        CHECK_RC(fmpl_send(m, sizeof m, partner, 30, W), FMPL_SUCCESS);
        fill(m, sizeof m, 200 + rank);
        CHECK_RC(fmpl_send(m, sizeof m, partner, 31, W), FMPL_ERR_SPOOL);
        CHECK_RC(fmpl_sendbuf_check(&nsent, &npending), FMPL_SUCCESS);
        CHECK(nsent == 0 && npending == 1);
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(r, sizeof r, partner, 30, W, &st), FMPL_SUCCESS);
        check_fill(r, sizeof r, 100 + partner);
        CHECK(drain() == 1);
        /* The failed send sent nothing: the first message on mai 31 is the retry. */
        fill(m, sizeof m, 300 + rank);
        CHECK_RC(fmpl_send(m, sizeof m, partner, 31, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(r, sizeof r, partner, 31, W, &st), FMPL_SUCCESS);
        check_fill(r, sizeof r, 300 + partner);
        drain();
        /* A message larger than the whole spool cannot be buffered either. */
        static unsigned char big[8192];
        CHECK_RC(fmpl_send(big, sizeof big, partner, 32, W), FMPL_ERR_SPOOL);
        CHECK_RC(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_INFINITE), FMPL_SUCCESS);
        free(tiny);
    }

    /* ---- pairwise exchange of blocking sends: send first, then receive, on both sides.
     * In synchronous mode this deadlocks; in buffered mode it completes. Also many
     * messages on one mai and zero-byte ones. ---- */
    for (int timeout = 0; timeout <= 5; timeout += 5) {
        CHECK_RC(fmpl_sendbuf_set(spool, spool_size, timeout), FMPL_SUCCESS);
        size_t n = 100000;
        unsigned char *sb = malloc(n), *rb = malloc(n);
        CHECK(sb && rb);
        for (int it = 0; it < 5; it++) {
            fill(sb, n, rank + it);
            CHECK_RC(fmpl_send(sb, n, partner, 40, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_send(NULL, 0, partner, 41, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_recv(rb, n, partner, 40, W, &st), FMPL_SUCCESS);
            CHECK(st.size == n);
            check_fill(rb, n, partner + it);
            CHECK_RC(fmpl_recv(NULL, 0, partner, 41, W, &st), FMPL_SUCCESS);
            CHECK(st.size == 0);
        }
        /* Several spooled messages on one (pair, mai) arrive in send order. */
        int v[4] = {0};
        for (int i = 0; i < 4; i++) {
            int x = rank * 10 + i;
            CHECK_RC(fmpl_send(&x, sizeof x, partner, 42, W), FMPL_SUCCESS);
        }
        for (int i = 0; i < 4; i++)
            CHECK_RC(fmpl_recv(&v[i], sizeof v[i], partner, 42, W, &st), FMPL_SUCCESS);
        for (int i = 0; i < 4; i++)
            CHECK(v[i] == partner * 10 + i);
        drain();
        free(sb);
        free(rb);
    }

    /* ---- isend_wait in buffered mode: the pending send is spooled and completes ---- */
    {
        CHECK_RC(fmpl_sendbuf_set(spool, spool_size, 0), FMPL_SUCCESS);
        unsigned char s[777], r[777];
        fill(s, sizeof s, 50 + rank);
        CHECK_RC(fmpl_isend(s, sizeof s, partner, 50, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_wait(partner, 50, W), FMPL_SUCCESS);
        memset(s, 0, sizeof s);
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(r, sizeof r, partner, 50, W, &st), FMPL_SUCCESS);
        check_fill(r, sizeof r, 50 + partner);
        drain();
    }

    /* ---- removing the spool flushes it first ---- */
    {
        int x = 600 + rank, y = -1;
        CHECK_RC(fmpl_send(&x, sizeof x, partner, 60, W), FMPL_SUCCESS); /* spooled or sent */
        CHECK_RC(fmpl_irecv(&y, sizeof y, partner, 60, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_INFINITE), FMPL_SUCCESS);
        CHECK_RC(fmpl_sendbuf_check(&nsent, &npending), FMPL_SUCCESS);
        CHECK(npending == 0);
        CHECK_RC(fmpl_irecv_wait(partner, 60, W, &st), FMPL_SUCCESS);
        CHECK(y == 600 + partner);
    }

    /* ---- a spooled send moves while its sender waits in a collective: the low rank
     * spools and enters the barrier; the high rank receives, then enters it ---- */
    {
        CHECK_RC(fmpl_sendbuf_set(spool, spool_size, 0), FMPL_SUCCESS);
        int x = 800 + rank, y = -1;
        if (partner != rank && rank < partner)
            CHECK_RC(fmpl_send(&x, sizeof x, partner, 80, W), FMPL_SUCCESS);
        if (partner != rank && rank > partner) {
            CHECK_RC(fmpl_recv(&y, sizeof y, partner, 80, W, &st), FMPL_SUCCESS);
            CHECK(y == 800 + partner);
        }
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        drain();
    }

    /* ---- fmpl_finalize flushes the spool: the low rank of a pair spools a message and
     * finalizes; the high rank receives it only after the barrier ---- */
    {
        CHECK_RC(fmpl_sendbuf_set(spool, spool_size, 0), FMPL_SUCCESS);
        int x = 700 + rank, y = -1;
        if (partner != rank && rank < partner) {
            CHECK_RC(fmpl_send(&x, sizeof x, partner, 70, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_sendbuf_check(&nsent, &npending), FMPL_SUCCESS);
            CHECK(npending == 1);
        }
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        if (partner != rank && rank > partner) {
            CHECK_RC(fmpl_recv(&y, sizeof y, partner, 70, W, &st), FMPL_SUCCESS);
            CHECK(y == 700 + partner);
        }
    }
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    free(spool);
    if (rank == 0)
        printf("fmpl_spool: ok (%d ranks)\n", size);
    return 0;
}
