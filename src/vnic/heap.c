/* heap.c — allocator of the shared heap (vnic_mem_alloc/free).
 *
 * The heap is a range of the host segment that peers map too, so its metadata must
 * not live inside it (a peer's stray write must not corrupt the allocator, and the
 * owner alone allocates). Metadata, all in private memory:
 *   - free extents: an array sorted by offset, first fit, coalesced on free with
 *     both neighbours (binary search);
 *   - live blocks: an open-addressing hash table offset -> length, so that free()
 *     of a pointer that is not a live block start is refused with FMPL_ERR_BUFFER;
 *   - committed pages: a bitmap; pages are backed (fallocate on tmpfs) the first time
 *     a block covers them, so exhausting /dev/shm gives NULL here, never SIGBUS.
 * Blocks are multiples of 64 bytes and 64-byte aligned. Not thread-safe (the vnic is
 * used by one thread at a time). */
#include <stdlib.h>
#include <string.h>

#include "vnic/vnic_impl.h"

#define HEAP_UNIT 64
#define HEAP_PAGE 4096

typedef struct heap_extent {
    size_t off, len;
} heap_extent_t;

struct vnic_heap {
    char *base;
    size_t size;
    vnic_heap_commit_fn commit;
    void *commit_arg;
    heap_extent_t *free; /* sorted by off, never adjacent (coalesced) */
    size_t nfree, capfree;
    /* live blocks: key off+1 (0 = empty slot), value len; tombstones = SIZE_MAX */
    size_t *live_key, *live_len;
    size_t live_cap, live_n, live_used;
    uint64_t *committed; /* one bit per page */
};

static size_t heap_hash(size_t off, size_t cap)
{
    uint64_t x = (uint64_t)off / HEAP_UNIT;
    x *= 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static int heap_live_grow(vnic_heap_t *h)
{
    size_t ncap = h->live_cap ? h->live_cap * 2 : 256;
    if (h->live_n * 2 < h->live_cap)
        ncap = h->live_cap; /* only tombstones: rehash in place size */
    size_t *k = calloc(ncap, sizeof *k), *l = calloc(ncap, sizeof *l);
    if (!k || !l) {
        free(k);
        free(l);
        return FMPL_ERR_NOMEM;
    }
    for (size_t i = 0; i < h->live_cap; i++) {
        size_t key = h->live_key[i];
        if (key == 0 || key == SIZE_MAX)
            continue;
        size_t j = heap_hash(key - 1, ncap);
        while (k[j])
            j = (j + 1) & (ncap - 1);
        k[j] = key;
        l[j] = h->live_len[i];
    }
    free(h->live_key);
    free(h->live_len);
    h->live_key = k;
    h->live_len = l;
    h->live_cap = ncap;
    h->live_used = h->live_n;
    return FMPL_SUCCESS;
}

static int heap_live_insert(vnic_heap_t *h, size_t off, size_t len)
{
    if ((h->live_used + 1) * 4 >= h->live_cap * 3) {
        int rc = heap_live_grow(h);
        if (rc)
            return rc;
    }
    size_t j = heap_hash(off, h->live_cap);
    while (h->live_key[j] && h->live_key[j] != SIZE_MAX)
        j = (j + 1) & (h->live_cap - 1);
    if (h->live_key[j] == 0)
        h->live_used++;
    h->live_key[j] = off + 1;
    h->live_len[j] = len;
    h->live_n++;
    return FMPL_SUCCESS;
}

/* Removes off from the live table; returns its length, or 0 when absent. */
static size_t heap_live_remove(vnic_heap_t *h, size_t off)
{
    if (!h->live_cap)
        return 0;
    size_t j = heap_hash(off, h->live_cap);
    while (h->live_key[j]) {
        if (h->live_key[j] == off + 1) {
            h->live_key[j] = SIZE_MAX;
            h->live_n--;
            return h->live_len[j];
        }
        j = (j + 1) & (h->live_cap - 1);
    }
    return 0;
}

static int heap_free_insert_at(vnic_heap_t *h, size_t i, size_t off, size_t len)
{
    if (h->nfree == h->capfree) {
        size_t ncap = h->capfree ? h->capfree * 2 : 64;
        heap_extent_t *n = realloc(h->free, ncap * sizeof *n);
        if (!n)
            return FMPL_ERR_NOMEM;
        h->free = n;
        h->capfree = ncap;
    }
    memmove(&h->free[i + 1], &h->free[i], (h->nfree - i) * sizeof *h->free);
    h->free[i].off = off;
    h->free[i].len = len;
    h->nfree++;
    return FMPL_SUCCESS;
}

static void heap_free_remove_at(vnic_heap_t *h, size_t i)
{
    memmove(&h->free[i], &h->free[i + 1], (h->nfree - i - 1) * sizeof *h->free);
    h->nfree--;
}

/* Returns an extent to the free list, coalescing with its neighbours. */
static int heap_release(vnic_heap_t *h, size_t off, size_t len)
{
    size_t lo = 0, hi = h->nfree; /* first extent with extent.off > off */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo;
    int merge_prev = i > 0 && h->free[i - 1].off + h->free[i - 1].len == off;
    int merge_next = i < h->nfree && off + len == h->free[i].off;
    if (merge_prev && merge_next) {
        h->free[i - 1].len += len + h->free[i].len;
        heap_free_remove_at(h, i);
    } else if (merge_prev) {
        h->free[i - 1].len += len;
    } else if (merge_next) {
        h->free[i].off = off;
        h->free[i].len += len;
    } else {
        return heap_free_insert_at(h, i, off, len);
    }
    return FMPL_SUCCESS;
}

/* Backs the pages of [off, off+len) that are not yet committed. */
static int heap_commit(vnic_heap_t *h, size_t off, size_t len)
{
    if (!h->commit)
        return 0;
    size_t p = off / HEAP_PAGE, end = (off + len + HEAP_PAGE - 1) / HEAP_PAGE;
    while (p < end) {
        if (h->committed[p / 64] & (1ull << (p % 64))) {
            p++;
            continue;
        }
        size_t q = p;
        while (q < end && !(h->committed[q / 64] & (1ull << (q % 64))))
            q++;
        if (h->commit(h->commit_arg, p * HEAP_PAGE, (q - p) * HEAP_PAGE))
            return -1;
        for (size_t i = p; i < q; i++)
            h->committed[i / 64] |= 1ull << (i % 64);
        p = q;
    }
    return 0;
}

int vnic_heap_create(void *base, size_t size, vnic_heap_commit_fn commit, void *arg,
                     vnic_heap_t **out)
{
    if (!out || (!base && size) || size % HEAP_PAGE || ((uintptr_t)base % HEAP_UNIT))
        return FMPL_ERR_ARG;
    vnic_heap_t *h = calloc(1, sizeof *h);
    if (!h)
        return FMPL_ERR_NOMEM;
    h->base = base;
    h->size = size;
    h->commit = commit;
    h->commit_arg = arg;
    size_t npages = size / HEAP_PAGE;
    h->committed = calloc((npages + 63) / 64 + 1, sizeof(uint64_t));
    if (!h->committed || (size && heap_free_insert_at(h, 0, 0, size))) {
        vnic_heap_destroy(h);
        return FMPL_ERR_NOMEM;
    }
    *out = h;
    return FMPL_SUCCESS;
}

void vnic_heap_destroy(vnic_heap_t *h)
{
    if (!h)
        return;
    free(h->free);
    free(h->live_key);
    free(h->live_len);
    free(h->committed);
    free(h);
}

void *vnic_heap_alloc(vnic_heap_t *h, size_t size)
{
    if (!h || size > h->size)
        return NULL;
    size_t len = size ? BASE_ALIGN_UP(size, HEAP_UNIT) : HEAP_UNIT;
    for (size_t i = 0; i < h->nfree; i++) {
        if (h->free[i].len < len)
            continue;
        size_t off = h->free[i].off;
        if (heap_commit(h, off, len))
            return NULL;
        if (heap_live_insert(h, off, len))
            return NULL;
        if (h->free[i].len == len) {
            heap_free_remove_at(h, i);
        } else {
            h->free[i].off += len;
            h->free[i].len -= len;
        }
        return h->base + off;
    }
    return NULL;
}

int vnic_heap_free(vnic_heap_t *h, void *p)
{
    if (!p)
        return FMPL_SUCCESS;
    if (!h)
        return FMPL_ERR_ARG;
    char *c = (char *)p;
    if (c < h->base || c >= h->base + h->size || (size_t)(c - h->base) % HEAP_UNIT)
        return FMPL_ERR_BUFFER;
    size_t off = (size_t)(c - h->base);
    size_t len = heap_live_remove(h, off);
    if (!len)
        return FMPL_ERR_BUFFER;
    if (heap_release(h, off, len)) {
        heap_live_insert(h, off, len); /* keep the block live rather than lose it */
        return FMPL_ERR_NOMEM;
    }
    return FMPL_SUCCESS;
}

size_t vnic_heap_free_bytes(const vnic_heap_t *h, size_t *largest)
{
    size_t total = 0, big = 0;
    for (size_t i = 0; h && i < h->nfree; i++) {
        total += h->free[i].len;
        big = BASE_MAX(big, h->free[i].len);
    }
    if (largest)
        *largest = big;
    return total;
}
