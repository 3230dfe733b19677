/* vnic_heap.c — the shared-heap allocator, without launcher: alignment, reuse after
 * free, coalescing (fragmentation then one block of the whole heap), exhaustion gives
 * NULL, foreign and double frees give FMPL_ERR_BUFFER, pages are committed once on
 * first use and a failing commit gives NULL. Then through a singleton vnic: the heap
 * key, vnic_mem_* and FMPL_SHM_HEAP. */
#include "vnic/vnic_impl.h"
#include "vnic_common.h"

#define ARENA (1 << 20)

static size_t committed;
static int commit_fail;

static int commit(void *arg, size_t off, size_t len)
{
    (void)arg;
    CHECK(off % 4096 == 0 && len % 4096 == 0 && off + len <= ARENA);
    if (commit_fail)
        return -1;
    committed += len;
    return 0;
}

int main(void)
{
    char *arena = aligned_alloc(4096, ARENA);
    vnic_heap_t *h;
    CHECK_RC(vnic_heap_create(arena, ARENA, commit, NULL, &h), FMPL_SUCCESS);
    vnic_heap_destroy(h);
    CHECK_RC(vnic_heap_create(arena + 1, ARENA, commit, NULL, &h), FMPL_ERR_ARG);
    CHECK_RC(vnic_heap_create(arena, ARENA, commit, NULL, &h), FMPL_SUCCESS);
    size_t largest;
    CHECK(vnic_heap_free_bytes(h, &largest) == ARENA && largest == ARENA);

    /* alignment, distinct blocks, lazy commit */
    char *a = vnic_heap_alloc(h, 1), *b = vnic_heap_alloc(h, 100), *z = vnic_heap_alloc(h, 0);
    CHECK(a && b && z && a != b && b != z);
    CHECK((uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0 && (uintptr_t)z % 64 == 0);
    CHECK(b >= a + 64 && z >= b + 128);
    CHECK(committed == 4096);
    memset(b, 1, 100);
    /* frees: NULL ok, foreign, interior, double */
    CHECK_RC(vnic_heap_free(h, NULL), FMPL_SUCCESS);
    int local;
    CHECK_RC(vnic_heap_free(h, &local), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_heap_free(h, b + 64), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_heap_free(h, b + 1), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_heap_free(h, a), FMPL_SUCCESS);
    CHECK_RC(vnic_heap_free(h, a), FMPL_ERR_BUFFER);
    char *a2 = vnic_heap_alloc(h, 64); /* first fit reuses the hole */
    CHECK(a2 == a);
    CHECK_RC(vnic_heap_free(h, a2), FMPL_SUCCESS);
    CHECK_RC(vnic_heap_free(h, b), FMPL_SUCCESS);
    CHECK_RC(vnic_heap_free(h, z), FMPL_SUCCESS);
    CHECK(vnic_heap_free_bytes(h, &largest) == ARENA && largest == ARENA);

    /* fragmentation: fill with small blocks, free every other one, then the rest */
    enum { NB = ARENA / 256 };
    static char *blk[NB + 1];
    int n = 0;
    while ((blk[n] = vnic_heap_alloc(h, 200)) != NULL)
        n++;
    CHECK(n == NB); /* 200 -> 256 bytes each: exactly fills the arena */
    CHECK(committed == ARENA);
    CHECK(vnic_heap_alloc(h, 1) == NULL); /* exhausted */
    for (int i = 0; i < n; i += 2)
        CHECK_RC(vnic_heap_free(h, blk[i]), FMPL_SUCCESS);
    CHECK(vnic_heap_free_bytes(h, &largest) == ARENA / 2 && largest == 256);
    CHECK(vnic_heap_alloc(h, 257) == NULL); /* fragmented: no 320-byte hole */
    char *small = vnic_heap_alloc(h, 256);
    CHECK(small == blk[0]);
    CHECK_RC(vnic_heap_free(h, small), FMPL_SUCCESS);
    for (int i = 1; i < n; i += 2)
        CHECK_RC(vnic_heap_free(h, blk[i]), FMPL_SUCCESS);
    CHECK(vnic_heap_free_bytes(h, &largest) == ARENA && largest == ARENA); /* coalesced */
    char *all = vnic_heap_alloc(h, ARENA);
    CHECK(all == arena);
    CHECK(vnic_heap_alloc(h, 1) == NULL);
    CHECK_RC(vnic_heap_free(h, all), FMPL_SUCCESS);
    CHECK(vnic_heap_alloc(h, ARENA + 1) == NULL);
    vnic_heap_destroy(h);

    /* a failing commit (no room in /dev/shm) gives NULL and leaks nothing */
    committed = 0;
    CHECK_RC(vnic_heap_create(arena, ARENA, commit, NULL, &h), FMPL_SUCCESS);
    commit_fail = 1;
    CHECK(vnic_heap_alloc(h, 100) == NULL);
    commit_fail = 0;
    CHECK(vnic_heap_free_bytes(h, NULL) == ARENA);
    CHECK(vnic_heap_alloc(h, 100) == arena);
    vnic_heap_destroy(h);
    free(arena);

    /* through a singleton vnic with a 1 MiB heap */
    setenv("FMPL_SHM_HEAP", "1M", 1);
    boot_t *boot;
    vnic_t *v;
    CHECK_RC(boot_init(&boot), FMPL_SUCCESS);
    CHECK_RC(vnic_open(boot, &v), FMPL_SUCCESS);
    CHECK(vnic_info(v)->heap_size == (1 << 20));
    char *p = vnic_mem_alloc(v, 1000), *q = vnic_mem_alloc(v, 1 << 20);
    CHECK(p && !q);
    CHECK(vnic_mem_in_heap(v, p, 1000));
    CHECK(!vnic_mem_in_heap(v, p, (1 << 20) + 1));
    CHECK(vnic_mem_heap_offset(v, p) == 0);
    memset(p, 9, 1000);
    char got[1000];
    CHECK_RC(vnic_get(v, 0, got, 1000, VNIC_KEY_HEAP, 0), FMPL_SUCCESS);
    CHECK(got[0] == 9 && got[999] == 9);
    CHECK_RC(vnic_mem_free(v, p + 64), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_mem_free(v, p), FMPL_SUCCESS);
    CHECK_RC(vnic_close(v), FMPL_SUCCESS);
    CHECK_RC(boot_finalize(boot), FMPL_SUCCESS);
    printf("vnic_heap: ok\n");
    return 0;
}
