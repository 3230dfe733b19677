/* vnic_direct.c — direct access to a same-host peer's memory (vnic_peer_ptr,
 * vnic_peer_wake, vnic_copy_alone): a region in the shared heap (vnic_mem_alloc) of every peer on
 * this host is reachable by address, stores through it are seen by the peer (also one sleeping in
 * vnic_wait: the wake-up), and what cannot be reached that way gives NULL: a bad key, bounds
 * outside the region, a read-only region, private (malloc'd) memory, a peer on another host or any
 * peer under FMPL_TRANSPORT=udp (argument "none": no peer but self is expected to be reachable).
 * vnic_copy_alone reads a peer's private memory (CMA, or VNIC_AGAIN without it or on udp) and
 * refuses bad keys, bounds and access. */
#include "vnic_common.h"

#define KEY_HEAP 3u
#define KEY_RO 4u
#define KEY_PRIV 5u
#define WORDS 64

typedef struct wait_word {
    volatile uint64_t *w;
    uint64_t want;
} wait_word_t;

static int word_ready(void *arg)
{
    wait_word_t *x = arg;
    return __atomic_load_n(x->w, __ATOMIC_ACQUIRE) >= x->want;
}

int main(int argc, char **argv)
{
    vt_t t;
    vt_init(&t);
    int none = argc > 1 && strcmp(argv[1], "none") == 0;
    uint64_t *heap = vnic_mem_alloc(t.v, WORDS * 8 * (size_t)t.size);
    uint64_t *ro = vnic_mem_alloc(t.v, 64);
    uint64_t *priv = calloc(WORDS, 8);
    CHECK(heap && ro && priv);
    for (int i = 0; i < WORDS; i++)
        priv[i] = ((uint64_t)t.rank << 40) | (uint64_t)i;
    memset(heap, 0, WORDS * 8 * (size_t)t.size);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_HEAP, heap, WORDS * 8 * (size_t)t.size, VNIC_ACC_ALL),
             FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_RO, ro, 64, VNIC_ACC_REMOTE_READ), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_PRIV, priv, WORDS * 8, VNIC_ACC_ALL), FMPL_SUCCESS);
    vt_barrier(&t);

    size_t mine = WORDS * 8 * (size_t)t.rank; /* my block in every peer's heap region */
    for (int p = 0; p < t.size; p++) {
        uint64_t *d = vnic_peer_ptr(t.v, p, KEY_HEAP, mine, WORDS * 8);
        if (none && p != t.rank) {
            CHECK(d == NULL);
            continue;
        }
        CHECK(d != NULL);
        CHECK(p != t.rank || d == heap + WORDS * t.rank);
        CHECK(vnic_peer_ptr(t.v, p, KEY_HEAP, WORDS * 8 * (uint64_t)t.size - 8, 16) == NULL);
        CHECK(vnic_peer_ptr(t.v, p, KEY_HEAP, UINT64_MAX - 4, 8) == NULL);
        CHECK(vnic_peer_ptr(t.v, p, 77u, 0, 8) == NULL);    /* no such key */
        CHECK(vnic_peer_ptr(t.v, p, KEY_RO, 0, 8) == NULL); /* no remote writes */
        if (p != t.rank)
            CHECK(vnic_peer_ptr(t.v, p, KEY_PRIV, 0, 8) == NULL); /* not in the heap */
        for (int i = 0; i < WORDS - 1; i++)
            d[i] = ((uint64_t)t.rank << 32) | (uint64_t)i;
        __atomic_store_n(&d[WORDS - 1], 1 + (uint64_t)t.rank, __ATOMIC_RELEASE);
        vnic_peer_wake(t.v, p);
    }
    CHECK(vnic_peer_ptr(t.v, t.size, KEY_HEAP, 0, 8) == NULL);
    CHECK(vnic_peer_ptr(t.v, -1, KEY_HEAP, 0, 8) == NULL);
    vnic_peer_wake(t.v, t.size); /* ignored */

    /* every rank that could reach me wrote its block: wait for its last word (sleeping
     * in vnic_wait if it comes late), then check the block */
    for (int q = 0; q < t.size; q++) {
        if (none && q != t.rank)
            continue;
        uint64_t *b = heap + WORDS * q;
        wait_word_t w = {&b[WORDS - 1], 1 + (uint64_t)q};
        CHECK_RC(vnic_wait(t.v, word_ready, &w, 10 * 1000000000ll), FMPL_SUCCESS);
        for (int i = 0; i < WORDS - 1; i++)
            CHECK(b[i] == (((uint64_t)q << 32) | (uint64_t)i));
    }
    /* vnic_copy_alone: every peer's private words, by this process alone */
    uint64_t got[WORDS];
    for (int p = 0; p < t.size; p++) {
        int rc = vnic_copy_alone(t.v, p, 1, got, KEY_PRIV, 0, WORDS * 8);
        if (none && p != t.rank) {
            CHECK_RC(rc, VNIC_AGAIN);
            continue;
        }
        if (rc == VNIC_AGAIN) { /* (only without CMA) */
            CHECK(p != t.rank && !vnic_info(t.v)->cma);
            continue;
        }
        CHECK_RC(rc, FMPL_SUCCESS);
        for (int i = 0; i < WORDS; i++)
            CHECK(got[i] == (((uint64_t)p << 40) | (uint64_t)i));
        CHECK_RC(vnic_copy_alone(t.v, p, 1, got, 77u, 0, 8), FMPL_ERR_KEY);
        CHECK_RC(vnic_copy_alone(t.v, p, 0, got, KEY_RO, 0, 8), FMPL_ERR_KEY); /* read-only */
        CHECK_RC(vnic_copy_alone(t.v, p, 1, got, KEY_PRIV, 8, WORDS * 8), FMPL_ERR_KEY);
    }
    CHECK_RC(vnic_copy_alone(t.v, t.size, 1, got, KEY_PRIV, 0, 8), FMPL_ERR_ARG);
    vt_barrier(&t);
    for (vnic_key_t k = KEY_HEAP; k <= KEY_PRIV; k++)
        CHECK_RC(vnic_mr_dereg(t.v, k), FMPL_SUCCESS);
    vnic_mem_free(t.v, heap);
    vnic_mem_free(t.v, ro);
    free(priv);
    vt_fini(&t);
    return 0;
}
