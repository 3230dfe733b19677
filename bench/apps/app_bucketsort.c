/* app_bucketsort — a parallel integer bucket sort in the manner of the NAS IS benchmark:
 * a histogram allreduce, an all-to-all of counts and an all-to-all-v of the keys.
 *
 *   mpiexec -n 2 app_bucketsort [--csv] [--quick] [--reps=N] [--impl=NAME] [--keys=N]
 *                               [--keybits=B] [--iters=N]
 *
 * The problem: --keys integer keys in [0, 2^keybits), spread over the ranks (the first
 * keys % nranks ranks one more); key g is (the sum of four 16-bit fields of a hash of g)
 * scaled to the range, so keys are bell-shaped as in NAS IS (the middle of the range is
 * denser), and the key set does not depend on the number of ranks.
 * One sort, all of it timed:
 *   1. each rank counts its keys per bucket (1024 buckets of equal key ranges);
 *   2. MPI_Allreduce of the bucket counts: every rank then gives the buckets, in order,
 *      to ranks so that each rank gets about keys / nranks keys (contiguous ranges);
 *   3. each rank arranges its keys by bucket (a counting sort by bucket) into a send
 *      buffer, and the per-destination counts are exchanged with MPI_Alltoall;
 *   4. MPI_Alltoallv of the keys;
 *   5. each rank sorts what it received by a counting sort over its key range.
 * A run does --iters sorts of the same keys (the output is rebuilt each time).
 * Measured: the time of a run (slowest rank; median of --reps runs after a warm-up run);
 * rate = keys * iters / time in Mkeys/s.
 * Verification: each rank's output is in order and within its key range; the last key
 * of each rank is not above the first of its right neighbour (MPI_Sendrecv; ranks left
 * empty are skipped with the help of an MPI_Allgather of first and last keys); the key
 * count is unchanged, and so is the multiset of keys (an order-independent hash sum
 * before and after). The checksum is sum over the sorted sequence of key[p] * (p % 1000
 * + 1), an exact integer that depends on every key's final position; rank 0 computes the
 * same from a serial counting sort of all keys and the two must agree. */
#include "app_util.h"

#define BUCKET_BITS 10
#define TAG 11

typedef struct bsort {
    long nkeys, iters;
    int keybits, shift, nbuckets, nranks;
    long g0, n;         /* first global key index on this rank, keys on this rank */
    int *keys, *send;   /* n each */
    int *recv, *sorted; /* cap each: the keys this rank receives */
    long cap, nsorted;
    int key_lo, key_hi;   /* this rank's key range after the last sort */
    long *count, *gcount; /* per bucket: this rank's, everyone's */
    long *pos;            /* per bucket: next slot in the send buffer */
    int *owner;           /* per bucket: the rank it goes to */
    int *sendcount, *recvcount, *sdispl, *rdispl;
    int *kcount; /* per key of the range (counting sort) */
} bsort_t;

/* Key of global index g: bell-shaped over [0, 2^keybits). */
static int key_of(uint64_t g, int keybits)
{
    uint64_t h = app_hash(g * 0x2545f4914f6cdd1dull + 12345);
    uint64_t s = (h & 0xffff) + ((h >> 16) & 0xffff) + ((h >> 32) & 0xffff) + (h >> 48);
    return (int)((s << keybits) >> 18); /* s < 4 * 65536 = 2^18 */
}

/* A key's contribution to the multiset hash. */
static uint64_t key_hash(int key)
{
    return app_hash((uint64_t)key ^ 0xabcdef);
}

static void bsort_reset(void *ctx)
{
    (void)ctx; /* the input keys are never modified */
}

static void sort_once(bsort_t *p)
{
    int nb = p->nbuckets, np = p->nranks;
    /* 1. bucket counts; 2. everyone's, and the buckets' owners */
    memset(p->count, 0, sizeof(long) * (size_t)nb);
    for (long i = 0; i < p->n; i++)
        p->count[p->keys[i] >> p->shift]++;
    MPI_Allreduce(p->count, p->gcount, nb, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long before = 0;
    for (int b = 0; b < nb; b++) {
        long r = before * np / p->nkeys; /* the rank whose share the bucket starts in */
        p->owner[b] = (int)(r < np - 1 ? r : np - 1);
        before += p->gcount[b];
    }
    /* 3. keys by bucket into the send buffer; counts per destination exchanged */
    memset(p->sendcount, 0, sizeof(int) * (size_t)np);
    long at = 0;
    for (int b = 0; b < nb; b++) {
        p->pos[b] = at;
        at += p->count[b];
        p->sendcount[p->owner[b]] += (int)p->count[b];
    }
    for (long i = 0; i < p->n; i++)
        p->send[p->pos[p->keys[i] >> p->shift]++] = p->keys[i];
    MPI_Alltoall(p->sendcount, 1, MPI_INT, p->recvcount, 1, MPI_INT, MPI_COMM_WORLD);
    long nrecv = 0;
    for (int r = 0; r < np; r++) {
        p->sdispl[r] = r ? p->sdispl[r - 1] + p->sendcount[r - 1] : 0;
        p->rdispl[r] = (int)nrecv;
        nrecv += p->recvcount[r];
    }
    if (nrecv > p->cap) { /* the first sort only: the same keys every time */
        free(p->recv);
        free(p->sorted);
        p->cap = nrecv;
        p->recv = malloc(sizeof(int) * (size_t)p->cap);
        p->sorted = malloc(sizeof(int) * (size_t)p->cap);
        if (!p->recv || !p->sorted) {
            fprintf(stderr, "app_bucketsort: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* 4. the keys */
    MPI_Alltoallv(p->send, p->sendcount, p->sdispl, MPI_INT, p->recv, p->recvcount, p->rdispl,
                  MPI_INT, MPI_COMM_WORLD);
    /* 5. counting sort over this rank's key range (its buckets, contiguous) */
    int me, first = -1, last = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int b = 0; b < nb; b++)
        if (p->owner[b] == me) {
            if (first < 0)
                first = b;
            last = b;
        }
    p->key_lo = first < 0 ? 0 : first << p->shift;
    p->key_hi = first < 0 ? 0 : (last + 1) << p->shift;
    long range = p->key_hi - p->key_lo;
    memset(p->kcount, 0, sizeof(int) * (size_t)range);
    for (long i = 0; i < nrecv; i++) {
        long k = (long)p->recv[i] - p->key_lo;
        if (k >= 0 && k < range) /* else a wrong key: left out, seen by the verification */
            p->kcount[k]++;
    }
    long out = 0;
    for (long k = 0; k < range; k++)
        for (int c = p->kcount[k]; c > 0; c--)
            p->sorted[out++] = (int)(p->key_lo + k);
    p->nsorted = nrecv;
    for (long i = out; i < nrecv; i++) /* keys outside the range keep an impossible value */
        p->sorted[i] = -1;
}

static void bsort_run(void *ctx)
{
    bsort_t *p = ctx;
    for (long it = 0; it < p->iters; it++)
        sort_once(p);
}

/* The checksum's term of the key at global sorted position pos (sums wrap modulo 2^64;
 * exact as a double up to 2^53, which the defaults stay below). */
static uint64_t term(int key, long pos)
{
    return (uint64_t)key * (uint64_t)(pos % 1000 + 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    app_opts_t o = {.prog = "app_bucketsort"};
    app_param_t prm[] = {
        {"keys", 1L << 22, 20000, 1, "keys in all"},
        {"keybits", 19, 12, BUCKET_BITS, "keys are below 2^keybits (at most 30)"},
        {"iters", 5, 2, 1, "sorts per run"},
    };
    app_parse(argc, argv, &o, prm, 3);
    bsort_t p = {.nkeys = prm[0].value, .iters = prm[2].value, .nranks = o.nranks};
    if (prm[1].value > 30 || p.nkeys > 0x7fffffffL) {
        if (o.rank == 0)
            fprintf(stderr, "%s: at most 30 key bits and 2^31 - 1 keys\n", o.prog);
        MPI_Finalize();
        return 2;
    }
    p.keybits = (int)prm[1].value;
    p.shift = p.keybits - BUCKET_BITS;
    p.nbuckets = 1 << BUCKET_BITS;
    p.g0 = app_split_lo(p.nkeys, o.nranks, o.rank);
    p.n = app_split_hi(p.nkeys, o.nranks, o.rank) - p.g0;
    size_t nk = (size_t)(p.n > 0 ? p.n : 1), nb = (size_t)p.nbuckets, np = (size_t)o.nranks;
    p.keys = malloc(sizeof(int) * nk);
    p.send = malloc(sizeof(int) * nk);
    p.count = malloc(sizeof(long) * nb);
    p.gcount = malloc(sizeof(long) * nb);
    p.pos = malloc(sizeof(long) * nb);
    p.owner = malloc(sizeof(int) * nb);
    p.sendcount = malloc(sizeof(int) * np);
    p.recvcount = malloc(sizeof(int) * np);
    p.sdispl = malloc(sizeof(int) * np);
    p.rdispl = malloc(sizeof(int) * np);
    p.kcount = malloc(sizeof(int) * ((size_t)1 << p.keybits));
    if (!p.keys || !p.send || !p.count || !p.gcount || !p.pos || !p.owner || !p.sendcount ||
        !p.recvcount || !p.sdispl || !p.rdispl || !p.kcount) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t hash_before = 0;
    for (long i = 0; i < p.n; i++) {
        p.keys[i] = key_of((uint64_t)(p.g0 + i), p.keybits);
        hash_before += key_hash(p.keys[i]);
    }

    app_describe(&o,
                 "bucket sort of %ld keys below 2^%d (bell-shaped), %d buckets, Alltoall of "
                 "counts + Alltoallv of keys, %ld sort(s) per run",
                 p.nkeys, p.keybits, p.nbuckets, p.iters);
    app_kernel_t k = {bsort_reset, bsort_run, &p};
    double tmin, tmax;
    double t = app_time(&o, &k, &tmin, &tmax);
    app_report_rate(&o, p.nkeys, (double)p.nkeys * (double)p.iters / 1e6, "Mkeys/s", t, tmin, tmax);

    /* Verification. This rank: in order, within its range. */
    int ok = 1;
    for (long i = 0; i < p.nsorted; i++) {
        int key = p.sorted[i];
        if (key < p.key_lo || key >= p.key_hi || (i > 0 && key < p.sorted[i - 1])) {
            ok = app_fail(&o, "key %ld of %ld is %d: out of order or outside [%d, %d)", i,
                          p.nsorted, key, p.key_lo, p.key_hi);
            break;
        }
    }
    /* The neighbours: my last against the right one's first. */
    int mine[3] = {p.nsorted > 0, p.nsorted > 0 ? p.sorted[0] : 0,
                   p.nsorted > 0 ? p.sorted[p.nsorted - 1] : 0};
    int left[3] = {0, 0, 0};
    int lrank = o.rank > 0 ? o.rank - 1 : MPI_PROC_NULL;
    int rrank = o.rank < o.nranks - 1 ? o.rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(mine, 3, MPI_INT, rrank, TAG, left, 3, MPI_INT, lrank, TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (left[0] && mine[0] && left[2] > mine[1])
        ok =
            app_fail(&o, "the left neighbour's last key %d is above my first %d", left[2], mine[1]);
    /* Past empty ranks: every rank's (non-empty, first, last). */
    int *firstlast = malloc(sizeof(int) * 3 * np);
    MPI_Allgather(mine, 3, MPI_INT, firstlast, 3, MPI_INT, MPI_COMM_WORLD);
    int prev = -1;
    for (int r = 0; r < o.nranks; r++)
        if (firstlast[3 * r]) {
            if (firstlast[3 * r + 1] < prev && o.rank == 0)
                ok = app_fail(&o, "rank %d starts at key %d, below %d before it", r,
                              firstlast[3 * r + 1], prev);
            prev = firstlast[3 * r + 2];
        }
    free(firstlast);
    /* The count and the multiset. */
    uint64_t hash_after = 0;
    for (long i = 0; i < p.nsorted; i++)
        hash_after += key_hash(p.sorted[i]);
    unsigned long long h[2] = {hash_before, hash_after}, hsum[2];
    MPI_Allreduce(h, hsum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long total = app_int_total(p.nsorted);
    if (o.rank == 0 && total != p.nkeys)
        ok = app_fail(&o, "%lld keys after the sort, %ld before", total, p.nkeys);
    if (o.rank == 0 && hsum[0] != hsum[1])
        ok = app_fail(&o, "the keys after the sort are not the keys before it");
    /* The checksum, and rank 0's serial counting sort of every key. */
    long long offset = 0, nmine = p.nsorted;
    MPI_Exscan(&nmine, &offset, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (o.rank == 0)
        offset = 0; /* MPI_Exscan leaves rank 0's undefined */
    unsigned long long sum = 0, checksum = 0;
    for (long i = 0; i < p.nsorted; i++)
        sum += term(p.sorted[i], (long)offset + i);
    MPI_Allreduce(&sum, &checksum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (o.rank == 0) {
        long *all = calloc((size_t)1 << p.keybits, sizeof(long));
        if (!all) {
            fprintf(stderr, "%s: out of memory for the serial reference\n", o.prog);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (long g = 0; g < p.nkeys; g++)
            all[key_of((uint64_t)g, p.keybits)]++;
        unsigned long long ref = 0;
        long pos = 0;
        for (long key = 0; key < (1L << p.keybits); key++)
            for (long c = 0; c < all[key]; c++)
                ref += term((int)key, pos++);
        if (ref != checksum)
            ok = app_fail(&o, "checksum %llu, the serial sort gives %llu", checksum, ref);
        free(all);
    }
    app_verdict(&o, ok, "globally sorted keys");
    app_note(&o, "verified   sorted within and across ranks, same keys, same checksum as a "
                 "serial counting sort");
    app_report_checksum(&o, p.nkeys, (double)checksum);

    free(p.keys);
    free(p.send);
    free(p.recv);
    free(p.sorted);
    free(p.count);
    free(p.gcount);
    free(p.pos);
    free(p.owner);
    free(p.sendcount);
    free(p.recvcount);
    free(p.sdispl);
    free(p.rdispl);
    free(p.kcount);
    MPI_Finalize();
    return 0;
}
