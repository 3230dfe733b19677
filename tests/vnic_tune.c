/* vnic_tune.c — large transfers between the ranks of a host by whichever paths
 * vnic_shm_tune chose (or the settings forced: the ctest entries run it with every get
 * path): blocking gets and puts of 1, 4 and 16 MiB (and 1 MiB + 5 bytes at an odd offset,
 * a last piece shorter than the others) from and to every other rank, checked byte for
 * byte, the bytes around the target untouched; then gets from a rank that does not
 * progress for a while (a shared get then takes every piece itself, and the target's
 * late answers must not touch the later gets). Rank 0 prints the paths in force and why
 * ("paths: ..."), which vnic_tune_test.sh checks. */
#include <unistd.h>

#include "vnic_common.h"

#define KEY_SRC 2u /* each rank's source pattern, readable by all */
#define KEY_DST 3u /* each rank's landing area for puts */
#define GAP 64
#define MAXSZ ((size_t)16 << 20)

static const size_t sizes[] = {(size_t)1 << 20, ((size_t)1 << 20) + 5, (size_t)4 << 20,
                               (size_t)16 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Offset of a transfer of `size` bytes: odd for the odd size. */
static size_t offset_of(size_t size)
{
    return size % 2 ? 3 : 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    vt_t t;
    vt_init(&t);
    if (t.rank == 0)
        printf("paths: %s\n", vnic_info(t.v)->shm_paths);
    unsigned char *src = malloc(MAXSZ + 8), *dst = malloc(MAXSZ + 2 * GAP + 8),
                  *land = malloc(MAXSZ + 2 * GAP + 8);
    CHECK(src && dst && land);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_SRC, src, MAXSZ + 8, VNIC_ACC_REMOTE_READ), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_DST, land, MAXSZ + 2 * GAP + 8, VNIC_ACC_REMOTE_WRITE),
             FMPL_SUCCESS);
    vt_barrier(&t);
    int failures = 0;
    for (size_t z = 0; z < NSIZES; z++) {
        size_t n = sizes[z], off = offset_of(n);
        /* gets: from every other rank in turn, the source pattern named after the owner */
        vt_fill(src + off, n, t.rank, -1, z);
        vt_barrier(&t);
        for (int k = 1; k < t.size; k++) {
            int peer = (t.rank + k) % t.size;
            memset(dst, 0xee, n + 2 * GAP);
            CHECK_RC(vnic_get(t.v, peer, dst + GAP, n, KEY_SRC, off), FMPL_SUCCESS);
            size_t bad = vt_check(dst + GAP, n, peer, -1, z);
            if (bad != SIZE_MAX || dst[GAP - 1] != 0xee || dst[GAP + n] != 0xee) {
                fprintf(stderr, "rank %d: get of %zu bytes from %d: wrong at %zu\n", t.rank, n,
                        peer, bad);
                failures++;
            }
        }
        /* puts: to the next rank, checked by it after a barrier */
        memset(land, 0xee, n + 2 * GAP);
        vt_barrier(&t);
        if (t.size > 1) {
            int next = (t.rank + 1) % t.size, prev = (t.rank + t.size - 1) % t.size;
            vt_fill(dst, n, t.rank, next, z);
            CHECK_RC(vnic_put(t.v, next, dst, n, KEY_DST, GAP), FMPL_SUCCESS);
            vt_barrier(&t);
            size_t bad = vt_check(land + GAP, n, prev, t.rank, z);
            if (bad != SIZE_MAX || land[GAP - 1] != 0xee || land[GAP + n] != 0xee) {
                fprintf(stderr, "rank %d: put of %zu bytes from %d: wrong at %zu\n", t.rank, n,
                        prev, bad);
                failures++;
            }
        }
        vt_barrier(&t);
    }
    /* A target that does not progress: rank 1 sleeps while rank 0 gets from it again and
     * again; the first gets take every piece themselves, and rank 1 then answers their
     * share requests late, while rank 0 runs later gets. */
    if (t.size > 1 && t.rank <= 1) {
        size_t n = (size_t)1 << 20;
        vt_fill(src, n, t.rank, -2, 7);
        vt_barrier_round(&t);
        if (t.rank == 1) {
            usleep(5 * 1000);
        } else {
            for (int rep = 0; rep < 100; rep++) {
                memset(dst, 0, n);
                CHECK_RC(vnic_get(t.v, 1, dst, n, KEY_SRC, 0), FMPL_SUCCESS);
                if (vt_check(dst, n, 1, -2, 7) != SIZE_MAX) {
                    fprintf(stderr, "rank 0: get %d from a busy rank 1 wrong\n", rep);
                    failures++;
                }
            }
        }
    } else if (t.size > 1) {
        vt_barrier_round(&t);
    }
    vt_barrier(&t);
    CHECK_RC(vnic_mr_dereg(t.v, KEY_SRC), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(t.v, KEY_DST), FMPL_SUCCESS);
    free(src);
    free(dst);
    free(land);
    vt_fini(&t);
    if (failures) {
        fprintf(stderr, "rank %d: %d failures\n", t.rank, failures);
        return 1;
    }
    if (t.rank == 0)
        printf("vnic_tune: ok\n");
    return 0;
}
